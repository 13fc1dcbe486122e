"""The interpreter: fresh-array steps, then writes into one output, by a backend's primitives."""

import functools
import time
from collections.abc import Callable
from typing import Any

from array_api_compat import device, is_lazy_array, is_writeable_array

from ._backends import MUTABLE, Backend, Call, library, load
from ._program import Copy, Layout, Program, Repeat, Replicate, Slabs, Whole, ranked, view_shapes

__all__ = ["KEPT", "compile_program", "compiled", "copy", "keep"]

Array = Any


def copy(x: Array, step: Copy, xp: Any, dest: Array | None = None) -> Array:
    """The standard copy: the broadcast view assigned into a new array, or reshaped as a copy."""
    out_shape = tuple(d * r for d, r in zip(step.shape, step.reps, strict=True))
    if dest is not None:
        dest[...] = copy(x, step, xp)
        return dest
    # a known library's array is not probed (array-api-compat computes on an unknown one)
    lazy = (unknown := library(xp) not in MUTABLE) and is_lazy_array(x)
    if 0 in out_shape:  # no view of that shape (it may overflow)
        if lazy:
            return xp.empty(out_shape, dtype=x.dtype, device=device(x))
        return xp.reshape(xp.reshape(x, (-1,))[0:0], out_shape, copy=True)  # autograd's graph kept
    spread, view_shape = view_shapes(step.shape, step.reps)
    view = xp.broadcast_to(xp.reshape(x, spread), view_shape)
    # its library's copy (JAX: one program); a known library's fresh array takes writes
    if lazy or (unknown and not is_writeable_array(x)):
        return xp.reshape(view, out_shape, copy=True)
    fresh = xp.empty(view_shape, dtype=x.dtype, device=device(x))
    fresh[...] = view  # a C-ordered array of the view's shape: its reshape is a view
    return xp.reshape(fresh, out_shape)


def _standard_repeat(step: Repeat, xp: Any) -> Call:
    """A `Repeat` by concatenation (for a view past the backend's rank)."""
    return lambda x, _: xp.concat([xp.reshape(x, step.shape)] * step.r, axis=step.axis)


# the calls of programs kept: (library, layout, repeats, fresh, off) -> call; its size bounded
KEPT: dict[tuple[Any, ...], tuple[Program, Call]] = {}


def compile_program(
    program: Program, backend: Backend, xp: Any, tile: Callable[..., Array] | None = None
) -> Call:
    """`program` as a call ``(x, out)``, each step's primitive made once."""
    if program.name == "host" and backend.host:  # the host's (NumPy's) program, on `x`'s memory
        host, on = backend.host
        return on(compile_program(program, host, host.xp), program)
    steps = program.steps or (Copy(program.shape, program.reps),)
    cut = next((i for i, s in enumerate(steps) if _inside(s)), len(steps))
    fresh: list[Call] = []
    for step in steps[:cut]:
        if isinstance(step, Whole):
            fresh.append(lambda x, _, r=step.reps: backend.whole(x, r, xp, tile))  # type: ignore[misc]
        elif isinstance(step, Repeat):
            fresh.append((backend.repeat or functools.partial(_standard_repeat, xp=xp))(step))
        elif isinstance(step, Copy):
            fresh.append(_copier(step, backend, xp))
    if cut == len(steps):
        *before, last = fresh
        direct = isinstance(steps[-1], Copy)  # a copy writes into `out` (C-ordered for items)
        if direct and not before:
            return last  # one copy, into a fresh array or `out`

        def run(x: Array, out: Array | None) -> Array:
            for call in before:
                x = call(x, None)
            if out is None or direct:
                return last(x, out)
            out[...] = last(x, None)
            return out

        return run
    writes = [_write(s, backend, xp) for s in steps[cut:] if not isinstance(s, Repeat | Whole)]
    empty = backend.empty or (lambda s, x: xp.empty(s, dtype=x.dtype, device=device(x)))

    def run_into(x: Array, out: Array | None) -> Array:
        for call in fresh:
            x = call(x, None)
        if out is None:
            out = empty(program.out_shape, x)
        for write in writes:
            write(x, out)
        return out

    return run_into


def _inside(step: object) -> bool:
    """Whether `step` writes into the output (a region copy, a replication, slabs)."""
    return isinstance(step, Replicate | Slabs) or getattr(step, "region", None) is not None


def _copier(step: Copy, backend: Backend, xp: Any) -> Call:
    """The backend's copy of `step`, or the standard one."""
    return backend.copy(step) if backend.copy else lambda x, dest: copy(x, step, xp, dest)


def _write(
    step: Copy | Replicate | Slabs, backend: Backend, xp: Any
) -> Callable[[Array, Array], Any]:
    """A step that writes into the output, as a call ``(x, out)``."""
    if isinstance(step, Slabs):  # each slab's program, on the backend's threads
        made = {p: compile_program(p, backend, xp) for p in set(step.programs)}
        calls = [(a, b, made[p]) for (a, b), p in zip(step.cuts, step.programs, strict=True)]
        run = backend.slabs
        return lambda x, out: run([functools.partial(c, x[a:b], out[a:b]) for a, b, c in calls])  # type: ignore[misc]
    if isinstance(step, Replicate):
        return lambda _, out: backend.replicate(out, step)  # type: ignore[misc]
    assert isinstance(step, Copy)
    copy_ = _copier(step, backend, xp)
    into = tuple(slice(a, b) for a, b in step.region or ())
    if step.source is None:
        return lambda x, out: copy_(x, out[into])
    source = tuple(slice(0, n) for n in step.source)  # of a staged array: the output's rank
    return lambda x, out: copy_(x[source], out[into])


@functools.lru_cache(maxsize=256)
def compiled(
    name: str, layout: Layout, reps: tuple[int, ...], fresh: bool, off: frozenset[str]
) -> tuple[Program, Call]:
    """The cheapest program of a planned backend's input, and its call (timed): kept per key."""
    backend = load(name)
    programs = ranked(layout, reps, backend.model if layout.tuned else backend.device, fresh, off)
    calls = tuple(compile_program(p, backend, backend.xp) for p in programs)
    kept = (programs[0], calls[0] if len(calls) == 1 else _measured(programs, calls))
    keep((name, layout, reps, fresh, off), kept)
    return kept


def _measured(programs: tuple[Program, ...], calls: tuple[Call, ...]) -> Call:
    """The call of the fastest of `programs` by their first runs, three in a row each turn."""
    times: list[list[float]] = [[] for _ in calls]
    chosen: list[int] = []

    def run(x: Array, out: Array | None) -> Array:
        if not chosen:
            # each until eight runs in all and 100 us in those past its first turn (a
            # process's first calls fault memory in; short runs' times vary), or 100 runs
            # (a clock that stands still, as under freezegun)
            left = [i for i, t in enumerate(times) if len(t) < (100 if sum(t[3:]) < 1e-4 else 8)]
            if left:
                i = min(left, key=lambda i: len(times[i]) // 3)
                start = time.perf_counter()
                result = calls[i](x, out)
                times[i].append(time.perf_counter() - start)
                return result
            warm = [min(t[4::3] + t[5::3]) for t in times]  # past the first turn, runs after
            chosen.append(warm.index(min(warm)))  # one of their own (as the kept program's are)
        j = chosen[0]  # one choice, where threads made two at once; in place of this call
        # wherever kept (again, where `KEPT` was cleared and a key kept this call anew)
        KEPT.update({k: (programs[j], calls[j]) for k, v in KEPT.copy().items() if v[1] is run})
        return calls[j](x, out)

    return run


def keep(key: tuple[Any, ...], kept: tuple[Program, Call]) -> None:
    """Keep `kept` for `key`; past 256 all go (checked after: threads cannot overrun it)."""
    KEPT[key] = kept
    if len(KEPT) > 256:
        KEPT.clear()
