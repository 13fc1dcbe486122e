"""`xtile.openvino.tile` against OpenVINO's runtime Tile op, compiled for the CPU."""

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xtile
from xtile._testing import Backend, BackendUnavailableError, to_numpy
from xtile._testing._oracles import import_openvino, ov_tile

from .test_conformance_onnx import random_array, same_bytes

try:
    ov = import_openvino()
except BackendUnavailableError as e:
    pytest.skip(str(e), allow_module_level=True)

# OpenVINO has no complex types, and its CPU Tile takes no strings. Its CPU plugin
# runs int64, uint64 and float64 through int32 and float32 (float64 infinities come
# back as the float32 maximum), so for those the data are drawn from what survives
# (see `test_openvino_cpu_narrows_64_bit_data`).
OV_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
]  # fmt: skip
NARROWED = {"int64": "int32", "uint64": "uint16", "float64": "float32"}  # u64 goes via i32
REPEATS_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
OV_EXAMPLES = 60  # hypothesis examples per backend


def np_dtype(name: str) -> Any:
    """NumPy's dtype of a name, bfloat16 from ml_dtypes."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def run_openvino(x: Any, reps: Any) -> Any:
    """OpenVINO's Tile of NumPy `x` by a NumPy integer array `reps`."""
    compiled = ov_tile(x.dtype.name, x.ndim, reps.dtype.name, reps.shape[0])
    if x.dtype == np_dtype("bfloat16"):  # OpenVINO shows bfloat16 tensors as float16 bits
        tensor = ov.Tensor(ov.Type.bf16, x.shape)
        tensor.data[...] = x.view(np.float16)
        x = tensor
    return next(iter(compiled([x, reps]).values()))


def backend_array(library: Backend, xp: Any, device: Any, a: Any) -> Any:
    """`a` on the backend under test; PyTorch takes bfloat16 bits through int16."""
    if library.modname == "torch" and a.dtype == np_dtype("bfloat16"):
        import torch

        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).to(device)
    return xp.asarray(a, device=device)


@settings(max_examples=OV_EXAMPLES)
@given(data=st.data())
def test_matches_openvino(
    library: Backend, xp: Any, device: Any, all_dtypes: Any, data: st.DataObject
) -> None:
    """`xtile.openvino.tile` equals OpenVINO's Tile, promotion and negative repeats included."""
    dtype = data.draw(st.sampled_from([n for n in OV_DTYPES if n in all_dtypes]), label="dtype")
    # OpenVINO 2026.4's CPU Tile is wrong on some outputs of rank 4 or more with three or
    # more tiled axes (`test_openvino_cpu_wrong_on_rank_4`): the oracle stops at rank 3
    shape = data.draw(st.lists(st.integers(0, 4), max_size=3).map(tuple), label="shape")
    reps_dtype = data.draw(st.sampled_from(REPEATS_DTYPES), label="repeats dtype")
    # Negative repeats can crash OpenVINO (`test_negative_repeats_clamped_as_openvino`)
    reps = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3), label="repeats")
    x_np = random_array(NARROWED.get(dtype, dtype), shape, data.draw(st.integers(0, 2**32 - 1)))
    if dtype == "float64":
        x_np = np.where(np.isinf(x_np), np.float32(7.5), x_np)
    x_np = x_np.astype(np_dtype(dtype))
    r_np = np.array(reps, dtype=reps_dtype)
    expected = run_openvino(x_np, r_np)

    x = backend_array(library, xp, device, x_np)
    r = xp.asarray(r_np, device=device) if hasattr(xp, reps_dtype) else r_np
    actual = to_numpy(xtile.openvino.tile(x, r))
    assert same_bytes(actual, expected), (library, dtype, shape, reps, actual, expected)


@pytest.mark.parametrize(
    ("shape", "reps", "out_shape"),
    [
        ((2, 3, 4), [1, 2, 3], (2, 6, 12)),
        ((2, 3, 4), [5, 1, 2, 3], (5, 2, 6, 12)),
        ((5, 2, 3, 4), [1, 2, 3], (5, 2, 6, 12)),
        ((2, 3), [2, 2, 2], (2, 4, 6)),
        ((4, 2, 3), [2, 2], (4, 4, 6)),
    ],
)
def test_spec_examples_in_openvino(shape: Any, reps: Any, out_shape: Any) -> None:
    """The specification's examples give the same output in OpenVINO and xtile."""
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = run_openvino(x, np.array(reps, dtype=np.int64))
    assert expected.shape == out_shape
    assert same_bytes(xtile.openvino.tile(x, reps), expected)


def test_openvino_cpu_narrows_64_bit_data() -> None:
    """Why the oracle draws 64-bit data from the 32-bit range: OpenVINO's CPU loses the rest.

    xtile is exact for these values (Tile moves data; the specification has no
    conversion); this records the runtime's behaviour the comparison works around.
    """
    reps = np.array([2], dtype=np.int64)
    for x in [
        np.array([2**40 + 1, -(2**40)], dtype=np.int64),
        np.array([2**31 + 5], dtype=np.uint64),
        np.array([np.inf, 1 / 3], dtype=np.float64),
    ]:
        assert not same_bytes(run_openvino(x, reps), np.tile(x, 2))
        assert same_bytes(xtile.openvino.tile(x, reps), np.tile(x, 2))


@pytest.mark.parametrize(
    ("shape", "reps"),
    [((2, 2, 2, 2), (2, 2, 2)), ((2, 3, 3, 2), (3, 2, 3)), ((2, 3, 3, 2, 3), (3, 2, 3, 1))],
)
def test_openvino_cpu_wrong_on_rank_4(shape: Any, reps: Any) -> None:
    """Where OpenVINO's CPU Tile gives the right shape but wrong values, and xtile does not.

    Seen with OpenVINO 2026.4.1, with `repeats` a runtime input or a constant. If this
    starts failing, OpenVINO was fixed: widen `test_matches_openvino` to rank 5.
    """
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = np.tile(x, reps)
    from_openvino = run_openvino(x, np.array(reps, dtype=np.int64))
    assert from_openvino.shape == expected.shape
    assert not np.array_equal(from_openvino, expected)
    assert same_bytes(xtile.openvino.tile(x, reps), expected)


NEGATIVE_CASE = """
import sys, numpy as np
sys.modules["openvino_telemetry"] = None  # no telemetry (see import_openvino)
import openvino as ov, openvino.opset1 as ops
shape, reps = eval(sys.argv[1]), eval(sys.argv[2])
data = ops.parameter(ov.PartialShape([-1] * len(shape)), ov.Type.f32)
repeats = ops.parameter(ov.PartialShape([len(reps)]), ov.Type.i32)
compiled = ov.Core().compile_model(ov.Model([ops.tile(data, repeats)], [data, repeats]), "CPU")
x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
print(next(iter(compiled([x, np.array(reps, dtype=np.int32)]).values())).shape)
"""


@pytest.mark.parametrize(
    ("shape", "reps"),
    [((2, 3), (-1, 2)), ((2, 3), (1, -1)), ((2,), (-1,)), ((2, 3), (-1, 1, 1)), ((2, 3), (-1, -1))],
)
def test_negative_repeats_clamped_as_openvino(shape: Any, reps: Any) -> None:
    """A negative repeat counts as 0 in OpenVINO's runtime and in `xtile.openvino.tile`.

    Each case runs in its own process: OpenVINO 2026.4's CPU Tile crashes (SIGSEGV) on
    some negative repeats (two or more, a 0-D input, or after other shapes ran).
    """
    run = subprocess.run(
        [sys.executable, "-c", NEGATIVE_CASE, repr(shape), repr(reps)],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode < 0:
        pytest.xfail(f"OpenVINO crashed with signal {-run.returncode}")
    assert run.returncode == 0, run.stderr
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    assert str(tuple(xtile.openvino.tile(x, reps).shape)) == run.stdout.strip()
