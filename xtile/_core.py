"""The one Tile, written against the array API standard: views, then one copy."""

import functools
from collections.abc import Callable

from ._lib import _compat
from ._lib._helpers import eager_shape, promote
from ._lib._typing import Array, ArrayNamespace

__all__ = ["tile"]


def tile(
    x: Array, reps: tuple[int, ...], /, *, xp: ArrayNamespace
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps`; see `xtile.tile`."""
    if _compat.is_jax_namespace(xp):
        return _jax_tile()(x, reps)
    return _tile(x, reps, xp=xp)


def _tile(
    x: Array, reps: tuple[int, ...], /, *, xp: ArrayNamespace
) -> Array:  # numpydoc ignore=PR01,RT01
    """The array-API implementation, for every backend."""
    shape, reps = promote(eager_shape(x, op="xtile.tile"), reps)
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
    """
    return xp.reshape(view, shape, copy=True)


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
