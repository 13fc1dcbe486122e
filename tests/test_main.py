"""``python -m xtile``: the self-check's table, its help, and the quick benchmark."""

import subprocess
import sys

import pytest

from xtile._testing import Backend, _oracles


def _run(*args: str) -> str:
    """Run ``python -m xtile`` as a user does; its standard output."""
    return subprocess.run(
        [sys.executable, "-m", "xtile", *args], capture_output=True, text=True, check=True
    ).stdout


def test_self_check_table() -> None:
    out = _run("--cases", "3", "--seed", "0")
    assert "seed 0 (again: python -m xtile --cases 3 --seed 0)" in out
    for backend in Backend:
        assert backend.value in out
    for name, _, _ in _oracles.LAYERS:
        assert name in out
    assert "columns: dtypes" in out
    assert out.rstrip().endswith("OK: every case matched")


@pytest.mark.parametrize(("name", "layer", "runtime"), _oracles.LAYERS, ids=str)
def test_layers_match_their_runtimes(name: str, layer: object, runtime: object) -> None:
    del name  # the id
    row = _oracles.check_layer(layer, runtime, 60, seed=1)  # type: ignore[arg-type]
    assert row["failures"] == 0, row["problems"]


def test_layer_oracle_can_fail() -> None:
    """A layer that drops a repeat is caught."""
    _, layer, runtime = _oracles.LAYERS[0]
    row = _oracles.check_layer(lambda x, reps: layer(x, reps * 0), runtime, 20, seed=1)
    assert row["failures"] > 0


def test_help_is_plain_text() -> None:
    out = _run("--help")
    assert "python -m xtile bench" in out.splitlines()[1]  # in the usage lines
    assert "`" not in out
    assert "--seed S" in out


def test_bench_quick() -> None:
    assert "geomean xtile/native" in _run("bench", "--quick")
