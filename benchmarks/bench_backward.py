"""
Time and measure the backward of `xtile.tile` against `torch.tile` and `jnp.tile`.

The gradient of a tile is a sum over the tiled copies. This times that backward alone
(the forward graph is built once) for both tiles side by side in one run, and, for
PyTorch, counts the bytes its CPU allocator hands out during the backward (profiler).
Usage::

    python benchmarks/bench_backward.py [--repeat 7]
"""

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import xtile
from xtile._cli._bench import best_times

CASES = [
    ((1000, 1000), (4, 4)),
    ((4000, 3), (1, 1000)),
    ((100, 100, 3), (10, 10, 10)),
    ((2, 3, 4, 5), (10, 10, 10, 10)),
    ((1, 1000), (4000, 1)),
    ((8, 8), (2, 2)),
]


@contextlib.contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """
    Send what C++ code writes to the process's stderr to /dev/null.

    PyTorch's profiler (Kineto) prints ``USDT: ... profiler_start`` lines there at each
    start and stop, which no environment variable turns off; they broke the table.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with Path(os.devnull).open("w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def torch_backward_bytes(tile: Any, x: Any, reps: Any, grad_out: Any) -> int:
    """Bytes the PyTorch CPU allocator hands out during one backward of `tile`."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    y = tile(x, reps)
    with (
        _native_stderr_silenced(),
        profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof,
    ):
        torch.autograd.grad(y, x, grad_out)
    return sum(max(e.self_cpu_memory_usage, 0) for e in prof.events())


def main() -> None:
    """Print one line per (framework, case): times, ratio, and PyTorch's allocations."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp
    import torch

    torch.set_num_threads(1)
    print(
        f"{'framework':<10}{'case':<32}{'out MB':>8}{'native ms':>11}{'xtile ms':>10}"
        f"{'native/xtile':>14}{'native alloc kB':>17}{'xtile alloc kB':>16}"
    )
    for shape, reps in CASES:
        case = f"{shape}x{reps}"
        n_out = int(np.prod(xtile.tile_shape(shape, reps)))  # type: ignore[arg-type]
        mb = n_out * 4 / 1e6
        x = torch.randn(shape, requires_grad=True)
        g = torch.randn(xtile.tile_shape(shape, reps))  # type: ignore[arg-type]
        grads = [
            partial(torch.autograd.grad, tile(x, reps), x, g, retain_graph=True)
            for tile in (torch.tile, xtile.tile)
        ]
        times = best_times(grads, lambda r: r, args.repeat)
        allocs = [torch_backward_bytes(tile, x, reps, g) / 1e3 for tile in (torch.tile, xtile.tile)]
        print(
            f"{'torch':<10}{case:<32}{mb:>8.1f}{times[0] * 1e3:>11.3f}{times[1] * 1e3:>10.3f}"
            f"{times[0] / times[1]:>14.2f}{allocs[0]:>17.1f}{allocs[1]:>16.1f}"
        )
        xj = jnp.asarray(x.detach().numpy())
        gj = jnp.asarray(g.numpy())
        for mode in ("eager", "jit"):
            fns = []
            for tile in (jnp.tile, xtile.tile):
                _, vjp = jax.vjp(partial(lambda a, t, r: t(a, r), t=tile, r=reps), xj)
                fns.append(partial(jax.jit(vjp) if mode == "jit" else vjp, gj))
            times = best_times(fns, lambda r: r[0].block_until_ready(), args.repeat)
            print(
                f"{'jax ' + mode:<10}{case:<32}{mb:>8.1f}{times[0] * 1e3:>11.3f}"
                f"{times[1] * 1e3:>10.3f}{times[0] / times[1]:>14.2f}"
            )


if __name__ == "__main__":
    main()
