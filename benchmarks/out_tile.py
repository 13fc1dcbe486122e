"""
`xtile.tile(x, repeats, out=buf)` into a reused buffer, against the plain copy into it.

For every case of the benchmark matrix and of a random sweep whose output is at
least ``--min-mb`` MB, side by side in one run (samples alternate): the plain copy
of an array of the output's size into the reused buffer (NumPy's ``copyto`` in a
slab per core, PyTorch's ``buf.copy_(src)`` on its threads: the bound of a tile
into that buffer), xtile into the buffer,
and the fresh-output tiles of xtile and of the backend (``numpy.tile``,
``torch.tile``), which pay the page faults of new memory; and xtile into a buffer that
is a result of ``xtile.tile`` (a first call's output, which NumPy places for its input,
as the docs advise reusing). So one run gives every ratio the performance page reports:
``x/native`` (a fresh xtile call against the native tile), ``out/copy``, ``out/native``,
``out/fresh`` and ``first/fresh``, and per backend their geomeans and minima;
``--min-mb 0`` keeps every case of the matrix and the sweep. One reading of a case can
swing by 20-30% (the allocator, page faults, other tenants): ``--rerun N`` times each
case below 0.9 ``out/copy`` or below 1 ``out/fresh`` N more times, in N passes over them
all, and prints each reading (the first too) and their median. Usage::

    python benchmarks/out_tile.py [--backends numpy,torch-1thread,torch,torch-cuda,cupy]
        [--sweep 200] [--seed 0] [--min-mb 16] [--repeat 5] [--rerun 0]
"""

import argparse
import math
from functools import partial
from typing import Any

import numpy as np

import xtile
from xtile._cli import _bench


def _copy_into(name: str) -> Any:
    """The plain copy of an array into a buffer of backend `name`: the bound of `out=`."""
    if name == "numpy":
        return _bench.copy_on_every_core
    if name == "cupy":
        import cupy

        return cupy.copyto
    return lambda buf, src: buf.copy_(src)


def main() -> None:
    """Time the cases and print a table and a summary per backend."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backends", default="numpy,torch-1thread,torch")
    parser.add_argument("--sweep", type=int, default=200, help="random cases drawn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-mb", type=float, default=16.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rerun", type=int, default=0, help="time the slow cases N more times")
    args = parser.parse_args()
    cases = [
        c
        for c in [*_bench.CASES, *_bench.sweep_cases(args.sweep, args.seed)]
        if math.prod(xtile.tile_shape(c.shape, c.reps)) * np.dtype(c.dtype).itemsize  # type: ignore[arg-type]
        >= args.min_mb * 1e6
    ]
    print(f"{len(cases)} cases of at least {args.min_mb} MB (sweep seed {args.seed})")
    print(
        f"{'backend':<15}{'case':<44}{'dtype':<11}{'MB':>7}"
        f"{'x/native':>10}{'out/copy':>10}{'out/native':>12}{'out/fresh':>11}{'first/fresh':>13}"
    )
    for name, b in _bench._backends(args.backends.split(",")):
        vs_copy, vs_native, fresh, out_fresh, first, slow = [], [], [], [], [], []
        for c in cases:
            copy_s, native_s, out_s, fresh_s, first_s, mb = _time(name, b, c, args.repeat)
            vs_copy.append(copy_s / out_s)
            vs_native.append(native_s / out_s)
            fresh.append(native_s / fresh_s)
            out_fresh.append(fresh_s / out_s)
            first.append(fresh_s / first_s)
            print(
                f"{name:<15}{f'{c.shape}x{c.reps}':<44}{c.dtype:<11}{mb:>7.1f}"
                f"{fresh[-1]:>10.2f}{vs_copy[-1]:>10.2f}{vs_native[-1]:>12.2f}{out_fresh[-1]:>11.2f}"
                f"{first[-1]:>13.2f}"
            )
            if vs_copy[-1] < 0.9 or out_fresh[-1] < 1:
                slow.append((c, [(vs_copy[-1], out_fresh[-1])]))
        print(
            f"{name}: xtile / native tile (fresh): geomean {_bench._geomean(fresh):.2f}, min "
            f"{min(fresh):.2f}, {sum(f < 0.9 for f in fresh)} below 0.9\n"
            f"{name}: xtile out= / reused-buffer copy: min {min(vs_copy):.2f}, "
            f"geomean {_bench._geomean(vs_copy):.2f}; vs the fresh native tile: "
            f"min {min(vs_native):.2f}, geomean {_bench._geomean(vs_native):.2f}; "
            f"vs a fresh xtile call: min {min(out_fresh):.2f}, "
            f"{sum(f < 1 for f in out_fresh)} below 1; into a result of xtile.tile, vs a fresh "
            f"call: min {min(first):.2f}, geomean {_bench._geomean(first):.2f}, "
            f"{sum(f < 1 for f in first)} below 1"
        )
        if args.rerun:
            _rerun(name, b, slow, args.rerun, args.repeat)


def _time(
    name: str, b: Any, c: Any, repeat: int
) -> tuple[float, float, float, float, float, float]:
    """Seconds per call: copy, native, `out=`, fresh, `out=` into a first result; the MB."""
    data = (np.arange(math.prod(c.shape)) % 127).astype(c.dtype).reshape(c.shape)
    x = b.asarray(data)
    out_shape: Any = xtile.tile_shape(c.shape, c.reps)
    buf = b.asarray(np.empty(out_shape, dtype=c.dtype))
    src = b.asarray(np.ones(out_shape, dtype=c.dtype))
    made = xtile.tile(x, c.reps)  # a first call's output, reused
    times = _bench.best_times(
        [
            partial(_copy_into(name), buf, src),
            partial(b.native, x, c.reps),
            partial(xtile.tile, x, c.reps, out=buf),
            partial(xtile.tile, x, c.reps),
            partial(xtile.tile, x, c.reps, out=made),
        ],
        b.sync,
        repeat,
    )
    mb = buf.nbytes / 1e6 if hasattr(buf, "nbytes") else buf.numel() * buf.element_size() / 1e6
    return times[0], times[1], times[2], times[3], times[4], mb


def _rerun(name: str, b: Any, slow: list[Any], passes: int, repeat: int) -> None:
    """Time `slow`'s cases `passes` more times, in passes over all; print readings, medians."""
    for _ in range(passes):
        for c, readings in slow:
            copy_s, _, out_s, fresh_s, _, _ = _time(name, b, c, repeat)
            readings.append((copy_s / out_s, fresh_s / out_s))
    print(f"{name}: cases below 0.9 out/copy or 1 out/fresh, timed again (each reading -> median):")
    stay = 0
    for c, readings in slow:
        copies, freshes = zip(*readings, strict=True)
        mc, mf = float(np.median(copies)), float(np.median(freshes))
        stay += mc < 0.9 or mf < 1
        print(
            f"  {f'{c.shape}x{c.reps} {c.dtype}':<52} out/copy "
            f"{' '.join(f'{v:.2f}' for v in copies)} -> {mc:.2f}; out/fresh "
            f"{' '.join(f'{v:.2f}' for v in freshes)} -> {mf:.2f}"
        )
    print(f"{name}: {stay} of {len(slow)} stay below on the median")


if __name__ == "__main__":
    main()
