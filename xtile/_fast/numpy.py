"""
NumPy: the copy by `numpy.copyto` with short runs as one void item, and doubling.

Measured against the standard-only tile (``docs/performance.md``): NumPy's copy of
the broadcast view loops over the last axis of `x`, a few elements per step when
it is short. Viewing the contiguous block after the last repeated axis as one item
lengthens each step to the whole block; for a large `x` whose runs are still
short, block doubling inside the output writes long runs.
"""

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._agnostic import outer_block, rest_axis, staging, view_shapes
from .._lib._helpers import chain
from .._lib._tuning import (
    LONG_RUN_BYTES,
    MAX_DIMS,
    NUMPY_REPEAT_BLOCKS,
    NUMPY_WORD_RUNS,
    SMALL_BYTES,
    STAGE_MAX_BYTES,
)
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan

__all__ = ["FAST_PATH"]

# A broadcast last axis of the view this short (the repeats of a short block) is
# copied one index at a time, where the axis before it is longer: NumPy's
# copy loops over the last axis innermost, a few elements per loop. (300, 20, 2) x
# (3, 2, 2) float32: 109 us against 266 (`numpy.tile` 176); (3, 2, 8): no faster.
_SPLIT_INNER = 4

# NumPy's void items hold fewer than 2**31 bytes
_MAX_VOID_BYTES = 1 << 30


def _copy(x: Array, plan: Plan, _xp: ArrayNamespace, /, out: Array | None = None) -> Array:
    """
    The copy of `_copier`, for `x` as it is, into a fresh array or `out`.

    Into an `out` of other strides than C order: `numpy.copyto` into its view of
    the broadcast shape, which only splits axes.
    """
    a = np.asarray(x)  # a NumPy scalar counts as a 0-D array
    if a.ndim != len(plan.shape):
        a = a.reshape(plan.shape)  # prepends length-1 axes: a view
    if out is None:
        return _copier(plan, a.dtype, a.strides)(a)
    o: np.ndarray[Any, Any] = out  # type: ignore[assignment]
    if o.flags.c_contiguous:
        _copier(plan, a.dtype, a.strides, into=True)(a, o)
    else:  # its view of the broadcast shape: each axis of a pair split in two
        spread, view_shape = view_shapes(plan.shape, plan.reps)
        strides: list[int] = []
        for d, r, st in zip(plan.shape, plan.reps, o.strides, strict=True):
            strides += (d * st, st) if d != 1 != r else (st,)
        np.copyto(np.lib.stride_tricks.as_strided(o, view_shape, strides), a.reshape(spread))
    return o


def _copier(
    plan: Plan, dtype: np.dtype[Any], strides: tuple[int, ...], /, *, into: bool = False
) -> Callable[..., Array]:
    """
    The one copy of the tile of an array of ``plan.shape``, `dtype` and `strides`.

    A plain copy or `numpy.repeat` where at most one axis repeats (`_one_pass`);
    else the broadcast copy, into `numpy.empty` with `numpy.copyto` (which spares
    `numpy.broadcast_to`'s per-call cost on small arrays). Where the block after
    the last repeated axis is contiguous and short, it is viewed as *one* element
    of a void dtype, so that each step of the copy moves the whole block.

    `into`: a call of the input and a C-contiguous output to write; the broadcast
    copy for one pass too (`numpy.repeat` has no ``out``).
    """
    shape, reps, out_shape, size = plan
    itemsize = dtype.itemsize
    contiguous = _c_contiguous(shape, strides, itemsize)
    one_pass = None if into else _one_pass(plan, contiguous=contiguous)
    if one_pass is not None:
        return one_pass
    last, run = plan.last, plan.run
    if (
        not into
        and size * itemsize >= SMALL_BYTES
        and run * itemsize in NUMPY_REPEAT_BLOCKS
        and size // reps[last] * itemsize <= STAGE_MAX_BYTES
    ):
        # the other axes first, into a cache-sized array, then one pass of `numpy.repeat`
        # of its blocks, whose loops for these sizes beat the broadcast copy (as in
        # `numpy.tile`'s last pass); (50, 2, 4) x (3, 1, 1000) float64: 177 us against 778
        outer = plan._replace(
            reps=(*reps[:last], 1, *reps[last + 1 :]),
            out_shape=(*out_shape[:last], shape[last], *out_shape[last + 1 :]),
            size=size // reps[last],
        )
        first = _copier(outer, dtype, strides)
        r = reps[last]
        return lambda a: np.asarray(first(a)).reshape(-1, run).repeat(r, 0).reshape(out_shape)
    if (
        size * itemsize >= SMALL_BYTES
        and run > 1
        and run * itemsize < LONG_RUN_BYTES
        and _plain_bytes(dtype)
        and _c_contiguous(shape[last:], strides[last:], itemsize)
    ):
        void = _block_dtype(run * itemsize)
        blocks = (*shape[:last], run)
        copy = _broadcast_copy((*shape[:last], 1), reps[: last + 1], (-1,), void)
        if into:
            return lambda a, out: copy(
                np.asarray(a).reshape(blocks).view(void), out.reshape(-1).view(void)
            )
        return lambda a: (
            np.asarray(copy(np.asarray(a).reshape(blocks).view(void)))
            .view(dtype)
            .reshape(out_shape)
        )
    return _broadcast_copy(shape, reps, out_shape, dtype)


def _block_dtype(nbytes: int, /) -> np.dtype[Any]:
    """
    The dtype a block of `nbytes` is copied as: an unsigned integer where one fits.

    NumPy copies integers with its specialised loops and void items byte by byte:
    (300, 20, 2) x (3, 2, 128) int8, 2-byte blocks: 2.5 ms as void items, 0.8 ms as
    uint16 (`numpy.tile` 0.3 ms, a fill by `numpy.repeat`).
    """
    if nbytes in (1, 2, 4, 8):
        return np.dtype(f"u{nbytes}")
    return np.dtype((np.void, nbytes))


def _broadcast_copy(
    shape: tuple[int, ...], reps: tuple[int, ...], out_shape: tuple[int, ...], dtype: Any, /
) -> Callable[..., Array]:
    """The copy of the broadcast view of an array of `shape`, as a call (into C-order `out`)."""
    spread, view_shape = view_shapes(shape, reps)
    # the last axis of length above 1: a broadcast one, which NumPy cannot merge with
    # the axis before it, is copied index by index if short and that one longer; not
    # where that one is a broadcast too, which NumPy merges into one fill: (2, 2, 1, 1)
    # x (6, 1, 98940, 4) int16 into `out`, 6.1 ms index by index, 1.0 ms as one fill
    last = max((i for i, n in enumerate(view_shape) if n != 1), default=0)
    inner = view_shape[last] if last and spread[last] == 1 else 0
    if not 1 < inner <= _SPLIT_INNER or view_shape[last - 1] <= inner or spread[last - 1] == 1:
        inner = 0
    spread, view_shape = (
        (spread[: last + 1], view_shape[: last + 1]) if inner else (spread, view_shape)
    )

    def copy(
        a: Array, out: np.ndarray[Any, Any] | None = None
    ) -> Array:  # numpydoc ignore=PR01,RT01
        """The copy, into a fresh array or `out`."""
        target = np.empty(view_shape, dtype=dtype) if out is None else out.reshape(view_shape)
        source = np.asarray(a).reshape(spread)
        if not inner:
            np.copyto(target, source)
        for j in range(inner):
            np.copyto(target[..., j], source[..., 0])
        return target.reshape(out_shape)

    return copy


def _one_pass(plan: Plan, /, *, contiguous: bool) -> Callable[[Array], Array] | None:
    """
    The tile as one pass of whole blocks, where at most one axis repeats; else None.

    All-ones repeats are a plain copy. One repeated axis is `numpy.repeat` of the
    block from that axis on, as `numpy.tile` does: a memcpy per block (specialised
    for blocks of 1 to 32 bytes), where the broadcast copy steps element by element
    through short blocks. It needs `x` C-contiguous to view it as rows of blocks.
    """
    axes = [i for i, r in enumerate(plan.reps) if r != 1]
    out_shape = plan.out_shape
    if not plan.size or len(axes) > 1:
        return None
    if not axes:
        return lambda a: np.asarray(a).copy().reshape(out_shape)
    if not contiguous:
        return None
    n, r = math.prod(plan.shape[axes[0] :]), plan.reps[axes[0]]
    return lambda a: np.asarray(a).reshape(-1, n).repeat(r, 0).reshape(out_shape)


def _layout(x: Array, /) -> tuple[object, ...] | None:
    """The plan cache's key of a plain `numpy.ndarray`: shape, strides and dtype."""
    if type(x) is not np.ndarray:
        return None
    return x.shape, x.strides, x.dtype


def _compile(x: Array, plan: Plan, /) -> Callable[[Array], Array] | None:
    """
    A cached call's tile: the staging levels and the final copy, each planned once.

    The same steps as the full tile's (a final copy in parts as `in_parts`, or from
    the first block as `from_block`); None where that doubles (it is then run as it
    is) or concatenates first (`fit_rank`).
    """
    a: np.ndarray[Any, Any] = x  # type: ignore[assignment]
    dtype, itemsize = a.dtype, a.dtype.itemsize
    if 2 * len(plan.shape) > MAX_DIMS:
        return None
    levels, final, run_bytes = staging(plan, itemsize, ragged=True)
    if not levels and (block := outer_block(final, itemsize, FAST_PATH)):
        return _block_copier(final, block, dtype, a.reshape(plan.shape).strides)
    if run_bytes and _doubling_pays(dtype, run_bytes):
        return None
    first, *rest = [*levels, final]
    steps = [_copier(first, dtype, a.reshape(plan.shape).strides)]
    if rest_axis(final) is not None:
        rest.pop()
        steps.append(_parts_copier(final))
    steps[1:1] = [_copier(p, dtype, _c_strides(p.shape, itemsize)) for p in rest]
    return chain(steps)


def _block_copier(
    plan: Plan, block: Plan, dtype: np.dtype[Any], strides: tuple[int, ...], /
) -> Callable[[Array], Array]:
    """`from_block` for a cached plan of an array of `strides`: its two copies planned once."""
    fill = _copier(block, dtype, strides[len(plan.shape) - len(block.shape) :], into=True)
    repeats, out_shape, shape = plan.size // block.size, plan.out_shape, block.shape
    block_shape = block.out_shape

    def copy(a: Array) -> Array:  # numpydoc ignore=PR01,RT01
        """The first block, then copied from there to the others."""
        out = np.empty((repeats, *block_shape), dtype=dtype)
        fill(np.asarray(a).reshape(shape), out[0])
        np.copyto(out[1:], out[:1])  # the source wholly before: no temporary
        return out.reshape(out_shape)

    return copy


def _parts_copier(plan: Plan, /) -> Callable[[Array], Array]:
    """
    `in_parts` for a cached plan, its two copies planned once.

    Staging splits only an outermost axis (`stage_cuts`): the output is flat, the
    staged array repeated, then a prefix of it.
    """
    axis = rest_axis(plan)
    assert axis is not None  # the caller checked
    block, repeats, size, out_shape = (
        math.prod(plan.shape),
        plan.reps[axis],
        plan.size,
        plan.out_shape,
    )
    head = block * repeats

    def copy(staged: Array) -> Array:  # numpydoc ignore=PR01,RT01
        """The staged array `repeats` times, then its first ``size - head`` elements."""
        s = np.asarray(staged).reshape(-1)  # a fresh staging level: contiguous
        out = np.empty(size, dtype=s.dtype)
        np.copyto(out[:head].reshape(repeats, block), s)
        out[head:] = s[: size - head]
        return out.reshape(out_shape)

    return copy


def _c_strides(shape: tuple[int, ...], itemsize: int, /) -> tuple[int, ...]:
    """The strides of a C-contiguous array of `shape`."""
    strides = [itemsize]
    for d in reversed(shape[1:]):
        strides.append(strides[-1] * d)
    return tuple(reversed(strides))


def _stage_itemsize(x: Array, /) -> int:
    """Every NumPy array stages: a cache-sized second copy is cheap on the CPU."""
    return int(x.dtype.itemsize)


def _double(x: Array, plan: Plan, run_bytes: int, /, out: Array | None = None) -> Array | None:
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
    if not _doubling_pays(a.dtype, run_bytes):
        return None
    o: np.ndarray[Any, Any] = np.empty(plan.out_shape, dtype=a.dtype) if out is None else out  # type: ignore[assignment]
    if not o.flags.c_contiguous:
        return None  # its bytes are copied by offset, which needs one block
    shape, reps = plan.shape, plan.reps
    strides = o.strides
    k = max(
        (i for i, r in enumerate(reps) if r != 1 and _as_one_axis(shape[:i], strides[:i])),
        default=-1,
    )
    # out[:d0, ..., :dk, ...] as the broadcast view of x, with repeats of 1 up to axis k
    base_reps = (1,) * (k + 1) + reps[k + 1 :]
    spread, view_shape = view_shapes(shape, base_reps)
    view_strides: list[int] = []
    for d, r, st in zip(shape, base_reps, strides, strict=True):
        view_strides += (d * st, st) if d != 1 != r else (st,)
    base = np.lib.stride_tricks.as_strided(o, view_shape, view_strides)
    np.copyto(base, a.reshape(spread))
    for axis in reversed(range(k + 1)):
        count, stride = _as_one_axis(shape[:axis], strides[:axis]) or (1, 0)
        inner = strides[axis]  # bytes of one index of `axis`, everything inside it filled
        done, total = shape[axis], plan.out_shape[axis]
        while done < total:
            n = min(done, total - done)
            _copy_bytes(o, 0, done * inner, n * inner, count, stride)
            done += n
    return o


def _copy_bytes(
    out: np.ndarray[Any, Any], src: int, dst: int, nbytes: int, count: int, stride: int, /
) -> None:
    """
    Copy `nbytes` from offset `src` to `dst` of `out`, at `count` places `stride` apart.

    Each copy is 1-D, one void item per place, so that NumPy copies in place; a void
    item holds at most `_MAX_VOID_BYTES`, so a longer run goes in parts.
    """
    for part in range(0, nbytes, _MAX_VOID_BYTES):
        size = min(_MAX_VOID_BYTES, nbytes - part)
        item = np.dtype((np.void, size))
        np.copyto(
            np.ndarray((count,), dtype=item, buffer=out, offset=dst + part, strides=(stride,)),
            np.ndarray((count,), dtype=item, buffer=out, offset=src + part, strides=(stride,)),
        )


def _doubling_pays(dtype: np.dtype[Any], run_bytes: int, /) -> bool:
    """Whether runs of `run_bytes` of `dtype` double faster than NumPy copies them."""
    return run_bytes not in NUMPY_WORD_RUNS and _plain_bytes(dtype)


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


def _unwrap(x: Array, /) -> tuple[tuple[Array, ...], Callable[..., Array]] | None:
    """
    The plain arrays in an array of a subclass of `numpy.ndarray`; None for a plain one.

    A masked array keeps its mask (tiled alike) and fill value, as with `numpy.tile`.
    A memory map's tile is a plain array: it is new memory, not the file (NumPy's own
    rule for results of a memmap that do not share its memory). Any other subclass
    raises: xtile would not know what its own data mean (units, say).
    """
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return None
    if isinstance(x, np.ma.MaskedArray):
        fill_value = x.fill_value

        def masked(data: Array, mask: Array) -> Array:
            out: Array = np.ma.MaskedArray(data, mask=mask, fill_value=fill_value)  # type: ignore[call-overload]
            return out

        return (np.ma.getdata(x), np.ma.getmaskarray(x)), masked
    if isinstance(x, np.memmap):
        return (np.asarray(x),), np.asarray
    msg = (
        f"xtile: cannot tile a {type(x).__module__}.{type(x).__name__}, a subclass of "
        "numpy.ndarray whose extra meaning xtile does not know; pass `np.asarray(x)` to "
        "tile its data (and rebuild the subclass), or use its own tile."
    )
    raise TypeError(msg)


def _check_out(x: Array, out: Array, op: str, /) -> None:
    """`out` must not share memory with `x`, nor be a masked array (its mask unset)."""
    if isinstance(out, np.ma.MaskedArray):
        msg = f"{op}: `out` takes plain arrays, not a masked array (its mask would stay)."
        raise TypeError(msg)
    if np.shares_memory(np.asarray(x), np.asarray(out)):
        msg = f"{op}: `out` shares memory with the input; pass a separate array."
        raise ValueError(msg)


FAST_PATH = FastPath(
    copy=_copy,
    stage_itemsize=_stage_itemsize,
    double=_double,
    unwrap=_unwrap,
    layout=_layout,
    compile=_compile,
    check_out=_check_out,
    parts=lambda _x: True,  # `numpy.copyto` writes any view in place
    repeat_blocks=NUMPY_REPEAT_BLOCKS,  # `_copier`: the other axes staged, then `numpy.repeat`
)
