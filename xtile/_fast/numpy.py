"""
NumPy: the copy by `numpy.copyto` with short runs as one void item, and doubling.

Measured against the standard-only tile (``docs/performance.md``): NumPy's copy of
the broadcast view loops over the last axis of `x`, a few elements per step when
it is short. Viewing the contiguous block after the last repeated axis as one item
lengthens each step to the whole block; for a large `x` whose runs are still
short, block doubling inside the output writes long runs.
"""

from typing import Any

import numpy as np

from .._agnostic import pairs, spread
from .._lib._tuning import LONG_RUN_BYTES, NUMPY_WORD_RUNS, SMALL_BYTES
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan

__all__ = ["FAST_PATH"]


def _copy(x: Array, plan: Plan, _xp: ArrayNamespace, /) -> Array:
    """
    The broadcast copy, into `numpy.empty` with `numpy.copyto`.

    Where the block of `x` after the last repeated axis is contiguous and short,
    it is viewed as *one* element of a void dtype, so that each step of the copy
    moves the whole block. `numpy.copyto` into `numpy.empty` also spares
    `numpy.broadcast_to`'s per-call cost on small arrays.
    """
    a = np.asarray(x)  # a NumPy scalar counts as a 0-D array
    shape, reps, out_shape, size = plan
    if a.ndim != len(shape):
        a = a.reshape(shape)  # prepends length-1 axes: a view
    dtype = a.dtype
    if size * dtype.itemsize >= SMALL_BYTES:
        last, run = plan.last, plan.run
        if (
            run > 1
            and run * dtype.itemsize < LONG_RUN_BYTES
            and _plain_bytes(dtype)
            and _c_contiguous(shape[last:], a.strides[last:], dtype.itemsize)
        ):
            a = a.reshape((*shape[:last], run)).view(np.dtype((np.void, run * dtype.itemsize)))
            shape, reps = (*shape[:last], 1), reps[: last + 1]
    out = np.empty(pairs(reps, shape), dtype=a.dtype)
    np.copyto(out, a.reshape(spread(shape)))
    return (out if out.dtype == dtype else out.view(dtype)).reshape(out_shape)


def _stage_itemsize(x: Array, /) -> int:
    """Every NumPy array stages: a cache-sized second copy is cheap on the CPU."""
    return int(x.dtype.itemsize)


def _double(x: Array, plan: Plan, run_bytes: int, /) -> Array | None:
    """
    Tile a large `x` with short runs by block doubling inside the output.

    Not for object or StringDType items (pointers, not bytes), nor for runs that
    NumPy copies as one machine word (`NUMPY_WORD_RUNS`), faster than doubling.

    NumPy copies through a temporary whenever the memory *bounds* of source and
    destination overlap, unless the destination is 1-D. So each doubling step is a
    1-D copy: one void element per outer index, spanning the filled part of the axis
    and everything inside it. That needs the outer part filled so far to be one
    strided axis; the repeated axes inside the innermost such axis ``k`` are filled
    first, by the broadcast copy of `x` into ``out[:d0, ..., :dk, ...]`` (a fraction
    ``1 / (r0 ... rk)`` of the output), the rest by doubling.
    """
    a = np.asarray(x)
    if run_bytes in NUMPY_WORD_RUNS or not _plain_bytes(a.dtype):
        return None
    shape, reps = plan.shape, plan.reps
    out = np.empty(plan.out_shape, dtype=a.dtype)
    strides = out.strides
    k = max(
        (i for i, r in enumerate(reps) if r != 1 and _as_one_axis(shape[:i], strides[:i])),
        default=-1,
    )
    # out[:d0, ..., :dk, ...] as (r, d) pairs, with repeats of 1 up to axis k
    steps = tuple(d * st for d, st in zip(shape, strides, strict=True))
    base = np.lib.stride_tricks.as_strided(
        out,
        pairs((1,) * (k + 1) + reps[k + 1 :], shape),
        pairs((0,) * (k + 1) + steps[k + 1 :], strides),
    )
    np.copyto(base, a.reshape(spread(shape)))
    for axis in reversed(range(k + 1)):
        count, stride = _as_one_axis(shape[:axis], strides[:axis]) or (1, 0)
        inner = strides[axis]  # bytes of one index of `axis`, everything inside it filled
        done, total = shape[axis], plan.out_shape[axis]
        while done < total:
            n = min(done, total - done)
            run = np.dtype((np.void, n * inner))
            src = np.ndarray((count,), dtype=run, buffer=out, strides=(stride,))
            dst = np.ndarray(
                (count,), dtype=run, buffer=out, offset=done * inner, strides=(stride,)
            )
            np.copyto(dst, src)
            done += n
    return out


def _plain_bytes(dtype: np.dtype[Any], /) -> bool:
    """Whether items of `dtype` may be copied as bytes: not object or StringDType."""
    return not dtype.hasobject and dtype.kind != "T"  # both hold pointers


def _as_one_axis(shape: tuple[int, ...], strides: tuple[int, ...], /) -> tuple[int, int] | None:
    """
    ``(count, stride)`` of a strided block that is one strided axis, else None.

    Axes of length 1 drop out; neighbours merge where the outer stride is the inner
    axis's whole extent. An empty block is one axis of one element.
    """
    axes = [(d, st) for d, st in zip(shape, strides, strict=True) if d != 1]
    if not axes:
        return 1, 0
    count, stride = axes[-1]
    for d, st in reversed(axes[:-1]):
        if st != count * stride:
            return None
        count *= d
    return count, stride


def _c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int, /) -> bool:
    """Whether a (sub-)array of this shape and these strides is one C-ordered block."""
    expected = itemsize
    for d, st in zip(reversed(shape), reversed(strides), strict=True):
        if d != 1 and st != expected:
            return False
        expected *= d
    return True


FAST_PATH = FastPath(copy=_copy, stage_itemsize=_stage_itemsize, double=_double)
