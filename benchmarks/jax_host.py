"""
Would an eager JAX tile on the CPU gain from a NumPy tile handed to JAX? (It does not.)

Side by side in one run, per case: ``jax.numpy.tile``, ``xtile.tile`` of the JAX
array (its copy under one ``jax.jit``), and xtile's NumPy tile of the host view
handed to JAX by ``jnp.asarray`` and by DLPack, each waited for. Every result is
checked equal to ``jax.numpy.tile``'s. Usage::

    python benchmarks/jax_host.py
"""

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import xtile
from xtile._cli import _bench

CASES = [
    ((8, 8), (2, 2), "float32"),
    ((1000, 1000), (4, 4), "float32"),
    ((4000, 3), (1, 1000), "float32"),
    ((100, 100, 3), (10, 10, 10), "float32"),
]


def main() -> None:
    """Time the four ways per case and print microseconds per call."""
    print(f"{'case':<32}{'jnp.tile':>10}{'xtile':>10}{'host+asarray':>14}{'host+dlpack':>13}  (us)")
    for shape, reps, dtype in CASES:
        x = jnp.asarray((np.arange(math.prod(shape)) % 100).astype(dtype).reshape(shape))
        ways = [
            lambda x=x, reps=reps: jnp.tile(x, reps),
            lambda x=x, reps=reps: xtile.tile(x, reps),
            lambda x=x, reps=reps: jnp.asarray(xtile.tile(np.asarray(x), reps)),
            lambda x=x, reps=reps: jax.dlpack.from_dlpack(xtile.tile(np.asarray(x), reps)),
        ]
        want = np.asarray(ways[0]())
        assert all(np.array_equal(np.asarray(way()), want) for way in ways)

        def wait(a: Any) -> Any:
            return a.block_until_ready()

        times = _bench.best_times(ways, wait, 3)
        cells = "".join(f"{t * 1e6:>{w}.0f}" for t, w in zip(times, (10, 10, 14, 13), strict=True))
        print(f"{f'{shape}x{reps}':<32}{cells}")


if __name__ == "__main__":
    main()
