"""The benchmark suite runs on every backend and writes its table, CSV and plot."""

import csv
from pathlib import Path

import pytest

from xtile import _bench


def test_bench_smoke(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    backends = [b for b in _bench.BACKENDS if b != "torch"]  # torch-1thread is the same code
    for name in ("torch", "jax", "dask", "array_api_strict"):
        pytest.importorskip(name)
    case = _bench.Case((8, 8), (2, 3), "float32", "tiny")
    results = _bench.run(backends, cases=[case], repeat=1)
    assert [r.backend for r in results] == backends
    assert all(r.xtile_s > 0 and r.native_s > 0 and r.copy_s > 0 for r in results)
    assert "geomean" in _bench.table(results)
    _bench.write_csv(results, str(tmp_path / "bench.csv"))
    with (tmp_path / "bench.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(backends)
    _bench.plot(results, str(tmp_path / "bench.png"))
    assert (tmp_path / "bench.png").stat().st_size > 0
