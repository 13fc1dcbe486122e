"""
Fit each planned backend's cost model (`xtile._program.Model`) to measured times.

For random cases (``xtile._cli._bench.sweep_cases``, plus small outputs for the per-call
costs) every candidate program of the planner is run and timed (best of ``--repeat``);
its features are its price under unit models (one coefficient 1, the others 0). The
coefficients are the non-negative least-squares fit of time to features, in relative
error; the split copies' factor is the best of a few. It prints the coefficients to
paste into ``xtile/_backends/<backend>.py`` and the fit's error. Usage::

    python benchmarks/fit_cost.py [--backend numpy|torch] [--n 120] [--seed 1] [--repeat 5]
"""

import argparse
import math
import time

import numpy as np

from xtile import _program, _run
from xtile._backends import load
from xtile._cli import _bench

FEATURES = ("copy", "item", "repeat", "replicate", "native", "loop", "element", "void", "byte")


def _time(call, x, repeat):  # type: ignore[no-untyped-def]
    """Best seconds per call, each sample at least 5 ms long."""
    call(x, None)
    n, best = 1, math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            call(x, None)
        dt = (time.perf_counter() - t) / n
        best = min(best, dt)
        if dt * n < 5e-3:
            n = min(n * 4, 10_000)
    return best


def _cases(n: int, seed: int) -> list[_bench.Case]:
    """The sweep's cases and as many small ones (outputs of 64 B to 64 KiB)."""
    rng = np.random.default_rng(seed)
    small = []
    for _ in range(n // 2):
        rank = int(rng.integers(1, 4))
        shape = tuple(int(v) for v in rng.integers(1, 9, rank))
        reps = tuple(int(v) for v in rng.integers(1, 9, rank))
        small.append(_bench.Case(shape, reps, str(rng.choice(["int8", "float32", "float64"])), ""))
    return _bench.sweep_cases(n, seed) + small


def main() -> None:
    """Time, fit, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="numpy", choices=["numpy", "torch"])
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    backend = load(args.backend)
    if args.backend == "torch":
        import torch

        asarray = torch.from_numpy
    else:
        asarray = np.asarray
    rows, times = [], []
    units = [
        _program.Model(**{f: 1.0 if f == g else 0.0 for f in FEATURES}, parallel=1.0)
        for g in FEATURES
    ]
    split = [u._replace(split_bytes=backend.model.split_bytes) for u in units]
    cases = _cases(args.n, args.seed)
    for i, c in enumerate(cases):
        print(f"\r{i + 1}/{len(cases)}", end="", flush=True)
        x = asarray((np.arange(math.prod(c.shape)) % 127).astype(c.dtype).reshape(c.shape))
        layout = backend.layout(x)
        for p in _program.candidates(layout, c.reps, backend.model, True):
            call = _run.compile_program(p, backend, backend.xp)
            times.append(_time(call, x, args.repeat) * 1e9)
            whole = [_program.cost(p, layout, u) for u in units]
            parallel = [_program.cost(p, layout, u) for u in split]
            rows.append((whole, parallel))
    print()
    t = np.array(times)
    best = None
    for factor in (1.0, 0.8, 0.7, 0.6, 0.5, 0.4):
        # the split copies' work scaled by `factor`: features = serial + factor * (split part)
        a = np.array(
            [[w + factor * (p - w) if p != w else w for w, p in zip(*r, strict=True)] for r in rows]
        )
        # relative error: each row divided by its time
        coef = _nnls(a / t[:, None], np.ones(len(t)))
        err = np.abs(a @ coef / t - 1)
        if best is None or np.median(err) < best[0]:
            best = (float(np.median(err)), factor, coef)
    assert best is not None
    err, factor, coef = best
    print(
        f"{args.backend}: {len(t)} timings of {len(cases)} cases; median relative error {err:.2f}"
    )
    fields = [f"{f}={v:.4g}" for f, v in zip(FEATURES, coef, strict=True) if v > 0]
    print("Model(" + ", ".join([*fields, f"parallel={factor}"]) + ")")


def _nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Non-negative least squares by active sets of columns (few columns)."""
    cols = [j for j in range(a.shape[1]) if a[:, j].any()]
    while True:
        coef = np.zeros(a.shape[1])
        sol = np.linalg.lstsq(a[:, cols], b, rcond=None)[0]
        if (sol >= 0).all():
            coef[cols] = sol
            return coef
        cols = [c for c, v in zip(cols, sol, strict=True) if v > 0]


if __name__ == "__main__":
    main()
