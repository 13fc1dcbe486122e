"""Outputs past 2 GiB, 4 GiB and 2**31 elements on NumPy and PyTorch, every strategy."""

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "big_outputs.py"
_spec = importlib.util.spec_from_file_location("big_outputs", SCRIPT)
assert _spec is not None
assert _spec.loader is not None
big_outputs: Any = importlib.util.module_from_spec(_spec)
sys.modules["big_outputs"] = big_outputs
_spec.loader.exec_module(big_outputs)

SLACK = 64 * 2**20  # the allocator's and the interpreter's own growth, far below an output

pytestmark = pytest.mark.big


@pytest.mark.parametrize("name", list(big_outputs.CASES))
def test_big_output(name: str) -> None:
    """Exact at sampled positions, with peak memory the output plus a small constant."""
    pytest.importorskip(big_outputs.CASES[name][0])
    report = big_outputs.run_in_subprocess(name)
    assert report["sampled_equal"], report
    assert report["out_bytes"] >= 2**31 or report["elements"] >= 2**31
    assert report["added_peak_bytes"] <= report["out_bytes"] + SLACK, report
