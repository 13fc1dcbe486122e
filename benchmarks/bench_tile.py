"""
Time `xtile.tile` against each backend's own tile and a plain copy of the output size.

All three are timed side by side in one run (the machine is noisy, so compare the
ratios, not the absolute numbers). Usage::

    python benchmarks/bench_tile.py [--backends numpy,torch,jax] [--repeat 7]
"""

import argparse
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import xtile

# (input shape, repeats, dtype)
CASES = [
    ((1000, 1000), (4, 4), "float32"),
    ((4000, 3), (1, 1000), "float32"),
    ((100, 100, 3), (10, 10, 10), "float32"),
    ((2, 3, 4, 5), (10, 10, 10, 10), "float32"),
    ((1, 1000), (4000, 1), "float32"),
    ((8, 8), (2, 2), "float32"),
]


def best_time(fn: Callable[[], Any], sync: Callable[[Any], Any], repeat: int) -> float:
    """Best wall time of `repeat` calls, after one warm-up call (JIT, caches)."""
    sync(fn())
    best = float("inf")
    for _ in range(repeat):
        number = 1
        while True:  # enough calls per sample to see tiny cases above timer noise
            t0 = time.perf_counter()
            for _ in range(number):
                sync(fn())
            elapsed = time.perf_counter() - t0
            if elapsed > 0.02:
                break
            number *= 4
        best = min(best, elapsed / number)
    return best


Backend = tuple[Callable[..., Any], Callable[..., Any], Callable[[Any], Any], Callable[[Any], Any]]


def backends(names: list[str]) -> dict[str, Backend]:
    """Per backend: array constructor from NumPy, native tile, a plain copy, and a sync."""
    out: dict[str, Backend] = {}
    if "numpy" in names:
        out["numpy"] = (np.asarray, np.tile, np.copy, lambda a: a)
    if "torch" in names:
        import torch

        torch.set_num_threads(1)
        out["torch"] = (torch.asarray, torch.tile, torch.clone, lambda a: a)
    if "jax" in names:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        out["jax"] = (jnp.asarray, jnp.tile, jnp.copy, lambda a: a.block_until_ready())
    return out


def main() -> None:
    """Run the benchmark matrix and print one line per (backend, case)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backends", default="numpy,torch,jax")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    print(
        f"{'backend':<8}{'case':<38}{'out MB':>8}{'copy GB/s':>11}{'native GB/s':>13}"
        f"{'xtile GB/s':>12}{'xtile/native':>14}{'xtile/copy':>12}"
    )
    for name, (asarray, native, copy, sync) in backends(args.backends.split(",")).items():
        for shape, reps, dtype in CASES:
            x = asarray(np.arange(np.prod(shape), dtype=dtype).reshape(shape))
            out_shape = xtile.tile_shape(shape, reps)
            nbytes = int(np.prod(out_shape)) * np.dtype(dtype).itemsize  # type: ignore[arg-type]
            big = asarray(np.ones(out_shape, dtype=dtype))
            t_copy = best_time(partial(copy, big), sync, args.repeat)
            t_native = best_time(partial(native, x, reps), sync, args.repeat)
            t_xtile = best_time(partial(xtile.tile, x, reps), sync, args.repeat)
            case = f"{shape}x{reps} {dtype}"
            print(
                f"{name:<8}{case:<38}{nbytes / 1e6:>8.2f}{nbytes / t_copy / 1e9:>11.1f}"
                f"{nbytes / t_native / 1e9:>13.1f}{nbytes / t_xtile / 1e9:>12.1f}"
                f"{t_native / t_xtile:>14.2f}{t_copy / t_xtile:>12.2f}"
            )


if __name__ == "__main__":
    main()
