"""
The path of a device array, shown where no GPU is: PyTorch's ``meta`` device.

PyTorch's ``meta`` tensors have shapes and dtypes but no data, so any
host transfer or read of values would fail on them: run through the same standard
path ("standard") and PyTorch's own ("fast"), every operation that reaches PyTorch
is recorded, and must be views, allocations and copies (or PyTorch's own tile, where
the device's prices pick it): the standard path makes one copy.
"""

from typing import Any

import pytest

import xtile
import xtile._backends

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

pytestmark = pytest.mark.usefixtures("impl")  # PyTorch's fast path, then the standard tile

# views; a dtype view (and its alias, a detach) where PyTorch moves a device's runs as integers
VIEWS = {
    "aten.view.default",
    "aten.expand.default",
    "aten._unsafe_view.default",
    "aten.view.dtype",
    "aten.detach.default",
}
COPY_ = "aten.copy_.default"  # the standard copy: the view assigned into a new tensor
COPIES = {"aten.clone.default", COPY_}
# a program of several steps (priced by the device's model) makes its output, then slices it
ALLOCATIONS = {"aten.empty.memory_format", "aten.slice.Tensor", "aten.unsqueeze.default"}
CASES = [
    ((1000, 3), (4, 4)),
    ((1000, 1), (1, 4000)),  # a broadcast: one fill
    ((2, 3, 4, 5), (10, 10, 10, 10)),  # staged on the CPU
    ((100, 100, 3), (10, 10, 10)),  # extended inside the output on the CPU
    ((10**6, 10**3), (10, 10)),  # 400 GB: meta tensors allocate nothing
    ((2, 3), (1, 1)),
    ((3,), (2, 1, 2)),
]


class _Record(TorchDispatchMode):
    """Every ATen operation run while active."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("dtype", ["float32", "int8", "complex128", "bool"])
@pytest.mark.parametrize(("shape", "reps"), CASES, ids=str)
def test_meta_views_and_copies_only(shape: Any, reps: Any, dtype: str) -> None:
    x = torch.empty(shape, dtype=getattr(torch, dtype), device="meta")
    with _Record() as record:
        y = xtile.tile(x, reps)
    assert y.device.type == "meta"
    assert y.dtype == x.dtype
    assert tuple(y.shape) == xtile.tile_shape(shape, reps)
    writes = [op for op in record.ops if op not in VIEWS | ALLOCATIONS]
    assert writes, record.ops
    assert set(writes) <= COPIES | {"aten.repeat.default"}, record.ops  # none reads values


def test_meta_non_contiguous(impl: str) -> None:
    x = torch.empty((300, 200), device="meta").T[:, ::2]
    with _Record() as record:
        y = xtile.tile(x, (3, 2))
    assert y.shape == (600, 300)
    writes = ["aten.clone.default"] if impl == "fast" else ["aten.empty.memory_format", COPY_]
    assert [op for op in record.ops if op not in VIEWS] == writes, record.ops


def test_meta_parameter_of_a_module(impl: str) -> None:
    """A model built on the meta device (before loading weights): its nn.Parameter."""
    layer = torch.nn.Linear(300, 200, device="meta")
    with _Record() as record:
        y = xtile.tile(layer.weight, (2, 3))
    assert y.device.type == "meta"
    assert y.shape == (400, 900)
    assert y.requires_grad
    # one op writes the output: for a Parameter (a subclass), PyTorch's own tile's
    writes = ["aten.repeat.default"] if impl == "fast" else ["aten.empty.memory_format", COPY_]
    assert [op for op in record.ops if op not in VIEWS] == writes, record.ops


def test_meta_out() -> None:
    """A meta `out` has no memory, so it never overlaps the input (every address reads 0)."""
    x = torch.empty(4, 8, device="meta")
    out = torch.empty(8, 16, device="meta")
    assert xtile.tile(x, (2, 2), out=out) is out


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize(
    ("shape", "reps", "ops"),
    [
        # no axis pairs: `expand` prepends the missing axis; the copy has the output's shape
        ((64,), (8, 1), ["aten.expand.default", "aten.clone.default"]),
        ((5, 1), (1, 3), ["aten.expand.default", "aten.clone.default"]),
        # axes pair: the input gains length-1 axes, and reshape copies
        ((8, 8), (2, 2), ["aten.view.default", "aten.expand.default", "aten.clone.default",
                          "aten._unsafe_view.default"]),
    ],
)  # fmt: skip
def test_torch_copy_calls(shape: Any, reps: Any, ops: list[str], device: str) -> None:
    """PyTorch's one copy makes no call it does not need (each is host time on a GPU)."""
    from xtile._backends.torch import _copy
    from xtile._program import Copy

    x = torch.arange(int(torch.tensor(shape).prod()), device=device).reshape(shape)
    full = (1,) * (len(reps) - len(shape)) + tuple(shape)
    copy = _copy(Copy(full, reps))
    with _Record() as record:
        y = copy(x, None)
    assert record.ops == ops
    out = torch.empty(tuple(y.shape), dtype=x.dtype, device=device)
    with _Record() as record:
        assert copy(x, out) is out
    assert [op for op in record.ops if op not in VIEWS] == [COPY_], record.ops
    if device == "cpu":
        assert y.is_contiguous()
        assert torch.equal(y, torch.tile(x, reps))
        assert torch.equal(out, y)
