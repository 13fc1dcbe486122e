"""benchmarks/shapes2.py draws its own distribution; benchmarks/ablation.py imports."""

import importlib
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from xtile._cli import _bench

np = pytest.importorskip("numpy")

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"


@pytest.fixture
def benchmarks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The scripts of benchmarks/ importable, as when they run."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    yield
    for name in ("shapes2", "ablation"):
        sys.modules.pop(name, None)


def _shapes2() -> ModuleType:
    return importlib.import_module("shapes2")


@pytest.mark.usefixtures("benchmarks")
def test_gen2_cases() -> None:
    """Deterministic, in bounds, of several ranks and dtypes, and unlike the sweep."""
    shapes2 = _shapes2()
    cases = shapes2.cases(50, 0)
    assert len(cases) == 50
    assert cases == shapes2.cases(50, 0)
    assert cases != shapes2.cases(50, 1)
    assert cases != _bench.sweep_cases(50, 0)
    low, high = shapes2.OUT_BYTES
    for c in cases:
        assert c.kind == "gen2"
        assert len(c.shape) == len(c.reps) >= 1
        assert all(d >= 1 for d in c.shape)
        assert any(r != 1 for r in c.reps)
        out = math.prod(c.shape) * math.prod(c.reps) * np.dtype(c.dtype).itemsize
        assert out == shapes2.out_bytes(c)
        assert low <= out <= high
        assert 1 <= shapes2.run_bytes(c) <= out
    assert len({len(c.shape) for c in cases}) >= 4
    assert len({c.dtype for c in cases}) >= 6
    assert {c.dtype for c in cases} <= set(shapes2.DTYPES)


@pytest.mark.usefixtures("benchmarks")
def test_gen2_stats() -> None:
    """The summary statistics count every case."""
    shapes2 = _shapes2()
    cases = shapes2.cases(200, 7)
    stats = shapes2.stats(cases)
    assert sum(stats["ranks"].values()) == 200
    assert sum(stats["dtypes"].values()) == 200
    assert 0 <= stats["short_runs"] <= 1
    # dtypes the sweep never draws
    assert {"bool", "uint8", "float16"} <= set(stats["dtypes"])


@pytest.mark.usefixtures("benchmarks")
def test_ablation_imports() -> None:
    """The ablation script imports and reads its case sources (timing needs the engine)."""
    from xtile import _testing

    ablation = importlib.import_module("ablation")
    assert ablation._testing is _testing  # it switches strategies off as the tests do
    sources = ablation.parse_sources("sweep:1:3,gen2:2:4,matrix")
    assert [name for name, _ in sources] == ["sweep:1:3", "gen2:2:4", "matrix"]
    assert [len(cs) for _, cs in sources] == [3, 4, len(_bench.CASES)]
    with pytest.raises(ValueError, match="unknown case source"):
        ablation.parse_sources("sweep:1")
