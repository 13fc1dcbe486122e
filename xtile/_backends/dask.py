"""Dask: a graph of its own, one task per output block, each the tile of one input block."""

import itertools
import math
from typing import Any

import dask
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph
from dask.utils import parse_bytes

from . import Backend

__all__ = ["BACKEND"]
Shape = tuple[int, ...]

DASK_GROUP_BYTES = 4 << 20


def _whole(x: Any, reps: Shape, _xp: Any, tile: Any) -> Any:
    """The lazy tile: one task per output block, an alias where it is an input block."""
    a: Any = x
    shape = (1,) * (len(reps) - a.ndim) + tuple(a.shape)
    if a.ndim != len(shape):
        a = a[(None,) * (len(shape) - a.ndim)]  # leading length-1 axes, one chunk each
    largest = a.dtype.itemsize * math.prod(max(c, default=0) for c in a.chunks)
    limit = max(largest, min(parse_bytes(dask.config.get("array.chunk-size")), DASK_GROUP_BYTES))
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
        graph[(name, *index)] = key if all(k == 1 for k in times) else (tile, key, times)
    hlg = HighLevelGraph.from_collections(name, graph, dependencies=[a])
    return da.Array(hlg, name, tuple(chunks), meta=a._meta)  # type: ignore[no-untyped-call]


BACKEND = Backend("dask", whole=_whole)
