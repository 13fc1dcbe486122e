"""
The executor and the standard-only tile: any program run through a namespace.

`run` carries out a program of `xtile._plan` with a backend's `Primitives`; with
none (`STANDARD`) it is the tile written against the array API standard alone: the
broadcast view ``(r0, d0, r1, d1, ...)`` of ``x`` (a length-1 axis before every
axis, broadcast to the repeats), copied once into a fresh array of the output's
shape (`copy`). Nothing here names a backend.
"""

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple, TypeAlias

from ._lib import _compat
from ._lib._helpers import promote
from ._lib._typing import Array, ArrayNamespace, Plan, Shape, Unwrap, WholeTile
from ._plan import MAX_DIMS, Copy, Layout, Move, Program, Repeat, Spread, Stage, Step, Tuning

__all__ = [
    "STANDARD",
    "Primitives",
    "broadcast_view",
    "copy",
    "fit_rank",
    "run",
    "runner",
    "symbolic_tile",
    "view_shapes",
]


# a copy, or a whole program, as a call of an array and an optional output
CopyCall: TypeAlias = Callable[[Array, Array | None], Array]


class Primitives(NamedTuple):
    """
    A backend's primitives: what runs the steps of a program, and what they take.

    Every field is optional: an empty entry is the standard-only tile.

    Attributes
    ----------
    tuning : Tuning
        The strategies the backend's primitives make pay (`xtile._plan.Tuning`).
    layout : callable or None
        What the planner reads of `x` (`xtile._plan.Layout`), the plan cache's key;
        None for an array the primitives do not take as it is (a subclass, a traced
        tensor): that array gets the one copy, uncached. None: never planned.
    copier : callable or None
        ``copier(plan, item, xp)``: the broadcast copy of an array tiled by `plan`,
        as a call ``(x, out)`` into a fresh array (`out` None) or into `out` (any
        strides, a view of an output); with `item`, runs of that many bytes moved
        as one item where `x` allows (else element by element). Made once per
        program step, so it may plan the copy's views ahead. None: `copy`.
    move, spread : callable or None
        ``move(out, step)``, ``spread(out, step)``: the `Move` and `Spread` steps
        inside a fresh, C-ordered output, where `tuning.extend`.
    repeater : callable or None
        ``repeater(step)``: the `Repeat` step as a call ``(x, out)`` into a fresh
        array, where `tuning.repeat`.
    tile : callable or None
        The whole tile, for backends that plan their own computation (a compiler's,
        a lazy graph's).
    unwrap : callable or None
        For an array of a subclass of the backend's array type: the plain arrays to
        tile and how to rebuild the result from their tiles (a masked array's data
        and mask).
    check_out : callable or None
        Raises where the backend cannot write the tile of `x` into `out`, beyond
        the checks of every backend.
    empty : callable or None
        ``empty(shape, x)``: a new C-ordered array of `shape`, `x`'s dtype and
        device, for the steps that write one output. None: the namespace's ``empty``.
    max_view_dims : int
        The most axes the backend's broadcast view may have; more are tiled by
        concatenation first (`fit_rank`).
    """

    tuning: Tuning = Tuning()
    layout: Callable[[Array], Layout | None] | None = None
    copier: Callable[[Plan, int, ArrayNamespace], CopyCall] | None = None
    move: Callable[[Array, Move], None] | None = None
    spread: Callable[[Array, Spread], None] | None = None
    repeater: Callable[[Repeat], CopyCall] | None = None
    tile: WholeTile | None = None
    unwrap: Unwrap | None = None
    check_out: Callable[[Array, Array, str], None] | None = None
    empty: Callable[[Shape, Array], Array] | None = None
    max_view_dims: int = MAX_DIMS


# the standard-only tile: no primitive of a backend's own
STANDARD = Primitives()


def run(
    x: Array,
    program: Program,
    xp: ArrayNamespace,
    prims: Primitives = STANDARD,
    /,
    out: Array | None = None,
) -> Array:  # numpydoc ignore=PR01,RT01
    """The tile of `x` by `program`, with `prims`, into a fresh array or `out`."""
    return runner(program, xp, prims)(x, out)


def runner(
    program: Program, xp: ArrayNamespace, prims: Primitives, /
) -> CopyCall:  # numpydoc ignore=PR01,RT01
    """
    `program` as a call ``(x, out)``, every copy made ahead: what the plan cache keeps.

    The staging levels, each into a fresh array; then one copy or one pass into a
    fresh array (or `out`), or the writes into one output: copies into its regions,
    `Move` and `Spread` steps inside it.
    """
    copier, steps = prims.copier or _standard_copier, program.steps
    if not steps:  # an empty output: each copier takes an empty plan
        return copier(program.plan, 0, xp)
    stages = [_one(s.how, xp, prims, copier) for s in steps if isinstance(s, Stage)]
    rest = steps[len(stages) :]
    first = rest[0]
    if isinstance(first, Repeat) or (len(rest) == 1 and first.region is None):  # type: ignore[union-attr]
        final = _one(first, xp, prims, copier)  # type: ignore[arg-type]
    else:
        final = _writes(program.plan.out_shape, rest, xp, prims, copier)
    if not stages:
        return final

    def staged(x: Array, out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
        """The staging levels, then the rest."""
        for stage in stages:
            x = stage(x, None)
        return final(x, out)

    return staged


def _one(
    step: Copy | Repeat,
    xp: ArrayNamespace,
    prims: Primitives,
    copier: Callable[[Plan, int, ArrayNamespace], CopyCall],
    /,
) -> CopyCall:
    """A step that writes a whole array, as a call: a one-pass repeat, or a copy."""
    if isinstance(step, Repeat):
        return prims.repeater(step)  # type: ignore[misc]
    return copier(step.plan, step.item, xp)


def _writes(
    out_shape: Shape,
    steps: tuple[Step, ...],
    xp: ArrayNamespace,
    prims: Primitives,
    copier: Callable[[Plan, int, ArrayNamespace], CopyCall],
    /,
) -> CopyCall:
    """The steps that write one output, in order: copies into its regions, steps inside it."""
    calls: list[Callable[[Array, Array], object]] = []
    for step in steps:
        if isinstance(step, Copy):
            source = None if step.source is None else tuple(slice(0, n) for n in step.source)
            into = tuple(slice(a, b) for a, b in step.region or ())
            calls.append(partial(_into, copier(step.plan, step.item, xp), source, into))
        elif isinstance(step, Move | Spread):
            inside = prims.move if isinstance(step, Move) else prims.spread
            calls.append(partial(_inside, inside, step))
    empty = prims.empty or (
        lambda shape, x: xp.empty(shape, dtype=x.dtype, device=_compat.device(x))
    )

    def write(x: Array, out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
        """Each step into one output, fresh or `out`."""
        if out is None:
            out = empty(out_shape, x)
        for call in calls:
            call(x, out)
        return out

    return write


def _into(
    copy_: CopyCall,
    source: tuple[slice, ...] | None,
    into: tuple[slice, ...],
    x: Array,
    out: Array,
    /,
) -> None:
    """A copy of `x` (or of its part `source`) into the region `into` of `out`."""
    copy_(x if source is None else x[source], out[into])


def _inside(call: Any, step: Move | Spread, _x: Array, out: Array, /) -> None:
    """A step inside the output."""
    call(out, step)


def _standard_copier(plan: Plan, _item: int, xp: ArrayNamespace, /) -> CopyCall:
    """The standard-only `copy` as a call."""
    return lambda x, out: copy(x, plan, xp, out)


def copy(
    x: Array, plan: Plan, xp: ArrayNamespace, /, out: Array | None = None
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    Materialize the tile of `x` (already of ``plan.shape``) with one copy.

    A reshape that only inserts length-1 axes is a view everywhere; then
    `broadcast_to` the ``(r, d)`` pairs and one ``reshape(copy=True)`` into a fresh
    array: ``copy=True`` because merging the pairs of a pure broadcast, or of an
    all-ones tile, could be a view of `x`. The standard has no copy into an
    existing array of another shape, so `out` gets that fresh array assigned.
    """
    if out is not None:
        out[...] = copy(x, plan, xp)
        return out
    if plan.size == 0:  # nothing to copy (and a view of its shape may overflow)
        lazy: bool = _compat.is_lazy_array(x)  # not narrowing `x`
        if lazy:  # a lazy reshape of an empty view can fail
            fresh: Array = xp.empty(plan.out_shape, dtype=x.dtype, device=_compat.device(x))
            return fresh
        none = xp.reshape(x, (-1,))[0:0]  # of `x`, as autograd sees it
        empty: Array = xp.reshape(none, plan.out_shape, copy=True)
        return empty
    tiled: Array = xp.reshape(broadcast_view(x, plan, xp), plan.out_shape, copy=True)
    return tiled


def broadcast_view(
    x: Array, plan: Plan, xp: ArrayNamespace, /
) -> Array:  # numpydoc ignore=PR01,RT01
    """The view ``(r0, d0, r1, d1, ...)`` of `x`, whose C-order copy is the tile."""
    spread, view_shape = view_shapes(plan.shape, plan.reps)
    view: Array = xp.broadcast_to(xp.reshape(x, spread), view_shape)
    return view


def symbolic_tile(
    x: Array, reps: Shape, out_shape: tuple[int | None, ...], dims: Array, xp: ArrayNamespace, /
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    The tile of a lazy `x` with unknown (None) dimensions, whose runtime shape is `dims`.

    The same view chain, its broadcast shape an int64 array built from `dims`; the
    length-1 axes inserted by indexing and the final reshape's target
    (`out_shape`, from `xtile.tile_shape`) given with -1 for its one unknown
    dimension, so that the library infers every dimension `out_shape` knows. A
    reshape cannot say that of two unknown dimensions, nor -1 of an empty output:
    those outputs are built by concatenation instead.
    """
    lead = len(out_shape) - x.ndim  # the axes `reps` prepends
    shape, reps = promote(tuple(x.shape), reps)
    if lead:
        x = x[(None,) * lead + (...,)]
    if 0 in out_shape or out_shape.count(None) > 1:
        return _concat_tile(x, reps, xp)
    device = _compat.device(x)
    index: list[slice | None] = []  # a length-1 axis before each pair
    view: list[Array] = []
    for i, (d, r) in enumerate(zip(shape, reps, strict=True)):
        length = (
            dims[i - lead : i - lead + 1]
            if d is None
            else xp.asarray([d], dtype=xp.int64, device=device)
        )
        if d != 1 != r:
            index += (None, slice(None))
            view += (xp.asarray([r], dtype=xp.int64, device=device), length)
        else:
            index.append(slice(None))
            view.append(length * r)
    broadcast = xp.broadcast_to(x[tuple(index)], xp.concat(view))
    target = tuple(-1 if d is None else d for d in out_shape)
    tiled: Array = xp.reshape(broadcast, target, copy=True)
    return tiled


def _concat_tile(x: Array, reps: Shape, xp: ArrayNamespace, /) -> Array:
    """
    The tile of `x` by concatenation, doubling along each axis.

    For the outputs `symbolic_tile` cannot reshape to. A repeat of 0 takes no
    index of its axis, which makes the axis known to be empty.
    """
    tiled = x
    for axis, r in enumerate(reps):
        if r == 0:
            none = xp.asarray([], dtype=xp.int64, device=_compat.device(x))
            tiled = xp.take(tiled, none, axis=axis)
            continue
        parts, left = [], r
        while left:
            if left & 1:
                parts.append(tiled)
            left >>= 1
            if left:
                tiled = xp.concat([tiled, tiled], axis=axis)
        tiled = xp.concat(parts, axis=axis) if len(parts) > 1 else parts[0]
    copied: Array = xp.asarray(x, copy=True) if tiled is x else tiled
    return copied


def view_shapes(shape: Shape, reps: Shape, /) -> tuple[Shape, Shape]:  # numpydoc ignore=PR01,RT01
    """
    The shape `x` is reshaped to, and the broadcast shape whose C-order copy is the tile.

    An axis of length ``d`` repeated ``r`` times becomes the pair ``(r, d)`` (a
    length-1 axis inserted before it and broadcast to ``r``) only where both exceed
    1; where ``r`` is 1 it stays ``d``, where ``d`` is 1 it is broadcast to ``r``. So
    the view has one dimension per axis, plus one per such pair.
    """
    if 1 not in reps and 1 not in shape:  # every axis a pair: the common case, fast
        spread, view = [1] * (2 * len(shape)), [*reps, *shape]
        spread[1::2] = view[1::2] = shape
        view[::2] = reps
        return tuple(spread), tuple(view)
    spread, view = [], []
    for d, r in zip(shape, reps, strict=True):
        if d != 1 != r:
            spread += (1, d)
            view += (r, d)
        else:
            spread.append(d)
            view.append(d * r)
    return tuple(spread), tuple(view)


def fit_rank(
    x: Array, plan: Plan, xp: ArrayNamespace, /, max_dims: int = MAX_DIMS
) -> tuple[Array, Plan]:  # numpydoc ignore=PR01,RT01
    """
    Tile axes one at a time, by concatenation, until the view's rank fits `max_dims`.

    Only for ranks above ``MAX_DIMS // 2`` with many repeated axes: each axis tiled
    so costs an intermediate array, so the smallest repeats go first.
    """
    shape, reps = plan.shape, list(plan.reps)
    paired = sorted((r, i) for i, (d, r) in enumerate(zip(shape, reps, strict=True)) if d != 1 != r)
    excess = len(shape) + len(paired) - max_dims
    if excess <= 0:
        return x, plan
    if x.ndim != len(shape):
        x = xp.reshape(x, shape)  # prepends length-1 axes: a view
    for r, axis in paired[:excess]:
        x = xp.concat([x] * r, axis=axis)
        reps[axis] = 1
    return x, plan._replace(shape=tuple(x.shape), reps=tuple(reps))
