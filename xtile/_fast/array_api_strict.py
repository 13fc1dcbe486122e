"""
The primitives of array-api-strict: the broadcast view assigned into `empty`, and staging.

Its ``reshape(copy=True)`` copies the broadcast view in the view's memory order,
then again into C order; assigning the view into an `empty` array is one copy
(``docs/performance.md``). Its arrays live in host memory, so staging pays; its
arrays have no strides to read, so nothing else is planned.
"""

from typing import Any

import array_api_strict as xp

from .._agnostic import CopyCall, Primitives, broadcast_view
from .._agnostic import copy as copy_
from .._lib._helpers import itemsize
from .._lib._typing import Array, ArrayNamespace, Plan
from .._plan import Layout, Tuning

__all__ = ["PRIMITIVES"]


def _layout(x: Array, /) -> Layout | None:
    """Shape and element size of an array-api-strict array (staging reads nothing else)."""
    if type(x).__module__.partition(".")[0] != "array_api_strict":
        return None
    return Layout(tuple(x.shape), (), itemsize(x.dtype, xp), tuned=True)


def _copier(plan: Plan, _item: int, _xp: ArrayNamespace, /) -> CopyCall:
    """The standard-only copy, as an assignment into a fresh array (then into `out`)."""

    def copy(x: Array, out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
        """The broadcast view assigned into `empty`."""
        if not plan.size or out is not None:
            return copy_(x, plan, xp, out)  # nothing to copy, or the standard assignment
        view: Any = broadcast_view(x, plan, xp)
        fresh = xp.empty(view.shape, dtype=view.dtype, device=view.device)
        fresh[...] = view
        return xp.reshape(fresh, plan.out_shape)

    return copy


PRIMITIVES = Primitives(tuning=Tuning(stage=True), layout=_layout, copier=_copier)
