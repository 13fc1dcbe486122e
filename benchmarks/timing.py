"""
How well a layout's first calls pick its program: the kept program's steady time over the fastest's.

Per case (``--cases sweep`` or ``gen2``, outputs under ``--max-mb`` MB, with rivals), it
times every rival (`xtile._program.ranked`) as a repeated call runs it, steady
(`xtile._cli._bench.best_times`: samples of many calls in a row, the rivals in turns);
then it lets xtile's timing (`xtile._run._measured`) choose ``--trials`` times, each
afresh, and compares with one run of each program per turn, the least time but the
first (the timing before stop 57). It prints per case each rival's steady time over the
fastest's, each way's picks as the geomean and worst of that ratio (regret), and in all
the geomean regret and the picks 10% slower than the fastest. Usage::

    python benchmarks/timing.py [--backend numpy|torch] [--cases sweep|gen2] [--n 25]
        [--seed 13] [--max-mb 16] [--trials 4]
"""

import argparse
import math
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from xtile import _program, _run
from xtile._backends import load
from xtile._cli import _bench

sys.path.insert(0, str(Path(__file__).parent))
import shapes2

KEY = ("benchmarks/timing.py",)  # where the timing puts its choice


def _in_turns(calls: list[Any], x: Any) -> int:
    """The program one run each per turn keeps: five runs, the least time but the first."""
    times: list[list[float]] = [[] for _ in calls]
    while min(map(len, times)) < 5:
        i = min(range(len(calls)), key=lambda i: len(times[i]))
        start = time.perf_counter()
        calls[i](x, None)
        times[i].append(time.perf_counter() - start)
    least = [min(t[1:]) for t in times]
    return least.index(min(least))


def _xtile(programs: tuple[Any, ...], calls: list[Any], x: Any) -> int:
    """The program xtile's timing keeps (`_run._measured` puts it in place of the timer)."""
    run = _run._measured(programs, tuple(calls))
    _run.KEPT[KEY] = (programs[0], run)
    while _run.KEPT[KEY][1] is run:
        run(x, None)
    return calls.index(_run.KEPT.pop(KEY)[1])


def _geomean(values: list[float]) -> float:
    """The geometric mean."""
    return math.exp(sum(map(math.log, values)) / len(values))


def main() -> None:
    """Time, pick, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="numpy", choices=["numpy", "torch"])
    parser.add_argument("--cases", default="sweep", choices=["sweep", "gen2"])
    parser.add_argument("--n", type=int, default=25)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-mb", type=float, default=16.0)
    parser.add_argument("--trials", type=int, default=4)
    args = parser.parse_args()
    backend = load(args.backend)
    asarray: Any = np.asarray
    if args.backend == "torch":
        import torch

        asarray = torch.from_numpy
    draw = shapes2.cases if args.cases == "gen2" else _bench.sweep_cases
    ways: dict[str, Callable[[Any, list[Any], Any], int]] = {
        "xtile": _xtile,
        "in turns": lambda _, calls, x: _in_turns(calls, x),
    }
    regret: dict[str, list[float]] = {way: [] for way in ways}
    done = 0
    for c in draw(40 * args.n, args.seed):
        nbytes = math.prod(c.shape) * math.prod(c.reps) * np.dtype(c.dtype).itemsize
        x = asarray((np.arange(math.prod(c.shape)) % 127).astype(c.dtype).reshape(c.shape))
        layout = backend.layout(x)  # type: ignore[misc]
        assert layout is not None
        programs = _program.ranked(layout, c.reps, backend.model, True)
        if nbytes >= args.max_mb * 1e6 or len(programs) < 2:
            continue
        calls = [_run.compile_program(p, backend, backend.xp) for p in programs]
        steady = _bench.best_times([partial(f, x, None) for f in calls], lambda r: r, 5)
        ratios = [t / min(steady) for t in steady]
        line = [f"{p.name} {r:.2f}" for p, r in zip(programs, ratios, strict=True)]
        for way, pick in ways.items():
            got = [ratios[pick(programs, calls, x)] for _ in range(args.trials)]
            regret[way] += got
            line.append(f"| {way} {_geomean(got):.2f} (worst {max(got):.2f})")
        print(f"{c.shape}x{c.reps} {c.dtype}, {nbytes / 1e6:.2f} MB: " + " ".join(line))
        done += 1
        if done == args.n:
            break
    for way, got in regret.items():
        slow = sum(r > 1.1 for r in got)
        print(
            f"{way}: kept / fastest steady time, geomean {_geomean(got):.4f}, worst "
            f"{max(got):.2f}; {slow} of {len(got)} picks 10% slower or more"
        )


if __name__ == "__main__":
    main()
