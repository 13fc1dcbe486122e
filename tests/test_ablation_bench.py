"""benchmarks/shapes2.py draws its own distribution; ablation.py imports; fit_cost.py's fits."""

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
    for name in ("shapes2", "ablation", "fit_cost"):
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


@pytest.mark.usefixtures("benchmarks")
def test_fit_cost_memory_prices_follow_the_picks() -> None:
    """``--only memory`` moves a big step's byte price (never below its small one) to the picks."""
    from xtile._program import Model, Price, Work

    fit_cost = importlib.import_module("fit_cost")
    model = Model(copy=Price(0.0, 0.0, 0.0, 0.01, 0.5), repeat=Price(0.0, 0.0, 0.0, 0.01, 0.02))
    n = 2 * model.big  # a big step of each kind; the copy is the faster
    case = [([("copy", Work(1, 0, n))], 1.0), ([("repeat", Work(1, 0, n))], 2.0)]
    assert list(fit_cost._regret([case], model)) == [2.0]  # priced as `plan` prices them
    fitted = fit_cost._memory([case], model, ["copy", "repeat"])
    assert list(fit_cost._regret([case], fitted)) == [1.0]
    assert model.copy[3] <= fitted.copy[4] < fitted.repeat[4]
    assert fitted.copy[:4] == model.copy[:4]
    assert fitted.repeat[:4] == model.repeat[:4]
    price = Price(2321.0, 3.571, 0.0, 0.02488, 0.0225)  # the fit's columns and back
    assert fit_cost._as_price(np.array(fit_cost._as_coefficients(price))) == price
