"""The tile allocates its output once: peak memory is the output plus a small constant."""

import tracemalloc
from typing import Any

import numpy as np
import pytest

import xtile

SLACK = 64 * 1024  # index arrays, small Python objects; far below one output


def peak_bytes(fn: Any) -> tuple[int, Any]:
    """Peak traced allocation of ``fn()`` (NumPy reports its buffers to tracemalloc)."""
    xtile.tile(np.zeros((2, 2)), (2, 1))  # one-time costs: lazy imports, caches
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return tracemalloc.get_traced_memory()[1] - base, out
    finally:
        tracemalloc.stop()


X = np.arange(600 * 400, dtype=np.float64).reshape(600, 400)
INPUTS = {
    "contiguous": X,
    "transposed": X.T,
    "strided": X[::3, 1::2],
    "flipped": X[::-1, ::-1],
    "broadcast-row": X[:1],
}


@pytest.mark.parametrize("name", INPUTS)
@pytest.mark.parametrize("reps", [(3, 4), (1, 1), (2, 1, 3), (50, 1)])
def test_peak_is_one_output(name: str, reps: tuple[int, ...]) -> None:
    x = INPUTS[name]
    peak, out = peak_bytes(lambda: xtile.tile(x, reps))
    assert out.nbytes <= peak <= out.nbytes + SLACK, (peak, out.nbytes, peak / out.nbytes)


def test_numpy_tile_would_fail() -> None:
    """The bound is tight enough to catch a tile that copies once per repeated axis."""
    peak, out = peak_bytes(lambda: np.tile(X, (3, 4)))
    assert peak > out.nbytes + SLACK
