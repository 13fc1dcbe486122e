"""Collection from the repository root: what a missing backend cannot import is skipped."""

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from xtile._testing import missing_imports

# xtile's backend modules import their library at the top (--doctest-modules imports them)
collect_ignore = [
    f"xtile/_backends/{name}.py"
    for name in ("torch", "jax", "dask", "ndonnx", "sparse", "array_api_strict")
    if importlib.util.find_spec(name) is None
]


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """A documentation page's doctests need every library the page imports."""
    for item in items:
        page = type(item).__name__ == "DoctestItem" and item.path.suffix == ".md"
        if page and (missing := missing_imports(Path(item.path).read_text())):
            item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(missing)}"))
