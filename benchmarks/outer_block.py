"""
The output from its first block (`xtile._agnostic.from_block`), on and off, in one run.

Draws ``--draw`` sweep cases (``xtile._bench.sweep_cases``, seed ``--seed``), keeps
those the strategy applies to (`xtile._agnostic.outer_block`, with its thresholds, or
without its size thresholds under ``--no-thresholds``), and times, interleaved, best
of ``--rounds``: the native tile, xtile's cached plan with the strategy, and without
it (the plan the thresholds would otherwise give), on NumPy and PyTorch (one
thread). Prints xtile / native for both. Usage::

    python benchmarks/outer_block.py [--seed 202] [--draw 3000] [--rounds 7]
"""

import argparse
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from array_api_compat import array_namespace

from xtile import _agnostic, _bench, _core
from xtile._fast import numpy as np_fast
from xtile._lib._helpers import plan as make_plan
from xtile._lib._typing import Plan


@contextmanager
def _thresholds(*, strategy: bool, limits: bool) -> Iterator[None]:
    """The strategy off, or on with its thresholds or without them."""
    names = ("OUTER_MIN_BYTES", "OUTER_MAX_RUN_BYTES", "OUTER_MAX_BLOCK_BYTES")
    saved = {name: getattr(_agnostic, name) for name in names}
    if not strategy:
        setattr(_agnostic, "OUTER_MIN_BYTES", 1 << 62)  # noqa: B010
    elif not limits:
        for name, value in zip(names, (0, 1 << 62, 1 << 62), strict=True):
            setattr(_agnostic, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(_agnostic, name, value)


def _cached(fast: Any, x: Any, p: Plan) -> Callable[[], Any]:
    """
    The call a repeated tile of `x` runs: its cached plan, or the full tile.

    The full tile is for plans that double, which the strategy leaves alone: it reads
    the thresholds at each call, but either way they do not apply.
    """
    run = fast.FAST_PATH.compile(x, p)
    if run is None:
        xp, path = array_namespace(x), fast.FAST_PATH
        return lambda: _core._tile(x, p, xp, path)
    return lambda: run(x)


def _best(calls: dict[str, Callable[[], Any]], rounds: int, nbytes: int) -> dict[str, float]:
    """Best seconds per call of each, rounds interleaved, each round about 4 MB of output."""
    number = max(1, (4 << 20) // nbytes)
    best = dict.fromkeys(calls, math.inf)
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(number):
                call()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def _ratios(case: _bench.Case, rounds: int, limits: bool) -> tuple[float, dict[str, float]] | None:
    """The first block's size in bytes and xtile / native with the strategy on and off."""
    x = np.arange(math.prod(case.shape)).astype(case.dtype).reshape(case.shape)
    p = make_plan(x, case.reps, op="outer_block")
    with _thresholds(strategy=True, limits=limits):
        levels, final, _ = _agnostic.staging(p, x.itemsize, ragged=True)
        block = None if levels else _agnostic.outer_block(final, x.itemsize, np_fast.FAST_PATH)
    if block is None:
        return None
    arrays: dict[str, tuple[Any, Any, Callable[[], Any]]] = {
        "numpy": (x, np_fast, lambda: np.tile(x, case.reps))
    }
    if _TORCH is not None:
        torch, torch_fast = _TORCH
        t = torch.from_numpy(x.copy())
        arrays["torch"] = (t, torch_fast, lambda: torch.tile(t, case.reps))
    expected = np.tile(x, case.reps)
    calls: dict[str, Callable[[], Any]] = {}
    for name, (a, fast, native) in arrays.items():
        calls[name] = native
        for state in ("on", "off"):
            with _thresholds(strategy=state == "on", limits=limits):
                calls[f"{name} {state}"] = run = _cached(fast, a, p)
            np.testing.assert_array_equal(np.asarray(run()), expected)
    best = _best(calls, rounds, expected.nbytes)
    ratios = {
        f"{name} {state}": best[name] / best[f"{name} {state}"]
        for name in arrays
        for state in ("off", "on")
    }
    return block.size * x.itemsize, ratios


def _torch() -> tuple[Any, Any] | None:
    """PyTorch on one thread and its fast path, if installed."""
    try:
        import torch

        from xtile._fast import torch as torch_fast
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch, torch_fast


_TORCH = _torch()


def main() -> None:
    """Print, per case the strategy applies to, xtile / native with it and without it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=202)
    parser.add_argument("--draw", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-thresholds", action="store_true")
    args = parser.parse_args()
    print(f"seed {args.seed}, {args.draw} cases drawn; xtile / native tile, with the first")
    print("block (on) and without it (off); NumPy, and PyTorch on one thread")
    every: dict[str, list[float]] = {}
    for case in _bench.sweep_cases(args.draw, args.seed):
        measured = _ratios(case, args.rounds, not args.no_thresholds)
        if measured is None:
            continue
        block_bytes, ratios = measured
        nbytes = math.prod(case.shape) * math.prod(case.reps) * np.dtype(case.dtype).itemsize
        row = f"{str(case.shape) + ' x ' + str(case.reps):<46} {case.dtype:<10}"
        row += f" {nbytes / 1e6:6.2f} MB  block {block_bytes / 1024:7.1f} KiB"
        for label, ratio in ratios.items():
            every.setdefault(label, []).append(ratio)
            row += f"  {label} {ratio:5.2f}"
        print(row, flush=True)
    for label, values in every.items():
        geomean = math.exp(sum(map(math.log, values)) / len(values))
        print(f"{label:<10} {len(values)} cases: geomean {geomean:.2f}, min {min(values):.2f}")


if __name__ == "__main__":
    main()
