"""
The specification layers against their runtimes, for ``python -m xtile``.

`xtile.onnx.tile` against onnxruntime's Tile node (opset 13) and `xtile.openvino.tile`
against OpenVINO's Tile-1 on the CPU, on random NumPy inputs: ranks 1-3 (OpenVINO's
CPU Tile is wrong on some outputs of rank 4 and more), non-negative repeats (negative
ones can crash OpenVINO), the element types both runtimes run.
"""

import functools
import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

import xtile.onnx
import xtile.openvino

from ._backends import BackendUnavailableError, same_bits

__all__ = ["LAYERS", "check_layer", "import_openvino", "ort_session", "ov_tile"]

_DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64"]


@functools.cache
def ort_session(dtype: str, opset: int, rank: int) -> Any:
    """
    A one-node Tile model for inputs of one rank, compiled by onnxruntime for the CPU.

    Parameters
    ----------
    dtype : str
        The input's NumPy dtype name, or "str" for ONNX strings.
    opset : int
        The opset of the model (6 and later: repeats are an input).
    rank : int
        The input's rank.

    Returns
    -------
    onnxruntime.InferenceSession
        Run with ``{"x": x, "repeats": int64 vector}``.
    """
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError as e:
        msg = "onnx or onnxruntime is not installed"
        raise BackendUnavailableError(msg) from e
    elem = (
        TensorProto.STRING if dtype == "str" else helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    )
    graph = helper.make_graph(
        [helper.make_node("Tile", ["x", "repeats"], ["y"])],
        "tile",
        [
            helper.make_tensor_value_info("x", elem, [None] * rank),
            helper.make_tensor_value_info("repeats", TensorProto.INT64, [rank]),
        ],
        [helper.make_tensor_value_info("y", elem, [None] * rank)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10  # onnxruntime rejects a newer IR version than it knows
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.log_severity_level = 3  # opset 6 is legal, but onnxruntime warns about it
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def _onnxruntime(dtype: str, rank: int) -> Callable[[Any, Any], Any]:
    """onnxruntime's Tile-13 of an input of `dtype` and `rank` by an int64 repeats vector."""
    session = ort_session(dtype, 13, rank)
    return lambda x, reps: session.run(None, {"x": x, "repeats": reps})[0]


@functools.cache
def ov_tile(dtype: str, rank: int, repeats_dtype: str, n_repeats: int) -> Any:
    """
    Compile OpenVINO's opset-1 Tile, `data` and `repeats` both runtime inputs, for the CPU.

    Parameters
    ----------
    dtype : str
        The data's NumPy dtype name, or "bfloat16".
    rank : int
        The data's rank.
    repeats_dtype : str
        The repeats' NumPy integer dtype name.
    n_repeats : int
        The repeats' length.

    Returns
    -------
    openvino.CompiledModel
        Called with ``[data, repeats]``.
    """
    ov = import_openvino()
    import openvino.opset1 as ops

    element = ov.Type.bf16 if dtype == "bfloat16" else ov.Type(np.dtype(dtype))
    data = ops.parameter(ov.PartialShape([-1] * rank), element, name="data")
    repeats = ops.parameter(ov.PartialShape([n_repeats]), ov.Type(np.dtype(repeats_dtype)))
    model = ov.Model([ops.tile(data, repeats)], [data, repeats], "tile")
    return ov.Core().compile_model(model, "CPU")


def import_openvino() -> ModuleType:
    """
    OpenVINO, imported with its model converter's telemetry stubbed out.

    ``import openvino`` starts the converter's usage telemetry, which sends an event
    over the network from a forked process; where JAX runs in the same process, JAX
    warns on the fork (an error under the test suite's filters), and a fork of a
    threaded process may hang. OpenVINO's own stub takes its place where the
    telemetry package cannot be imported.

    Returns
    -------
    module
        ``openvino``.

    Raises
    ------
    BackendUnavailableError
        If OpenVINO is not installed.
    """
    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]
    try:
        return importlib.import_module("openvino")
    except ImportError as e:
        msg = "openvino is not installed"
        raise BackendUnavailableError(msg) from e


def _openvino(dtype: str, rank: int) -> Callable[[Any, Any], Any]:
    """OpenVINO's Tile-1 of an input of `dtype` and `rank` by an int64 repeats vector."""
    compiled = ov_tile(dtype, rank, "int64", rank)
    return lambda x, reps: next(iter(compiled([x, reps]).values()))


# (row name, the layer, its runtime's Tile)
LAYERS: list[tuple[str, Callable[[Any, Any], Any], Callable[[str, int], Any]]] = [
    ("xtile.onnx:onnxruntime", xtile.onnx.tile, _onnxruntime),
    ("xtile.openvino:OpenVINO", xtile.openvino.tile, _openvino),
]


def check_layer(
    layer: Callable[[Any, Any], Any], runtime: Callable[[str, int], Any], n: int, seed: int
) -> dict[str, Any]:
    """
    `n` random cases of `layer` against `runtime`, bit for bit.

    Parameters
    ----------
    layer : callable
        `xtile.onnx.tile` or `xtile.openvino.tile`.
    runtime : callable
        Builds the runtime's Tile for a dtype and rank.
    n : int
        Cases.
    seed : int
        Their seed.

    Returns
    -------
    dict
        The report's row: dtypes, cases, failures, and each failing case.
    """
    rng = np.random.default_rng([seed, 1_000])
    sessions: dict[tuple[str, int], Any] = {}
    problems = []
    for _ in range(n):
        dtype = str(rng.choice(_DTYPES))
        rank = int(rng.integers(1, 4))  # ONNX Tile's repeats are a non-empty vector
        shape = tuple(int(d) for d in rng.integers(0, 5, size=rank))
        reps = rng.integers(0, 4, size=rank).astype(np.int64)
        values = rng.standard_normal(shape) if "float" in dtype else rng.integers(0, 100, shape)
        # OpenVINO's CPU plugin computes float64 as float32: values float32 can hold
        x = np.asarray(np.asarray(values, dtype=np.float32 if dtype == "float64" else dtype), dtype)
        if (dtype, rank) not in sessions:
            sessions[dtype, rank] = runtime(dtype, rank)
        expected = sessions[dtype, rank](x, reps)
        actual = layer(x, reps)
        if not same_bits(np.asarray(actual), np.asarray(expected)):
            problems.append(f"{dtype} {shape} x {reps.tolist()}: {actual!r} != {expected!r}")
    return {
        "device": "cpu",
        "dtypes": len(_DTYPES),
        "cases": n,
        "failures": len(problems),
        "problems": problems,
    }
