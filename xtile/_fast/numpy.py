"""
NumPy's primitives: `numpy.copyto` into views, short runs as one item, copies in place.

NumPy's copy of the broadcast view loops over its last axis, a few elements per
step when the runs are short: a contiguous run viewed as one item (an unsigned
integer, or void) is moved in one step. Doubling steps inside one output are 1-D
copies of void items, which NumPy makes in place (it copies through a
temporary whenever the memory bounds of a multi-dimensional source and
destination overlap); a prefix is copied to many places at once only where it is
one block before them. Where one axis repeats, `numpy.repeat` of whole blocks is
one pass, as in `numpy.tile`.
"""

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _threads
from .._agnostic import CopyCall, Primitives, view_shapes
from .._lib._helpers import overlaps_itself
from .._lib._typing import Array, ArrayNamespace, Plan
from .._plan import LONG_RUN_BYTES, Layout, Move, Repeat, Spread, Tuning, items

__all__ = ["PRIMITIVES"]

# NumPy's void items hold fewer than 2**31 bytes
_MAX_VOID_BYTES = 1 << 30


def _layout(x: Array, /) -> Layout | None:
    """What the planner reads of a plain `numpy.ndarray` (a NumPy scalar: its 0-D array)."""
    a: Any = x
    if type(a) is not np.ndarray:
        if not isinstance(a, np.generic):
            return None
        a = np.asarray(a)
    dtype = a.dtype
    raw = not dtype.hasobject and dtype.kind != "T"  # both hold pointers, not bytes
    # tuple.__new__: a NamedTuple's own __new__ costs a tenth of a small tile
    return tuple.__new__(Layout, (a.shape, a.strides, dtype.itemsize, raw, True, True, 1))


def _copier(plan: Plan, item: int, _xp: ArrayNamespace, /) -> CopyCall:
    """
    The broadcast copy of an array tiled by `plan`, into a fresh array or `out` (any strides).

    With `item` (into a fresh array): each run of the block after the last repeated
    axis, contiguous by the plan, as one item of that many bytes.
    """
    spread, view_shape = view_shapes(plan.shape, plan.reps)
    out_shape = plan.out_shape
    if not plan.size:  # no view of its shape, which may overflow
        return lambda x, out: np.empty(out_shape, np.asarray(x).dtype) if out is None else out
    if item:  # into a fresh output, or a corner that is one block of it
        blocks, item_dtype = (*plan.shape[: plan.last], -1), _item_dtype(item)
        items_plan = items(plan)
        items_copy = _copier(items_plan, 0, _xp)

        def copy_items(x: Array, out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
            """The runs as items."""
            a = np.asarray(x)
            runs = a.reshape(blocks).view(item_dtype)
            if out is not None:
                o: np.ndarray[Any, Any] = out  # type: ignore[assignment]
                assert o.flags.c_contiguous  # by the plan
                items_copy(runs, o.reshape(-1).view(item_dtype).reshape(items_plan.out_shape))
                return o
            return np.asarray(items_copy(runs, None)).view(a.dtype).reshape(out_shape)

        return copy_items

    split = _split(spread, view_shape)  # the view's axes up to its last of length above 1

    def copy(x: Array, out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
        """One `numpy.copyto` of the broadcast view into a view of the output."""
        a = np.asarray(x)  # a NumPy scalar counts as a 0-D array
        if out is None:
            target = np.empty(view_shape, dtype=a.dtype)
        elif out.flags.c_contiguous:  # type: ignore[attr-defined]
            target = out.reshape(view_shape)  # type: ignore[attr-defined]
        else:  # each axis of a pair split in two: a view of any strides
            strides: list[int] = []
            for d, r, st in zip(plan.shape, plan.reps, out.strides, strict=True):  # type: ignore[attr-defined]
                strides += (d * st, st) if d != 1 != r else (st,)
            target = np.lib.stride_tricks.as_strided(out, view_shape, strides)  # type: ignore[call-overload]
        source = a.reshape(spread)
        if split:  # a short broadcast last axis: one copy per index, each of long loops
            _parallel(_by_index, target.reshape(view_shape[:split]), source.reshape(spread[:split]))
        elif plan.size * a.itemsize < _threads.PARALLEL_BYTES:  # the common case, first
            np.copyto(target, source)
        else:
            _parallel(np.copyto, target, source)
        return target.reshape(out_shape) if out is None else out

    return copy


def _by_index(target: np.ndarray[Any, Any], source: np.ndarray[Any, Any], /) -> None:
    """`source` (its last axis of length 1) copied to each index of `target`'s last axis."""
    for j in range(target.shape[-1]):
        np.copyto(target[..., j], source[..., 0])


def _parallel(
    copy: Callable[[Any, Any], object], target: np.ndarray[Any, Any], source: Any, /
) -> None:
    """
    ``copy(target, source)``, in slabs of `target` on every thread (`xtile._threads`) if big.

    `source` has `target`'s rank (axes of length 1 broadcast). The slabs cut the
    first axis that splits evenly enough; items that hold pointers (object,
    StringDType) stay on one thread, as their copy holds the GIL.
    """
    if target.nbytes < _threads.PARALLEL_BYTES or target.dtype.hasobject:
        copy(target, source)
        return
    n = min(_threads.count(), target.size)
    axis = next((i for i, d in enumerate(target.shape) if d % n == 0 or d >= 8 * n), None)
    if n == 1 or axis is None or target.dtype.kind == "T":
        copy(target, source)
        return
    d = target.shape[axis]
    cuts = [d * i // n for i in range(n + 1)]
    head = (slice(None),) * axis

    def slab(a: int, b: int) -> Callable[[], object]:  # numpydoc ignore=PR01,RT01
        """The copy of indices `a` to `b` of the axis."""
        part = (*head, slice(a, b))
        return lambda: copy(target[part], source if source.shape[axis] == 1 else source[part])

    _threads.run([slab(a, b) for a, b in itertools.pairwise(cuts)])


def _split(spread: tuple[int, ...], view_shape: tuple[int, ...], /) -> int:
    """
    The axes up to the view's last of length above 1, where the copy goes one index of it at a time.

    NumPy's copy loops over the last axis innermost: a broadcast last axis of 2 to 4
    (a short fill) makes every loop that short, where the axis before it is longer
    and not itself a broadcast (NumPy merges two broadcasts into one fill). 0: one copy.
    """
    n = max((i + 1 for i, d in enumerate(view_shape) if d != 1), default=0)
    if n < 2 or spread[n - 1] != 1 or spread[n - 2] == 1:
        return 0
    return n if 1 < view_shape[n - 1] <= 4 < view_shape[n - 2] else 0


def _item_dtype(nbytes: int, /) -> np.dtype[Any]:
    """
    The dtype a run of `nbytes` is moved as: an unsigned integer where one fits, else void.

    NumPy copies integers with its specialised loops, void items byte by byte.
    """
    if nbytes in (1, 2, 4, 8):
        return np.dtype(f"u{nbytes}")
    return np.dtype((np.void, nbytes))


def _repeater(step: Repeat, /) -> CopyCall:
    """
    `numpy.repeat` of the blocks of a C-contiguous array from `step.axis` on, as a call.

    A big output of long blocks is their broadcast copy instead, which goes in slabs
    on every thread (`_parallel`); `numpy.repeat` runs on one.
    """
    plan = step.plan
    n, r, out_shape = math.prod(plan.shape[step.axis :]), plan.reps[step.axis], plan.out_shape

    def repeat(x: Array, _out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
        """The one pass, or the copy in slabs."""
        a = np.asarray(x).reshape(-1, n)
        if (
            a.nbytes * r < _threads.PARALLEL_BYTES
            or n * a.itemsize < LONG_RUN_BYTES
            or _threads.count() == 1
        ):
            return a.repeat(r, 0).reshape(out_shape)
        out = np.empty((a.shape[0], r, n), a.dtype)
        _parallel(np.copyto, out, a[:, None])
        return out.reshape(out_shape)

    return repeat


def _move(out: Array, step: Move, /) -> None:
    """One doubling step inside a fresh output: 1-D copies of void items, in place."""
    o: np.ndarray[Any, Any] = out  # type: ignore[assignment]
    places, axis, at, n = step
    one = _as_one_axis(places, o.strides[:axis])
    assert one is not None  # the plan's places are one strided axis
    count, stride = one
    inner = o.strides[axis]  # bytes of one index of `axis`, everything inside it whole
    _copy_bytes(o, 0, at * inner, n * inner, count, stride)


def _spread(out: Array, step: Spread, /) -> None:
    """The prefix of a fresh output copied to its other whole places at once, then the rest."""
    o: np.ndarray[Any, Any] = out  # type: ignore[assignment]
    _, axis, k, total = step  # one place, by the plan: the prefix is the first bytes
    inner = o.strides[axis]
    flat = o.reshape(-1).view(np.uint8)
    block, whole = k * inner, total // k
    _parallel(np.copyto, flat[block : whole * block].reshape(whole - 1, block), flat[None, :block])
    rest = total * inner - whole * block
    if rest:
        flat[whole * block : whole * block + rest] = flat[:rest]


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
        _parallel(
            np.copyto,
            np.ndarray((count,), dtype=item, buffer=out, offset=dst + part, strides=(stride,)),
            np.ndarray((count,), dtype=item, buffer=out, offset=src + part, strides=(stride,)),
        )


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
        # a default stays implicit, as in numpy.tile: given explicitly it would be cast
        # to the dtype (1e20 to inf in float16, with an overflow warning)
        if np.array_equal(fill_value, np.ma.default_fill_value(x)):
            fill_value = None

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
    o = np.asarray(out)
    if overlaps_itself(o.shape, o.strides, o.itemsize):
        msg = (
            f"{op}: `out` has elements that share memory (strides {o.strides}); pass an "
            "array whose elements are distinct, e.g. `out.copy()`."
        )
        raise ValueError(msg)
    if np.shares_memory(np.asarray(x), o):
        msg = f"{op}: `out` shares memory with the input; pass a separate array."
        raise ValueError(msg)


PRIMITIVES = Primitives(
    tuning=Tuning(
        stage=True,
        extend=True,
        words=frozenset({2, 4, 8, 16}),
        any_item=True,
        repeat=True,
    ),
    layout=_layout,
    copier=_copier,
    move=_move,
    spread=_spread,
    repeater=_repeater,
    unwrap=_unwrap,
    check_out=_check_out,
)
