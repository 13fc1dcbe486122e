"""
Symbolic sizes: exported and traced programs (JAX, PyTorch), one ONNX Tile node.

Each exported program is run at several sizes and compared with `numpy.tile`.
"""

import collections
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import xtile

# the function, the input it tiles (`b` has the symbolic leading size `n`), the repeats of `n`
CASES = [
    pytest.param(xtile.tile, "b", lambda _: 2, id="int"),
    pytest.param(xtile.tile, "a", lambda _: (2, 3), id="tuple"),
    pytest.param(xtile.tile, "a", lambda n: (n, 1), id="from a size"),
    pytest.param(xtile.tile, "b", lambda n: n, id="a size alone"),
    pytest.param(xtile.onnx.tile, "b", lambda n: (1, n), id="onnx"),
    pytest.param(xtile.openvino.tile, "b", lambda n: (n, 2), id="openvino"),
]
SIZES = (2, 3, 7)


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """`a` of a fixed shape, `b` of `n` rows."""
    return np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(3 * n, dtype=np.float32).reshape(
        n, 3
    )


def _call(tile: Callable[..., Any], which: str, reps: Callable[[Any], Any]) -> Any:
    """The tile of `a` or `b`, by repeats read from `b`'s leading size."""
    return lambda a, b: tile(a if which == "a" else b, reps(b.shape[0]))


def _expected(which: str, reps: Callable[[Any], Any], n: int) -> np.ndarray:
    """`numpy.tile` at leading size `n`."""
    a, b = _inputs(n)
    return np.tile(a if which == "a" else b, reps(n))


@pytest.mark.parametrize(("tile", "which", "reps"), CASES)
def test_jax_export(tile: Any, which: str, reps: Any) -> None:
    """`jax.export` with a symbolic leading size: the exported module runs at every size."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import export

    b = export.symbolic_shape("b")[0]
    specs = (jax.ShapeDtypeStruct((2, 3), jnp.float32), jax.ShapeDtypeStruct((b, 3), jnp.float32))
    call = _call(tile, which, reps)
    exported = export.export(jax.jit(call))(*specs)
    assert jax.eval_shape(call, *specs).shape == exported.out_avals[0].shape
    for n in SIZES:
        got = np.asarray(exported.call(*_inputs(n)))
        np.testing.assert_array_equal(got, _expected(which, reps, n))


def test_jax_tile_shape_of_symbols() -> None:
    """`tile_shape` and `onnx.tile_shape` take symbolic sizes, in the shape and the repeats."""
    pytest.importorskip("jax")
    from jax import export

    b, k = export.symbolic_shape("b, k")
    assert xtile.tile_shape((b, 3), 2) == (b, 6)
    assert xtile.tile_shape((b, 3), (k, b)) == (b * k, 3 * b)
    assert xtile.onnx.tile_shape((b, 3), (2, b)) == (2 * b, 3 * b)
    with pytest.raises(ValueError, match="got -1 at position 1"):
        xtile.tile_shape((b, 3), (b, -1))  # a known value keeps every check


def _torch_model(call: Any) -> Any:
    torch = pytest.importorskip("torch")

    class Model(torch.nn.Module):
        def forward(self, a: Any, b: Any) -> Any:
            return call(a, b)

    return Model()


def _torch_inputs(n: int) -> tuple[Any, Any]:
    import torch

    return tuple(torch.from_numpy(v) for v in _inputs(n))  # type: ignore[return-value]


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
@pytest.mark.parametrize(("tile", "which", "reps"), CASES)
def test_torch_export(tile: Any, which: str, reps: Any, strict: bool) -> None:
    """`torch.export` with a dynamic leading size: one `aten.tile`, right at every size."""
    model = _torch_model(_call(tile, which, reps))
    import torch

    dynamic = ({}, {0: torch.export.Dim("B")})
    program = torch.export.export(model, _torch_inputs(5), dynamic_shapes=dynamic, strict=strict)
    ops = [n.target for n in program.graph.nodes if n.op == "call_function"]
    assert ops.count(torch.ops.aten.tile.default) == 1, ops
    for n in SIZES:
        got = program.module()(*_torch_inputs(n)).numpy()
        np.testing.assert_array_equal(got, _expected(which, reps, n))


@pytest.mark.parametrize(("tile", "which", "reps"), CASES)
def test_torch_make_fx_and_compile(tile: Any, which: str, reps: Any) -> None:
    """`make_fx(tracing_mode="symbolic")` and `torch.compile(dynamic=True)`, every size."""
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx

    call = _call(tile, which, reps)
    traced = make_fx(call, tracing_mode="symbolic")(*_torch_inputs(5))
    compiled = torch.compile(call, dynamic=True, fullgraph=True)
    for n in SIZES:
        for run in (traced, compiled):
            np.testing.assert_array_equal(run(*_torch_inputs(n)).numpy(), _expected(which, reps, n))


@pytest.mark.parametrize(("tile", "which", "reps"), CASES)
def test_torch_onnx_export_one_tile_node(tile: Any, which: str, reps: Any) -> None:
    """`torch.onnx.export(dynamo=True)` with a dynamic size: one ONNX Tile, run in onnxruntime."""
    model = _torch_model(_call(tile, which, reps))
    pytest.importorskip("onnxscript")
    ort = pytest.importorskip("onnxruntime")
    import torch

    dynamic = ({}, {0: torch.export.Dim("B")})
    program = torch.onnx.export(model.eval(), _torch_inputs(5), dynamo=True, dynamic_shapes=dynamic)
    assert program is not None
    graph = program.model_proto.graph
    ops = collections.Counter(n.op_type for n in graph.node)
    # the repeats from a size are read from the graph (Shape, Gather, Concat), as for torch.tile
    assert ops["Tile"] == 1, ops
    assert not {"Expand", "Reshape"} & set(ops), ops
    session = ort.InferenceSession(program.model_proto.SerializeToString())
    names = [i.name for i in session.get_inputs()]
    for n in SIZES:
        feeds = dict(zip(names, _inputs(n), strict=True))
        np.testing.assert_array_equal(session.run(None, feeds)[0], _expected(which, reps, n))
