"""
Dispatch: plan the tile, then the backend's fast path, else the standard-only tile.

The tile itself is `xtile._agnostic.tile`, written against the array API standard
alone. A backend whose measurements called for it has a `FastPath` entry in
``xtile._fast`` that replaces pieces of it (the copy, staging, doubling) or, for a
backend that plans its own computation, the whole tile.
"""

from collections.abc import Callable, Hashable

from . import _agnostic, _fast
from ._lib import _compat
from ._lib._helpers import (
    UnknownShapeError,
    check_out,
    itemsize,
    out_of_memory,
    plan,
    tiled_shape,
)
from ._lib._tuning import MAX_DIMS, PLAN_CACHE_SIZE
from ._lib._typing import Array, ArrayNamespace, FastPath, Plan, Shape

__all__ = ["recall", "tile"]

# The plan cache: (type, layout, repeats) -> the tile of such an array, planned once.
_PLANS: dict[Hashable, Callable[[Array], Array]] = {}
# the array types whose fast path keys the cache, and its key function
_LAYOUTS: dict[type, Callable[[Array], Hashable | None]] = {}


def recall(x: Array, repeats: object, /) -> Array | None:  # numpydoc ignore=PR01,RT01
    """
    The tile of `x` by a plan cached for its layout and `repeats`; None if none is.

    Only for an int or a tuple or list of ints (no other type of equal hash, such
    as ``2.0`` or ``True``, which `xtile.tile` refuses), so that a cached plan is
    one that validated these very repeats.
    """
    layout = _LAYOUTS.get(type(x))
    if layout is None:
        return None
    if type(repeats) is int:
        reps: object = (repeats,)
    elif isinstance(repeats, tuple | list) and all(type(r) is int for r in repeats):
        reps = tuple(repeats)
    else:
        return None
    key = layout(x)
    run = None if key is None else _PLANS.get((type(x), key, reps))
    if run is None:
        return None
    try:
        return run(x)
    except MemoryError:
        return None  # the full path raises it again, in the user's terms


def tile(
    x: Array, reps: Shape, /, *, xp: ArrayNamespace, op: str, out: Array | None = None
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps` (into `out`); see `xtile.tile`."""
    try:
        p = plan(x, reps, op=op)
    except UnknownShapeError:
        # a lazy library that gives the run-time shape as an array keeps the tile lazy
        dims = _compat.runtime_shape(x)
        if out is not None or dims is None:
            raise
        out_shape = tiled_shape(tuple(x.shape), reps, op=op)  # raises past int64
        return _agnostic.symbolic_tile(x, reps, out_shape, dims, xp)
    fast = _fast.lookup(_compat.library(xp))
    if out is not None:
        check_out(x, out, p, xp, op=op)
        if fast is not None and fast.check_out is not None:
            fast.check_out(x, out, op)
        if not p.size:
            return out
    try:
        if fast is not None and fast.unwrap is not None and (parts := fast.unwrap(x)):
            if out is not None:
                msg = f"{op}: `out` takes the tile of a plain array, not of a {type(x).__name__}."
                raise TypeError(msg)
            arrays, rebuild = parts
            return rebuild(*(_tile(a, p, xp, fast) for a in arrays))
        tiled = _tile(x, p, xp, fast, out)
        if out is None and fast is not None and fast.layout is not None and p.size:
            _remember(x, reps, p, xp, fast, fast.layout)
        return tiled
    except (MemoryError, RuntimeError) as e:
        if not out_of_memory(e):
            raise
        nbytes = f"{p.size * itemsize(x.dtype, xp):_} bytes".replace("_", ",")
        msg = (
            f"{op}: cannot allocate the output of shape {p.out_shape} and dtype {x.dtype} "
            f"({nbytes}): {type(e).__name__}."
        )
        raise MemoryError(msg) from e


def _remember(
    x: Array,
    reps: Shape,
    p: Plan,
    xp: ArrayNamespace,
    fast: FastPath,
    layout: Callable[[Array], Hashable | None],
    /,
) -> None:
    """Cache the plan of a tile that just succeeded, keyed by `x`'s `layout` and `reps`."""
    key = layout(x)
    if key is None or (type(x), key, reps) in _PLANS:  # cached under repeats `recall` skips
        return
    _LAYOUTS.setdefault(type(x), layout)
    run = fast.compile(x, p) if fast.compile is not None else None
    if run is None:

        def run(a: Array) -> Array:
            return _tile(a, p, xp, fast)

    if len(_PLANS) >= PLAN_CACHE_SIZE:
        _PLANS.clear()  # a bound, not a policy: a loop over this many layouts thrashes any
    _PLANS[type(x), key, reps] = run


def _tile(
    x: Array, p: Plan, xp: ArrayNamespace, fast: FastPath | None, out: Array | None = None, /
) -> Array:
    """The tile of a plain array `x` by plan `p`, into a fresh array or `out`."""
    max_dims = MAX_DIMS if fast is None or fast.max_view_dims is None else fast.max_view_dims
    if 2 * len(p.shape) > max_dims:
        x, p = _agnostic.fit_rank(x, p, xp, max_dims)
    if fast is None:
        return _agnostic.tile(x, p, xp, _agnostic.STANDARD, out)
    if fast.tile is not None:  # immutable or lazy arrays: `out` was refused
        return fast.tile(x, p, xp)
    return _agnostic.tile(x, p, xp, fast, out)
