"""
Dask: a graph of its own, one task per output block, each tiling one input block.

The standard-only tile merges each ``(r, d)`` pair with a reshape, which makes Dask
rechunk (chunks grow with the repeats) and fails on some multi-chunk inputs with
empty outputs; `dask.array.tile` concatenates one block per repeat (400,001 tasks for
``(3,)`` in one chunk tiled by 400,000). Here the output's chunks along an axis are
the input's, repeated; where the input axis is one chunk, several repeats share an
output chunk, up to ``max(largest input block, min(array.chunk-size, DASK_GROUP_BYTES))``
bytes. Each output block is one input block as it is (an alias: no task, no copy) or
the tile of one input block, in the block's own namespace (NumPy, CuPy), by the
dispatcher.
"""

import itertools
import math
from typing import Any

import dask
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph
from dask.utils import parse_bytes

from .._agnostic import Primitives
from .._lib._typing import Array, ArrayNamespace, Plan

__all__ = ["PRIMITIVES"]

# Repeats of a one-chunk axis share an output chunk up to this many bytes (or
# array.chunk-size, if smaller): fewer, larger chunks save a task each; an output
# block that is an input block as it is costs no copy at all (an alias), so large
# chunks are not grouped (benchmarks/dask_tile.py).
DASK_GROUP_BYTES = 4 << 20


def _tile(x: Array, plan: Plan, _xp: ArrayNamespace, /) -> Array:
    """The lazy tile: one task per output block, an alias where it is an input block."""
    a: Any = x
    shape, reps = plan.shape, plan.reps
    if a.ndim != len(shape):
        a = a[(None,) * (len(shape) - a.ndim)]  # leading length-1 axes, one chunk each
    largest = a.dtype.itemsize * math.prod(max(c, default=0) for c in a.chunks)
    setting = parse_bytes(dask.config.get("array.chunk-size"))
    limit = max(largest, min(setting, DASK_GROUP_BYTES))
    block = max(largest, 1)
    # per axis, per output block: (the input block it tiles, how many times)
    sources: list[list[tuple[int, int]]] = []
    chunks: list[tuple[int, ...]] = []
    for i in reversed(range(len(shape))):
        c, r = a.chunks[i], reps[i]
        if r == 0 or shape[i] == 0:
            sources.append([(0, r)])
            chunks.append((0,))
        elif len(c) == 1 and r > 1 and (group := min(r, limit // block)) > 1:
            block *= group
            counts = [group] * (r // group) + ([r % group] if r % group else [])
            sources.append([(0, k) for k in counts])
            chunks.append(tuple(k * c[0] for k in counts))
        else:
            sources.append([(j % len(c), 1) for j in range(len(c) * r)])
            chunks.append(c * r)
    sources.reverse()
    chunks.reverse()
    name = "xtile-tile-" + tokenize(a, reps, limit)  # limit: the chunks depend on it
    graph: dict[Any, Any] = {}
    for index in itertools.product(*(range(len(s)) for s in sources)):
        picked = [sources[axis][j] for axis, j in enumerate(index)]
        key = (a.name, *(b for b, _ in picked))
        times = tuple(k for _, k in picked)
        graph[(name, *index)] = key if all(k == 1 for k in times) else (_tile_block, key, times)
    hlg = HighLevelGraph.from_collections(name, graph, dependencies=[a])
    return da.Array(hlg, name, tuple(chunks), meta=a._meta)  # type: ignore[no-untyped-call]


def _tile_block(block: Any, counts: tuple[int, ...], /) -> Any:
    """One output block: the tile of one input block, in its own namespace."""
    from .._dispatch import tile
    from .._lib._compat import array_namespace

    return tile(block, counts, xp=array_namespace(block), op="xtile.tile")


PRIMITIVES = Primitives(tile=_tile)
