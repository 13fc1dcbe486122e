"""The planner, integers only: a tile's `candidates` (docs/how-it-works.md), priced, and `plan`."""

import itertools
import math
import operator
from typing import NamedTuple, TypeAlias

# limits, not tuning: the lowest rank limit of the array libraries' broadcast views,
# and the host's largest staged array (it stays in cache; the peak memory: the output + this)
MAX_DIMS = 64
STAGE_BYTES = 1 << 15

Shape: TypeAlias = tuple[int, ...]
Region: TypeAlias = tuple[tuple[int, int], ...]


class Price(NamedTuple):
    """The nanoseconds a step costs: per call, per inner loop, per element, per byte written."""

    call: float
    loop: float
    element: float
    byte: float  # of a step under `Model.big` bytes
    big_byte: float  # of a step of `Model.big` bytes or more


class Work(NamedTuple):
    """What a step does: its inner loops, its elements and the bytes it writes."""

    loops: int
    elements: int
    bytes: int


NONE = Price(math.inf, 0.0, 0.0, 0.0, 0.0)  # a step the backend does not have
FREE = Price(0.0, 0.0, 0.0, 0.0, 0.0)  # a model without prices: every program is one copy


class Layout(NamedTuple):
    """What the planner reads of an input; with the repeats, the plan cache's key."""

    shape: Shape
    strides: Shape  # in units of `unit` bytes
    itemsize: int
    as_bytes: bool = False  # its items may move as bytes (a plain dtype, no conj or neg bit)
    unrecorded: bool = False  # writes into views of a fresh output record nothing (autograd)
    on_host: bool = False  # in host memory and eager: the backend's host `model` prices it
    unit: int = 1


class Model(NamedTuple):
    """A backend's price of each kind of step (a field each), and what its primitives take."""

    # the prices (benchmarks/fit_cost.py) of: a broadcast copy; one whose runs move as
    # items of a machine word; as longer items (void); a repeat of blocks (its "elements":
    # source blocks of 1, 2, 4, 8, 16 or 32 bytes, a loop each); a copy inside the output
    # (its "elements": bytes 4K-aliased); the backend's own tile; a copy by index of a short
    # last axis (`split_at`)
    copy: Price = FREE
    item: Price = NONE
    void: Price = NONE
    repeat: Price = NONE
    replicate: Price = NONE
    native: Price = NONE
    split: Price = NONE
    big: int = 1 << 23  # the least step whose bytes cost `Price.big_byte`; the least
    # output past a host's caches (`_staged`)
    grain_bytes: int = 0  # a step of fewer bytes runs on one thread: its loops cost
    grain_factor: float = 1.0  # this many times their price
    words: frozenset[int] = frozenset()  # run sizes a copy moves as one machine word
    interleaved: bool = False  # a written prefix copies to places interleaved with it
    stage: int = STAGE_BYTES  # the most bytes of a staged array


class Copy(NamedTuple):
    """The broadcast copy of the array so far (its part `source`), into `region` (None: fresh)."""

    shape: Shape
    reps: Shape
    region: Region | None = None
    source: Shape | None = None
    item: int = 0


class Repeat(NamedTuple):
    """The array so far, C-ordered of `shape`, tiled along `axis` `r` times into a fresh array."""

    shape: Shape
    axis: int
    r: int


class Replicate(NamedTuple):
    """In the output, along `axis`: ``[0, n)`` copied onto ``[n, stop)``, in `places`."""

    places: Shape
    axis: int
    n: int
    stop: int


class Whole(NamedTuple):
    """The backend's own computation of the whole tile by `reps`."""

    reps: Shape


Step: TypeAlias = Copy | Repeat | Replicate | Whole
Steps: TypeAlias = tuple[Step, ...]


class Program(NamedTuple):
    """A tile and the steps that write it, run in order by `xtile._run`."""

    shape: Shape  # the input's, promoted
    reps: Shape  # promoted
    out_shape: Shape
    # steps that each make a fresh array from the array so far, then steps that write
    # one output (`Copy` into a region, `Replicate`)
    steps: Steps
    cost: float = 0.0  # ns, by the backend's model
    name: str = "copy"  # which candidate


def promote(shape: tuple[int, ...], reps: Shape, /) -> tuple[Shape, Shape]:
    """Prepend 1s to the shorter of `shape` and `reps` (NumPy / OpenVINO Tile-1)."""
    n = max(len(shape), len(reps))
    return (1,) * (n - len(shape)) + shape, (1,) * (n - len(reps)) + reps


def view_shapes(shape: Shape, reps: Shape, /) -> tuple[Shape, Shape]:
    """The shape `x` is reshaped to and the broadcast shape whose C-order copy is the tile."""
    spread: list[int] = []
    view: list[int] = []
    for d, r in zip(shape, reps, strict=True):  # a pair: an axis whose d != 1 != r
        spread += (1, d) if d != 1 != r else (d,)
        view += (r, d) if d != 1 != r else (d * r,)
    return tuple(spread), tuple(view)


def split_at(spread: Shape, view_shape: Shape, /) -> int:
    """The view's axes up to its last above 1 where that is a short fill, copied by index; or 0."""
    n = max((i + 1 for i, d in enumerate(view_shape) if d != 1), default=0)
    paired = n >= 2 and spread[n - 1] == 1 != spread[n - 2]  # a broadcast axis after a read one
    return n if paired and 1 < view_shape[n - 1] <= 4 < view_shape[n - 2] else 0


def _c_strides(shape: Shape, itemsize: int, /) -> Shape:
    """The strides (bytes) of a C-ordered array of `shape`."""
    return tuple(itemsize * math.prod(shape[i + 1 :]) for i in range(len(shape)))


def _contiguous(shape: Shape, strides: Shape, itemsize: int, /) -> bool:
    """Whether an array of `shape` and `strides` (bytes) is C-contiguous."""
    c = _c_strides(shape, itemsize)
    return all(d == 1 or st == t for d, st, t in zip(shape, strides, c, strict=True))


def c_ordered(layout: Layout, /) -> bool:
    """Whether an array of `layout` is C-contiguous."""
    return _contiguous(layout.shape, _promote_strides(layout, len(layout.shape)), layout.itemsize)


def _last(reps: Shape, /) -> int:
    """The last axis whose repeat is not 1; -1 where none is."""
    return max((i for i, r in enumerate(reps) if r != 1), default=-1)


def _copy_work(
    shape: Shape, strides: Shape, reps: Shape, dest: Shape, itemsize: int, item: int, split: bool, /
) -> tuple[int, Work]:
    """A copy into C-ordered `dest`, runs as `item`s: copies by index; loops, elements, bytes."""
    if item:
        last = _last(reps)
        w = math.prod(shape[last:]) * itemsize // item
        shape, strides = (*shape[:last], w), (*strides[:last], item)
        dest, reps, itemsize = (*dest[:last], reps[last] * w), reps[: last + 1], item
    view: list[tuple[int, int, int]] = []  # (extent, source stride, destination stride)
    for d, r, st, t in zip(shape, reps, strides, _c_strides(dest, 1), strict=True):
        if d != 1 != r:
            view += ((r, 0, d * t), (d, st, t))
        elif d * r != 1:
            view.append((d * r, st if r == 1 else 0, t))
    # runs moved as items go by index too on NumPy, priced as one copy (benchmarks/fit_cost.py)
    by = view.pop()[0] if split and not item and split_at(*view_shapes(shape, reps)) else 0
    size = math.prod(d for d, _, _ in view)
    inner, src, dst = view[-1] if view else (1, 0, 1)
    for d, s, t in reversed(view[:-1]):  # the axes that continue the innermost run
        if s != src * inner or t != dst * inner:
            break
        inner *= d
    n = max(by, 1)
    return by, Work(n * size // inner, n * size, n * size * itemsize)


def _replicate_work(step: Replicate, out_shape: Shape, itemsize: int, /) -> Work:
    """The blocks, bytes copied a few bytes above a multiple of 4 KiB up (4K aliasing), bytes."""
    places, inner = math.prod(step.places), math.prod(out_shape[step.axis + 1 :]) * itemsize
    far, each = step.n * inner, (step.stop - step.n) * inner  # each place's `each` bytes, `far` up
    aliased = step.stop <= 2 * step.n and far > 4096 and 0 < far % 4096 < min(32, each)
    return Work(places * -(-(step.stop - step.n) // step.n), places * each * aliased, places * each)


def _charge(m: Model, kind: str, work: Work, /) -> float:
    """The price of one step of `kind` doing `work` (inner loops, elements, bytes)."""
    price: Price = getattr(m, kind)
    byte = price.big_byte if work.bytes >= m.big else price.byte
    loop = price.loop * (m.grain_factor if work.bytes < m.grain_bytes else 1.0)
    return price.call + work.loops * loop + work.elements * price.element + work.bytes * byte


def features(program: Program, layout: Layout, m: Model, /) -> list[tuple[str, Work]]:
    """Each step's kind (a `Model` field) and work (inner loops, elements, bytes) by `m`."""
    itemsize, out_shape, split = layout.itemsize, program.out_shape, m.split != NONE
    src = _promote_strides(layout, len(program.shape))  # the array so far's, in bytes
    steps: list[tuple[str, Work]] = []
    for step in program.steps:
        if isinstance(step, Copy):
            made = _tiled(step.shape, step.reps)
            dest = made if step.region is None else out_shape
            by, work = _copy_work(step.shape, src, step.reps, dest, itemsize, step.item, split)
            kind = "item" if step.item in (1, 2, 4, 8, 16) else "void" if step.item else "copy"
            steps.append(("split" if by else kind, work))
            src = _c_strides(made, itemsize) if step.region is None else src
        elif isinstance(step, Repeat):  # blocks of 1, 2, 4, ..., 32 bytes: a loop per source block
            rows, made = math.prod(step.shape[: step.axis]), _grown(*step)
            item = math.prod(step.shape[step.axis :]) * itemsize in (1, 2, 4, 8, 16, 32)
            work = Work((1 - item) * rows * step.r, item * rows, math.prod(made) * itemsize)
            steps.append(("repeat", work))
            src = _c_strides(made, itemsize)
        elif isinstance(step, Replicate):
            steps.append(("replicate", _replicate_work(step, out_shape, itemsize)))
        else:
            work = _copy_work(program.shape, src, program.reps, out_shape, itemsize, 0, False)[1]
            steps.append(("native", work))
    return steps


def cost(program: Program, layout: Layout, m: Model, /) -> float:
    """The model's price of `program` on an input of `layout`, in nanoseconds."""
    return sum(_charge(m, kind, work) for kind, work in features(program, layout, m))


def _tiled(shape: Shape, reps: Shape, /) -> Shape:
    """`shape` times `reps`."""
    return tuple(map(operator.mul, shape, reps))


def _grown(shape: Shape, axis: int, r: int, /) -> Shape:
    """`shape` with `axis` `r` times as long."""
    return (*shape[:axis], shape[axis] * r, *shape[axis + 1 :])


def _promote_strides(layout: Layout, ndim: int, /) -> Shape:
    """The input's strides in bytes, with 0 for the leading axes promotion adds."""
    return (0,) * (ndim - len(layout.strides)) + tuple(st * layout.unit for st in layout.strides)


def plan(layout: Layout, reps: Shape, m: Model, fresh: bool, into: bool = False, /) -> Program:
    """
    The cheapest of the `candidates`: the program a call of `layout` runs.

    `fresh`: the output is C-ordered (a fresh one, or an `out` of plain items), so runs
    may move as items; `into`: it is an `out`, so no program that makes its own output.
    """
    found = candidates(layout, reps, m, fresh)
    if into:  # neither the native tile nor a last `Repeat` (its array would be a temporary)
        found = [p for p in found if p.name != "native" and not _makes_output(p)]
    return min(found, key=operator.attrgetter("cost"))  # of equal prices, the first found


def _makes_output(program: Program, /) -> bool:
    """Whether `program`'s last step makes a fresh array (a `Repeat`), not an `out`."""
    return bool(program.steps) and isinstance(program.steps[-1], Repeat)


def candidates(layout: Layout, reps: Shape, m: Model, fresh: bool, /) -> list[Program]:
    """Every program that writes the tile by `reps` into a fresh array or (not `fresh`) `out`."""
    shape, reps = promote(tuple(layout.shape), reps)
    out_shape = _tiled(shape, reps)
    base = Program(shape, reps, out_shape, ())
    if not math.prod(out_shape):
        return [base._replace(name="empty")]
    one = base._replace(steps=(Copy(shape, reps),))
    if _last(reps) < 0:
        return [one]
    strides = _promote_strides(layout, len(shape))
    if len(view_shapes(shape, reps)[1]) > MAX_DIMS:
        return [base._replace(steps=fit_rank(shape, reps), name="copy")]
    found = [one]
    for c in _items(shape, strides, reps, layout, m, fresh):
        found.append(one._replace(steps=(c,), name="bytes"))
    if m.copy != FREE:  # a model without prices (array-api-strict's) takes one copy
        # the native program writes into a fresh output only; NumPy's chain of repeats
        # takes a C-ordered input only
        if fresh and m.native != NONE:
            found.append(base._replace(steps=(Whole(reps),), name="native"))
        if fresh and m.repeat != NONE and (chain := _chain(shape, strides, reps, layout.itemsize)):
            found.append(base._replace(steps=chain, name="native"))
        found += _staged(base, layout, strides, m, fresh)
        if fresh and layout.as_bytes and layout.unrecorded and m.replicate != NONE:
            found += _extended(base, layout, strides, m)
    return [p._replace(cost=cost(p, layout, m)) for p in found]


def fit_rank(shape: Shape, reps: Shape, most: int = MAX_DIMS, /) -> Steps:
    """One copy; first the smallest repeats of paired axes, whole, where the view is too deep."""
    paired = sorted((r, i) for i, (d, r) in enumerate(zip(shape, reps, strict=True)) if d != 1 != r)
    steps: list[Step] = []
    for r, a in paired[: max(0, len(shape) + len(paired) - most)]:
        steps.append(Repeat(shape, a, r))
        shape = _grown(shape, a, r)
        reps = (*reps[:a], 1, *reps[a + 1 :])
    return (*steps, Copy(shape, reps))


def _chain(shape: Shape, strides: Shape, reps: Shape, itemsize: int, /) -> Steps:
    """`numpy.tile`'s repeats of a C-ordered input, unless an array between passes the stage."""
    steps = []
    for a in (a for a, r in enumerate(reps) if r != 1):
        steps.append(Repeat(shape, a, reps[a]))
        shape = _grown(shape, a, reps[a])
    between = math.prod(steps[-1].shape) * itemsize if len(steps) > 1 else 0
    fits = between <= STAGE_BYTES and _contiguous(steps[0].shape, strides, itemsize)
    return tuple(steps) if fits else ()


def _items(
    shape: Shape,
    strides: Shape,
    reps: Shape,
    layout: Layout,
    m: Model,
    fresh: bool,
    region: Region | None = None,
    /,
) -> list[Copy]:
    """The copy of runs (contiguous, as bytes, fresh) as items of a machine word or longer."""
    last, size = _last(reps), layout.itemsize
    run = math.prod(shape[last:]) * size
    movable = fresh and layout.as_bytes
    if last < 0 or not (movable and _contiguous(shape[last:], strides[last:], size)):
        return []
    word = max((w for w in m.words if run % w == 0 and w > size), default=0)
    void = run not in (2, 4, 8) and m.void != NONE and run < 1 << 30
    item = 0 if run == size else run if void else word if m.item != NONE else 0
    return [Copy(shape, reps, region, item=item)] if item else []


def _staged(
    base: Program, layout: Layout, strides: Shape, m: Model, fresh: bool, /
) -> list[Program]:
    """The programs that first tile the inner repeated axes into arrays of `m.stage` bytes."""
    shape, reps, itemsize, out_shape = base.shape, base.reps, layout.itemsize, base.out_shape
    axes = [i for i, r in enumerate(reps) if r != 1]
    n = len(axes)
    price = operator.itemgetter(0)  # of (price, steps): steps are never compared

    def between(j: int, k: int, part: tuple[int, int] = (-1, 1)) -> Shape:
        """The repeats from state `k` to state `j`, and `part` (an axis, its repeats)."""
        return tuple(
            r if i in axes[j:k] else part[1] if i == part[0] else 1 for i, r in enumerate(reps)
        )

    state = [_tiled(shape, between(j, n)) for j in range(n + 1)]  # with `axes[j:]` tiled

    def level(k: int, r: Shape) -> tuple[float, Steps]:
        """The cheapest chain to state `k`, then the level by `r` from it."""
        src = strides if k == n else _c_strides(state[k], itemsize)
        options: list[Steps] = [(*best[k][1], Copy(state[k], r))]
        if m.repeat != NONE and (chain := _chain(state[k], src, r, itemsize)):
            options.append((*best[k][1], *chain))
        priced = ((cost(base._replace(steps=s), layout, m), s) for s in options)
        return min(priced, key=price)

    best: dict[int, tuple[float, Steps]] = {n: (0.0, ())}
    for j in range(n - 1, 0, -1):
        if math.prod(state[j]) * itemsize > m.stage:
            break
        best[j] = min((level(k, between(j, k)) for k in list(best)), key=price)
    found: list[Program] = []
    big = layout.on_host and math.prod(out_shape) * itemsize >= m.big  # past a host's caches
    for j in list(best):
        cur, left = state[j], between(0, j)
        if best[j][1]:
            found += _finals(base, layout, m, fresh, best[j][1], cur, left)
        a = axes[j - 1]
        r, unit = reps[a], 64 // math.gcd(64, math.prod(cur[a:]) * itemsize) if big else 1
        room = min(m.stage, STAGE_BYTES >> (1 + big)) // (math.prod(cur) * itemsize)
        room = room // unit * unit or room  # staged runs of whole 64-byte lines where one fits
        pairs = (d for i in range(1, math.isqrt(r) + 1) if r % i == 0 for d in (i, r // i))
        divisors = sorted({d for d in pairs if 1 < d <= min(r - 1, room)})
        ks = divisors[-2:] + [k for k in divisors[:-2] if k * k >= r][:1]
        if layout.unrecorded and 2 <= room < r and r % room:
            ks.append(room)
        for k in ks:
            _, steps = min((level(i, between(j, i, (a, k))) for i in best if i >= j), key=price)
            new = (*cur[:a], cur[a] * k, *cur[a + 1 :])
            whole = (*left[:a], r // k, *left[a + 1 :])
            if r % k == 0:
                found += _finals(base, layout, m, fresh, steps, new, whole)
                continue
            at = whole[a] * new[a]
            source = (*new[:a], r % k * shape[a], *new[a + 1 :])
            tail = (*whole[:a], 1, *whole[a + 1 :])
            into = tuple((0, v) for v in out_shape)
            wholes = Copy(new, whole, (*into[:a], (0, at), *into[a + 1 :]))  # r // k whole copies
            rest = Copy(source, tail, (*into[:a], (at, out_shape[a]), *into[a + 1 :]), source)
            found.append(base._replace(steps=(*steps, wholes, rest), name="staged"))
    return found


def _finals(
    base: Program, layout: Layout, m: Model, fresh: bool, steps: Steps, cur: Shape, left: Shape, /
) -> list[Program]:
    """The staged `steps`, then the copy of the staged array of `cur` by `left` (or by items)."""
    final: list[Steps] = [(Copy(cur, left),)]
    staged = layout._replace(shape=cur, strides=_c_strides(cur, layout.itemsize), unit=1)
    final += [(c,) for c in _items(cur, staged.strides, left, staged, m, fresh)]
    if fresh and m.repeat != NONE and (chain := _chain(cur, staged.strides, left, staged.itemsize)):
        final.append(chain)
    return [base._replace(steps=(*steps, *f), name="staged") for f in final]


def _one_axis(extents: Shape, out_extents: Shape, /) -> bool:
    """Whether places of `extents` in a C-ordered array of `out_extents` are one strided axis."""
    pairs = itertools.pairwise(i for i, e in enumerate(extents) if e != 1)
    return all(math.prod(out_extents[i + 1 : j + 1]) == extents[j] for i, j in pairs)


def _extended(base: Program, layout: Layout, strides: Shape, m: Model, /) -> list[Program]:
    """The programs that write a corner of the output, then replicate it inside the output."""
    shape, reps, out_shape = base.shape, base.reps, base.out_shape
    axes = [i for i, r in enumerate(reps) if r != 1]
    found: list[Program] = []
    for k in axes:
        done = [a for a in axes if a <= k]
        if not m.interleaved and not all(_one_axis(shape[:a], out_shape[:a]) for a in done):
            continue
        corner_reps = (1,) * (k + 1) + reps[k + 1 :]
        region = tuple((0, v) for v in _tiled(shape, corner_reps))
        copies: list[Step] = [Copy(shape, corner_reps, region)]
        copies += _items(shape, strides, corner_reps, layout, m, True, region)
        steps: list[Step] = []
        for a in reversed(done):
            places, total, n = shape[:a], out_shape[a], shape[a]
            spread = m.interleaved or math.prod(places) == 1
            doubled: list[Step] = []
            options: list[Steps] = []
            while n < total:
                if spread:
                    options.append((*doubled, Replicate(places, a, n, total)))
                step = Replicate(places, a, n, min(2 * n, total))
                doubled.append(step)
                n = step.stop
            options.append(tuple(doubled))
            steps += min(options, key=lambda o: cost(base._replace(steps=o), layout, m))  # type: ignore[arg-type]
        found += [base._replace(steps=(first, *steps), name="extended") for first in copies]
    return found
