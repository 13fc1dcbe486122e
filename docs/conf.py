"""Sphinx configuration of the xtile documentation (``sphinx-build -W -n docs docs/_build/html``)."""

import socket
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS)]

import make_figures  # noqa: E402

import xtile  # noqa: E402

make_figures.main()  # drawn from xtile at every build

project = "xtile"
author = "The xtile developers"
copyright = "2026, The xtile developers"  # noqa: A001
release = version = xtile.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx_copybutton",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "generated/*.md"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = f"xtile {release}"
html_favicon = "_static/favicon.png"  # browsers ask for one: without it, a 404 per page
html_static_path = ["_static"]
html_css_files = ["xtile.css"]  # code blocks wrap long lines; wide tables scroll
autosummary_generate = True
autodoc_typehints = "none"  # numpydoc's Parameters sections say it, in words
numpydoc_show_class_members = False

_INVENTORIES = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "torch": "https://docs.pytorch.org/docs/stable/",
    "jax": "https://docs.jax.dev/en/latest/",
    "dask": "https://docs.dask.org/en/stable/",
    "array-api": "https://data-apis.org/array-api/latest/",
}


def _online() -> bool:
    """Whether the inventories can be fetched (CI machines reach package registries only)."""
    try:
        socket.create_connection(("docs.python.org", 443), timeout=3).close()
    except OSError:
        return False
    return True


if _online():
    intersphinx_mapping = {name: (url, None) for name, url in _INVENTORIES.items()}
    # parameter types link to Python's and NumPy's docs
    numpydoc_xref_param_type = True
    numpydoc_xref_ignore = {"optional", "or", "of", "array", "array_namespace", "ints"}
else:
    # Offline, references into those projects cannot resolve: they stay plain text, and
    # only they are exempt from the nitpicky check; every reference into xtile is checked.
    intersphinx_mapping = {}
    nitpick_ignore_regex = [
        (r"py:.*", r"(builtins|numpy|torch|jax|dask|array_api_strict|ndonnx|sparse)(\..*)?"),
        (r"py:.*", r"(int|float|bool|str|tuple|list|dict|None|TypeError|ValueError|MemoryError)"),
    ]
