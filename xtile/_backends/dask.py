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

Shape = tuple[int, ...]

DASK_GROUP_BYTES = 4 << 20


def _whole(x: Any, reps: Shape, _xp: Any, tile: Any) -> Any:
    """The lazy tile: one task per output block, an alias where it is an input block."""
    shape = (1,) * (len(reps) - x.ndim) + tuple(x.shape)
    if x.ndim != len(shape):
        x = x[(None,) * (len(shape) - x.ndim)]  # leading length-1 axes, one chunk each
    largest = x.dtype.itemsize * math.prod(max(c, default=0) for c in x.chunks)
    limit = max(largest, min(parse_bytes(dask.config.get("array.chunk-size")), DASK_GROUP_BYTES))
    block = max(largest, 1)
    # per axis, per output block: (the input block it tiles, how many times); the last
    # axis first (`block`, the bytes a task writes, grows outward), each prepended
    sources: list[list[tuple[int, int]]] = []
    chunks: list[tuple[int, ...]] = []
    for i in reversed(range(len(shape))):
        c, r = x.chunks[i], reps[i]
        if r == 0 or shape[i] == 0:
            sources.insert(0, [(0, r)])
            chunks.insert(0, (0,))
        elif len(c) == 1 and r > 1 and (group := min(r, limit // block)) > 1:
            block *= group
            counts = [group] * (r // group) + ([r % group] if r % group else [])
            sources.insert(0, [(0, k) for k in counts])
            chunks.insert(0, tuple(k * c[0] for k in counts))
        else:
            sources.insert(0, [(j % len(c), 1) for j in range(len(c) * r)])
            chunks.insert(0, c * r)
    name = "xtile-tile-" + tokenize(x, reps, limit)  # limit: the chunks depend on it
    graph: dict[Any, Any] = {}
    for index in itertools.product(*(range(len(s)) for s in sources)):
        picked = [sources[axis][j] for axis, j in enumerate(index)]
        key = (x.name, *(b for b, _ in picked))
        times = tuple(k for _, k in picked)
        graph[(name, *index)] = key if all(k == 1 for k in times) else (tile, key, times)
    hlg = HighLevelGraph.from_collections(name, graph, dependencies=[x])
    return da.Array(hlg, name, tuple(chunks), meta=x._meta)  # type: ignore[no-untyped-call]


BACKEND = Backend("dask", whole=_whole)
