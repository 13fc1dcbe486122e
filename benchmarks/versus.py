"""
Before and after: an older xtile against this one and the native tile, side by side in one run.

The older xtile is a source tree (for example a git worktree of an older commit); its
package is copied under the name ``xtile_before`` and imported beside ``xtile``, and
for every case the native tile, the older and this xtile are timed in turns
(`xtile._cli._bench.best_times`), so the machine's slow phases weigh on all three
alike. It prints per backend the summary of each against the native tile (geomean,
minimum, cases below 0.9, the ten worst), the geomean of before / after time and the five
cases that lost most. ``--cases named`` times the cases that lost to the native tile by
most where they were found (`NAMED`). Usage::

    git worktree add /tmp/before <commit>
    python benchmarks/versus.py --before /tmp/before [--cases sweep|gen2|matrix|named]
        [--n 200] [--seed 23[,44...]] [--backends numpy,torch-1thread,torch] [--repeat 3]
        [--changed] [--rerun 10] [--out] [--min-mb 8]

``--rerun K`` times the K cases that lost most once more, with twice the samples, and
prints both readings: a loss that the second reading does not repeat is the machine's
noise (``--before`` this same tree shows that noise alone). ``--out`` times both xtiles
into one reused ``out=`` buffer (made by ``numpy.empty``, as a user makes one), not into
fresh outputs; ``--min-mb`` keeps only the cases of outputs of at least that many MB.
"""

import argparse
import importlib
import math
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import xtile
from xtile._cli import _bench

sys.path.insert(0, str(Path(__file__).parent))
import shapes2

# the cases that lost to the native tile by most, named where they were found
NAMED = [
    _bench.Case((2, 2, 1000, 16, 2), (4, 3, 1), "uint8", "32-byte runs"),
    _bench.Case((1000, 5), (2, 1, 8), "float32", ""),
    _bench.Case((16, 1, 1, 64, 1), (8, 32, 1), "complex64", ""),
    _bench.Case((64, 1, 16, 3), (8,), "complex64", ""),
    _bench.Case((64, 100, 1), (1, 3, 32), "complex64", ""),
    _bench.Case((16, 4, 32, 32), (1, 1, 5, 6), "uint8", "32-byte runs"),
    _bench.Case((1, 4, 2956, 8), (1, 1, 4, 4), "int8", "8-byte runs"),
    _bench.Case((13, 142, 2), (1, 815, 1), "int32", ""),
    _bench.Case((78, 69, 5), (1, 11, 46), "float16", ""),
    _bench.Case((62, 1, 8, 16), (1, 57, 1, 12), "float32", ""),
]


def _import_before(tree: str) -> Any:
    """The xtile package of source tree `tree`, imported as ``xtile_before``."""
    home = Path(tempfile.mkdtemp())
    shutil.copytree(Path(tree) / "xtile", home / "xtile_before")
    sys.path.insert(0, str(home))
    return importlib.import_module("xtile_before")


def _same_plan(before: Any, name: str, x: Any, reps: tuple[int, ...]) -> bool:
    """Whether both trees plan the same program and rivals for `x` by `reps` (True if none plan)."""
    plans = []
    for package in ("xtile", before.__name__):
        backend = importlib.import_module(f"{package}._backends").load(name.partition("-")[0])
        layout = backend.layout(x) if backend.layout is not None else None
        if layout is None:
            return True
        on_host = layout.on_host if hasattr(layout, "on_host") else layout.tuned
        model = backend.model if on_host else backend.device
        planner = importlib.import_module(f"{package}._program")
        if hasattr(planner, "ranked"):
            found = planner.ranked(layout, reps, model, True)
        else:  # a tree before the timed rivals
            found = (planner.plan(layout, reps, model, True),)
        plans.append([(p.name, p.steps) for p in found])
    return plans[0] == plans[1]


def main() -> None:
    """Time the cases and print both summaries and the before / after geomean."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", required=True, help="the older source tree")
    parser.add_argument("--cases", default="sweep", choices=["sweep", "gen2", "matrix", "named"])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", default="23", help="one seed, or several: 13,44")
    parser.add_argument("--backends", default="numpy,torch-1thread,torch")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--changed", action="store_true", help="only cases planned otherwise")
    parser.add_argument("--rerun", type=int, default=0, help="time the K worst cases again")
    parser.add_argument("--out", action="store_true", help="both xtiles into a reused out=")
    parser.add_argument("--min-mb", type=float, default=0.0, help="only outputs this big")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seed.split(",")]
    before = _import_before(args.before)
    draw = {"sweep": _bench.sweep_cases, "gen2": shapes2.cases}.get(args.cases)
    fixed = _bench.CASES if args.cases == "matrix" else NAMED
    cases = [c for seed in seeds for c in draw(args.n, seed)] if draw else fixed
    rows: list[tuple[str, _bench.Result, _bench.Result]] = []
    calls: dict[tuple[str, str, str], list[Any]] = {}  # the calls of a row, to time it again
    for name, b in _bench._backends(args.backends.split(",")):
        for i, c in enumerate(cases):
            sys.stderr.write(f"\r{name} {i + 1}/{len(cases)}   ")
            data = (np.arange(math.prod(c.shape)) % 127).astype(c.dtype).reshape(c.shape)
            x, nbytes = b.asarray(data), data.nbytes * math.prod(c.reps)
            if nbytes < args.min_mb * 1e6 or (args.changed and _same_plan(before, name, x, c.reps)):
                continue
            case = f"{c.shape}x{c.reps}"
            out = (
                b.asarray(np.empty(xtile.tile_shape(c.shape, c.reps), c.dtype))
                if args.out
                else None
            )
            three = [partial(b.native, x, c.reps)]
            three += [partial(f, x, c.reps, out=out) for f in (before.tile, xtile.tile)]
            calls[name, case, c.dtype] = [three, b.sync]
            native_s, before_s, after_s = _bench.best_times(three, b.sync, args.repeat)
            old = _bench.Result(name, case, c.kind, c.dtype, nbytes, math.nan, native_s, before_s)
            new = _bench.Result(name, case, c.kind, c.dtype, nbytes, math.nan, native_s, after_s)
            rows.append((name, old, new))
    sys.stderr.write("\n")
    if not rows:
        print(f"no case of {len(cases)} planned otherwise")
        return
    for label, pick in (("before", 1), ("after", 2)):
        note = f", {len(rows)} planned otherwise" if args.changed else ""
        print(f"== {label} ({args.cases}, n={len(cases)}, seed {args.seed}{note})")
        print(_bench.summary([r[pick] for r in rows]))  # type: ignore[misc]
    for name in dict.fromkeys(r[0] for r in rows):
        ratios = [old.xtile_s / new.xtile_s for n, old, new in rows if n == name]
        print(f"{name}: before / after time, geomean {_bench._geomean(ratios):.3f}")
        changed = sorted(
            (old.xtile_s / new.xtile_s, new.case, new.dtype) for n, old, new in rows if n == name
        )
        for i, (ratio, case, dtype) in enumerate(changed[: max(5, args.rerun)]):
            again = ""
            if i < args.rerun:  # the same three calls, in turns, with twice the samples
                t = _bench.best_times(*calls[name, case, dtype], 2 * args.repeat)
                again = f", again {t[1] / t[2]:.2f} (native / after {t[0] / t[2]:.2f})"
            print(f"    before / after {ratio:.2f}{again}  {case} {dtype}")


if __name__ == "__main__":
    main()
