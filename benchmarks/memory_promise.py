"""
What the memory promise costs NumPy: `numpy.tile`'s own chain of repeats at any size.

xtile's peak memory is its output plus under 64 KB (README), so NumPy's chain of
``numpy.repeat`` calls, `numpy.tile`'s own program, is a candidate only where its arrays
between repeats fit the stage (`xtile._program.STAGE_BYTES`, 32 KiB). For each case of
the named losers (``versus.NAMED``), the benchmark matrix and a random sweep, side by
side in one run (samples alternate): `numpy.tile`, `xtile.tile`, and, where the stage
keeps the chain out, `xtile.tile` running that chain instead (its program compiled as
xtile compiles its own and kept in the plan cache in place of today's, so that both pay
the same front). Per case it prints x/native today and of the chain (a dash where the stage
keeps no chain out), and the chain's extra peak memory: what its arrays between repeats
add to the output at its peak, in KB and as a share of the output. The summary gives the
geomean and minimum of x/native today and with the chain where it runs 5% faster than
today's call (a margin over one reading's noise), and the chain's extra peak on those
cases, so the choice between the promise and "never slower than numpy.tile" can be made
on numbers. Usage::

    python benchmarks/memory_promise.py [--sweep 120] [--seed 1131] [--repeat 3]
        [--sets named,matrix,sweep]
"""

import argparse
import contextlib
import math
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import xtile
from xtile import _backends, _program, _run
from xtile._cli import _bench

sys.path.insert(0, str(Path(__file__).parent))
from versus import NAMED


@contextlib.contextmanager
def _chain_at_any_size() -> Iterator[None]:
    """Plan NumPy's chain of repeats whatever the size of its arrays between repeats."""
    saved = _program.STAGE_BYTES  # the chain's check reads it (only the chain is taken)
    _program.STAGE_BYTES = 1 << 62
    try:
        yield
    finally:
        _program.STAGE_BYTES = saved


def _chains(x: np.ndarray[Any, Any], reps: tuple[int, ...]) -> list[_program.Program]:
    """NumPy's chains of repeats among the candidates for `x` by `reps` (none, or one)."""
    numpy = _backends.load("numpy")
    found = _program.candidates(numpy.layout(x), reps, numpy.model, True)  # type: ignore[arg-type,misc]
    return [p for p in found if p.name == "native" and isinstance(p.steps[0], _program.Repeat)]


def _chain(x: np.ndarray[Any, Any], reps: tuple[int, ...]) -> tuple[Any, int] | None:
    """The chain today's stage keeps out, as (program, call), and its extra peak bytes; or None."""
    numpy = _backends.load("numpy")
    with _chain_at_any_size():
        chains = _chains(x, reps)
    if not chains or _chains(x, reps):
        return None
    made = [  # the bytes of each step's fresh array, the last the output
        math.prod(s.shape) * s.r * x.itemsize
        for s in chains[0].steps
        if isinstance(s, _program.Repeat)
    ]
    # while a step runs, its input and its output live; x itself is not counted
    peak = max(a + b for a, b in zip([0, *made], made, strict=False))
    return (chains[0], _run.compile_program(chains[0], numpy, numpy.xp)), peak - made[-1]


def _settled(key: tuple[Any, ...], x: Any) -> Any:
    """Today's kept program and call for `key`, once xtile's first calls have chosen it."""
    xtile.tile(x, key[2])
    while _run.KEPT[key][1].__qualname__.startswith("_measured"):  # timing its rivals
        xtile.tile(x, key[2])
    return _run.KEPT[key]


def _kept(key: tuple[Any, ...], kept: Any, x: Any, reps: tuple[int, ...]) -> Any:
    """`xtile.tile` of a call whose kept program is `kept`: today's, or the chain (same front)."""
    _run.KEPT[key] = kept
    return xtile.tile(x, reps)


def main() -> None:
    """Time the cases and print a table and a summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sweep", type=int, default=120, help="random cases drawn")
    parser.add_argument("--seed", type=int, default=1131)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sets", default="named,matrix,sweep", help="of: named, matrix, sweep")
    args = parser.parse_args()
    sets = {"named": NAMED, "matrix": _bench.CASES, "sweep": []}
    if "sweep" in args.sets:
        sets["sweep"] = _bench.sweep_cases(args.sweep, args.seed)
    cases = [c for name in args.sets.split(",") for c in sets[name]]
    print(f"{len(cases)} cases: {args.sets} (a sweep of {args.sweep}, seed {args.seed})")
    print(f"{'case':<46}{'dtype':<11}{'MB':>7}{'today':>8}{'chain':>8}{'extra KB':>10}{'share':>7}")
    today, allowed, extras, faster = [], [], [], []
    for c in cases:
        x = (np.arange(math.prod(c.shape)) % 127).astype(c.dtype).reshape(c.shape)
        want, found = np.tile(x, c.reps), _chain(x, c.reps)
        key = ("numpy", _backends.load("numpy").layout(x), c.reps, True, _program.OFF.get())  # type: ignore[misc]
        kept = _settled(key, x)
        fns = [partial(np.tile, x, c.reps), partial(_kept, key, kept, x, c.reps)]
        if found is not None:
            assert np.array_equal(found[0][1](x, None), want)
            fns.append(partial(_kept, key, found[0], x, c.reps))
        try:
            times = _bench.best_times(fns, lambda r: r, args.repeat)
        finally:  # today's again, for a later case of the same key (bool and int8 share one)
            _run.KEPT[key] = kept
        ratios = [times[0] / t for t in times[1:]]
        extra = found[1] if found is not None else 0  # the chain's, where the stage keeps it out
        today.append(ratios[0])
        extras.append(extra / want.nbytes)
        # the chain where it runs 5% faster than today's call (a margin over one reading's noise)
        allowed.append(ratios[-1] if ratios[-1] > 1.05 * ratios[0] else ratios[0])
        if allowed[-1] != today[-1]:
            faster.append(extras[-1])
        chain = f"{ratios[1]:>8.2f}" if found is not None else f"{'-':>8}"
        print(
            f"{f'{c.shape}x{c.reps}':<46}{c.dtype:<11}{want.nbytes / 1e6:>7.2f}{today[-1]:>8.2f}"
            f"{chain}{extra / 1e3:>10.1f}{extras[-1]:>7.2f}"
        )
    print(
        f"today (peak: the output + under 64 KB): x/native geomean {_bench._geomean(today):.2f}, "
        f"min {min(today):.2f}, {sum(v < 0.9 for v in today)} below 0.9\n"
        f"with the chain where it is 5% faster: x/native geomean {_bench._geomean(allowed):.2f}, "
        f"min {min(allowed):.2f}, {sum(v < 0.9 for v in allowed)} below 0.9; the chain 5% faster "
        f"on {len(faster)} of {sum(e > 0 for e in extras)} cases it is kept out of, its extra "
        f"peak there up to {max(faster, default=0):.2f} of the output (up to {max(extras):.2f} "
        "over all)"
    )


if __name__ == "__main__":
    main()
