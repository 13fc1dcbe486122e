"""
Big fresh outputs: GB/s of xtile, of the native tile, and of the machine's bound.

The cases: outputs of 32 MB or more with runs of 64 bytes or more, from the matrix,
from the sweep and from the second generator (``shapes2.py``), plus a fixed few.
The bound is the faster of the plain copy and a fresh buffer of the output's bytes
written by every core (``xtile._cli._bench.fill``). ``--before`` switches off xtile's
slabs and huge pages (`xtile._threads`, `xtile._backends.torch`), as before they were
built. Usage::

    python benchmarks/bandwidth.py [--backends numpy,torch-1thread,torch] [--seed 0]
        [--draws 300] [--repeat 3] [--before] [--limit N]
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from xtile._cli import _bench

sys.path.insert(0, str(Path(__file__).parent))
import shapes2

FIXED = [
    _bench.Case((1000, 1000), (4, 4), "float32", "long runs"),
    _bench.Case((2000, 2000), (2, 2), "float32", "long runs"),
    _bench.Case((1, 1 << 20), (64, 1), "uint8", "one broadcast"),
    _bench.Case((4000, 16), (1, 256), "float32", "runs of 64 bytes"),
    _bench.Case((512, 512, 8), (1, 1, 32), "int8", "runs of 8 bytes inside 256"),
]


def _big(case: _bench.Case) -> bool:
    """An output of 32 MB or more, with runs of 64 bytes or more."""
    itemsize = np.dtype(case.dtype).itemsize
    out = math.prod(case.shape) * math.prod(case.reps) * itemsize
    last = max((i for i, r in enumerate(case.reps) if r != 1), default=-1)
    run = math.prod(case.shape[last:]) * itemsize if last >= 0 else out
    return out >= 32e6 and run >= 64


def main() -> None:
    """Time the big cases on each backend; print the table and the summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backends", default="numpy,torch-1thread,torch")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=300, help="cases drawn per generator")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", action="store_true", help="no slabs, no huge pages")
    parser.add_argument("--limit", type=int, default=None, help="only the first N cases")
    args = parser.parse_args()
    if args.before:
        from xtile import _threads

        _threads.PARALLEL_BYTES = 1 << 62
        if "torch" in args.backends:
            from xtile._backends import torch as fast

            fast.HUGE_BYTES = 1 << 62
    drawn = [*_bench.sweep_cases(args.draws, args.seed), *shapes2.cases(args.draws, args.seed)]
    cases = [c for c in [*FIXED, *_bench.CASES, *drawn] if _big(c)][: args.limit]
    results = _bench.run(args.backends.split(","), cases, repeat=args.repeat)
    print(_bench.table(results))
    print()
    print(_bench.summary(results))


if __name__ == "__main__":
    main()
