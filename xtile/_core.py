"""
The one Tile, written against the array API standard: views, then one copy.

Every public function ends in `tile`. It computes the promoted shapes once, then
materializes the broadcast view ``(r0, d0, r1, d1, ...)`` of `x` with one copy into
a fresh array. A copy runs at memory speed only when its contiguous runs are long,
so on eager CPU backends a small cost model picks how the output is written when
they are short: from a small staging array of the inner axes (`_stage_cuts`; at
most `_STAGE_MAX_BYTES`, cache-resident), or, for an `x` too large to stage, by
block doubling inside the output (`_DOUBLINGS`). GPUs keep the one-kernel copy; JAX
and Dask plan their own. Backend-specific code is confined to the measured branches
below (`_COPIES`, `_DOUBLINGS`), each under the same parity and memory tests.
"""

import functools
import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

from ._lib import _compat
from ._lib._helpers import plan, promote
from ._lib._typing import Array, ArrayNamespace

__all__ = ["tile"]

# Below this output size the call's fixed cost dominates: copy directly (measured)
_SMALL_BYTES = 1 << 16
_MAX_ITEMSIZE = 16  # complex128
# A copy whose contiguous runs are this long runs at memory speed (measured)
_LONG_RUN_BYTES = 512
# The staging arrays stay in L1/L2 cache, and the peak memory stays output + O(1)
_STAGE_MAX_BYTES = 1 << 15
# Each staging level multiplies the run by at least this much, else its call costs more
_LEVEL_GROWTH = 8


def tile(
    x: Array, reps: tuple[int, ...], /, *, xp: ArrayNamespace, op: str
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps`; see `xtile.tile`."""
    shape, reps, out_shape = plan(x, reps, op=op)
    backend = _compat.backend(xp)
    if backend == "jax":
        return _jax_tile()(x, reps)
    copy = _COPIES.get(backend, _copy)
    size = math.prod(out_shape)
    if size * _MAX_ITEMSIZE >= _SMALL_BYTES:
        itemsize = _eager_cpu_itemsize(x, backend, xp)
        if itemsize and size * itemsize >= _SMALL_BYTES:
            x, shape, reps = _stage(x, shape, reps, itemsize, copy, xp)
            doubling = _DOUBLINGS.get(backend)
            if doubling and (run := _short_run(shape, reps, itemsize)) and doubling[0](x, run):
                return doubling[1](x, shape, reps, out_shape)
    return copy(x, shape, reps, out_shape, xp)


def _stage(
    x: Array,
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    itemsize: int,
    copy: Callable[..., Array],
    xp: ArrayNamespace,
    /,
) -> tuple[Array, tuple[int, ...], tuple[int, ...]]:  # numpydoc ignore=PR01,RT01
    """Tile the inner axes level by level, per `_stage_cuts`; the rest is left to do."""
    done = len(shape)
    for a in _stage_cuts(shape, reps, itemsize):
        inner = (1,) * a + reps[a:done] + (1,) * (len(shape) - done)
        staged = tuple(map(operator.mul, shape, inner))
        x = copy(x, shape, inner, staged, xp)
        shape, done = staged, a
    return x, shape, reps[:done] + (1,) * (len(shape) - done)


def _pairs(
    reps: tuple[int, ...], shape: tuple[int, ...], /
) -> tuple[int, ...]:  # numpydoc ignore=PR01,RT01
    """The broadcast shape ``(r0, d0, r1, d1, ...)``."""
    out = [*reps, *shape]
    out[::2], out[1::2] = reps, shape
    return tuple(out)


def _spread(shape: tuple[int, ...], /) -> tuple[int, ...]:  # numpydoc ignore=PR01,RT01
    """``(1, d0, 1, d1, ...)``: `shape` with a length-1 axis before every axis."""
    out = [1] * (2 * len(shape))
    out[1::2] = shape
    return tuple(out)


def _copy(
    x: Array,
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    out_shape: tuple[int, ...],
    xp: ArrayNamespace,
    /,
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    Materialize the tile of `x` (already of `shape`) with one copy: every backend.

    A length-1 axis goes before every axis (a reshape that only inserts length-1
    axes is a view on every backend), `broadcast_to` the ``(r, d)`` pairs, and one
    ``reshape(copy=True)`` into a fresh array. ``copy=True`` because merging the
    pairs of a pure broadcast, or of an all-ones tile, is a view of `x`: read-only
    in NumPy and aliasing everywhere. JAX arrays are immutable, so nothing can
    alias: there the copy is left to XLA.

    array-api-strict's ``reshape(copy=True)`` copies the broadcast view in its own
    memory order, then again into C order: there the view is assigned into an
    `empty` array instead, one copy (4x faster on (2000, 2000) x (2, 1)).
    """
    backend = _compat.backend(xp)
    if backend == "dask":  # Dask's reshape may rechunk; indexing is a view
        x = x[(None,) * (2 * (len(shape) - x.ndim)) + (None, slice(None)) * x.ndim]
    else:
        x = xp.reshape(x, _spread(shape))
    view = xp.broadcast_to(x, _pairs(reps, shape))
    if backend == "array_api_strict":
        out = xp.empty(view.shape, dtype=x.dtype, device=x.device)
        out[...] = view
        return xp.reshape(out, out_shape)
    return xp.reshape(view, out_shape, copy=None if backend == "jax" else True)


def _torch_copy(
    x: Array,
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    out_shape: tuple[int, ...],
    xp: ArrayNamespace,
    /,
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    `_copy` for PyTorch, step for step, with tensor methods.

    array-api-compat's wrappers of ``reshape`` and ``broadcast_to`` cost a third of
    a small tile's time (15.6 us against 10.4 us on 8x8 by (2, 2); `torch.tile`:
    16.3 us); sizes go as separate ints, which PyTorch parses faster than a tuple.
    ``clone``, not ``contiguous``, since the latter aliases an all-ones tile.
    """
    if not shape:  # 0-D: PyTorch's methods need at least one size
        return x.clone()
    view = x.view(*_spread(shape)).expand(*_pairs(reps, shape))
    return view.clone(memory_format=xp.contiguous_format).view(*out_shape)


@functools.cache
def _jax_tile() -> Callable[[Array, tuple[int, ...]], Array]:  # numpydoc ignore=RT01
    """
    `_copy` compiled by XLA, with `reps` static: the same code, one computation.

    Eager JAX dispatches (and at a new shape compiles) each of the three operations on
    its own; as one jitted function the forward and its VJP are one call each, which
    measures as fast as `jax.numpy.tile` (``benchmarks/bench_backward.py``). Inside
    an outer ``jax.jit``, ``vmap`` or ``grad`` it is inlined like any other function.
    XLA plans its own copy, so JAX never stages.
    """
    import jax
    import jax.numpy as jnp

    def tile(x: Array, reps: tuple[int, ...]) -> Array:
        shape, reps = promote(tuple(x.shape), reps)
        return _copy(x, shape, reps, tuple(map(operator.mul, shape, reps)), jnp)

    return jax.jit(tile, static_argnums=1)


def _eager_cpu_itemsize(
    x: Array, backend: str, xp: ArrayNamespace, /
) -> int:  # numpydoc ignore=PR01,RT01
    """
    Bytes per element where staging may pay, else 0.

    Only eager CPU backends stage (NumPy, array-api-strict, PyTorch CPU): a second,
    cache-sized copy is cheap there. On a GPU the copy should stay one kernel; Dask
    and ``torch.compile`` plan their own computation.
    """
    if backend in {"numpy", "array_api_strict"}:
        return _itemsize(x.dtype, xp)
    if backend == "torch":
        import torch

        if x.device.type == "cpu" and not torch.compiler.is_compiling():
            return int(x.element_size())
    return 0


def _itemsize(dtype: Any, xp: ArrayNamespace, /) -> int:  # numpydoc ignore=PR01,RT01
    """Bytes per element of `dtype`, through the array API's dtype functions."""
    if hasattr(dtype, "itemsize"):
        return int(dtype.itemsize)
    if xp.isdtype(dtype, "bool"):
        return 1
    if xp.isdtype(dtype, "integral"):
        return int(xp.iinfo(dtype).bits) // 8
    bits = int(xp.finfo(dtype).bits)  # of the real part, for a complex dtype
    return bits // 4 if xp.isdtype(dtype, "complex floating") else bits // 8


def _last_repeated(reps: tuple[int, ...], /) -> int:  # numpydoc ignore=PR01,RT01
    """The last axis with a repeat other than 1; -1 when there is none."""
    return max((i for i, r in enumerate(reps) if r != 1), default=-1)


def _stage_cuts(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, /
) -> tuple[int, ...]:  # numpydoc ignore=PR01,RT01
    """
    Where to stage: the first axis of each staging level, innermost level first.

    The output copies, one step at a time, the block of `x` from its last repeated
    axis on: a few elements when it is short, so the copy runs at a fraction of
    memory speed (``(2, 3, 4, 5) x 10`` copies 5 floats per step). Tiling the inner
    repeated axes first, into a small array ``S``, makes the copy's block ``S``'s
    whole inner part. ``S`` is itself built the same way, level by level; a level
    ends once it multiplies the size by `_LEVEL_GROWTH`, so each level's copy has
    long enough runs, and staging stops once the runs are long, when ``S`` would
    outgrow `_STAGE_MAX_BYTES`, or when it would be the output itself. Empty when
    the direct copy's runs are long already.
    """
    repeated = [i for i, r in enumerate(reps) if r != 1]
    if not repeated or math.prod(shape[repeated[-1] :]) * itemsize >= _LONG_RUN_BYTES:
        return ()
    cuts: list[int] = []
    size, growth, first = math.prod(shape) * itemsize, 1, 0
    # staging from the outermost repeated axis on would build the output itself
    for outer, axis in reversed(list(itertools.pairwise(repeated))):
        if size * reps[axis] > _STAGE_MAX_BYTES:
            break
        size, growth, first = size * reps[axis], growth * reps[axis], axis
        if growth >= _LEVEL_GROWTH:
            cuts.append(axis)
            growth = 1
            # the next copy's run: from `outer` to the end of the staged array
            if size // math.prod(shape[:outer]) >= _LONG_RUN_BYTES:
                return tuple(cuts)
    if growth > 1:
        cuts.append(first)
    return tuple(cuts)


def _numpy_copy(
    x: Array,
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    out_shape: tuple[int, ...],
    _xp: ArrayNamespace,
    /,
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    `_copy` for NumPy: the same broadcast, copied with `np.copyto` into `np.empty`.

    NumPy's copy of the broadcast view loops over the last axis of `x`, a few elements
    per step when it is short. Where staging cannot lengthen it (a large `x`), the
    block of `x` after the last repeated axis, when contiguous, is viewed as *one*
    element of a void dtype, so each step copies the whole block (twice as fast on
    the (4000, 3) x (1, 1000) case, ``python -m xtile bench``). `np.copyto` into an
    `np.empty` also spares `np.broadcast_to`'s per-call cost on small arrays.
    """
    import numpy as np

    x = np.asarray(x)  # a NumPy scalar counts as a 0-D array
    if x.ndim != len(shape):
        x = x.reshape(shape)  # prepends length-1 axes: a view
    dtype = x.dtype
    last = _last_repeated(reps) if math.prod(out_shape) * dtype.itemsize >= _SMALL_BYTES else -1
    block = math.prod(shape[last:]) if last >= 0 else 0
    if (
        block > 1
        and block * dtype.itemsize < _LONG_RUN_BYTES
        and _plain_bytes(dtype)
        and _c_contiguous(shape[last:], x.strides[last:], dtype.itemsize)
    ):
        x = x.reshape((*shape[:last], block)).view(np.dtype((np.void, block * dtype.itemsize)))
        shape, reps = (*shape[:last], 1), reps[: last + 1]
    out = np.empty(_pairs(reps, shape), dtype=x.dtype)
    np.copyto(out, x.reshape(_spread(shape)))
    return (out if out.dtype == dtype else out.view(dtype)).reshape(out_shape)


def _numpy_may_double(x: Array, run: int, /) -> bool:  # numpydoc ignore=PR01,RT01
    """
    Whether `_numpy_doubling` may and should replace `_numpy_copy`.

    Its copies move `x`'s items as bytes, not for object or StringDType items
    (pointers). And NumPy copies runs of 2, 4, 8 or 16 bytes as one machine word
    (``_numpy_copy`` views them as one void item), faster than doubling: 1.4x the copy
    bound against 0.8 on (4000, 2) x (1, 1500) and (4000, 4) x (1, 750); runs of other
    sizes go through a byte loop (0.69 against 0.87 on (4000, 3) x (1, 1000)).
    """
    return run not in {2, 4, 8, 16} and _plain_bytes(x.dtype)


def _plain_bytes(dtype: Any, /) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether NumPy items of `dtype` may be copied as bytes: not object or StringDType."""
    return not dtype.hasobject and dtype.kind != "T"  # both hold pointers


def _numpy_doubling(
    x: Array, shape: tuple[int, ...], reps: tuple[int, ...], out_shape: tuple[int, ...], /
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    Tile a large `x` with short runs by block doubling inside the output.

    NumPy copies through a temporary whenever the memory *bounds* of source and
    destination overlap, unless the destination is 1-D. So each doubling step is a
    1-D copy: one void element per outer index, spanning the filled part of the axis
    and everything inside it. That needs the outer part filled so far to be one
    strided axis; the repeated axes inside the innermost such axis ``k`` are filled
    first, by the broadcast copy of `x` into ``out[:d0, ..., :dk, ...]`` (a fraction
    ``1 / (r0 ... rk)`` of the output), the rest by doubling. Measured at 1.4x the
    broadcast copy on (100, 100, 3) x (10, 10, 10) (``python -m xtile bench``).
    """
    import numpy as np

    x = np.asarray(x)
    dtype = x.dtype
    out = np.empty(out_shape, dtype=dtype)
    strides = out.strides
    k = max(
        (a for a, r in enumerate(reps) if r != 1 and _as_one_axis(shape[:a], strides[:a])),
        default=-1,
    )
    # out[:d0, ..., :dk, ...] as (r, d) pairs, with repeats of 1 up to axis k
    steps = tuple(d * st for d, st in zip(shape, strides, strict=True))
    base = np.lib.stride_tricks.as_strided(
        out,
        _pairs((1,) * (k + 1) + reps[k + 1 :], shape),
        _pairs((0,) * (k + 1) + steps[k + 1 :], strides),
    )
    np.copyto(base, x.reshape(_spread(shape)))
    for axis in reversed(range(k + 1)):
        count, stride = _as_one_axis(shape[:axis], strides[:axis]) or (1, 0)
        inner = strides[axis]  # bytes of one index of `axis`, everything inside it filled
        done, total = shape[axis], out_shape[axis]
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


def _as_one_axis(
    shape: tuple[int, ...], strides: tuple[int, ...], /
) -> tuple[int, int] | None:  # numpydoc ignore=PR01,RT01
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


def _c_contiguous(
    shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int
) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether a (sub-)array of this shape and these strides is one C-ordered block."""
    expected = itemsize
    for d, st in zip(reversed(shape), reversed(strides), strict=True):
        if d != 1 and st != expected:
            return False
        expected *= d
    return True


# Runs shorter than this copy faster by doubling than by the broadcast copy (measured)
_DOUBLING_RUN_BYTES = 32


def _short_run(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, /
) -> int:  # numpydoc ignore=PR01,RT01
    """
    The broadcast copy's contiguous run in bytes where doubling may pay, else 0.

    A run of one element is a broadcast of single elements: already a fast fill loop.
    """
    last = _last_repeated(reps)
    run = math.prod(shape[last:]) if last >= 0 else 0
    return run * itemsize if run > 1 and run * itemsize < _DOUBLING_RUN_BYTES else 0


def _torch_may_double(x: Array, _run: int, /) -> bool:  # numpydoc ignore=PR01,RT01
    """
    Whether `_torch_doubling` may replace `_copy` for this CPU tensor.

    Only for a plain tensor outside autograd, forward AD and torch.func, whose
    in-place copies would be recorded or batched.
    """
    import torch
    from torch.autograd.forward_ad import unpack_dual

    return (
        type(x) is torch.Tensor
        and not (x.requires_grad and torch.is_grad_enabled())
        and not torch._C._functorch.is_functorch_wrapped_tensor(x)
        and unpack_dual(x).tangent is None  # type: ignore[no-untyped-call]
    )


def _torch_doubling(
    x: Array, shape: tuple[int, ...], reps: tuple[int, ...], out_shape: tuple[int, ...], /
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    Tile a CPU tensor by block doubling inside the output, as onnxruntime does.

    `x` is copied once into the output's first block; then, axis by axis from the
    innermost, the filled part is copied onto the next part of equal size, doubling
    it, so every copy moves long runs and the output is written once. PyTorch copies
    between non-overlapping parts of one tensor without a temporary (NumPy does not).
    For a large `x` with short runs, which staging cannot help: measured at 2x
    `torch.tile` on (100, 100, 3) x (10, 10, 10) (``python -m xtile bench``).
    """
    import torch

    out = torch.empty(out_shape, dtype=x.dtype)
    filled = list(shape)
    out[tuple(slice(0, s) for s in shape)].copy_(x)
    for axis in reversed(range(len(shape))):
        before = tuple(slice(0, f) for f in filled[:axis])
        after = tuple(slice(0, f) for f in filled[axis + 1 :])
        done, total = shape[axis], shape[axis] * reps[axis]
        while 0 < done < total:
            n = min(done, total - done)
            out[(*before, slice(done, done + n), *after)].copy_(out[(*before, slice(0, n), *after)])
            done += n
        filled[axis] = total
    return out


# The measured per-backend copies; every other backend takes `_copy`
_COPIES: dict[str, Callable[..., Array]] = {"numpy": _numpy_copy, "torch": _torch_copy}
# The measured in-output doublings: (whether it may and should run for `x` and a run
# of that many bytes, the doubling)
_DOUBLINGS: dict[str, tuple[Callable[[Array, int], bool], Callable[..., Array]]] = {
    "numpy": (_numpy_may_double, _numpy_doubling),
    "torch": (_torch_may_double, _torch_doubling),
}
