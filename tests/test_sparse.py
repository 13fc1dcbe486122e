"""pydata sparse: tiles stay sparse, in the input's format, in memory of the non-zeros."""

import tracemalloc
from typing import Any

import numpy as np
import pytest

import xtile
from xtile._cli import _bench

sparse = pytest.importorskip("sparse")


def _formats(a: Any) -> dict[str, Any]:
    """`a` in every format pydata sparse has (CSR and CSC are 2-D GCXS)."""
    out = {
        "coo": sparse.COO.from_numpy(a),
        "dok": sparse.DOK.from_numpy(a),
        "gcxs": sparse.GCXS.from_numpy(a),
    }
    if a.ndim == 2:
        out |= {
            "csr": sparse.GCXS.from_numpy(a, compressed_axes=(0,)),
            "csc": sparse.GCXS.from_numpy(a, compressed_axes=(1,)),
        }
    return out


@pytest.mark.parametrize(
    ("shape", "reps"),
    [((3, 4), (2, 3)), ((3, 4), (2, 1, 3)), ((2, 3, 4), (1, 2)), ((3, 4), (0, 2)), ((5,), 3)],
)
def test_stays_sparse_in_its_format(shape: tuple[int, ...], reps: Any) -> None:
    a = np.zeros(shape)
    a.reshape(-1)[::3] = np.arange(1, a.size // 3 + 2)[: a.reshape(-1)[::3].size]
    expected = np.tile(a, reps)
    for name, x in _formats(a).items():
        y = xtile.tile(x, reps)
        assert type(y) is type(x), name
        assert y.format == x.format, name
        assert y.nnz == np.count_nonzero(expected), name
        if name in {"csr", "csc"}:  # the compressed axis counted from the end is kept
            assert y.compressed_axes[0] - y.ndim == x.compressed_axes[0] - x.ndim
        assert np.array_equal(y.todense(), expected), name


@pytest.mark.parametrize("case", _bench.CASES, ids=str)
def test_benchmark_matrix(case: _bench.Case) -> None:
    """The benchmark matrix at 1% density, densified for the comparison."""
    rng = np.random.default_rng(0)
    dtype = np.dtype(case.dtype)
    a = np.zeros(case.shape, dtype=dtype)
    a.reshape(-1)[rng.random(a.size) < 0.01] = 1
    x = sparse.COO.from_numpy(a)
    y = xtile.tile(x, case.reps)
    assert isinstance(y, sparse.COO)
    assert y.dtype == dtype
    assert y.nnz == x.nnz * int(np.prod(case.reps))
    assert np.array_equal(y.todense(), np.tile(a, case.reps))


def test_fill_value_kept() -> None:
    x = sparse.COO.from_numpy(np.array([[1.0, 7.0], [7.0, 7.0]]), fill_value=7.0)
    y = xtile.tile(x, (2, 3))
    assert y.fill_value == 7.0
    assert y.nnz == 6
    assert np.array_equal(y.todense(), np.tile(x.todense(), (2, 3)))


def test_huge_and_sparse() -> None:
    """10^6 x 10^6 with 10^3 non-zeros by (3, 3): memory of 9 * 10^3 entries, not 72 TB."""
    rng = np.random.default_rng(0)
    n, nnz = 10**6, 10**3
    x = sparse.COO(rng.integers(0, n, size=(2, nnz)), rng.random(nnz), shape=(n, n))
    tracemalloc.start()
    try:
        y = xtile.tile(x, (3, 3))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert y.shape == (3 * n, 3 * n)
    assert y.nnz == 9 * x.nnz
    # coordinates (2 x int64) and values (float64) of the output: 24 bytes per entry
    assert peak < 20 * 24 * y.nnz, peak
    rows, cols = y.coords
    i, j = rows % n, cols % n
    assert np.array_equal(y.data, _at(x, i, j))


def _at(x: Any, i: Any, j: Any) -> Any:
    """The values of COO `x` at coordinates (i, j), each of which holds a non-zero."""
    order = np.lexsort((x.coords[1], x.coords[0]))
    keys = x.coords[0][order] * x.shape[1] + x.coords[1][order]
    return x.data[order][np.searchsorted(keys, i * x.shape[1] + j)]


def test_out_refused() -> None:
    x = sparse.COO.from_numpy(np.eye(2))
    with pytest.raises(TypeError, match="immutable"):
        xtile.tile(x, 2, out=sparse.COO.from_numpy(np.zeros((2, 4))))
