"""The one Tile, written against the array API standard: views, then one copy."""

import functools
import math
from collections.abc import Callable
from typing import Any

from ._lib import _compat
from ._lib._helpers import eager_shape, promote, tiled_shape
from ._lib._typing import Array, ArrayNamespace

__all__ = ["tile"]


def tile(
    x: Array, reps: tuple[int, ...], /, *, xp: ArrayNamespace, op: str
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps`; see `xtile.tile`."""
    tiled_shape(eager_shape(x, op=op), reps, op=op)  # fits in int64: checked before allocating
    if _compat.is_numpy_namespace(xp):
        return _numpy_tile(x, reps)
    if _compat.is_jax_namespace(xp):
        return _jax_tile()(x, reps)
    if _compat.is_torch_namespace(xp) and _torch_doubling_pays(x, reps):
        return _torch_tile_doubling(x, reps)
    return _tile(x, reps, xp=xp)


def _tile(
    x: Array, reps: tuple[int, ...], /, *, xp: ArrayNamespace
) -> Array:  # numpydoc ignore=PR01,RT01
    """The array-API implementation, for every backend."""
    shape, reps = promote(tuple(x.shape), reps)
    new_axes = len(shape) - x.ndim
    if shape:
        # Put a length-1 axis before every axis (two per promoted axis). Indexing with
        # None is a view on every backend; reshape could copy a non-contiguous `x`.
        x = x[(None,) * (2 * new_axes) + (None, slice(None)) * x.ndim]
    pairs = tuple(d for r, s in zip(reps, shape, strict=True) for d in (r, s))
    view = xp.broadcast_to(x, pairs)
    out_shape = tuple(r * s for r, s in zip(reps, shape, strict=True))
    return _materialize(view, out_shape, xp=xp)


def _materialize(
    view: Array, shape: tuple[int, ...], /, *, xp: ArrayNamespace
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    Copy `view` once into a fresh array of `shape`: the only output-sized allocation.

    ``copy=True`` because merging the (repeat, dim) pairs of a pure broadcast, or of
    an all-ones tile, is a view of `x`: read-only in NumPy and aliasing everywhere.
    JAX arrays are immutable, so nothing can alias: there the copy is left to XLA.
    """
    return xp.reshape(view, shape, copy=None if _compat.is_jax_namespace(xp) else True)


@functools.cache
def _jax_tile() -> Callable[[Array, tuple[int, ...]], Array]:  # numpydoc ignore=RT01
    """
    `_tile` compiled by XLA, with `reps` static: the same code, one computation.

    Eager JAX dispatches (and at a new shape compiles) each of the three operations on
    its own; as one jitted function the forward and its VJP are one call each, which
    measures as fast as `jax.numpy.tile` (``benchmarks/bench_backward.py``). Inside
    an outer ``jax.jit``, ``vmap`` or ``grad`` it is inlined like any other function.
    """
    import jax
    import jax.numpy as jnp

    return jax.jit(functools.partial(_tile, xp=jnp), static_argnums=1)


def _numpy_tile(x: Array, reps: tuple[int, ...], /) -> Array:  # numpydoc ignore=PR01,RT01
    """
    `_tile` for NumPy, copying long runs: the same views, one copy into a fresh array.

    NumPy's copy of the broadcast view loops over the last axis of `x`, a few elements
    per step when it is short; that measured at half of `numpy.tile`'s speed. Here the
    block of `x` after the last repeated axis, when contiguous, is viewed as *one*
    element of a void dtype, so each step copies the whole block (twice as fast on
    the (4000, 3) x (1, 1000) case, ``python -m xtile bench``). `np.copyto` into an
    `np.empty` also spares `np.broadcast_to`'s per-call cost on small arrays.
    """
    import numpy as np

    x = np.asarray(x)  # a NumPy scalar counts as a 0-D array
    shape, reps = promote(x.shape, reps)
    new_axes = len(shape) - x.ndim
    out_shape = tuple(r * s for r, s in zip(reps, shape, strict=True))
    dtype = x.dtype
    if math.prod(out_shape) * dtype.itemsize >= _LONG_RUNS_MIN_BYTES:
        last, block = _last_block(shape, reps)
        start = max(last, new_axes)  # promoted axes have length 1: same block
        if (
            block > 1
            and not dtype.hasobject
            and dtype.kind != "T"  # StringDType holds pointers, like object
            and _c_contiguous(x.shape[start - new_axes :], x.strides[start - new_axes :], dtype)
        ):
            run = np.dtype((np.void, block * dtype.itemsize))
            x = x.reshape((*x.shape[: start - new_axes], block)).view(run)
            shape, reps = (*shape[:start], 1), reps[: start + 1]
    pairs = tuple(d for r, s in zip(reps, shape, strict=True) for d in (r, s))
    out = np.empty(pairs, dtype=x.dtype)
    np.copyto(out, x[(None,) * (2 * (len(shape) - x.ndim)) + (None, slice(None)) * x.ndim])
    return out.view(dtype).reshape(out_shape)


# Below this output size the call's fixed cost dominates, and long runs gain nothing
_LONG_RUNS_MIN_BYTES = 1 << 16


def _last_block(
    shape: tuple[int, ...], reps: tuple[int, ...], /
) -> tuple[int, int]:  # numpydoc ignore=PR01,RT01
    """
    The last repeated axis and the element count of the block from it on.

    In C order the output repeats that block whole: it is the longest contiguous
    run a copy from `x` can make.
    """
    last = max((i for i, r in enumerate(reps) if r != 1), default=len(shape))
    return last, math.prod(shape[last:])


def _c_contiguous(
    shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any
) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether a (sub-)array of this shape and these strides is one C-ordered block."""
    expected = dtype.itemsize
    for d, st in zip(reversed(shape), reversed(strides), strict=True):
        if d != 1 and st != expected:
            return False
        expected *= d
    return True


# Output size, and longest contiguous run, from which PyTorch's doubling pays (measured)
_DOUBLING_MIN_BYTES = 1 << 16
_DOUBLING_MAX_RUN_BYTES = 256


def _torch_doubling_pays(x: Array, reps: tuple[int, ...], /) -> bool:  # numpydoc ignore=PR01,RT01
    """
    Whether `_torch_tile_doubling` may and should replace `_tile` for this tensor.

    Only for a plain CPU tensor outside autograd, forward AD, torch.func and dynamo,
    whose in-place copies would be recorded or batched; and only where the broadcast
    copy's contiguous runs are short (long runs already copy at full speed).
    """
    import torch

    if torch.compiler.is_compiling() or x.numel() * math.prod(reps) * x.element_size() < (
        _DOUBLING_MIN_BYTES
    ):
        return False
    from torch.autograd.forward_ad import unpack_dual

    _, run = _last_block(*promote(tuple(x.shape), reps))
    return (
        # a run of 1 is a broadcast of single elements: already a fast fill loop
        1 < run * x.element_size() <= _DOUBLING_MAX_RUN_BYTES
        and run > 1
        and type(x) is torch.Tensor
        and x.device.type == "cpu"
        and not (x.requires_grad and torch.is_grad_enabled())
        and not torch._C._functorch.is_functorch_wrapped_tensor(x)
        and unpack_dual(x).tangent is None  # type: ignore[no-untyped-call]
    )


def _torch_tile_doubling(x: Array, reps: tuple[int, ...], /) -> Array:  # numpydoc ignore=PR01,RT01
    """
    Tile a CPU tensor by block doubling inside the output, as onnxruntime does.

    `x` is copied once into the output's first block; then, axis by axis from the
    innermost, the filled part is copied onto the next part of equal size, doubling
    it, so every copy moves long runs and the output is written once. PyTorch copies
    between non-overlapping parts of one tensor without a temporary (NumPy does not).
    Measured at 2.5x `torch.tile` on (100, 100, 3) x (10, 10, 10) and 7x on six
    repeated axes of 2 (``python -m xtile bench``).
    """
    import torch

    shape, reps = promote(tuple(x.shape), reps)
    x = x.reshape(shape)  # prepends length-1 axes: a view
    out = torch.empty([r * s for r, s in zip(reps, shape, strict=True)], dtype=x.dtype)
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
