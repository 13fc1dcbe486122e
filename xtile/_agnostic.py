"""
The standard-only tile: views of `x`, then one copy, through the namespace given.

Everything here uses the array API standard alone. The tile of ``x`` by ``reps`` is
the broadcast view ``(r0, d0, r1, d1, ...)`` of ``x`` (a length-1 axis before every
axis, broadcast to the repeats), copied once into a fresh array of the output's
shape. That copy writes the block of ``x`` from its last repeated axis on in one
go, a few elements when the block is short; where a backend says a second,
cache-sized copy is cheap (`FastPath.stage_itemsize`), the inner repeated axes are
first tiled into a small staging array, so the final copy writes long runs
(`stage_cuts`). A backend's measured fast path may replace the copy or add block
doubling (``xtile._fast``); with none, this is the whole tile.
"""

import math
import operator

from ._lib import _compat
from ._lib._helpers import promote
from ._lib._tuning import (
    DOUBLING_RUN_BYTES,
    DOUBLING_STEP_BYTES,
    LEVEL_GROWTH,
    LONG_RUN_BYTES,
    MAX_DIMS,
    NUMPY_WORD_RUNS,
    OUTER_MAX_BLOCK_BYTES,
    OUTER_MAX_RUN_BYTES,
    OUTER_MIN_BYTES,
    PART_MAX_RUN_BYTES,
    PART_RUN_BYTES,
    PARTS_BYTES,
    SMALL_BYTES,
    SMALL_ELEMENTS,
    STAGE_MAX_BYTES,
)
from ._lib._typing import Array, ArrayNamespace, Copy, FastPath, Plan, Shape

__all__ = [
    "STANDARD",
    "broadcast_view",
    "copy",
    "fit_rank",
    "from_block",
    "in_parts",
    "outer_block",
    "rest_axis",
    "short_run",
    "stage_cuts",
    "staging",
    "symbolic_tile",
    "tile",
    "view_shapes",
]

# the standard-only tile: no piece replaced
STANDARD = FastPath()


def tile(
    x: Array,
    plan: Plan,
    xp: ArrayNamespace,
    fast: FastPath = STANDARD,
    /,
    out: Array | None = None,
) -> Array:  # numpydoc ignore=PR01,RT01
    """The tile of `x` by `plan` (into `out`), with the pieces of `fast` where it has them."""
    copy_ = fast.copy or copy
    # checked before the element size is looked up, which costs a tenth of a small tile
    if fast.stage_itemsize is not None and plan.size >= SMALL_ELEMENTS:
        itemsize = fast.stage_itemsize(x)
        if itemsize:
            ragged = fast.parts is not None and fast.parts(x)
            levels, plan, run = staging(
                plan,
                itemsize,
                ragged=ragged,
                part_run_bytes=fast.part_run_bytes or PART_MAX_RUN_BYTES,
                word_runs=NUMPY_WORD_RUNS if fast.word_runs is None else fast.word_runs,
            )
            if (
                ragged
                and out is None
                and not levels
                and (block := outer_block(plan, itemsize, fast))
            ):
                return from_block(x, plan, block, xp, copy_)
            for level in levels:
                x = copy_(x, level, xp)
            if rest_axis(plan) is not None:
                return in_parts(x, plan, xp, copy_, out)
            if run and fast.double is not None:
                doubled = fast.double(x, plan, run, out)
                if doubled is not None:
                    return doubled
    return copy_(x, plan, xp, out)


def rest_axis(plan: Plan, /) -> int | None:  # numpydoc ignore=PR01,RT01
    """The axis along which `plan`'s output is longer than its repeats of `x`, if any."""
    for axis, (d, r, n) in enumerate(zip(plan.shape, plan.reps, plan.out_shape, strict=True)):
        if d * r != n:
            return axis
    return None


def in_parts(
    x: Array, plan: Plan, xp: ArrayNamespace, copy_: Copy, /, out: Array | None = None
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    The tile of a staged `x` whose output along one axis is its repeats, then part of `x`.

    Staging took ``r1`` of that axis's ``r`` repeats into `x`, where no divisor of
    ``r`` fits the stage (a prime repeat): the output is `x` tiled ``r // r1``
    times along the axis, then the first ``r % r1`` repeats that `x` holds. Two
    copies into views of one output, for backends whose copy writes views in
    place (`FastPath.parts`).
    """
    axis = rest_axis(plan)
    assert axis is not None
    if out is None:
        out = xp.empty(plan.out_shape, dtype=x.dtype, device=_compat.device(x))
    whole = plan.shape[axis] * plan.reps[axis]
    lead = (slice(None),) * axis
    head_shape = (*plan.out_shape[:axis], whole, *plan.out_shape[axis + 1 :])
    head = plan._replace(out_shape=head_shape, size=math.prod(head_shape))
    copy_(x, head, xp, out[(*lead, slice(0, whole))])
    rest = x[(*lead, slice(0, plan.out_shape[axis] - whole))]
    reps = (*plan.reps[:axis], 1, *plan.reps[axis + 1 :])
    rest_shape = tuple(map(operator.mul, rest.shape, reps))
    tail = Plan(tuple(rest.shape), reps, rest_shape, math.prod(rest_shape))
    copy_(rest, tail, xp, out[(*lead, slice(whole, None))])
    return out


def outer_block(
    plan: Plan, itemsize: int, fast: FastPath = STANDARD, /
) -> Plan | None:  # numpydoc ignore=PR01,RT01
    """
    The plan of the output's first block, where the output is best written from it; else None.

    The block is `x` from its outermost axis of length above 1 on, tiled by the
    repeats of the axes inside; the output is that block repeated ``R`` times, ``R``
    the product of the repeats up to that axis (the axes before it are of length 1).
    Where `x` is too large to stage and its runs are short, each repeat of the block
    costs a copy of short runs; built once and copied whole, it costs one
    (`from_block`), as a tile by one axis at a time does. Only where it was measured
    to pay: outputs of `OUTER_MIN_BYTES` or more, runs under `OUTER_MAX_RUN_BYTES`
    and fills under the backend's `FastPath.fill_bytes` (None: `LONG_RUN_BYTES`),
    blocks of at most `OUTER_MAX_BLOCK_BYTES`; not where block doubling takes the
    tile (`short_run`), nor where the backend stages the other axes and repeats
    blocks of these sizes in one pass (`FastPath.repeat_blocks`), faster.
    """
    shape, reps, out_shape = plan.shape, plan.reps, plan.out_shape
    axis = next((i for i, d in enumerate(shape) if d != 1), None)
    fill_bytes = LONG_RUN_BYTES if fast.fill_bytes is None else fast.fill_bytes
    if (
        axis is None
        or plan.size * itemsize < OUTER_MIN_BYTES
        or plan.run * itemsize >= OUTER_MAX_RUN_BYTES
        or _fill(plan) * itemsize >= fill_bytes
        or short_run(plan, itemsize)
        or all(r == 1 for r in reps[axis + 1 :])  # the block is `x`: the copy's runs are it
        or (
            fast.repeat_blocks is not None
            and plan.run * itemsize in fast.repeat_blocks
            and plan.size // reps[plan.last] * itemsize <= STAGE_MAX_BYTES
        )
    ):
        return None
    block_shape = (shape[axis], *out_shape[axis + 1 :])
    size = math.prod(block_shape)
    if size == plan.size or size * itemsize > OUTER_MAX_BLOCK_BYTES:
        return None
    return Plan(shape[axis:], (1, *reps[axis + 1 :]), block_shape, size)


def from_block(
    x: Array, plan: Plan, block: Plan, xp: ArrayNamespace, copy_: Copy, /
) -> Array:  # numpydoc ignore=PR01,RT01
    """
    The tile of `x` by `plan` as its first `block` (`outer_block`), then that block repeated.

    Two copies into views of one output, for backends whose copy writes views in
    place (`FastPath.parts`): the block into its first place, then from there into
    the others, a source wholly before its destination.
    """
    repeats = plan.size // block.size
    out = xp.empty((repeats, *block.out_shape), dtype=x.dtype, device=_compat.device(x))
    copy_(xp.reshape(x, block.shape), block, xp, out[0, ...])
    ones = (1,) * len(block.shape)
    rest_shape = (repeats - 1, *block.out_shape)
    rest = Plan((1, *block.out_shape), (repeats - 1, *ones), rest_shape, plan.size - block.size)
    copy_(out[0:1, ...], rest, xp, out[1:, ...])
    tiled: Array = xp.reshape(out, plan.out_shape)
    return tiled


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
    if plan.size == 0:  # nothing to copy (and lazy reshapes of empty views can fail)
        empty: Array = xp.empty(plan.out_shape, dtype=x.dtype, device=_compat.device(x))
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


def staging(
    plan: Plan,
    itemsize: int,
    /,
    *,
    ragged: bool = False,
    part_run_bytes: int = PART_MAX_RUN_BYTES,
    word_runs: frozenset[int] = NUMPY_WORD_RUNS,
) -> tuple[list[Plan], Plan, int]:  # numpydoc ignore=PR01,RT01
    """
    How a tile that may stage is written: its steps, planned, without running them.

    The staging levels (innermost first, per `stage_cuts`), the plan of the final
    copy, and its run in bytes where block doubling may replace that copy (0: none,
    `short_run`). Small outputs and long runs are one copy as they are. The full
    tile runs these steps; a backend's cached plan (`FastPath.compile`) reuses them.
    `ragged`: the final plan may repeat part of the staged array (`rest_axis`,
    `in_parts`); `part_run_bytes`, `word_runs`: part of a repeat is staged only for
    shorter runs, not of these sizes (`FastPath.part_run_bytes`, `FastPath.word_runs`).
    """
    if (
        plan.size < SMALL_ELEMENTS
        or plan.size * itemsize < SMALL_BYTES
        or plan.run * itemsize >= LONG_RUN_BYTES
    ):
        return [], plan, 0
    shape, left = plan.shape, list(plan.reps)
    done = len(shape)
    levels = []
    cuts = stage_cuts(
        plan, itemsize, ragged=ragged, part_run_bytes=part_run_bytes, word_runs=word_runs
    )
    for a, r in cuts:
        inner = (1,) * a + (r, *left[a + 1 : done]) + (1,) * (len(shape) - done)
        staged = tuple(map(operator.mul, shape, inner))
        levels.append(Plan(shape, inner, staged, math.prod(staged)))
        left[a + 1 : done] = [1] * (done - a - 1)
        left[a] //= r
        shape, done = staged, a
    if levels:
        plan = plan._replace(shape=shape, reps=tuple(left))
    return levels, plan, short_run(plan, itemsize)


def stage_cuts(
    plan: Plan,
    itemsize: int,
    /,
    *,
    ragged: bool = False,
    part_run_bytes: int = PART_MAX_RUN_BYTES,
    word_runs: frozenset[int] = NUMPY_WORD_RUNS,
) -> tuple[tuple[int, int], ...]:  # numpydoc ignore=PR01,RT01
    """
    Where to stage: each level's first axis and the repeat staged there, innermost first.

    Tiling the inner repeated axes first, into a small array ``S``, makes the final
    copy's run ``S``'s whole inner part. ``S`` is itself built the same way, level
    by level; a level ends once it multiplies the size by `LEVEL_GROWTH`, so each
    level's copy has long enough runs, and staging stops once the runs are long.
    Where the next axis's whole repeat would outgrow `STAGE_MAX_BYTES`, or build
    the output itself (the outermost repeated axis), the last level stages a
    divisor of that repeat (`_part`): tiling by ``r1`` then by ``r / r1`` along an
    axis is tiling by ``r``, so a vector tiled 10^5 times is staged ~4 KiB long and
    copied in runs of that; only where the runs are under `part_run_bytes`
    (`PART_MAX_RUN_BYTES`, or the backend's `FastPath.part_run_bytes`) and not
    of the sizes the backend copies as machine words (`word_runs`), which copy well
    as they are. With `ragged`, where no divisor
    fits, the fewest repeats that do, the rest of the repeat written apart (`in_parts`): only for
    an axis outside all others of length above 1, runs under `DOUBLING_RUN_BYTES`
    other than machine words, and outputs of `PARTS_BYTES` or more (elsewhere two
    copies, strided or planned per call, cost more than the short runs). Empty
    when the direct copy's runs are long already.
    """
    shape, reps = plan.shape, plan.reps
    repeated = [i for i, r in enumerate(reps) if r != 1]
    if (
        not repeated
        or plan.run * itemsize >= LONG_RUN_BYTES
        or _fill(plan) * itemsize >= LONG_RUN_BYTES
    ):
        return ()
    cuts: list[tuple[int, int]] = []
    size, growth, first = math.prod(shape) * itemsize, 1, 0
    for axis in reversed(repeated):
        r = reps[axis]
        if axis == repeated[0] or size * r > STAGE_MAX_BYTES:
            # the run of the final copy from `axis` on is this long per repeat staged
            block = size // math.prod(shape[:axis])
            if block >= part_run_bytes or block in word_runs:
                break  # runs that copy well as they are: a level would cost more
            low = max(-(-PART_RUN_BYTES // block), -(-LEVEL_GROWTH // growth))
            high = STAGE_MAX_BYTES // size
            part = _part(r, low, high)
            if (
                ragged
                and part < low <= min(high, r - 1)
                and plan.size * itemsize >= PARTS_BYTES
                and block < DOUBLING_RUN_BYTES  # runs that copy slowly: 64 bytes copy well
                and block not in word_runs  # so do machine words
                and math.prod(plan.out_shape[:axis]) == 1  # the output is then flat
            ):
                part = low
            if growth * part < LEVEL_GROWTH or block * part < LONG_RUN_BYTES:
                break  # a fill of single elements, cut into short runs, would be slower
            r = part
            cuts.append((axis, r))
            return tuple(cuts)
        size, growth, first = size * r, growth * r, axis
        if growth >= LEVEL_GROWTH:
            cuts.append((axis, r))
            growth = 1
            # the next copy's run: from the next repeated axis on, of the staged array
            outer = repeated[repeated.index(axis) - 1]
            if size // math.prod(shape[:outer]) >= LONG_RUN_BYTES:
                return tuple(cuts)
    if growth > 1:
        cuts.append((first, reps[first]))
    return tuple(cuts)


def _part(r: int, low: int, high: int, /) -> int:
    """
    A divisor of the repeat `r`, below it and at most `high`: the least from `low` on.

    Else the largest; 1 if none. Divisors come from `r`'s prime factors under 1000, enough for the
    divisors under `high` (at most `STAGE_MAX_BYTES`) of all but rare repeats.
    """
    high = min(high, r - 1)
    if high < 2:
        return 1
    divisors, rest = {1}, r
    for p in _PRIMES:
        if p > high or rest == 1:
            break
        while rest % p == 0:
            rest //= p
            divisors |= {d * p for d in divisors if d * p <= high}
    if rest <= high:  # a prime factor of 1000 or more
        divisors |= {d * rest for d in divisors if d * rest <= high}
    above = [d for d in divisors if d >= low]
    return min(above) if above else max(divisors)


_PRIMES = [p for p in range(2, 1000) if all(p % q for q in range(2, math.isqrt(p) + 1))]


def _fill(plan: Plan, /) -> int:
    """
    Elements the copy writes from one element of `x`: the repeats of its last axes of length 1.

    Those axes are broadcasts of single elements, which the copy writes as a fill (PyTorch
    fills (2, 2, 1, 1) x (6, 1, 98940, 4) int16 four times as fast as staged); staging
    them would cut the fill into short runs.
    """
    fill = 1
    for d, r in zip(reversed(plan.shape), reversed(plan.reps), strict=True):
        if d != 1:
            break
        fill *= r
    return fill


def short_run(plan: Plan, itemsize: int, /) -> int:  # numpydoc ignore=PR01,RT01
    """
    The broadcast copy's run in bytes where block doubling may pay, else 0.

    A run of one element is a broadcast of single elements: already a fast fill.
    Each doubling step is a call (a few microseconds), so the output must be large
    enough to pay for them: `DOUBLING_STEP_BYTES` per step.
    """
    run = plan.run
    if not (run > 1 and run * itemsize < DOUBLING_RUN_BYTES):
        return 0
    steps = sum((r - 1).bit_length() for r in plan.reps)
    return run * itemsize if plan.size * itemsize >= steps * DOUBLING_STEP_BYTES else 0
