"""
The planner: the program of named steps that writes a tile, from integers alone.

A tile depends on what its input is (its `Layout`: shape, strides, element size,
and whether its items may be moved as bytes and its output written in parts), on
the repeats, and on what the backend's primitives do well (its `Tuning`). From
these, `program` writes the tile's steps once; `xtile._agnostic.run` runs any
program through a backend's primitives, and `xtile._cache` keeps programs for
repeated calls. No array library is touched here, so a program can be printed
(`explain`, ``python -m xtile explain``), compared and tested on its own.

Every program is at most three parts, in this order:

1. ``stage``: the inner repeated axes tiled into a fresh, cache-sized array, so
   that the copies after it write long runs (the last level may take only part of
   an axis's repeats; the rest of that axis is then written in two copies);
2. ``copy``: the broadcast copy of the (staged) input into the output, or into
   the part of it that ``extend`` replicates; ``bytes``: a short contiguous run
   moved as one item;
3. ``extend``: a written prefix of the output replicated inside it along an
   axis: doubled while its runs are short, then copied to every other place at
   once.

A one-pass ``repeat`` of whole blocks, where one axis repeats, replaces the three. Each strategy can
be switched off by name (`switched_off`), for ablations and tests.
"""

import contextlib
import contextvars
import itertools
import math
import operator
from collections.abc import Iterator
from typing import NamedTuple, TypeAlias

from ._lib._typing import Plan, Shape

__all__ = [
    "LONG_RUN_BYTES",
    "MAX_DIMS",
    "OFF",
    "STAGE_BYTES",
    "STRATEGIES",
    "Copy",
    "Layout",
    "Move",
    "Program",
    "Repeat",
    "Spread",
    "Stage",
    "Tuning",
    "explain",
    "items",
    "program",
    "switched_off",
]

# The strategies a program may use besides the one broadcast copy, by name.
STRATEGIES = ("bytes", "stage", "extend", "repeat")

# The thresholds: why each is what it is lives here, the measurements behind them in
# docs/performance.md ("The strategies").

# The largest rank of the broadcast view, the lowest of the array libraries'; a tile
# whose view would be larger first tiles some axes by concatenation. A limit, not tuning.
MAX_DIMS = 64
# Smaller outputs are one direct copy: a call's fixed cost outweighs any strategy.
SMALL_BYTES = 1 << 16
# Runs (and fills of single elements) this long copy at memory speed as they are.
LONG_RUN_BYTES = 512
# A staged array stays in the L1/L2 cache, and a tile's peak memory stays the output
# plus a small constant (tests/test_memory.py allows 64 KiB). A design bound.
STAGE_BYTES = 1 << 15
# Each staging level multiplies the array by at least this much, and replicating a
# corner inside the output the corner, or the extra copy costs more than it saves.
LEVEL_GROWTH = 8
# Where staging takes part of an axis's repeats, it takes enough for runs this long;
# only for runs shorter than PART_RUN_BYTES, which copy slowly as they are.
STAGED_RUN_BYTES = 1 << 12
PART_RUN_BYTES = 128
# A prefix of the output is replicated inside it only where the direct copy writes
# runs (or fills) shorter than this: longer ones copy near memory speed as they are.
EXTEND_RUN_BYTES = 64
# The largest corner written by the broadcast copy before it is extended inside the
# output: a small one costs less so than by doubling in many places.
CORNER_BYTES = 1 << 22
# On a device, where the runs move as wide words the output has at least this many
# elements: the views around the copy cost host time that fewer element copies repay.
DEVICE_ELEMENTS = 1 << 22
# Each doubling step inside the output is one call: the output must have this many
# bytes per step to pay for it (below 256 KiB, 4 steps lost to the one copy).
STEP_BYTES = 1 << 16


class Tuning(NamedTuple):
    """
    What a backend's primitives do well: which strategies the planner may use.

    Attributes
    ----------
    stage : bool
        A second, cache-sized copy is cheap (eager host memory): staging pays.
    extend : bool
        The copies write views of one output in place, so a prefix of the output
        can be replicated inside it.
    interleaved : bool
        A prefix copies to places that interleave with it in memory in one copy,
        with no temporary; else only where the prefix is one block before them
        (a copy whose source and destination bounds overlap goes through a
        temporary).
    words : frozenset of int
        Run sizes, in bytes, that the copy moves as one machine word: fast as
        they are, so neither staged in part nor replicated.
    any_item : bool
        Any short run can be moved as one item (a void dtype); else only
        runs of `words`.
    repeat : bool
        Where one axis repeats, one pass of whole blocks, as a ``repeat``.
    """

    stage: bool = False
    extend: bool = False
    interleaved: bool = False
    words: frozenset[int] = frozenset()
    any_item: bool = False
    repeat: bool = False


class Layout(NamedTuple):
    """
    What the planner reads of an input: the whole key of the plan cache, with the repeats.

    Attributes
    ----------
    shape : tuple of int
        The input's shape.
    strides : tuple of int
        Its strides in units of `unit` bytes (0 for a broadcast axis, negative for a
        reversed one).
    itemsize : int
        Bytes per element.
    raw : bool
        Its items may be moved as bytes (a plain dtype, no conjugate or negative bit).
    parts : bool
        Writes into views of a fresh output are plain writes (nothing records them).
    tuned : bool
        The backend's `Tuning` applies (an eager array in host memory); else the
        program is the one broadcast copy, its runs moved in the widest of the
        tuning's `words` that divides them (a device's copy costs per element).
    unit : int
        The bytes of one step of `strides`: 1 where they count bytes, the element
        size where they count elements (so that a key costs no conversion).
    """

    shape: Shape
    strides: Shape
    itemsize: int
    raw: bool = False
    parts: bool = False
    tuned: bool = False
    unit: int = 1


Region: TypeAlias = tuple[tuple[int, int], ...]


class Stage(NamedTuple):
    """The array so far tiled by `plan` (its inner axes) into a fresh, small array, by `how`."""

    plan: Plan
    how: "Copy | Repeat"


class Copy(NamedTuple):
    """
    The broadcast copy of the array so far, tiled by `plan`, into the output.

    `region` (a start and stop per output axis) is the part of the output written,
    None for all of it; `source` the stops per axis of the part of the array so far
    that is copied, None for all of it; `item` the bytes moved as one item (a
    divisor of the run of a contiguous block, the whole run on the host: ``plan``
    is then the tile of those items), 0 for the dtype's own items.
    """

    plan: Plan
    region: Region | None = None
    source: Shape | None = None
    item: int = 0


class Repeat(NamedTuple):
    """The tile of a contiguous input whose one repeated axis is `axis`: one pass of blocks."""

    plan: Plan
    axis: int


class Move(NamedTuple):
    """
    Inside the output: along `axis`, indices ``[0, n)`` copied onto ``[at, at + n)``.

    In the region whose axes before `axis` have the extents `places` (from 0) and
    whose axes after it are whole: one step of doubling.
    """

    places: Shape
    axis: int
    at: int
    n: int


class Spread(NamedTuple):
    """
    Inside the output: along `axis`, the prefix ``[0, k)`` copied onto ``[k, total)``.

    In the region of `Move`; the whole copies of the prefix in one copy, then the
    part of it that is left.
    """

    places: Shape
    axis: int
    k: int
    total: int


Step: TypeAlias = Stage | Copy | Repeat | Move | Spread


class Program(NamedTuple):
    """
    A tile's plan (shapes) and the steps that write it, in order.

    Attributes
    ----------
    plan : Plan
        The whole tile: promoted shape and repeats, output shape and size.
    steps : tuple
        `Stage` steps, each into a fresh array; then either one `Copy` into a fresh
        output (``region`` None) or a `Repeat`, or copies into regions of an
        output and `Move` and `Spread` steps inside it. Empty for an empty output.
    """

    plan: Plan
    steps: tuple[Step, ...]


# the strategies switched off in this thread or task now (`switched_off`)
OFF: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("OFF", default=frozenset())


@contextlib.contextmanager
def switched_off(*names: str) -> Iterator[None]:
    """
    Plan without the strategies `names` (of `STRATEGIES`) inside this block, in this thread.

    For ablations and tests; the plan cache keys its programs by what is switched
    off, so none planned outside the block is used inside it.

    Parameters
    ----------
    *names : str
        Names from `STRATEGIES`.

    Yields
    ------
    None
        Inside the block the strategies are off.

    Raises
    ------
    ValueError
        For a name that is not a strategy.
    """
    unknown = set(names) - set(STRATEGIES)
    if unknown:
        msg = f"unknown strategies {sorted(unknown)}; they are {STRATEGIES}."
        raise ValueError(msg)
    token = OFF.set(OFF.get() | frozenset(names))
    try:
        yield
    finally:
        OFF.reset(token)


def program(
    layout: Layout,
    reps: Shape,
    tuning: Tuning,
    /,
    *,
    fresh: bool = True,
    off: frozenset[str] | None = None,
) -> Program:  # numpydoc ignore=PR01,RT01
    """
    The program of the tile of an input of `layout` by `reps` (validated, non-negative).

    `fresh`: the output is a new C-ordered array; else it is an existing one of any
    strides (``out=``), written only by copies. `off`: the strategies not to use
    (default: those switched off now, `OFF`).
    """
    ndim = max(len(layout.shape), len(reps))
    shape = tuple(layout.shape)
    shape, strides = _promote(shape, _byte_strides(layout), ndim)
    plan = _plan(shape, (1,) * (ndim - len(reps)) + reps)
    if not plan.size:
        return Program(plan, ())
    if plan.last < 0:
        return Program(plan, (Copy(plan),))
    on = frozenset(STRATEGIES) - (OFF.get() if off is None else off)
    if not layout.tuned:
        return Program(plan, (_widened(plan, strides, layout, tuning, on, fresh=fresh),))
    itemsize, run = layout.itemsize, plan.run
    runs_contiguous = (
        "bytes" in on
        and bool(tuning.any_item or tuning.words)  # else the strides are not read
        and _contiguous(shape[plan.last :], strides[plan.last :], itemsize)
    )
    if (
        plan.size * itemsize >= SMALL_BYTES
        and run * itemsize < LONG_RUN_BYTES
        and _fill(plan) * itemsize < LONG_RUN_BYTES
    ):
        if (
            "stage" in on
            and tuning.stage
            and (steps := _staged(plan, layout, tuning, on, fresh=fresh))
        ):
            return Program(plan, steps)
        if (
            "extend" in on
            and tuning.extend
            and layout.parts
            and layout.raw
            and fresh
            and max(run, _fill(plan)) * itemsize < EXTEND_RUN_BYTES
            and not (run > 1 and run * itemsize in tuning.words)
            and (steps := _extended(plan, itemsize, tuning, contiguous=runs_contiguous))
        ):
            return Program(plan, steps)
    return Program(plan, (_one_copy(plan, strides, layout, tuning, on, fresh=fresh),))


def _one_copy(
    plan: Plan,
    strides: Shape,
    layout: Layout,
    tuning: Tuning,
    on: frozenset[str],
    /,
    *,
    fresh: bool,
) -> Repeat | Copy:
    """
    The one copy that writes all of `plan`'s output, from an array of `strides` (bytes).

    Into a fresh output: where one axis repeats and the array is contiguous, one
    pass of whole blocks (``repeat``); where the runs are short, of several
    elements, contiguous, each moved as one item (``bytes``); else the broadcast
    copy, element by element.
    """
    itemsize, run, last = layout.itemsize, plan.run, plan.last
    if not (fresh and layout.raw) or last < 0:
        return Copy(plan)
    if (
        "repeat" in on
        and tuning.repeat
        and sum(r != 1 for r in plan.reps) == 1
        and _contiguous(plan.shape, strides, itemsize)
    ):
        return Repeat(plan, last)
    if (
        "bytes" in on
        and plan.size * itemsize >= SMALL_BYTES
        and run > 1
        and run * itemsize < LONG_RUN_BYTES
        and (tuning.any_item or run * itemsize in tuning.words)
        and _contiguous(plan.shape[last:], strides[last:], itemsize)
    ):
        return Copy(plan, item=run * itemsize)
    return Copy(plan)


def _widened(
    plan: Plan,
    strides: Shape,
    layout: Layout,
    tuning: Tuning,
    on: frozenset[str],
    /,
    *,
    fresh: bool,
) -> Copy:
    """
    The one copy on a device (`layout` untuned): its runs in the widest word that divides them.

    A GPU's broadcast copy costs per element, not per byte (docs/performance.md).
    """
    itemsize, last = layout.itemsize, plan.last
    run_bytes = plan.run * itemsize
    word = max((w for w in tuning.words if run_bytes % w == 0), default=0)
    if (
        fresh
        and layout.raw
        and word > itemsize
        and plan.size >= DEVICE_ELEMENTS
        and "bytes" in on
        and _contiguous(plan.shape[last:], strides[last:], itemsize)
    ):
        return Copy(plan, item=word)
    return Copy(plan)


def items(plan: Plan, words: int = 1, /) -> Plan:  # numpydoc ignore=PR01,RT01
    """The plan of a `Copy` with ``item``: the tile of the runs, each `words` items."""
    last, run = plan.last, plan.run
    shape, reps, out_shape = plan.shape, plan.reps, plan.out_shape
    return Plan(
        (*shape[:last], words),
        reps[: last + 1],
        (*out_shape[:last], reps[last] * words),
        plan.size // run * words,
    )


def _promote(shape: Shape, strides: Shape, ndim: int, /) -> tuple[Shape, Shape]:
    """`shape` and `strides` with leading length-1 axes up to `ndim` axes."""
    lead = ndim - len(shape)
    return (1,) * lead + shape, (0,) * lead + strides


def _byte_strides(layout: Layout, /) -> Shape:
    """The strides of `layout`, in bytes."""
    unit = layout.unit
    return layout.strides if unit == 1 else tuple(st * unit for st in layout.strides)


def _c_strides(shape: Shape, itemsize: int, /) -> Shape:
    """The strides (bytes) of a C-ordered array of `shape`."""
    return tuple(itemsize * math.prod(shape[i + 1 :]) for i in range(len(shape)))


def _contiguous(shape: Shape, strides: Shape, itemsize: int, /) -> bool:
    """Whether an array of `shape` and `strides` (in bytes) is C-contiguous."""
    expected = itemsize
    for d, st in zip(reversed(shape), reversed(strides), strict=True):
        if d != 1 and st != expected:
            return False
        expected *= d
    return True


def _fill(plan: Plan, /) -> int:
    """Elements written from one element of the input: the repeats of its last axes of length 1."""
    fill = 1
    for d, r in zip(reversed(plan.shape), reversed(plan.reps), strict=True):
        if d != 1:
            break
        fill *= r
    return fill


def _staged(
    plan: Plan, layout: Layout, tuning: Tuning, on: frozenset[str], /, *, fresh: bool
) -> tuple[Step, ...]:
    """
    The tile with its inner repeated axes staged first; empty where staging does not pay.

    From the innermost repeated axis out, whole repeats are staged while the staged
    array fits `STAGE_BYTES`, a level per `LEVEL_GROWTH`, until the final copy's
    runs are long. Where the next repeat would outgrow the stage (or build the
    output) and the runs are still under `PART_RUN_BYTES` (and not a machine word),
    the last level stages only part of that axis's repeats, enough for runs of
    `STAGED_RUN_BYTES` (a divisor of the repeat where one fits the stage): the output
    along that axis is then the staged array's whole copies, then part of one, two
    copies into regions of one output (`parts`).
    """
    shape, reps, itemsize = plan.shape, plan.reps, layout.itemsize
    x_strides = _promote(layout.shape, _byte_strides(layout), len(shape))[1]
    repeated = [i for i, r in enumerate(reps) if r != 1]
    cuts: list[tuple[int, int]] = []
    size, growth, first = math.prod(shape) * itemsize, 1, len(shape)
    part = -1
    for axis in reversed(repeated):
        r = reps[axis]
        if axis == repeated[0] or size * r > STAGE_BYTES:
            block = size // math.prod(shape[:axis])  # bytes per place from `axis` on
            low, high = -(-STAGED_RUN_BYTES // block), min(STAGE_BYTES // size, r - 1)
            # a divisor of the repeat spares the copy of the rest: the least from `low`
            # on, else the largest for long runs; else the fewest for runs of `low`
            divisors = [k for k in range(-(-LONG_RUN_BYTES // block), high + 1) if r % k == 0]
            above = [k for k in divisors if k >= low]
            k = above[0] if above else divisors[-1] if divisors else min(low, high)
            if (
                layout.parts
                and block < PART_RUN_BYTES
                and (block not in tuning.words or not fresh)  # words: the fresh copy moves
                and k * block >= LONG_RUN_BYTES
                # the rest of a repeat costs a copy more: as a doubling step would
                and (r % k == 0 or plan.size * itemsize >= LEVEL_GROWTH * STEP_BYTES)
            ):
                cuts.append((axis, k))  # with the axes inside still pending
                part, growth = axis, 1
            break
        size, growth, first = size * r, growth * r, axis
        if growth >= LEVEL_GROWTH:
            cuts.append((axis, r))
            growth = 1
            outer = repeated[repeated.index(axis) - 1]  # `axis` is not the outermost
            if size // math.prod(shape[:outer]) >= LONG_RUN_BYTES:
                break
    if growth > 1:
        cuts.append((first, reps[first]))
    if not cuts:
        return ()
    steps: list[Step] = []
    cur, left, done = shape, list(reps), len(shape)
    for a, r in cuts:
        inner = (1,) * a + (r, *left[a + 1 : done]) + (1,) * (len(shape) - done)
        staged = tuple(map(operator.mul, cur, inner))
        level = Plan(cur, inner, staged, math.prod(staged))
        strides = x_strides if not steps else _c_strides(cur, itemsize)
        how = _one_copy(level, strides, layout._replace(shape=cur), tuning, on, fresh=True)
        steps.append(Stage(level, how))
        left[a + 1 : done] = [1] * (done - a - 1)
        left[a] //= r
        cur, done = staged, a
    whole = _plan(cur, left)
    rest = 0 if part < 0 else reps[part] % cuts[-1][1]
    if not rest:  # from the staged array, C-ordered
        staged = layout._replace(shape=cur, strides=_c_strides(cur, itemsize), unit=1)
        return (*steps, _one_copy(whole, staged.strides, staged, tuning, on, fresh=fresh))
    # along `part`: the staged array's whole copies, then the first `rest` repeats of it
    steps.append(Copy(whole, tuple((0, n) for n in whole.out_shape)))
    source = (*cur[:part], rest * shape[part], *cur[part + 1 :])
    tail = _plan(source, (*left[:part], 1, *left[part + 1 :]))
    region = tuple(
        (whole.out_shape[i], n) if i == part else (0, n) for i, n in enumerate(plan.out_shape)
    )
    return (*steps, Copy(tail, region, source))


def _plan(shape: Shape, reps: Shape | list[int], /) -> Plan:
    """The plan of the tile of `shape` by `reps` (of equal length)."""
    out = tuple(map(operator.mul, shape, reps))
    return Plan(shape, tuple(reps), out, math.prod(out))


def _extended(
    plan: Plan, itemsize: int, tuning: Tuning, /, *, contiguous: bool
) -> tuple[Step, ...]:
    """
    The tile as a prefix of the output, replicated inside it; empty where that does not pay.

    The input, tiled along its axes after `k`, is copied into the output's corner
    (each axis up to `k` at its input length); then each repeated axis from `k` out
    is extended: its prefix doubled while the runs are short, or (without
    `interleaved`) while its places interleave with the rest, then copied to the
    rest at once. `k` is, of the repeated axes whose corner is at most a
    `LEVEL_GROWTH`th of the output (a larger one is most of the work, at the copy's
    speed), the outermost whose corner is at most `CORNER_BYTES` (a small corner is
    cheaper to write by the copy than by doubling in many places), else the
    innermost; without `interleaved`, only axes whose outer places are one strided
    axis. Only where the output pays for the doubling steps' calls (`STEP_BYTES` each).
    """
    shape, reps, out_shape = plan.shape, plan.reps, plan.out_shape
    run_bytes = plan.run * itemsize
    repeated = [i for i, r in enumerate(reps) if r != 1]
    axes = [
        a
        for a in repeated
        if (plan.run > 1 or a != plan.last)  # a fill is written at fill speed already
        and (tuning.interleaved or _one_axis(shape[:a], out_shape[:a]))
    ]
    # axes whose corner is not most of the work (the corners shrink inwards), and of
    # them the outermost whose corner is small enough to write by the broadcast copy
    fits = [a for a in axes if plan.size >= _corner(plan, a) * LEVEL_GROWTH]
    k = next(
        (a for a in fits if _corner(plan, a) * itemsize <= CORNER_BYTES), fits[-1] if fits else -1
    )
    steps = sum((reps[a] - 1).bit_length() for a in repeated if a <= k)
    if k < 0 or plan.size * itemsize < steps * STEP_BYTES:
        return ()
    corner = _plan(shape, (1,) * (k + 1) + reps[k + 1 :])
    region = tuple((0, n) for n in corner.out_shape)
    # a corner before every other place is one block of the output: its runs as items
    item = 0
    if math.prod(shape[:k]) == 1 and (tuning.any_item or run_bytes in tuning.words):
        item = run_bytes if corner.run > 1 and run_bytes < LONG_RUN_BYTES and contiguous else 0
    out: list[Step] = [Copy(corner, region, item=item)]
    for a in reversed(repeated):
        if a > k:
            continue
        places, inner = shape[:a], math.prod(out_shape[a + 1 :]) * itemsize
        spread = tuning.interleaved or math.prod(places) == 1
        n, total = shape[a], out_shape[a]
        while n < total and not (spread and n * inner >= LONG_RUN_BYTES):
            step = min(n, total - n)
            out.append(Move(places, a, n, step))
            n += step
        if n < total:
            out.append(Spread(places, a, n, total))
    return tuple(out)


def _corner(plan: Plan, axis: int, /) -> int:
    """Elements of the output's corner when `axis` and the axes before it are extended."""
    return math.prod(plan.shape[: axis + 1]) * math.prod(plan.out_shape[axis + 1 :])


def _one_axis(extents: Shape, out_extents: Shape, /) -> bool:
    """
    Whether places of `extents` in a C-ordered array of `out_extents` are one strided axis.

    Axes of extent 1 drop out; two neighbours merge where everything between them
    and the inner one is whole.
    """
    axes = [i for i, e in enumerate(extents) if e != 1]
    pairs = itertools.pairwise(axes)
    return all(math.prod(out_extents[i + 1 : j + 1]) == extents[j] for i, j in pairs)


def explain(program: Program, /) -> str:
    """
    The steps of `program`, one line each, as ``python -m xtile explain`` prints them.

    Parameters
    ----------
    program : Program
        A program of `program`.

    Returns
    -------
    str
        One line per step, numbered.
    """
    p = program.plan
    lines = [f"tile {p.shape} by {p.reps} -> {p.out_shape} ({p.size} elements)"]
    if not program.steps:
        lines.append("  1. empty: allocate the output, nothing to copy")
    for i, step in enumerate(program.steps, 1):
        lines.append(f"  {i}. {_describe(step)}")
    return "\n".join(lines)


def _describe(step: Step, /) -> str:
    """One step, in words."""
    if isinstance(step, Stage | Repeat):
        p = step.plan
        if isinstance(step, Repeat):
            return f"repeat: the blocks from axis {step.axis} repeated in one pass -> {p.out_shape}"
        how = " (repeat)" if isinstance(step.how, Repeat) else ""
        return f"stage{how}: {p.shape} tiled by {p.reps} into a fresh {p.out_shape}"
    if isinstance(step, Move | Spread):
        kind, n, at = (
            ("double", step.n, step.at) if isinstance(step, Move) else ("spread", step.k, step.k)
        )
        stop = at + n if isinstance(step, Move) else step.total
        count = math.prod(step.places)
        where = f"in {count} places" if count > 1 else "once"
        return f"extend ({kind}): axis {step.axis}, [0:{n}] copied to [{at}:{stop}] {where}"
    what = "copy" + (f" (bytes: runs moved as items of {step.item} bytes)" if step.item else "")
    what += f": {step.plan.shape} tiled by {step.plan.reps}"
    if step.source is not None:
        what += " from [" + ", ".join(f":{n}" for n in step.source) + "]"
    if step.region is None:
        return f"{what} -> a fresh output"
    return f"{what} -> output[" + ", ".join(f"{a}:{b}" for a, b in step.region) + "]"
