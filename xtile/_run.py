"""The interpreter: fresh-array steps, then writes into one output, by a backend's primitives."""

import functools
from collections.abc import Callable
from typing import Any

from array_api_compat import device, is_lazy_array, is_writeable_array

from ._backends import MUTABLE, Backend, Call, library, load
from ._program import Copy, Layout, Program, Repeat, Replicate, Whole, plan, view_shapes

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


# the programs of calls seen before, by `x`'s type and raw key, the repeats, the layer
# (and `out`'s raw key); its size bounded
KEPT: dict[tuple[Any, ...], tuple[Program, Call]] = {}
# the plain array types of the calls `KEPT` holds, and their `Backend.raw_key`
RAW_KEYS: dict[type, Callable[[Array], tuple[Any, ...] | None]] = {}


def compile_program(
    program: Program, backend: Backend, xp: Any, tile: Callable[..., Array] | None = None
) -> Call:
    """`program` as a call ``(x, out)``, each step's primitive made once."""
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
    """Whether `step` writes into the output (a region copy, a replication)."""
    return isinstance(step, Replicate) or getattr(step, "region", None) is not None


def _copier(step: Copy, backend: Backend, xp: Any) -> Call:
    """The backend's copy of `step`, or the standard one."""
    return backend.copy(step) if backend.copy else lambda x, dest: copy(x, step, xp, dest)


def _write(step: Copy | Replicate, backend: Backend, xp: Any) -> Callable[[Array, Array], Any]:
    """A step that writes into the output, as a call ``(x, out)``."""
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
    name: str, layout: Layout, reps: tuple[int, ...], fresh: bool, into: bool
) -> tuple[Program, Call]:
    """The program `plan` gives a planned backend's input, and its call."""
    backend = load(name)
    program = plan(layout, reps, backend.model if layout.on_host else backend.device, fresh, into)
    return program, compile_program(program, backend, backend.xp)


def keep(key: tuple[Any, ...], kept: tuple[Program, Call]) -> None:
    """Keep `kept` for `key`; past 256 all go (checked after: threads cannot overrun it)."""
    KEPT[key] = kept
    if len(KEPT) > 256:
        KEPT.clear()
