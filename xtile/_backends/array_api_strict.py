"""The array-api-strict backend: the broadcast view assigned into `empty`."""

from typing import Any

import array_api_strict as xp

from .._program import Copy, Layout, view_shapes
from . import Backend, Call

__all__ = ["BACKEND"]


def _layout(x: Any, /) -> Layout | None:
    """Shape and element size (staging reads nothing else)."""
    if type(x).__module__.partition(".")[0] != "array_api_strict":
        return None
    return Layout(tuple(x.shape), (), x.dtype._np_dtype.itemsize)  # one copy: nothing to price


def _copy(step: Copy, /) -> Call:
    """The broadcast view assigned into a fresh array (or `dest`)."""
    spread, view_shape = view_shapes(step.shape, step.reps)
    out_shape = tuple(d * r for d, r in zip(step.shape, step.reps, strict=True))

    def copy(x: Any, dest: Any) -> Any:
        if 0 in out_shape:
            return xp.empty(out_shape, dtype=x.dtype, device=x.device) if dest is None else dest
        view = xp.broadcast_to(xp.reshape(x, spread), view_shape)
        if dest is not None:
            dest[...] = xp.reshape(view, out_shape, copy=True)
            return dest
        fresh = xp.empty(view_shape, dtype=x.dtype, device=x.device)
        fresh[...] = view
        return xp.reshape(fresh, out_shape)

    return copy


BACKEND = Backend("array_api_strict", layout=_layout, copy=_copy, xp=xp)
