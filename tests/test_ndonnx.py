"""
ndonnx: a Tile exported to ONNX for any input size, run in onnxruntime.

Lazy ndonnx arguments, with static and dynamic (named) dimensions, are tiled by
`xtile.tile` and the ONNX layers, built into a model with `ndonnx.build` and run in
onnxruntime on inputs of several sizes; each output must equal `numpy.tile` and
onnxruntime's own Tile node on the same input. Eager ndonnx arrays run the whole
parity suite as the ``ndonnx`` backend.
"""

import itertools
from typing import Any

import numpy as np
import pytest

import xtile
import xtile.onnx
from xtile._testing._oracles import ort_session

from .test_conformance_onnx import random_array, same_bytes

ndx = pytest.importorskip("ndonnx")
ort = pytest.importorskip("onnxruntime")

DTYPES = ["bool", "int8", "int32", "int64", "uint16", "uint64", "float32", "float64"]
SIZES = {"N": [0, 1, 4], "M": [1, 3]}  # the runtime lengths each named dimension takes
CASES = [
    (("N", 3), (2, 2)),  # a batch axis: one unknown dimension, reshaped with -1
    (("N", 3), 1),
    (("N", 3), (1, 1)),
    (("N",), (3, 1)),  # leading axes from the repeats
    (("N", 2, 3), (2,)),  # repeats shorter than the rank
    (("N", 1, "M"), (3, 2, 2, 3)),  # two unknowns: by concatenation
    (("N", "M"), (2, 3)),
    (("N", "M"), (1, 1)),
    (("N", 3), (1, 0)),  # empty outputs
    ((2, "N"), (3, 0)),
    (("N", 3), (0, 2)),
    ((2, 3), (2, 2)),  # all static
    ((2, 1, 3), (1, 4, 2)),
]


def _inputs(shape: tuple[int | str, ...]) -> list[tuple[int, ...]]:
    """Concrete shapes for a shape with named dimensions: every combination of sizes."""
    names = sorted({d for d in shape if isinstance(d, str)})
    return [
        tuple(dict(zip(names, sizes, strict=True)).get(d, d) for d in shape)  # type: ignore[misc]
        for sizes in itertools.product(*(SIZES[n] for n in names))
    ]


def _run_exported(
    tile: Any, shape: tuple[int | str, ...], reps: Any, dtype: str
) -> tuple[Any, Any]:
    """The lazy tile of an argument of `shape`, and its model in onnxruntime."""
    x = ndx.argument(shape=shape, dtype=getattr(ndx, dtype))
    y = tile(x)
    assert y.dtype == x.dtype
    assert tuple(y.shape) == xtile.tile_shape(tuple(x.shape), reps)
    model = ndx.build({"x": x}, {"y": y})
    return y, ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _check(session: Any, shape: tuple[int | str, ...], reps: Any, dtype: str) -> None:
    """Equal to `numpy.tile` and to onnxruntime's Tile node, on every input size."""
    for i, concrete in enumerate(_inputs(shape)):
        a = random_array(dtype, concrete, seed=i)
        (actual,) = session.run(None, {"x": a})
        expected = np.tile(a, reps)
        assert same_bytes(actual, expected), (concrete, actual, expected)
        full = (1,) * (a.ndim - len(np.atleast_1d(reps))) + tuple(np.atleast_1d(reps))
        promoted = a.reshape((1,) * (len(full) - a.ndim) + a.shape)
        node = ort_session(dtype, 13, promoted.ndim)
        (by_node,) = node.run(None, {"x": promoted, "repeats": np.array(full, dtype=np.int64)})
        assert same_bytes(actual, by_node), (concrete, actual, by_node)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "reps"), CASES, ids=str)
def test_export_tile(shape: tuple[int | str, ...], reps: Any, dtype: str) -> None:
    _, session = _run_exported(lambda x: xtile.tile(x, reps), shape, reps, dtype)
    _check(session, shape, reps, dtype)


@pytest.mark.parametrize(("shape", "reps"), [c for c in CASES if isinstance(c[1], tuple)], ids=str)
def test_export_onnx_layers(shape: tuple[int | str, ...], reps: tuple[int, ...]) -> None:
    """`xtile.onnx.tile` needs only the rank, which is static; Tile-1 too."""
    if len(reps) != len(shape):
        with pytest.raises(ValueError, match="does not broadcast"):
            xtile.onnx.tile(ndx.argument(shape=shape, dtype=ndx.float32), reps)
        return
    _, session = _run_exported(lambda x: xtile.onnx.tile(x, reps), shape, reps, "float32")
    _check(session, shape, reps, "float32")
    axis, tiles = next(((i, r) for i, r in enumerate(reps) if r != 1), (0, 1))
    along = tuple(tiles if i == axis else 1 for i in range(len(shape)))
    _, session = _run_exported(
        lambda x: xtile.onnx.tile_v1(x, tiles, axis), shape, along, "float32"
    )
    _check(session, shape, along, "float32")


def test_static_shape_kept() -> None:
    """Every dimension `xtile.tile_shape` knows, the lazy result knows."""
    x = ndx.argument(shape=("N", 3), dtype=ndx.float32)
    assert xtile.tile(x, (2, 2)).shape == (None, 6)
    assert xtile.tile(x, (4, 1, 0)).shape == (4, None, 0)
    x = ndx.argument(shape=("N", 1, "M"), dtype=ndx.float32)
    assert xtile.tile(x, (3, 2, 2, 3)).shape == (3, None, 2, None)


def test_lazy_repeats_refused() -> None:
    x = ndx.argument(shape=("N", 3), dtype=ndx.float32)
    reps = ndx.argument(shape=(2,), dtype=ndx.int64)
    with pytest.raises(TypeError, match=r"must be static .* holds no values"):
        xtile.tile(x, reps)


def test_eager_repeats_array() -> None:
    x = ndx.argument(shape=("N", 3), dtype=ndx.float32)
    y = xtile.tile(x, ndx.asarray(np.array([2, 2])))
    assert y.shape == (None, 6)


def test_out_refused() -> None:
    x = ndx.asarray(np.ones((2, 3), dtype=np.float32))
    with pytest.raises(TypeError, match="lazy"):
        xtile.tile(x, 2, out=ndx.asarray(np.ones((2, 6), dtype=np.float32)))


@pytest.mark.parametrize(("shape", "reps"), CASES, ids=str)
def test_one_tile_node(shape: tuple[int | str, ...], reps: Any) -> None:
    """The graph is ONNX's own Tile: one node, with nothing but constants and rank padding."""
    x = ndx.argument(shape=shape, dtype=ndx.float32)
    tiles = [xtile.tile(x, reps)]
    if len(np.atleast_1d(reps)) == len(shape):
        tiles.append(xtile.onnx.tile(x, reps))
    for y in tiles:
        ops = [node.op_type for node in ndx.build({"x": x}, {"y": y}).graph.node]
        assert ops.count("Tile") == 1, ops
        assert set(ops) <= {"Tile", "Constant", "Identity", "Unsqueeze", "Gather"}, ops
