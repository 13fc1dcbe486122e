"""NumPy: `numpy.copyto` into views, runs moved as one item, copies in place, `numpy.repeat`."""

import functools
import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import array_api_compat.numpy as xp
import numpy as np

from .. import _threads
from .._program import Copy, Layout, Model, Price, Repeat, Replicate, split_at, view_shapes
from . import Backend, Call, check_apart

_MAX_VOID_BYTES = 1 << 30  # NumPy's void items hold fewer than 2**31 bytes


def _layout(x: Any, /) -> Layout | None:
    """What the planner reads of a plain `numpy.ndarray` (a NumPy scalar: as its 0-D array)."""
    plain = type(x) is np.ndarray or isinstance(x, np.generic)
    return _read(x.shape, x.strides, x.dtype) if plain else None


@functools.lru_cache(maxsize=256)
def _read(shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any, /) -> Layout:
    """The layout of an array: kept, since a dtype's fields are slow to read."""
    as_bytes = not dtype.hasobject and dtype.kind != "T"  # object and string items: pointers
    return Layout(shape, strides, dtype.itemsize, as_bytes, unrecorded=True, on_host=True)


def _whole_items(a: np.ndarray[Any, Any], fill: bool = False, /) -> np.ndarray[Any, Any]:
    """`a` with structured items as raw bytes (padding too), complex64 ones as uint64 to fill."""
    if fill and a.dtype.char == "F":  # NumPy fills complex64 items 1.6 times slower than uint64
        return a.view(np.uint64)
    if a.dtype.names is None or a.dtype.hasobject:
        return a
    return a.view(np.dtype((np.void, a.dtype.itemsize)))


def _copy(step: Copy, /, by_index: bool = True) -> Call:
    """The broadcast copy of `step` into a fresh array or `dest`; a short fill by index if asked."""
    out_shape = tuple(d * r for d, r in zip(step.shape, step.reps, strict=True))
    if 0 in out_shape:
        return lambda x, dest: np.empty(out_shape, np.asarray(x).dtype) if dest is None else dest
    size, axes = math.prod(out_shape), [i for i, r in enumerate(step.reps) if r != 1]
    if step.item:
        last, n = axes[-1], step.item
        item = np.dtype(f"u{n}" if n in (1, 2, 4, 8) else (np.void, n))  # a uint where one fits
        blocks = (*step.shape[:last], -1)
        runs = Copy((*step.shape[:last], 1), step.reps[: last + 1])
        copy_runs: Call = _copy(runs, step.region is not None)  # by index: into a corner only

        def copy_items(x: Any, dest: Any) -> Any:
            a = np.asarray(x)
            into = np.empty(out_shape, a.dtype) if dest is None else dest
            runs = into.reshape(*out_shape[:last], -1).view(item)  # its axes from `last` whole
            copy_runs(a.reshape(blocks).view(item), runs)
            return into

        return copy_items
    spread, view_shape = view_shapes(step.shape, step.reps)
    split, fill = by_index and split_at(spread, view_shape), spread[-1:] != view_shape[-1:]

    def copy(x: Any, dest: Any) -> Any:
        a = np.asarray(x)
        w, nbytes = _whole_items(a, fill), size * a.itemsize
        if dest is None:
            target = np.empty(view_shape, w.dtype)
        else:  # each axis of a pair split in two, which NumPy reshapes as a view of any strides
            # (a subclass's own `__setitem__` not called, as by `numpy.copyto`)
            target = _whole_items(np.asarray(dest), fill).reshape(view_shape)
        source = w.reshape(spread)
        if split:  # a short broadcast last axis: one copy per index, each of long loops
            _parallel(_by_index, target.reshape(view_shape[:split]), source.reshape(spread[:split]))
        elif nbytes < _threads.PARALLEL_BYTES:  # the common case, first (faster than copyto)
            target[...] = source
        else:
            _parallel(np.copyto, target, source)
        if dest is not None:
            return dest
        return (target if w is a else target.view(a.dtype)).reshape(out_shape)

    return copy


def _by_index(target: np.ndarray[Any, Any], source: np.ndarray[Any, Any], /) -> None:
    """`source` (its last axis of length 1) copied to each index of `target`'s last axis."""
    for j in range(target.shape[-1]):
        np.copyto(target[..., j], source[..., 0])


def _parallel(copy: Callable[..., object], target: Any, source: Any, axes: int = 64, /) -> None:
    """``copy(target, source)``, in slabs of one of `target`'s first `axes`, on threads if big."""
    if target.nbytes < _threads.PARALLEL_BYTES or target.dtype.hasobject:
        copy(target, source)
        return
    n = min(_threads.count(), target.size)
    axis = next((i for i, d in enumerate(target.shape[:axes]) if d % n == 0 or d >= 8 * n), None)
    if n == 1 or axis is None or target.dtype.kind == "T":
        copy(target, source)
        return
    k = min(target.shape[axis], _threads.SHARES * n)
    cuts = [target.shape[axis] * i // k for i in range(k + 1)]
    parts = [(*(slice(None),) * axis, slice(a, b)) for a, b in itertools.pairwise(cuts)]
    same = source.shape[axis] == 1  # `source` broadcast along `axis`
    _threads.run([functools.partial(copy, target[p], source if same else source[p]) for p in parts])


def _repeat(step: Repeat, /) -> Call:
    """`numpy.repeat` of the blocks from `step.axis` on, as `numpy.tile` does."""
    n = math.prod(step.shape[step.axis :])

    shape = (*step.shape[: step.axis], step.shape[step.axis] * step.r, *step.shape[step.axis + 1 :])

    def repeat(x: Any, _: Any) -> Any:
        w = _whole_items(a := np.asarray(x))
        out = w.reshape(-1, n).repeat(step.r, 0).reshape(shape)
        return out if w is a else out.view(a.dtype)

    return repeat


def _replicate(out: Any, step: Replicate, /) -> None:
    """A prefix along an axis copied in place: doubled as 1-D void copies, else spread."""
    places, axis, n, stop = step
    inner = out.strides[axis]  # bytes of one index of `axis`, everything inside it whole
    if stop <= 2 * n:  # 1-D copies of void items, which NumPy makes in place
        axes = [(d, st) for d, st in zip(places, out.strides[:axis], strict=True) if d != 1]
        count, stride = (math.prod(d for d, _ in axes), axes[-1][1]) if axes else (1, 0)
        nbytes, dst = (stop - n) * inner, n * inner
        split = count == 1 and nbytes >= _threads.PARALLEL_BYTES  # one place's bytes in slabs
        shares = _threads.SHARES * _threads.count()
        size = min(_MAX_VOID_BYTES, -(-nbytes // shares) if split else nbytes)
        calls = []
        for at in range(0, nbytes, size):
            item = np.dtype((np.void, min(size, nbytes - at)))
            to, of = (np.ndarray((count,), item, out, off + at, (stride,)) for off in (dst, 0))
            calls.append(functools.partial(_parallel, np.copyto, to, of))
        _threads.run(calls)
        return
    flat = out.reshape(-1).view(np.uint8)  # one place, by the plan: the prefix comes first
    block, whole = n * inner, stop // n
    _parallel(np.copyto, flat[block : whole * block].reshape(whole - 1, block), flat[None, :block])
    if rest := stop * inner - whole * block:
        flat[whole * block : whole * block + rest] = flat[:rest]


def _unwrap(x: Any, /) -> tuple[tuple[Any, ...], Callable[..., Any]] | None:
    """A masked array's data and mask; a memory map's data; None for a plain array."""
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return None
    if isinstance(x, np.ma.MaskedArray):
        fill = None if np.array_equal(x.fill_value, np.ma.default_fill_value(x)) else x.fill_value
        rebuild = functools.partial(np.ma.MaskedArray, fill_value=fill)  # implicit: as numpy.tile
        return (np.ma.getdata(x), np.ma.getmaskarray(x)), rebuild  # (explicit, it would be cast)
    if isinstance(x, np.memmap):
        return (np.asarray(x),), np.asarray
    msg = (
        f"xtile: cannot tile a {type(x).__module__}.{type(x).__name__}, a numpy.ndarray subclass "
        "unknown to xtile; pass `np.asarray(x)` (and rebuild it), or use its own tile."
    )
    raise TypeError(msg)


def _check_out(x: Any, out: Any, op: str, seen: bool, /) -> None:
    """`out` not masked, its elements distinct and apart from `x`'s memory."""
    if isinstance(out, np.ma.MaskedArray):
        msg = f"{op}: `out` takes plain arrays, not a masked array (its mask would stay)."
        raise TypeError(msg)
    check_apart(x, out, op, out.strides, out.itemsize, np.shares_memory, seen)


MODEL = Model(  # benchmarks/fit_cost.py
    copy=Price(2321.0, 3.571, 0.0, 0.02488, 0.0225),
    item=Price(3564.0, 3.722, 0.1394, 0.05433, 0.0),
    void=Price(3883.0, 3.961, 1.5, 0.02472, 0.02353),
    repeat=Price(1415.0, 2.0, 1.1, 0.02314, 0.08247),  # per source block
    replicate=Price(6361.0, 2.181, 0.45, 0.03887, 0.06),
    split=Price(8136.0, 0.5285, 0.4257, 0.03349, 0.03349),
    words=frozenset({2, 4, 8}),
)
BACKEND = Backend(
    "numpy",
    model=MODEL,
    device=MODEL,
    layout=_layout,
    copy=_copy,
    repeat=_repeat,
    replicate=_replicate,
    unwrap=_unwrap,
    check_out=_check_out,
    xp=xp,
    raw_key=operator.attrgetter("shape", "strides", "dtype"),
)
