"""
The time of one small tile, xtile against the native tile: the per-call cost.

(8, 8) x (2, 2) float32 by default, on NumPy and PyTorch (one thread): xtile on a
repeated call (its plan cached), the same into a reused ``out=`` and
`numpy.tile` / `torch.tile`, interleaved; then xtile on a new layout each call (the
caches cleared); best of ``--rounds`` rounds of ``--number`` calls. ``--devices`` takes
PyTorch devices besides ``cpu``: on ``cuda`` (and CuPy there) a round ends in a wait, so
a small call's time is its host time (the device runs behind); ``meta`` has no kernels
at all. Usage::

    python benchmarks/per_call.py [--shape 8,8] [--reps 2,2] [--rounds 200] [--devices cpu,cuda]
"""

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import xtile
from xtile import _run


def _per_call(
    calls: dict[str, Callable[[], Any]], rounds: int, number: int, wait: Callable[[], Any]
) -> dict[str, float]:
    """Best time of one call of each, in microseconds, rounds interleaved."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(number):
                call()
            wait()
            best[name] = min(best[name], (time.perf_counter() - start) / number * 1e6)
    return best


def main() -> None:
    """Print xtile's time per call and its ratio to the native tile's, per backend."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shape", default="8,8")
    parser.add_argument("--reps", default="2,2")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--devices", default="cpu", help="PyTorch devices: cpu,cuda,meta")
    args = parser.parse_args()
    shape = tuple(int(s) for s in args.shape.split(","))
    reps = tuple(int(r) for r in args.reps.split(","))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def uncached(x: Any) -> Callable[[], Any]:
        def call() -> Any:
            _run.compiled.cache_clear()  # planned and compiled again
            _run.KEPT.clear()
            return xtile.tile(x, reps)

        return call

    def nothing() -> None:
        pass

    backends: dict[str, tuple[Any, Callable[..., Any], Callable[[], Any]]] = {
        "numpy": (a, np.tile, nothing)
    }
    devices = args.devices.split(",")
    try:
        import torch
    except ImportError:
        pass
    else:
        torch.set_num_threads(1)
        for dev in devices:
            name = "torch (1 thread)" if dev == "cpu" else f"torch {dev}"
            wait = torch.cuda.synchronize if dev.startswith("cuda") else nothing
            backends[name] = (torch.from_numpy(a).to(dev), torch.tile, wait)
    if "cuda" in devices:
        try:
            import cupy
        except ImportError:
            pass
        else:
            backends["cupy"] = (cupy.asarray(a), cupy.tile, cupy.cuda.Device().synchronize)
    print(f"{shape} x {reps} float32, us per call (best of {args.rounds} x {args.number})")
    for name, (x, native, wait) in backends.items():
        out = xtile.tile(x, reps)
        t = _per_call(
            {
                "native": lambda x=x, native=native: native(x, reps),
                "cached": lambda x=x: xtile.tile(x, reps),
                "out": lambda x=x, out=out: xtile.tile(x, reps, out=out),
            },
            args.rounds,
            args.number,
            wait,
        )
        # apart: clearing the caches between the others would make them plan again
        t |= _per_call({"uncached": uncached(x)}, args.rounds, args.number, wait)
        print(
            f"{name:<17} native {t['native']:5.1f}  xtile {t['cached']:5.1f} "
            f"({t['cached'] / t['native']:.2f}x)  out= {t['out']:5.1f} "
            f"({t['out'] / t['cached']:.2f}x xtile)  new layout {t['uncached']:5.1f} "
            f"({t['uncached'] / t['native']:.2f}x)"
        )


if __name__ == "__main__":
    main()
