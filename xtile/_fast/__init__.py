"""
The backends' primitives: one module per backend, each with one `Primitives` entry.

A module here exists only where a measurement showed that the standard-only tile
(``xtile._agnostic``) cannot reach the goal on that backend, or where a backend's
limits demand it; each is run by the same parity suite as the standard-only tile
(the ``impl`` fixture of the tests). A module is imported the first time an array
of its backend is tiled, never by ``import xtile``, so it may import its backend at
the top.
"""

from types import ModuleType

from .._agnostic import Primitives
from .._lib import _registry

__all__ = ["LIBRARIES", "lookup"]

# the libraries of `xtile._lib._registry` with a module here, of the same name
LIBRARIES = frozenset(lib.name for lib in _registry.LIBRARIES if lib.primitives)
_LOADED: dict[str, Primitives | None] = {}


def lookup(library: str, /) -> Primitives | None:  # numpydoc ignore=PR01,RT01
    """The primitives of `library`, or None where the standard-only tile is the tile."""
    if library in _LOADED:
        return _LOADED[library]
    module = _import(library)
    prims = None if module is None else module.PRIMITIVES
    _LOADED[library] = prims
    return prims


def _import(library: str, /) -> ModuleType | None:
    """
    The module of `library`: import statements, which ``torch.compile`` traces.

    One branch per name in `LIBRARIES` (a test checks).
    """
    if library == "numpy":
        from . import numpy as module
    elif library == "torch":
        from . import torch as module  # type: ignore[no-redef]
    elif library == "jax":
        from . import jax as module  # type: ignore[no-redef]
    elif library == "dask":
        from . import dask as module  # type: ignore[no-redef]
    elif library == "array_api_strict":
        from . import array_api_strict as module  # type: ignore[no-redef]
    elif library == "sparse":
        from . import sparse as module  # type: ignore[no-redef]
    else:
        return None
    return module
