"""ndonnx: its own `tile`, one ONNX Tile node, which keeps every dimension it can know."""

from typing import Any

import ndonnx as ndx

from . import Backend


def _whole(x: Any, reps: tuple[int, ...], _xp: Any, _tile: Any) -> Any:
    """`ndonnx.tile`; an unknown axis repeated 0 times taken empty first, so its 0 is known."""
    own = ((1,) * x.ndim + reps)[len(reps) :]  # the repeats of `x`'s own axes
    for axis, (d, r) in enumerate(zip(x.shape, own, strict=True)):
        if d is None and r == 0:
            x = ndx.take(x, ndx.asarray([], dtype=ndx.int64), axis=axis)
    return ndx.tile(x, reps)


BACKEND = Backend("ndonnx", whole=_whole)
