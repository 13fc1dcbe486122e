"""CuPy: the copy as `cupy.tile` makes it (by assignment), or of runs as wider items."""

import math
from operator import attrgetter
from typing import Any

import array_api_compat.cupy as xp
import cupy

from .._program import NONE, Copy, Layout, view_shapes
from . import DEVICE, Backend, Call, check_apart

_WORDS = {2: cupy.int16, 4: cupy.int32, 8: cupy.int64, 16: cupy.complex128}  # bit for bit


def _copy(step: Copy, /) -> Call:
    """The broadcast copy of `step` into a new C-ordered array on `x`'s device (or `dest`)."""
    spread, view_shape = view_shapes(step.shape, step.reps)
    out_shape = tuple(d * r for d, r in zip(step.shape, step.reps, strict=True))
    last = max((i for i, r in enumerate(step.reps) if r != 1), default=0)

    def copy(x: Any, dest: Any) -> Any:
        if dest is not None and not dest.flags.c_contiguous:
            dest[...] = copy(x, None)
            return dest
        if x.data.device_id != cupy.cuda.runtime.getDevice():
            with x.device:
                return copy(x, dest)
        into = cupy.empty(out_shape, x.dtype) if dest is None else dest
        src, dst, shapes = x, into, (spread, view_shape)
        if step.item:  # runs as items, where both sides align to them
            words = [_words(t, last, step.item) for t in (x.reshape(step.shape), into)]
            if all(w is not None for w in words):
                (src, dst), runs = words, words[0].shape[-1]
                shapes = view_shapes((*step.shape[:last], runs), step.reps[: last + 1])
        if into.size:  # (`copyto`: slower to call; a reshape costs host time: none where no need)
            dst = dst if dst.shape == shapes[1] else dst.reshape(shapes[1])
            dst[...] = src if src.shape == shapes[0] else src.reshape(shapes[0])
        return into

    return copy


def _words(t: Any, last: int, item: int, /) -> Any:
    """`t`'s axes from `last` (contiguous) as one of integers of `item` bytes; None if unaligned."""
    if t.data.ptr % item or any(st % item for st in t.strides[:last]):
        return None
    shape = (*t.shape[:last], math.prod(t.shape[last:]) * t.itemsize // item)
    return cupy.ndarray(shape, _WORDS[item], t.data, strides=(*t.strides[:last], item))


def _overlap(a: Any, b: Any, /) -> bool:
    """Whether the memory spans of `a` and `b` overlap (a bound: strided views may not)."""
    # (not `cupy.may_share_memory`: arrays of two owners, DLPack's, are apart to it)

    def span(t: Any) -> tuple[int, int]:
        ends = [(d - 1) * st for d, st in zip(t.shape, t.strides, strict=True)]
        low = t.data.ptr + sum(e for e in ends if e < 0)
        return low, t.data.ptr + sum(e for e in ends if e > 0) + t.itemsize

    (a0, a1), (b0, b1) = span(a), span(b)
    return bool(a.size and b.size) and a0 < b1 and b0 < a1


def _layout(x: Any, /) -> Layout | None:
    """What the planner reads of a plain `cupy.ndarray`: shape, strides, element size."""
    if type(x) is not cupy.ndarray:
        return None
    return Layout(x.shape, x.strides, x.dtype.itemsize, as_bytes=True, unrecorded=True)


BACKEND = Backend(
    "cupy",
    device=DEVICE._replace(replicate=NONE, native=NONE),  # PyTorch's prices of a GPU
    layout=_layout,
    copy=_copy,
    check_out=lambda x, o, op, seen: check_apart(x, o, op, o.strides, o.itemsize, _overlap, seen),
    xp=xp,
    raw_key=attrgetter("shape", "strides", "dtype"),  # a program runs on any device
)
