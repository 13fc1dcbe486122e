"""
Dask: the broadcast view built by indexing, which never rechunks.

Dask's ``reshape`` may rechunk even where it only inserts length-1 axes; indexing
with `None` is a view of the same chunks.
"""

from .._agnostic import view_shapes
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan

__all__ = ["FAST_PATH"]


def _copy(x: Array, plan: Plan, xp: ArrayNamespace, /) -> Array:
    """The standard-only copy, with the length-1 axes inserted by indexing."""
    shape, reps = plan.shape, plan.reps
    lead = len(shape) - x.ndim  # the leading length-1 axes x lacks
    index: list[slice | None] = [None] * lead
    for d, r in zip(shape[lead:], reps[lead:], strict=True):
        index += (None, slice(None)) if d != 1 != r else (slice(None),)
    view = xp.broadcast_to(x[tuple(index)], view_shapes(shape, reps)[1])
    out: Array = xp.reshape(view, plan.out_shape, copy=True)
    return out


FAST_PATH = FastPath(copy=_copy)
