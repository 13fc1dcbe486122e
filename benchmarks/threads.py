"""
The ablation of `xtile._threads.PARALLEL_BYTES` and of PyTorch's huge pages, by output size.

For cases of both generators (the sweep's and ``shapes2.py``'s), grouped by output
size, side by side in one run: NumPy on one thread against NumPy whose copies of at
least T go in slabs on every core, for each candidate T (``--sizes``, MiB); PyTorch
without the huge-page advice against it from each candidate size on. Each group
prints, per candidate, the geometric mean and the minimum of (time without) / (time
with): above 1 the mechanism gains there. Usage::

    python benchmarks/threads.py [--draws 200] [--seed 11] [--repeat 3]
        [--backends numpy,torch] [--sizes 0.25,1,4,16]
"""

import argparse
import math
import sys
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import xtile
from xtile import _threads
from xtile._cli import _bench

sys.path.insert(0, str(Path(__file__).parent))
import shapes2

BUCKETS = [1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 26]


def _with(module: Any, name: str, value: int, x: Any, reps: tuple[int, ...]) -> Any:
    """xtile with ``module.name`` set to `value`."""
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        return xtile.tile(x, reps)
    finally:
        setattr(module, name, saved)


def main() -> None:
    """Time the cases and print the geometric means per size group and candidate."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=200, help="cases drawn per generator")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", default="numpy,torch")
    parser.add_argument("--sizes", default="0.25,1,4,16", help="candidate thresholds, MiB")
    args = parser.parse_args()
    sizes = [int(float(v) * 2**20) for v in args.sizes.split(",")]
    drawn = [*_bench.sweep_cases(args.draws, args.seed), *shapes2.cases(args.draws, args.seed)]
    cases = [c for c in drawn if _bytes(c) >= BUCKETS[0]]
    off = 1 << 62
    for name in args.backends.split(","):
        gains: dict[int, list[list[float]]] = defaultdict(list)
        if name == "torch":
            import torch

            from xtile._backends import torch as module
        else:
            module = _threads
        knob = "HUGE_BYTES" if name == "torch" else "PARALLEL_BYTES"
        for i, c in enumerate(cases):
            sys.stderr.write(f"\r{name} {i + 1}/{len(cases)}")
            x: Any = (np.arange(math.prod(c.shape)) % 101).astype(c.dtype).reshape(c.shape)
            if name == "torch":
                x = torch.asarray(x)
            fns = [partial(_with, module, knob, v, x, c.reps) for v in [off, *sizes]]
            without, *with_ = _bench.best_times(fns, lambda r: r, args.repeat)
            bucket = max(b for b in BUCKETS if b <= _bytes(c))
            gains[bucket].append([without / w for w in with_])
        sys.stderr.write("\n")
        what = "slabs on every core" if name == "numpy" else "huge pages"
        print(f"{name}: time without / with {what} from T on, by output size (geomean / min)")
        print(
            f"  {'output':>14}{'cases':>6}"
            + "".join(f"{f'T={v / 2**20:g} MiB':>16}" for v in sizes)
        )
        for b in sorted(gains):
            g = gains[b]
            cells = "".join(
                f"{_bench._geomean(col):>9.2f} /{min(col):>5.2f}" for col in zip(*g, strict=True)
            )
            print(f"  >= {b / 2**20:>6.3f} MiB{len(g):>6}{cells}")


def _bytes(case: _bench.Case) -> int:
    """The output's bytes."""
    return math.prod(case.shape) * math.prod(case.reps) * np.dtype(case.dtype).itemsize


if __name__ == "__main__":
    main()
