"""
Dispatch: plan the tile, then the backend's fast path, else the standard-only tile.

The tile itself is `xtile._agnostic.tile`, written against the array API standard
alone. A backend whose measurements called for it has a `FastPath` entry in
``xtile._fast`` that replaces pieces of it (the copy, staging, doubling) or, for a
backend that plans its own computation, the whole tile.
"""

from . import _agnostic, _fast
from ._lib import _compat
from ._lib._helpers import plan
from ._lib._tuning import MAX_DIMS
from ._lib._typing import Array, ArrayNamespace, Shape

__all__ = ["tile"]


def tile(
    x: Array, reps: Shape, /, *, xp: ArrayNamespace, op: str
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps`; see `xtile.tile`."""
    p = plan(x, reps, op=op)
    if 2 * len(p.shape) > MAX_DIMS:
        x, p = _agnostic.fit_rank(x, p, xp)
    fast = _fast.lookup(_compat.library(xp))
    if fast is None:
        return _agnostic.tile(x, p, xp)
    if fast.tile is not None:
        return fast.tile(x, p, xp)
    return _agnostic.tile(x, p, xp, fast)
