"""
The array-api-strict fast path: the broadcast view assigned into `empty`, and staging.

Its ``reshape(copy=True)`` copies the broadcast view in the view's memory order,
then again into C order; assigning the view into an `empty` array is one copy
(``docs/performance.md``). Its arrays live in host memory, so staging pays.
"""

from typing import Any

import array_api_strict as xp

from .._agnostic import broadcast_view
from .._lib._helpers import itemsize
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan

__all__ = ["FAST_PATH"]


def _copy(x: Array, plan: Plan, _xp: ArrayNamespace, /, out: Array | None = None) -> Array:
    """The standard-only copy, as an assignment into a fresh array (then into `out`)."""
    view: Any = broadcast_view(x, plan, xp)
    fresh = xp.empty(view.shape, dtype=view.dtype, device=view.device)
    fresh[...] = view
    if out is None:
        return xp.reshape(fresh, plan.out_shape)
    out[...] = xp.reshape(fresh, plan.out_shape)
    return out


def _stage_itemsize(x: Array, /) -> int:
    """Every array stages: they live in host memory."""
    return itemsize(x.dtype, xp)


FAST_PATH = FastPath(copy=_copy, stage_itemsize=_stage_itemsize)
