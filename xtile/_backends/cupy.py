"""CuPy: the copy as `cupy.tile` makes it, by array methods (array-api-compat's cost host time)."""

from typing import Any

import array_api_compat.cupy as xp
import cupy

from .._program import Copy, Layout, view_shapes
from . import Backend, Call, check_apart

__all__ = ["BACKEND"]


def _copy(step: Copy, /) -> Call:
    """The broadcast view copied into a new C-ordered array on `x`'s device (or `dest`)."""
    spread, view_shape = view_shapes(step.shape, step.reps)
    out_shape = tuple(d * r for d, r in zip(step.shape, step.reps, strict=True))

    def copy(x: Any, dest: Any) -> Any:
        if dest is not None and not dest.flags.c_contiguous:
            dest[...] = copy(x, None)
            return dest
        if x.data.device_id != cupy.cuda.runtime.getDevice():
            with x.device:
                return copy(x, dest)
        into = cupy.empty(out_shape, x.dtype) if dest is None else dest
        if into.size:
            cupy.copyto(into.reshape(view_shape), x.reshape(spread))
        return into

    return copy


def _overlap(a: Any, b: Any, /) -> bool:
    """Whether the memory spans of `a` and `b` overlap (a bound: strided views may not)."""

    def span(t: Any) -> tuple[int, int]:
        ends = [(d - 1) * st for d, st in zip(t.shape, t.strides, strict=True)]
        low = t.data.ptr + sum(e for e in ends if e < 0)
        return low, t.data.ptr + sum(e for e in ends if e > 0) + t.itemsize

    (a0, a1), (b0, b1) = span(a), span(b)
    return bool(a.size and b.size) and a0 < b1 and b0 < a1


BACKEND = Backend(
    "cupy",
    layout=lambda x: (  # shape, strides, element size: the plan cache's key
        tuple.__new__(Layout, (x.shape, x.strides, x.dtype.itemsize, True, True, False, 1))
        if type(x) is cupy.ndarray
        else None
    ),
    copy=_copy,
    check_out=lambda x, o, op, seen: check_apart(x, o, op, o.strides, o.itemsize, _overlap, seen),
    xp=xp,
)
