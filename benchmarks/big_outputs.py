"""
Tile outputs past 2 GiB, 4 GiB and 2**31 elements, one case per process, and report.

Each case runs in a fresh process so that its peak resident memory is its own: the
report gives the output's bytes, the peak resident memory added by the tile, the
seconds, and whether 100,000 sampled positions equal ``x[index % x.shape]``. With
``--native`` the backend's own tile runs too (in its own process). Used by
``tests/test_big.py`` (``pytest -m big``). Usage::

    python benchmarks/big_outputs.py [--native] [--case NAME ...]
"""

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

# name: (library, input shape, repeats, dtype, the strategy it exercises)
CASES = {
    "numpy-broadcast-2GiB": ("numpy", (1, 1 << 20), (2049, 1), "uint8", "one broadcast copy"),
    "numpy-staged-2GiB": ("numpy", (2, 3, 4, 5), (17900, 10, 10, 10), "uint8", "staging"),
    "numpy-doubling-4GiB": ("numpy", (1000, 1000, 3), (2, 1, 720), "uint8", "doubling"),
    "numpy-words-2GiB": ("numpy", (1000, 1000, 4), (2, 1, 270), "uint8", "void-item copy"),
    "numpy-int16-2**31": ("numpy", (1000, 1000, 3), (1, 1, 716), "int16", "doubling"),
    "torch-broadcast-2GiB": ("torch", (1, 1 << 20), (2049, 1), "uint8", "one broadcast copy"),
    "torch-staged-2GiB": ("torch", (2, 3, 4, 5), (17900, 10, 10, 10), "uint8", "staging"),
    "torch-doubling-4GiB": ("torch", (1000, 1000, 3), (2, 1, 720), "uint8", "doubling"),
}
_SAMPLES = 100_000


def _peak_bytes() -> int:  # ru_maxrss is in KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_case(name: str, tile: str) -> dict[str, Any]:
    """Run one case in this process: ``tile`` is "xtile" or "native"."""
    import numpy as np

    library, shape, reps, dtype, _ = CASES[name]
    rng = np.random.default_rng(0)
    data = rng.integers(0, 100, size=shape).astype(dtype)
    if library == "torch":
        import torch

        torch.set_num_threads(1)
        x: Any = torch.from_numpy(data)
        fn = torch.tile if tile == "native" else None
    else:
        x, fn = data, (np.tile if tile == "native" else None)
    if fn is None:
        import xtile

        fn = xtile.tile
        fn(x[(slice(0, 1),) * x.ndim], reps)  # imports and first-call costs
    before = _peak_bytes()
    t0 = time.perf_counter()
    y = fn(x, reps)
    seconds = time.perf_counter() - t0
    added = _peak_bytes() - before
    out = y.numpy() if library == "torch" else y
    flat = rng.integers(0, out.size, size=_SAMPLES)
    index = np.unravel_index(flat, out.shape)
    source = tuple(i % d for i, d in zip(index, data.shape, strict=True))
    ok = bool(np.array_equal(out[index], data[source])) and out.shape == tuple(
        d * r for d, r in zip(data.shape, reps, strict=True)
    )
    return {"case": name, "tile": tile, "out_bytes": out.nbytes, "elements": out.size,
            "added_peak_bytes": added, "seconds": seconds, "sampled_equal": ok}  # fmt: skip


def run_in_subprocess(name: str, tile: str = "xtile") -> dict[str, Any]:
    """Run one case in a fresh process; its report."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", name, tile], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    """Run the cases, each in its own process, and print a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--native", action="store_true", help="time the native tile too")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(*args.one)))
        return
    print(f"{'case':<24}{'tile':<8}{'GiB':>7}{'elements':>15}{'peak+ MiB':>12}"
          f"{'over out':>10}{'s':>8}  sampled")  # fmt: skip
    for name in args.case:
        for tile in ("xtile", "native") if args.native else ("xtile",):
            r = run_in_subprocess(name, tile)
            extra = (r["added_peak_bytes"] - r["out_bytes"]) / 2**20
            print(f"{name:<24}{tile:<8}{r['out_bytes'] / 2**30:>7.2f}{r['elements']:>15,}"
                  f"{r['added_peak_bytes'] / 2**20:>12.0f}{extra:>+9.0f}M{r['seconds']:>8.2f}"
                  f"  {'ok' if r['sampled_equal'] else 'MISMATCH'}")  # fmt: skip


if __name__ == "__main__":
    main()
