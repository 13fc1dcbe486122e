"""
The measured fast paths: one module per backend, each with one `FastPath` entry.

A module here exists only where a measurement showed that the standard-only tile
(``xtile._agnostic``) cannot reach the goal on that backend; each is run by the same
parity suite as the standard-only tile (the ``impl`` fixture of the tests). A
module is imported the first time an array of its backend is tiled, never by
``import xtile``, so it may import its backend at the top.
"""

from types import ModuleType

from .._lib._typing import FastPath

__all__ = ["LIBRARIES", "lookup"]

# the libraries (`xtile._lib._compat.library`) with a module here, of the same name
LIBRARIES = frozenset({"numpy", "torch", "jax", "dask", "array_api_strict", "sparse"})
_LOADED: dict[str, FastPath | None] = {}


def lookup(library: str, /) -> FastPath | None:  # numpydoc ignore=PR01,RT01
    """The fast path of `library`, or None where the standard-only tile is the tile."""
    if library in _LOADED:
        return _LOADED[library]
    module = _import(library)
    fast = None if module is None else module.FAST_PATH
    _LOADED[library] = fast
    return fast


def _import(library: str, /) -> ModuleType | None:
    """The module of `library`: import statements, which ``torch.compile`` traces."""
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
