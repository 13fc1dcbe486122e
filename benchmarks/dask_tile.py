"""
Dask: xtile against `dask.array.tile`, case by case, on the threaded scheduler.

For each case and each tile: the graph build time, the number of tasks of the result
(its graph, input included), the largest output chunk, and the time of
``.sum().compute()``, the median of ``--repeat`` runs taken alternately. Usage::

    python benchmarks/dask_tile.py [--repeat 3] [--skip-slow]

``--skip-slow`` leaves out ``dask.array.tile`` where it builds 400,001 tasks (one
sample there otherwise: minutes each).
"""

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import dask
import dask.array as da
import numpy as np

import xtile

# name: (input shape, chunks, repeats, dtype)
CASES: dict[str, tuple[tuple[int, ...], Any, tuple[int, ...], str]] = {
    "one chunk, small repeats": ((2000, 2000), -1, (2, 3), "float64"),
    "many chunks, small repeats": ((4000, 4000), (1000, 1000), (2, 3), "float64"),
    "uneven chunks, small repeats": ((3000, 2000), ((700, 1300, 1000), (999, 1001)), (3, 2), "f8"),
    "large input, repeats 1 and 2": ((8000, 4000), (2000, 2000), (1, 2), "float64"),
    "one chunk, huge repeats": ((3,), -1, (400_000,), "int64"),
    "one chunk 2-D, large repeats": ((100, 100), -1, (50, 200), "float32"),
    "many chunks, large repeats": ((1000, 100), (100, 100), (1, 300), "float32"),
    "small chunks, small repeats": ((60, 60), (7, 13), (4, 4), "int32"),
}
_SLOW = {"one chunk, huge repeats"}  # dask.array.tile: 400,001 tasks


def _median_pair(f: Callable[[], Any], g: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median seconds of f and g, sampled alternately."""
    tf, tg = [], []
    for _ in range(repeat):
        for fn, out in ((f, tf), (g, tg)):
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return statistics.median(tf), statistics.median(tg)


def _largest_chunk(y: Any) -> int:
    return int(np.prod([max(c) for c in y.chunks])) * y.dtype.itemsize


def _case(name: str, repeat: int, *, with_dask: bool) -> list[str]:
    """The rows of one case: build each tile, check them equal, time their sums."""
    shape, chunks, reps, dtype = CASES[name]
    x = da.ones(shape, chunks=chunks, dtype=dtype)
    builders = {"xtile": xtile.tile, "dask": da.tile} if with_dask else {"xtile": xtile.tile}
    ys, builds = {}, {}
    for tile, build in builders.items():
        t = time.perf_counter()
        ys[tile] = build(x, reps)
        builds[tile] = time.perf_counter() - t
    if with_dask:
        assert np.array_equal(np.asarray(ys["xtile"]), np.asarray(ys["dask"]))
    sums = dict(
        zip(
            ys,
            _median_pair(
                ys["xtile"].sum().compute,
                ys["dask"].sum().compute if with_dask else lambda: None,
                repeat,
            ),
            strict=False,
        )
    )
    rows = []
    for tile, y in ys.items():
        ratio = f"{sums['dask'] / sums[tile]:.2f}" if with_dask else "-"
        rows.append(
            f"{name:<30}{tile:<8}{y.nbytes / 1e6:>8.0f}{len(y.__dask_graph__()):>9}"
            f"{_largest_chunk(y) / 1e6:>10.1f}{builds[tile] * 1e3:>10.1f}{sums[tile]:>8.3f}"
            f"{ratio:>9}"
        )
    return rows


def main() -> None:
    """Print one row per case and tile."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-slow", action="store_true")
    args = parser.parse_args()
    print(f"dask {dask.__version__}, array.chunk-size {dask.config.get('array.chunk-size')}")
    print(
        f"{'case':<30}{'tile':<8}{'out MB':>8}{'tasks':>9}{'chunk MB':>10}"
        f"{'build ms':>10}{'sum s':>8}{'vs dask':>9}"
    )
    for name in CASES:
        with_dask = not (args.skip_slow and name in _SLOW)
        repeat = 1 if name in _SLOW else args.repeat  # minutes per sample for dask.array.tile
        print("\n".join(_case(name, repeat, with_dask=with_dask)), flush=True)


if __name__ == "__main__":
    main()
