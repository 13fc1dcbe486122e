"""
Sharded JAX arrays stay sharded: each device holds its part of the output, not all of it.

Runs ``benchmarks/jax_sharding.py`` in its own process (JAX must see 8 host devices
from its start) and checks its rows.
"""

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jax")

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "jax_sharding.py"


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    """The script's measurements, one per (axis type, input spec, repeats)."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_exact_everywhere(rows: list[dict[str, Any]]) -> None:
    """Eager and under jax.jit, on every mesh and spec: numpy.tile's values."""
    assert len(rows) == 48
    for r in rows:
        for mode in ("eager", "jit"):
            assert r["xtile"][mode].get("exact"), (r, mode)


def test_output_stays_sharded(rows: list[dict[str, Any]]) -> None:
    """Eagerly (and under jit with Explicit axes), a device holds its share of the output."""
    for r in rows:
        share = r["in_bytes"] * math.prod(r["reps"])  # the input's per-device part, repeated
        assert r["xtile"]["eager"]["bytes"] == share, r
        if r["axes"] == "Explicit":
            assert r["xtile"]["jit"]["bytes"] == share, r
        for mode in ("eager", "jit"):  # never more than jax.numpy.tile, where it works
            native = r["jnp"][mode]
            assert "error" in native or r["xtile"][mode]["bytes"] <= native["bytes"], (r, mode)


def test_jit_with_auto_axes_keeps_the_sharding_it_is_told(rows: list[dict[str, Any]]) -> None:
    """Auto axes under jit, told ``out_shardings`` (docs/scale.md): each device holds its share."""
    auto = [r for r in rows if r["axes"] == "Auto"]
    assert len(auto) == 24
    for r in auto:
        told = r["xtile"]["jit_out"]
        assert told["exact"], r
        assert told["bytes"] == r["in_bytes"] * math.prod(r["reps"]), r
    replicated = [r for r in auto if r["xtile"]["jit"]["bytes"] > r["xtile"]["jit_out"]["bytes"]]
    assert replicated  # what the advice is for (pinned: XLA's propagation may improve)


def test_tiling_unsharded_axes_needs_no_collective(rows: list[dict[str, Any]]) -> None:
    """Repeats only on axes that are not sharded (or new ones): no collective in the program."""
    sharded = {"a,b": (0, 1), "a": (0,), "-,b": (1,), "(a,b)": (0,)}
    for r in rows:
        reps = r["reps"]
        lead = len(reps) - 2
        if all(reps[lead + axis] == 1 for axis in sharded[r["spec"]]):
            assert r["xtile"]["collectives"] == 0, r
        assert isinstance(r["xtile"]["collectives"], int), r


def test_jax_numpy_tile_replicates_or_refuses(rows: list[dict[str, Any]]) -> None:
    """What xtile improves on: jax.numpy.tile along a sharded axis (pinned, may change)."""
    a_by_3 = next(
        r for r in rows if r["axes"] == "Auto" and r["spec"] == "a" and r["reps"] == [3, 1]
    )
    assert a_by_3["jnp"]["jit"]["bytes"] == a_by_3["out_bytes"]  # every device: the whole output
    explicit = next(
        r for r in rows if r["axes"] == "Explicit" and r["spec"] == "a" and r["reps"] == [3, 1]
    )
    assert explicit["jnp"]["eager"] == {"error": "ShardingTypeError"}
