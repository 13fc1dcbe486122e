"""The layout promised to a reader: one standard-only tile, fast paths beside it, a lean import."""

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import xtile
import xtile._fast
from xtile import _agnostic
from xtile._lib._registry import LIBRARIES, NAMESPACES
from xtile._testing import Backend, arange, assert_tile

PACKAGE = Path(xtile.__file__).parent
BACKEND_NAMES = [lib.name for lib in LIBRARIES]


@pytest.mark.parametrize("module", ["_agnostic.py", "_plan.py", "_cache.py"])
def test_agnostic_names_no_backend(module: str) -> None:
    """The executor, the planner and the cache reach arrays only through what they are given."""
    source = (PACKAGE / module).read_text()
    for name in BACKEND_NAMES:
        assert not re.search(rf"\b{name}\b", source, flags=re.IGNORECASE), name
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            assert all(alias.name in sys.stdlib_module_names for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            assert (node.module or "").partition(".")[0] in sys.stdlib_module_names
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 1
            assert (node.module or "").startswith(("_lib", "_plan")), node.module


def test_one_registry_of_libraries() -> None:
    """The harness's backends, `_fast`'s imports and the registry name the same libraries."""
    assert {NAMESPACES[b.modname].name for b in Backend} == set(BACKEND_NAMES)
    source = (PACKAGE / "_fast" / "__init__.py").read_text()
    (imports,) = (
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.FunctionDef) and n.name == "_import"
    )
    compared = {
        c.value
        for n in ast.walk(imports)
        if isinstance(n, ast.Compare)
        for c in n.comparators
        if isinstance(c, ast.Constant)
    }
    assert compared == xtile._fast.LIBRARIES


def test_fast_paths_one_module_each() -> None:
    """Each registered backend has one module, with one typed entry; no module is unlisted."""
    modules = {p.stem for p in (PACKAGE / "_fast").glob("*.py")} - {"__init__"}
    assert modules == xtile._fast.LIBRARIES
    for module in modules:
        if importlib.util.find_spec(module) is None:
            continue  # the backend is not installed here
        prims = importlib.import_module(f"xtile._fast.{module}").PRIMITIVES
        assert isinstance(prims, _agnostic.Primitives)
        assert prims != _agnostic.STANDARD


def test_primitives_never_order_the_steps() -> None:
    """The order of the steps is written once, in the planner: no backend module plans."""
    for path in (PACKAGE / "_fast").glob("*.py"):
        source = path.read_text()
        assert "program(" not in source, path.name
        assert "STRATEGIES" not in source, path.name


def test_import_loads_no_backend() -> None:
    """``import xtile`` loads no array library, harness, benchmark, fast path or plotting."""
    code = (
        "import sys, time; t = time.perf_counter(); import xtile; "
        "t = time.perf_counter() - t; import json; "
        "print(json.dumps([t, sorted(sys.modules)]))"
    )
    seconds, modules = json.loads(
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    )
    roots = {m.partition(".")[0] for m in modules}
    assert not roots & {*BACKEND_NAMES, "matplotlib", "ml_dtypes", "pytest", "hypothesis"}
    loaded = {m for m in modules if m.startswith("xtile.")}
    assert not {m for m in loaded if m.startswith(("xtile._fast.", "xtile._testing"))}
    assert not {m for m in loaded if m.startswith("xtile._cli")}
    assert seconds < 5  # a sanity bound, not a benchmark


@pytest.mark.parametrize(("shape", "reps"), [((2, 3), (2, 2)), ((2, 3, 4, 5), (4, 4, 4, 4))])
def test_impl_fixture_selects_the_path(
    impl: str, library: Backend, xp: Any, make: Any, monkeypatch: pytest.MonkeyPatch,
    shape: tuple[int, ...], reps: tuple[int, ...],
) -> None:  # fmt: skip
    """ "standard" runs the standard-only copy; "fast" runs a backend's own where it has one."""
    calls: list[object] = []
    copy = _agnostic.copy

    def counting_copy(*args: Any) -> Any:
        calls.append(args)
        return copy(*args)

    monkeypatch.setattr(_agnostic, "copy", counting_copy)
    x = make(arange(shape))
    assert_tile(xtile.tile(x, reps), x, reps, xp)
    fast = xtile._fast.lookup(library.modname.partition(".")[0])
    if impl == "standard" or fast is None:
        assert calls
    elif fast.copier is not None or fast.tile is not None:
        assert not calls
