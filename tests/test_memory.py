"""The tile allocates its output once: peak memory is the output plus a small constant."""

import tracemalloc
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _run, _threads
from xtile._cli import _bench
from xtile._testing import arange

SLACK = 64 * 1024  # index arrays, small Python objects; far below one output


@pytest.fixture(autouse=True)
def same_start() -> None:
    """
    Each test starts from the same state, whichever tests ran before it in this process.

    The Python objects of a first call (its plan, the caches' growth, the thread pool
    made by the process's first split copy) come to 45-60 KiB here, near `SLACK`:
    left to the order of the tests, they made each peak depend on it.
    """
    _run.compiled.cache_clear()
    _run.KEPT.clear()
    _threads.run([lambda: None, lambda: None])  # the pool, made once per process


def peak_bytes(fn: Any) -> tuple[int, Any]:
    """
    Peak traced allocation of ``fn()`` (NumPy reports its buffers to tracemalloc).

    CPython keeps up to 2,000 freed tuples of each length below 20 for reuse, and
    tracemalloc counts them as held: a first call's planning made and freed enough of
    them to hold 40-55 KiB more than the same call planned again, by what ran before
    it. They are filled first, untraced: what is measured is the call's own memory.
    """
    xtile.tile(np.zeros((2, 2)), (2, 1))  # one-time costs: lazy imports, caches
    filled = [tuple(range(n)) for n in range(1, 20) for _ in range(2000)]
    del filled
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


@pytest.mark.parametrize("case", _bench.CASES, ids=str)
def test_numpy_benchmark_matrix(case: _bench.Case) -> None:
    """Every case of the benchmark matrix: staged, long-run and plain copies alike."""
    x = arange(case.shape).astype(case.dtype)
    peak, out = peak_bytes(lambda: xtile.tile(x, case.reps))
    assert out.nbytes <= peak <= out.nbytes + SLACK, (peak, out.nbytes)


@pytest.mark.parametrize(
    ("shape", "reps", "dtype"),
    [((7, 5000, 1), (12, 1, 3), "int8"), ((1, 418, 1, 1, 2), (1, 52, 6, 1, 1), "complex128")],
    ids=str,
)
def test_numpy_from_the_first_block(shape: Any, reps: Any, dtype: str) -> None:
    """The first block is written into the output, then copied from there: no temporary."""
    x = arange(shape).astype(dtype)
    for _ in range(2):  # the second call runs the cached plan
        peak, out = peak_bytes(lambda: xtile.tile(x, reps))
        assert out.nbytes <= peak <= out.nbytes + SLACK, (peak, out.nbytes)
    np.testing.assert_array_equal(out, np.tile(x, reps))


_PAGE_INPUTS = {  # inputs of whole 4 KiB pages (16 KiB): big outputs of them are placed
    "contiguous": np.arange(4096, dtype=np.float32),
    "transposed": np.arange(4096, dtype=np.float32).reshape(64, 64).T,
    "reversed": np.arange(4096, dtype=np.float32)[::-1],
    "zero-stride": np.broadcast_to(np.arange(64, dtype=np.float32), (64, 64)),
    "padded": np.zeros(1024, np.dtype([("a", "u1"), ("b", "<f8")], align=True)),
    "masked": np.ma.masked_greater(np.arange(4096, dtype=np.float32), 4000),
}


@pytest.mark.parametrize("name", _PAGE_INPUTS)
@pytest.mark.parametrize("reps", [(300,), (3, 100), (100, 1, 3)], ids=str)
def test_a_big_output_is_the_tile_and_no_more(name: str, reps: tuple[int, ...]) -> None:
    """A big output of any input layout holds the tile; its peak: the output and the slack."""
    x = _PAGE_INPUTS[name]
    peak, out = peak_bytes(lambda: xtile.tile(x, reps))
    size = out.nbytes + (np.ma.getmaskarray(out).nbytes if name == "masked" else 0)
    assert out.nbytes >= 1 << 20
    assert size <= peak <= size + SLACK, (peak, size)
    expected = np.tile(x, reps)
    assert out.tobytes() == expected.tobytes()
    if name == "masked":
        np.testing.assert_array_equal(np.ma.getmaskarray(out), np.ma.getmaskarray(expected))
    assert out.flags.writeable
    assert not np.shares_memory(out, x)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_a_big_output_stays_within_the_bound_on_any_threads(threads: int) -> None:
    """A big staged output, on any count of threads: the output and the slack, never more."""
    x = arange((51, 1, 21, 1)).astype("uint8")
    with xtile.threads(threads):
        for _ in range(2):  # the second call runs the cached plan
            peak, out = peak_bytes(lambda: xtile.tile(x, (1, 15, 45, 50)))
            assert out.nbytes <= peak <= out.nbytes + SLACK, (peak - out.nbytes, threads)
    np.testing.assert_array_equal(out, np.tile(x, (1, 15, 45, 50)))


def test_numpy_tile_would_fail() -> None:
    """The bound is tight enough to catch a tile that copies once per repeated axis."""
    peak, out = peak_bytes(lambda: np.tile(X, (3, 4)))
    assert peak > out.nbytes + SLACK


@pytest.mark.parametrize(
    ("shape", "reps", "dtype"),
    [
        *[(c.shape, c.reps, c.dtype) for c in _bench.CASES],
        ((600, 400), (3, 4), "float32"),
        ((100, 100, 3), (2, 3, 10), "float32"),
        ((2,) * 6, (3,) * 6, "float32"),  # two staging levels
        ((7, 5000, 1), (12, 1, 3), "int8"),  # from the first block, copied 11 times
    ],
    ids=str,
)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_torch_allocates_one_output(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, layout: str
) -> None:
    """
    PyTorch CPU: the allocator hands out the output's bytes plus a small constant.

    The profiler counts every allocation, freed or not, so the staging arrays count
    too: this bounds the sum, not just the peak.
    """
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    x = torch.asarray(arange(shape).astype(dtype))
    if layout == "transposed":
        x = x.permute(*reversed(range(x.ndim)))
    xtile.tile(x, reps)  # one-time costs
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = xtile.tile(x, reps)
    allocated = sum(max(e.self_cpu_memory_usage, 0) for e in prof.events())
    nbytes = out.numel() * out.element_size()
    assert nbytes <= allocated <= nbytes + SLACK, (allocated, nbytes)


@pytest.mark.parametrize("case", _bench.sweep_cases(40, seed=0), ids=str)
def test_numpy_sweep(case: _bench.Case) -> None:
    """Cases of the random sweep (``python -m xtile bench --sweep``), first call and cached."""
    x = arange(case.shape).astype(case.dtype)
    for _ in range(2):  # the second call runs the cached plan
        peak, out = peak_bytes(lambda: xtile.tile(x, case.reps))
        assert out.nbytes <= peak <= out.nbytes + SLACK, (peak, out.nbytes)
    np.testing.assert_array_equal(out, np.tile(x, case.reps))
