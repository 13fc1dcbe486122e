"""
What a process's first calls keep: the kept program's time over the fastest rival's.

xtile times a call's close rivals in its first calls and keeps the fastest
(`xtile._run._measured`, docs/performance.md, "Close prices, settled by time"). Those
are a few runs each, on a noisy machine: this script asks how often they keep a slower
program, and how much slower. Each case runs in a process of its own, as a user's
program would (unlike ``timing.py``, which lets the timing choose again and again in one
process, warm): calls of `xtile.tile` until its timing has chosen, then the kept program
and every program the planner timed for it (with ``--all``, every candidate program)
are timed again in turns with the native tile (`xtile._cli._bench.best_times`, 7
samples of 20 ms each). It prints, per case, the kept program's time over the fastest
rival's (1: the fastest was kept) and, with ``--all``, over the fastest candidate's, and
the native tile's over the kept program's and the fastest candidate's: what xtile
reaches, and what the best of its candidates would reach. Then their geometric means (a
case without rivals counts 1) and how many cases kept a program 10% slower than the
fastest rival.

The columns: "kept X (of N)", the program kept and how many programs its first calls
timed (1: none, no rival was priced close); ``kept/rival`` and ``kept/candidate``, the
kept program's time over the fastest one's (1 is best, above 1 a slower one was kept);
``native/kept`` and ``native/candidate``, the native tile's time over theirs (above 1,
faster than the native tile). The program names are `explain`'s (``python -m xtile
explain SHAPE REPEATS --time`` shows each one's steps). Usage::

    python benchmarks/first_calls.py [--backend numpy|torch] [--cases sweep|gen2] [--n 50]
        [--seed 401] [--all]

The cases are the bench's sweep (`xtile._cli._bench.sweep_cases`) or ``shapes2.py``'s
(``gen2``, a distribution nobody tuned on); on PyTorch, outputs of 16 MiB or more are not
timed by their first calls and are left out.
"""

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from xtile._cli import _bench

sys.path.insert(0, str(Path(__file__).parent))
import shapes2

# kept: the kept program's time; rival, candidate: the fastest rival's, candidate's;
# native: the native tile's
_COLUMNS = ["kept/rival", "kept/candidate", "native/kept", "native/candidate"]

_ONE = """
import json, math, sys
import numpy as np
import xtile
from xtile import _run
from xtile._backends import load
from xtile._program import candidates, ranked
from xtile._cli._bench import best_times
shape, reps, dtype, name, all_ = json.loads(sys.argv[1])
x = (np.arange(math.prod(shape)) % 127).astype(dtype).reshape(shape)
if name == "torch":
    import torch
    x = torch.asarray(x)
for _ in range(2000):  # until the timing has chosen
    xtile.tile(x, tuple(reps))
    if not next(iter(_run.KEPT.values()))[1].__qualname__.startswith("_measured"):
        break
assert len(_run.KEPT) == 1  # a fresh call's one key
(_, layout, reps, fresh, off), (kept, _) = next(iter(_run.KEPT.items()))
backend = load(name)
model = backend.model if layout.tuned else backend.device
rivals = ranked(layout, reps, model, fresh, off)
found = [p for p in candidates(layout, reps, model, fresh) if p not in rivals]
programs = [*rivals, *(found if all_ else [])]
calls = [_run.compile_program(p, backend, backend.xp) for p in programs]
native = np.tile if name == "numpy" else torch.tile
fns = [lambda c=c: c(x, None) for c in calls] + [lambda: native(x, tuple(reps))]
*t, native_s = best_times(fns, lambda a: a, 7)
mine = t[programs.index(kept)]
best = min(t[: len(rivals)])
ratios = [mine / best, mine / min(t), native_s / mine, native_s / min(t)]
print(json.dumps([kept.name, len(rivals), *ratios]))
"""


def main() -> None:
    """Time what each case's first calls kept against its rivals, and all candidates."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", default="numpy", choices=["numpy", "torch"])
    parser.add_argument("--cases", default="sweep", choices=["sweep", "gen2"])
    parser.add_argument("--n", type=int, default=50, help="cases drawn")
    parser.add_argument("--seed", type=int, default=401, help="the generator's seed")
    parser.add_argument("--all", action="store_true", help="time every candidate program too")
    args = parser.parse_args()
    shown = [i for i in range(len(_COLUMNS)) if args.all or i in (0, 2)]
    rows, timed, untimed = [], 0, 0
    draw = _bench.sweep_cases if args.cases == "sweep" else shapes2.cases
    for case in draw(args.n, args.seed):
        out = math.prod(case.shape) * math.prod(case.reps) * np.dtype(case.dtype).itemsize
        if args.backend == "torch" and out >= 1 << 24:
            untimed += 1
            continue
        said = json.dumps([case.shape, case.reps, case.dtype, args.backend, args.all])
        line = [sys.executable, "-c", _ONE, said]
        done = subprocess.run(line, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"{case}:\n{done.stderr}")
        kept, n, *ratios = json.loads(done.stdout)
        rows.append(ratios)
        timed += n > 1
        print(
            f"{case.shape}x{case.reps} {case.dtype}, {out / 1e6:.2f} MB: kept {kept} "
            f"(of {n}), " + ", ".join(f"{_COLUMNS[i]} {ratios[i]:.2f}" for i in shown),
            flush=True,
        )
    if not rows:
        sys.exit("no case: on PyTorch, every output was 16 MiB or more")
    print(f"\n{len(rows)} cases, {timed} with rivals (one without counts 1 in kept/rival)")
    if untimed:
        print(f"left out: {untimed} outputs of 16 MiB or more (PyTorch times none)")
    for i in shown:
        column = [r[i] for r in rows]
        mean = math.exp(sum(map(math.log, column)) / len(column))
        print(f"{_COLUMNS[i]}: geomean {mean:.4f}, min {min(column):.2f}, max {max(column):.2f}")
    above = sum(r[0] > 1.1 for r in rows)
    print(f"{above} of {len(rows)} kept a program 10% slower than the fastest rival")


if __name__ == "__main__":
    main()
