"""
Sharded JAX arrays: the per-device bytes and collectives of xtile against `jax.numpy.tile`.

Runs on 8 host devices (sets ``XLA_FLAGS=--xla_force_host_platform_device_count=8``
before JAX starts, so run it as its own process). A (64, 32) float32 array on a
(4, 2) mesh, for each axis type (Explicit, JAX's default for `jax.make_mesh`, and
Auto), each input spec and each repeats: eagerly and under `jax.jit`, the largest
per-device shard of the result, its spec, and the collectives in the compiled
program (of `jax.jit` of the tile on the sharded input). ``--json`` prints the rows
as JSON lines (read by ``tests/test_sharding.py``).
Usage::

    python benchmarks/jax_sharding.py [--json]
"""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import xtile

SPECS = {"a,b": P("a", "b"), "a": P("a"), "-,b": P(None, "b"), "(a,b)": P(("a", "b"))}
REPS = [(1, 1), (3, 1), (1, 3), (2, 3), (2, 1, 1), (100, 1)]
COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce", "reduce-scatter")


def _per_device(y: Any) -> int:
    return max(s.data.nbytes for s in y.addressable_shards)


def _count_in(text: str) -> int:
    return sum(len(re.findall(rf"\b{c}(?:-start)?\(", text)) for c in COLLECTIVES)


def _collectives(f: Callable[[Any], Any], x: Any) -> int:
    return _count_in(jax.jit(f).lower(x).compile().as_text())


def _measure(
    f: Callable[[Any], Any], x: Any, mesh: Any, reps: tuple[int, ...], out: Any
) -> dict[str, Any]:
    """
    Eager and jitted: per-device bytes, spec, collectives, and exactness (or the error).

    With Auto axes also "jit_out": jitted with ``out_shardings=out``, the sharding xtile
    gives eagerly (what docs/scale.md advises where jit cannot see the input's sharding).
    """
    row: dict[str, Any] = {}
    expected = np.tile(np.asarray(x), reps)
    with jax.set_mesh(mesh):
        modes = [("eager", f), ("jit", jax.jit(f))]
        if mesh.axis_types[0] == AxisType.Auto:  # the output's sharding said, as docs advise
            modes.append(("jit_out", jax.jit(f, out_shardings=out)))
        for mode, g in modes:
            try:
                y = g(x)
            except Exception as e:  # noqa: BLE001  # jax.numpy.tile refuses some shardings
                row[mode] = {"error": type(e).__name__}
                continue
            row[mode] = {
                "bytes": _per_device(y),
                "spec": str(y.sharding.spec),
                "exact": bool(np.array_equal(np.asarray(y), expected)),
            }
            if mode == "jit_out":  # what the program moves and holds besides its output
                compiled = g.lower(x).compile()
                row[mode]["collectives"] = _count_in(compiled.as_text())
                row[mode]["temp"] = compiled.memory_analysis().temp_size_in_bytes
        try:
            row["collectives"] = _collectives(f, x)
        except Exception as e:  # noqa: BLE001
            row["collectives"] = type(e).__name__
    return row


def rows() -> list[dict[str, Any]]:
    """
    Measure every case.

    Returns
    -------
    list of dict
        One per (axis type, spec, repeats): the output's bytes and, for "xtile" and
        "jnp", the eager and jitted measurements.
    """
    out = []
    for axis_type in (AxisType.Explicit, AxisType.Auto):
        mesh = jax.make_mesh((4, 2), ("a", "b"), axis_types=(axis_type,) * 2)
        for name, spec in SPECS.items():
            x = jax.device_put(jnp.arange(64 * 32.0).reshape(64, 32), NamedSharding(mesh, spec))
            for reps in REPS:
                row: dict[str, Any] = {"axes": axis_type.name, "spec": name, "reps": reps}
                row["out_bytes"] = x.nbytes * int(np.prod(reps))
                row["in_bytes"] = _per_device(x)
                target = xtile.tile(x, reps).sharding
                row["xtile"] = _measure(lambda a, r=reps: xtile.tile(a, r), x, mesh, reps, target)
                row["jnp"] = _measure(lambda a, r=reps: jnp.tile(a, r), x, mesh, reps, target)
                out.append(row)
    return out


def _count(c: int | str) -> str:
    return str(c) if isinstance(c, int) else "err"


def _cell(m: dict[str, Any]) -> str:
    return m["error"] if "error" in m else f"{m['bytes']}{'' if m['exact'] else ' WRONG'}"


def main() -> None:
    """Print the table (or JSON lines)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = rows()
    if args.json:
        for row in results:
            print(json.dumps(row))
        return
    print(f"jax {jax.__version__}, {jax.device_count()} devices; per-device bytes of the result")
    head = (
        f"{'axes':<9}{'spec':<7}{'reps':<11}{'out':>7}{'xtile':>8}{'jit':>8}{'coll':>5}{'jit+out':>8}"
        f"{'jnp':>20}{'jit':>20}{'coll':>5}"
    )
    print(head)
    for r in results:
        x, j = r["xtile"], r["jnp"]
        print(
            f"{r['axes']:<9}{r['spec']:<7}{r['reps']!s:<11}{r['out_bytes']:>7}"
            f"{_cell(x['eager']):>8}{_cell(x['jit']):>8}{_count(x['collectives']):>5}"
            f"{_cell(x['jit_out']) if 'jit_out' in x else '-':>8}"
            f"{_cell(j['eager']):>20}{_cell(j['jit']):>20}{_count(j['collectives']):>5}"
        )


if __name__ == "__main__":
    main()
