"""
Dask: the broadcast view built by indexing, which never rechunks.

Dask's ``reshape`` may rechunk even where it only inserts length-1 axes; indexing
with `None` is a view of the same chunks.
"""

from .._agnostic import pairs
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan

__all__ = ["FAST_PATH"]


def _copy(x: Array, plan: Plan, xp: ArrayNamespace, /) -> Array:
    """The standard-only copy, with the length-1 axes inserted by indexing."""
    n = len(plan.shape)
    spread = x[(None,) * (2 * (n - x.ndim)) + (None, slice(None)) * x.ndim]
    view = xp.broadcast_to(spread, pairs(plan.reps, plan.shape))
    out: Array = xp.reshape(view, plan.out_shape, copy=True)
    return out


FAST_PATH = FastPath(copy=_copy)
