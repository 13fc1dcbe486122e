"""Every Python example in the README and the documentation pages runs as written."""

import re
from pathlib import Path

import pytest

from xtile._testing import missing_imports

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# (page, index, code) of every ```python block; `>>>` examples are doctests (pytest's
# --doctest-glob) and not repeated here
BLOCKS = [
    (page, i, code)
    for page in PAGES
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL))
]


def test_ci_ships_with_the_tree() -> None:
    """README's `bash .ci/run` works from a clone and from the unpacked sdist alike."""
    assert "bash .ci/run" in (ROOT / "README.md").read_text()
    assert (ROOT / ".ci" / "run").is_file()


def test_readme_has_examples() -> None:
    assert sum(page.name == "README.md" for page, _, _ in BLOCKS) >= 2


@pytest.mark.parametrize(
    "code",
    [
        # a LocalCluster of worker processes: with the other cluster test (`-m cluster`)
        pytest.param(code, marks=pytest.mark.cluster) if "LocalCluster" in code else code
        for _, _, code in BLOCKS
    ],
    ids=[f"{page.relative_to(ROOT)}-{i}" for page, i, _ in BLOCKS],
)
def test_example_runs(code: str) -> None:
    if missing := missing_imports(code):
        pytest.skip(f"needs {', '.join(missing)}")
    exec(compile(code, "<example>", "exec"), {})  # noqa: S102
