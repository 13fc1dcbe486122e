"""
Collection from the repository root: what a missing backend cannot import is skipped.

And a workaround for torch Dynamo's cleanup hooks, for every test and doctest.
"""

import atexit
import contextlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from xtile._testing import missing_imports

# xtile's backend modules import their library at the top (--doctest-modules imports them)
collect_ignore = [
    f"xtile/_backends/{name}.py"
    for name in ("torch", "cupy", "jax", "dask", "ndonnx", "sparse", "array_api_strict")
    if importlib.util.find_spec(name) is None
]


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """A documentation page's doctests need every library they import (its prose aside)."""
    for item in items:
        if type(item).__name__ != "DoctestItem" or item.path.suffix != ".md":
            continue
        lines = Path(item.path).read_text().splitlines()
        if missing := missing_imports("\n".join(t for t in lines if t.lstrip()[:4] == ">>> ")):
            item.add_marker(pytest.mark.skip(reason=f"needs {', '.join(missing)}"))


def _dynamo_cleanups_tolerate_cleared_scopes() -> None:
    """
    Torch Dynamo's cleanup hooks skip a name already gone from the scope they clean.

    Each compiled frame has a hook, called when its code dies, that deletes the globals
    Dynamo installed in the frame's scope (``__builtins_dict___N``). A doctest's globals
    are cleared as it ends (docs/transforms.md compiles): the hook's ``del`` then raises
    KeyError (torch's bug: it does not tolerate a missing name) when the code dies,
    in whichever test calls ``torch._dynamo.reset()`` next, and pytest reports it as
    that test's error. Installed once torch Dynamo is imported.
    """
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None or getattr(utils.CleanupHook, "tolerant", False):
        return
    delete = utils.CleanupHook.__call__

    def tolerant(self: Any, *args: Any) -> None:
        with contextlib.suppress(KeyError):
            delete(self, *args)

    utils.CleanupHook.__call__, utils.CleanupHook.tolerant = tolerant, True


def _drop_dynamo_cleanups() -> None:
    """
    Forget torch Dynamo's cleanup hooks as the interpreter exits, before they can fire.

    At exit a module's dict may be cleared before a compiled frame's hook runs: it
    would print "Exception ignored ... KeyError" after pytest's summary. Dropped with
    the weak references that hold them, they never run; the globals go with the process.
    """
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is not None:
        utils.CleanupManager.instance.clear()


def pytest_runtest_setup() -> None:
    """Before each test, the hooks of a Dynamo imported by now skip a cleared scope."""
    _dynamo_cleanups_tolerate_cleared_scopes()


def pytest_unconfigure() -> None:
    """Each test process (xdist workers too) forgets Dynamo's hooks once its tests are done."""
    _drop_dynamo_cleanups()


atexit.register(_drop_dynamo_cleanups)  # and what a compile after that made
