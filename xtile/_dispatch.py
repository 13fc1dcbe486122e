"""
Dispatch: an array's backend, then its program (cached or planned), then the executor.

The program comes from `xtile._plan` and is kept in `PLANS` (an `xtile._cache.PlanCache`)
with its call, made by `xtile._agnostic.runner` from the backend's primitives
(``xtile._fast``); a backend with none takes the standard-only tile. Subclasses
(NumPy's masked arrays, sparse formats) and Dask's blocks come back here for each
plain array they hold.
"""

import math
import operator

from . import _agnostic, _fast, _plan
from ._agnostic import STANDARD, Primitives
from ._cache import PlanCache, Planned
from ._lib import _compat
from ._lib._helpers import (
    INT64_MAX,
    UnknownShapeError,
    check_out,
    itemsize,
    out_of_memory,
    plan,
    promote,
    tiled_shape,
)
from ._lib._typing import Array, ArrayNamespace, Plan, Shape
from ._plan import Copy, Layout, Program, program

__all__ = ["PLANS", "primitives", "recall", "tile"]

_INT = {int}
# the array types tiled so far whose primitives plan: their namespace and primitives
_SEEN: dict[type, tuple[ArrayNamespace, Primitives]] = {}


def _planned(
    kind: type, layout: Layout, reps: Shape, fresh: bool, off: frozenset[str], /
) -> Planned:
    """
    The program of a tile and its call; raises for repeats a full call would refuse.

    The cache's planning function, so that `recall` may plan on a miss: negative
    repeats, an output past int64, or a view past the backend's rank (which the full
    path tiles by concatenation first) raise `ValueError`, and nothing is kept.
    """
    xp, prims = _SEEN[kind]
    if reps and min(reps) < 0:
        msg = "negative repeats"
        raise ValueError(msg)
    shape, full = promote(tuple(layout.shape), reps)
    out_shape = tuple(map(operator.mul, shape, full))
    if math.prod(out_shape) > INT64_MAX or max((*out_shape, *full), default=0) > INT64_MAX:
        msg = "past int64"
        raise ValueError(msg)
    if (
        len(shape) + sum(d != 1 != r for d, r in zip(shape, full, strict=True))
        > prims.max_view_dims
    ):
        msg = "past the rank"
        raise ValueError(msg)
    planned = program(layout, reps, prims.tuning, fresh=fresh, off=off)
    return Planned(planned, _agnostic.runner(planned, xp, prims))


# The process's plan cache. A design bound: more distinct layouts than this in a loop
# would miss anyway.
PLANS = PlanCache(_planned, 256)


def recall(x: Array, repeats: object, /) -> Array | None:  # numpydoc ignore=PR01,RT01
    """
    The tile of `x` by its cached (or newly planned) program; None where the full path must run.

    Only for an array of a type tiled before whose primitives plan, and repeats that
    are an int or a tuple or list of ints (no other type of equal hash, such as
    ``2.0`` or ``True``, which `xtile.tile` refuses); repeats the full path would
    refuse leave it to the full path, which raises in the user's terms.
    """
    seen = _SEEN.get(type(x))
    if seen is None:
        return None
    if type(repeats) is tuple and set(map(type, repeats)) <= _INT:
        reps: tuple[int, ...] = repeats
    elif type(repeats) is int:
        reps = (repeats,)
    elif type(repeats) is list and set(map(type, repeats)) <= _INT:
        reps = tuple(repeats)
    else:
        return None
    layout = seen[1].layout(x)  # type: ignore[misc]
    if layout is None:
        return None
    try:
        return PLANS.lookup(type(x), layout, reps, True, _plan.OFF.get()).run(x, None)
    except (MemoryError, RuntimeError, ValueError):
        return None  # the full path raises it again, in the user's terms


def primitives(xp: ArrayNamespace, /) -> Primitives:  # numpydoc ignore=PR01,RT01
    """The primitives of namespace `xp`'s backend; `STANDARD` for one with none."""
    return _fast.lookup(_compat.library(xp)) or STANDARD


def tile(
    x: Array, reps: Shape, /, *, xp: ArrayNamespace, op: str, out: Array | None = None
) -> Array:  # numpydoc ignore=PR01,RT01
    """Tile `x` by validated, non-negative host `reps` (into `out`); see `xtile.tile`."""
    prims = primitives(xp)
    parts = None if prims.unwrap is None else prims.unwrap(x)
    try:
        p = plan(x, reps, op=op)
    except UnknownShapeError:
        # a lazy library that gives the run-time shape as an array keeps the tile lazy
        dims = _compat.runtime_shape(x)
        if out is not None or dims is None:
            raise
        out_shape = tiled_shape(tuple(x.shape), reps, op=op)  # raises past int64
        return _agnostic.symbolic_tile(x, reps, out_shape, dims, xp)
    if out is not None:
        if parts:
            msg = f"{op}: `out` takes the tile of a plain array, not of a {type(x).__name__}."
            raise TypeError(msg)
        check_out(x, out, p, xp, op=op)
        if prims.check_out is not None:
            prims.check_out(x, out, op)
        if not p.size:
            return out
    if parts:
        arrays, rebuild = parts
        return rebuild(*(_tile(a, reps, p, xp, prims, None, op) for a in arrays))
    return _tile(x, reps, p, xp, prims, out, op)


def _tile(
    x: Array,
    reps: Shape,
    p: Plan,
    xp: ArrayNamespace,
    prims: Primitives,
    out: Array | None,
    op: str,
    /,
) -> Array:
    """The tile of a plain array `x`: its program, cached or planned, run."""
    if prims.tile is not None:  # immutable or lazy arrays: `out` was refused
        whole = prims.tile
        return _run(x, Planned(Program(p, ()), lambda a, _: whole(a, p, xp)), xp, None, op)
    if 2 * len(p.shape) > prims.max_view_dims:
        x, p = _agnostic.fit_rank(x, p, xp, prims.max_view_dims)
        reps = p.reps
    layout = None if prims.layout is None else prims.layout(x)
    if layout is None:
        one = Program(p, (Copy(p),) if p.size else ())
        return _run(x, Planned(one, _agnostic.runner(one, xp, prims)), xp, out, op)
    # the type's own namespace: a program is kept for every later call, whatever `xp` this one got
    _SEEN.setdefault(type(x), (_compat.array_namespace(x), prims))
    found = PLANS.lookup(type(x), layout, reps, out is None, _plan.OFF.get())
    return _run(x, found, xp, out, op)


def _run(x: Array, found: Planned, xp: ArrayNamespace, out: Array | None, op: str, /) -> Array:
    """`found` run on `x`; an allocator's failure as a `MemoryError` in the user's terms."""
    try:
        return found.run(x, out)
    except (MemoryError, RuntimeError) as e:
        if not out_of_memory(e):
            raise
        p = found.program.plan
        nbytes = f"{p.size * itemsize(x.dtype, xp):_} bytes".replace("_", ",")
        # Python's own MemoryError often has no text: nothing to quote; NumPy's names the
        # shape of an internal view, not the output asked for: not quoted
        text = "" if type(e).__module__.startswith("numpy.") else str(e).strip()
        said = text.splitlines()[0] if text else ""
        msg = (
            f"{op}: cannot allocate the output of shape {p.out_shape} and dtype {x.dtype} "
            f"({nbytes})" + (f"; the allocator said: {said}" if said else ".")
        )
        raise MemoryError(msg) from e
