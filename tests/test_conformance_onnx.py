"""
`xtile.onnx` against the real ONNX implementations.

The onnx package's own backend test cases for Tile, and onnxruntime's Tile kernel
as an oracle on hypothesis-generated inputs, on every backend.
"""

import functools
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xtile
from xtile._testing import Backend, to_numpy
from xtile._testing._oracles import ort_session

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

# Every element type of Tile-6/13 that onnxruntime's CPU Tile kernel runs. It has no
# kernel for bfloat16 and no complex64/complex128 tensors at all (both are in T).
ORT_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "str",
]  # fmt: skip
ORT_EXAMPLES = 60  # hypothesis examples per backend


@functools.cache
def onnx_node_cases() -> dict[str, Any]:
    """The onnx package's backend test cases for Tile, by name."""
    with warnings.catch_warnings():  # collecting runs other operators' exporters too
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        return {case.name: case for case in collect_testcases("Tile")}


@pytest.mark.parametrize("name", ["test_tile", "test_tile_precomputed"])
def test_onnx_backend_case(xp: Any, device: Any, name: str) -> None:
    """Run the case's model inputs through `xtile.onnx.tile`; compare its outputs."""
    case = onnx_node_cases()[name]
    opset = next(o.version for o in case.model.opset_import if o.domain in {"", "ai.onnx"})
    for inputs, outputs in case.data_sets:
        x, repeats = inputs
        y = xtile.onnx.tile(
            xp.asarray(x, device=device), xp.asarray(repeats, device=device), opset=opset
        )
        np.testing.assert_array_equal(to_numpy(y), outputs[0], strict=True)


def test_onnx_backend_cases_are_all_run() -> None:
    """A new Tile case in the onnx package must be added above."""
    assert set(onnx_node_cases()) == {"test_tile", "test_tile_precomputed"}


def random_array(dtype: str, shape: tuple[int, ...], seed: int) -> Any:
    """Random values over the dtype's range, with infinities, NaN and -0.0 for floats."""
    rng = np.random.default_rng(seed)
    if dtype == "str":
        words = np.array(["", "a", "tile", "ÿ€", "onnx runtime"], dtype=object)
        return rng.choice(words, size=shape)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    values = np.asarray(rng.standard_normal(size=shape) * 1e3)
    specials = np.array([np.inf, -np.inf, np.nan, -0.0])
    mask = rng.random(size=shape) < 0.1
    values[mask] = rng.choice(specials, size=int(mask.sum()))
    return values.astype(dtype)


def same_bytes(actual: Any, expected: Any) -> bool:
    """Equal shapes and bytes (values for strings)."""
    if actual.shape != expected.shape:
        return False
    if expected.dtype.kind in "OUST":
        return bool(np.array_equal(actual.astype(str), expected.astype(str)))
    flat = (np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in (actual, expected))
    return bool(np.array_equal(*flat))


@settings(max_examples=ORT_EXAMPLES)
@given(data=st.data())
def test_matches_onnxruntime(
    library: Backend, xp: Any, device: Any, all_dtypes: Any, data: st.DataObject
) -> None:
    """`xtile.onnx.tile` equals onnxruntime's Tile bit for bit."""
    names = [n for n in ORT_DTYPES if n in all_dtypes or (n == "str" and "str" in all_dtypes)]
    dtype = data.draw(st.sampled_from(names), label="dtype")
    shape = data.draw(st.lists(st.integers(0, 4), max_size=4).map(tuple), label="shape")
    reps = data.draw(
        st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape)).map(tuple),
        label="repeats",
    )
    opset = data.draw(st.sampled_from([6, 12, 13, 21]), label="opset")
    as_array = data.draw(st.booleans(), label="repeats as a backend array")
    x_np = random_array(dtype, shape, data.draw(st.integers(0, 2**32 - 1)))
    expected = ort_session(dtype, opset, len(shape)).run(
        None, {"x": x_np, "repeats": np.array(reps, dtype=np.int64)}
    )[0]

    x = xp.asarray(x_np.astype(str) if dtype == "str" else x_np, device=device)
    r = xp.asarray(reps, dtype=xp.int64, device=device) if as_array else list(reps)
    actual = to_numpy(xtile.onnx.tile(x, r, opset=opset))
    assert same_bytes(actual, expected), (library, dtype, shape, reps, actual, expected)
