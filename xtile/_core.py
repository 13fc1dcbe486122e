"""
Dispatch: plan the tile, then the backend's fast path, else the standard-only tile.

The tile itself is `xtile._agnostic.tile`, written against the array API standard
alone. A backend whose measurements called for it has a `FastPath` entry in
``xtile._fast`` that replaces pieces of it (the copy, staging, doubling) or, for a
backend that plans its own computation, the whole tile.
"""

from . import _agnostic, _fast
from ._lib import _compat
from ._lib._helpers import itemsize, out_of_memory, plan
from ._lib._tuning import MAX_DIMS
from ._lib._typing import Array, ArrayNamespace, FastPath, Plan, Shape

__all__ = ["tile"]


def tile(
    x: Array, reps: Shape, /, *, xp: ArrayNamespace, op: str
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps`; see `xtile.tile`."""
    p = plan(x, reps, op=op)
    fast = _fast.lookup(_compat.library(xp))
    try:
        if fast is not None and fast.unwrap is not None and (parts := fast.unwrap(x)):
            arrays, rebuild = parts
            return rebuild(*(_tile(a, p, xp, fast) for a in arrays))
        return _tile(x, p, xp, fast)
    except (MemoryError, RuntimeError) as e:
        if not out_of_memory(e):
            raise
        nbytes = f"{p.size * itemsize(x.dtype, xp):_} bytes".replace("_", ",")
        msg = (
            f"{op}: cannot allocate the output of shape {p.out_shape} and dtype {x.dtype} "
            f"({nbytes}): {type(e).__name__}."
        )
        raise MemoryError(msg) from e


def _tile(x: Array, p: Plan, xp: ArrayNamespace, fast: FastPath | None, /) -> Array:
    """The tile of a plain array `x` by plan `p`."""
    if 2 * len(p.shape) > MAX_DIMS:
        x, p = _agnostic.fit_rank(x, p, xp)
    if fast is None:
        return _agnostic.tile(x, p, xp)
    if fast.tile is not None:
        return fast.tile(x, p, xp)
    return _agnostic.tile(x, p, xp, fast)
