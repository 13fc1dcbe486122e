"""The one Tile, written against the array API standard: views, then one copy."""

from ._lib._helpers import eager_shape, promote
from ._lib._typing import Array, ArrayNamespace

__all__ = ["tile"]


def tile(
    x: Array, reps: tuple[int, ...], /, *, xp: ArrayNamespace
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps`; see `xtile.tile`."""
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
