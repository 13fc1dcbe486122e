"""`out=`: the tile written into an existing array, on every backend and layout."""

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import xtile
from xtile._testing import Backend, arange, assert_tile, same_bits, to_numpy

# the parity tests run the fast paths and the standard-only tile; the rest, what users run
parity = pytest.mark.usefixtures("impl")

CASES = [
    ((2, 3), (2, 2)),
    ((), (3,)),
    ((3,), ()),
    ((2, 3), (1, 1)),  # all ones: a plain copy
    ((400, 3), (1, 100)),  # short runs: doubling on NumPy and PyTorch
    ((2, 3, 4, 5), (4, 4, 4, 4)),  # staged
    ((1, 1000), (40, 1)),  # pure broadcast
    ((40, 30, 3), (2, 3, 10)),
    ((0, 3), (2, 2)),  # empty
    ((2, 1, 2), (4000, 3, 3)),  # staged, part of the outer repeat (int8)
    ((3,), (39631,)),  # a prime repeat: in two parts on NumPy and PyTorch
]


def _out(xp: Any, make: Any, shape: tuple[int, ...], dtype: Any, layout: str) -> Any:
    """A zeroed array of `shape`: C order, transposed, or every other element of a buffer."""
    if layout == "transposed":
        buf = make(np.zeros(shape[::-1]), dtype)
        return xp.permute_dims(buf, tuple(reversed(range(len(shape)))))
    if layout == "strided" and shape:
        buf = make(np.zeros((*shape[:-1], 2 * shape[-1])), dtype)
        return buf[..., ::2]
    return make(np.zeros(shape), dtype)


@parity
@pytest.mark.parametrize(("shape", "reps"), CASES, ids=str)
@pytest.mark.parametrize("layout", ["C", "transposed", "strided"])
@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
@pytest.mark.parametrize("x_layout", ["C", "transposed"])
@pytest.mark.backends(lambda b: b.mutable)
def test_writes_into_out(
    library: Backend, xp: Any, make: Any, all_dtypes: Any, shape: Any, reps: Any,
    layout: str, dtype: str, x_layout: str,
) -> None:  # fmt: skip
    if dtype not in all_dtypes:
        pytest.skip(f"{library.value} has no {dtype}")
    if x_layout == "transposed":  # a non-contiguous input of `shape`
        x = make(arange(shape[::-1]), all_dtypes[dtype])
        x = xp.permute_dims(x, tuple(reversed(range(len(shape)))))
    else:
        x = make(arange(shape), all_dtypes[dtype])
    out_shape = xtile.tile_shape(shape, reps)
    out = _out(xp, make, out_shape, all_dtypes[dtype], layout)
    y = xtile.tile(x, reps, out=out)
    assert y is out
    assert_tile(out, x, reps, xp)


@pytest.mark.parametrize(("shape", "reps"), CASES, ids=str)
@pytest.mark.backends(lambda b: not b.mutable)
def test_immutable_out_is_refused(make: Any, shape: Any, reps: Any) -> None:
    """JAX, Dask, ndonnx and sparse arrays cannot be written: `out` is refused."""
    x = make(arange(shape))
    out = make(np.zeros(xtile.tile_shape(shape, reps)))
    with pytest.raises(TypeError, match=r"immutable|lazy"):
        xtile.tile(x, reps, out=out)


@parity
def test_layers_write_into_out(library: Backend, make: Any) -> None:
    if not library.mutable:
        pytest.skip("immutable or lazy arrays: no out")
    a = arange((2, 3)).astype(np.float32)
    x = make(a)
    for tile, args, expected in [
        (xtile.onnx.tile, ([2, 2],), np.tile(a, (2, 2))),
        (xtile.onnx.tile_v1, (3, -1), np.tile(a, (1, 3))),
        (xtile.openvino.tile, ([-1, 2],), np.tile(a, (0, 2))),
        (xtile.openvino.tile, ([2, 1, 2],), np.tile(a, (2, 1, 2))),
    ]:
        out = make(np.zeros(expected.shape, dtype=np.float32))
        assert tile(x, *args, out=out) is out
        assert same_bits(to_numpy(out), expected)


@parity
@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        (lambda xp, make: make(np.zeros((4, 5)), xp.float64), ValueError, r"\(4, 5\).*\(4, 6\)"),
        (lambda xp, make: make(np.zeros((4, 6)), xp.float32), TypeError, r"float32.*float64"),
        (lambda _xp, _make: np.zeros((4, 6)).tolist(), TypeError, "list"),
    ],
    ids=["shape", "dtype", "not-an-array"],
)
def test_bad_out_is_refused_before_writing(
    library: Backend, xp: Any, make: Any, bad: Any, error: type, match: str
) -> None:
    x = make(arange((2, 3)), xp.float64)
    out = bad(xp, make)
    before = to_numpy(out) if not isinstance(out, list) else None
    if before is not None and not library.mutable:  # refused first as immutable or lazy
        error, match = TypeError, r"immutable|lazy"
    with pytest.raises(error, match=match):
        xtile.tile(x, (2, 2), out=out)
    if before is not None:
        assert same_bits(to_numpy(out), before)


@parity
def test_out_of_another_library(library: Backend, make: Any, xp: Any) -> None:
    x = make(arange((2, 3)), xp.float64)
    out = np.zeros((4, 6)) if library.modname != "numpy" else _other_library_out()
    with pytest.raises(TypeError, match="library"):
        xtile.tile(x, (2, 2), out=out)


def _other_library_out() -> Any:
    strict = pytest.importorskip("array_api_strict")
    return strict.zeros((4, 6), dtype=strict.float64)


def test_out_sharing_memory_is_refused(library: Backend, xp: Any, make: Any, impl: str) -> None:
    """Where xtile writes `out` itself (NumPy, PyTorch, CuPy) memory shared with `x` is refused."""
    if library.modname not in {"numpy", "torch", "cupy"}:
        pytest.skip("memory sharing is checked where xtile writes `out` directly")
    del impl  # the backend's check, with its primitives or the standard copy alike
    buf = make(np.arange(12.0), xp.float64)
    before = to_numpy(buf)
    with pytest.raises(ValueError, match="shares memory"):
        xtile.tile(buf[:6], 2, out=buf)
    with pytest.raises(ValueError, match="shares memory"):
        xtile.tile(buf[:6], 1, out=buf[3:9])
    assert same_bits(to_numpy(buf), before)
    # apart from each other: fine
    assert_tile(xtile.tile(buf[:6], 1, out=buf[6:]), buf[:6], 1, xp)


def test_out_on_another_device() -> None:
    strict = pytest.importorskip("array_api_strict")
    x = strict.asarray([1.0, 2.0])
    out = strict.zeros((4,), dtype=strict.float64, device=strict.Device("device1"))
    with pytest.raises(ValueError, match="device"):
        xtile.tile(x, 2, out=out)


def test_read_only_numpy_out() -> None:
    out = np.zeros((4,))
    out.flags.writeable = False
    with pytest.raises(TypeError, match="read-only"):
        xtile.tile(np.arange(2.0), 2, out=out)


def test_masked_arrays_and_out(tmp_path: Path) -> None:
    x = np.ma.masked_array([1.0, 2.0], mask=[True, False])
    with pytest.raises(TypeError, match="plain array"):
        xtile.tile(x, 2, out=np.zeros(4))
    with pytest.raises(TypeError, match="masked"):
        xtile.tile(np.arange(2.0), 2, out=np.ma.zeros(4))
    # a memory map is a fine `out`: the tile goes to the file
    out = np.memmap(tmp_path / "tile.bin", dtype=np.float64, mode="w+", shape=(4,))
    assert xtile.tile(np.arange(2.0), 2, out=out) is out
    out.flush()
    assert np.fromfile(tmp_path / "tile.bin").tolist() == [0.0, 1.0, 0.0, 1.0]


def test_torch_autograd_and_out() -> None:
    torch = pytest.importorskip("torch")
    weight = torch.nn.Parameter(torch.ones(3))
    with pytest.raises(TypeError, match="autograd"):
        xtile.tile(weight, 2, out=torch.empty(6))
    with pytest.raises(TypeError, match="autograd"):
        xtile.tile(torch.ones(3), 2, out=torch.empty(6, requires_grad=True))
    with torch.no_grad():
        out = torch.empty(6)
        assert xtile.tile(weight, 2, out=out) is out
    assert torch.equal(out, torch.ones(6))
    # a call of that layout seen: its checks of autograd skip only what the layouts tell
    assert xtile.tile(torch.ones(3), 2, out=out) is out
    with pytest.raises(TypeError, match="autograd"):  # a plain tensor (a Parameter is unplanned)
        xtile.tile(torch.ones(3, requires_grad=True), 2, out=out)
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(torch.ones(3), torch.ones(3))
        with pytest.raises(TypeError, match="autograd"):
            xtile.tile(dual, 2, out=out)
    with torch.no_grad(), pytest.raises(TypeError, match="autograd"):
        xtile.tile(torch.ones(3), 2, out=torch.empty(6).requires_grad_())


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_c_ordered_out_is_planned_as_a_fresh_output(lib: str) -> None:
    """A C-ordered `out` gets every program a fresh output gets but the native ones."""
    from xtile import _run

    a = np.arange(12000, dtype=np.float32).reshape(4000, 3)
    outs = [np.empty((4000, 3000), np.float32), np.empty((4000, 6000), np.float32)[:, ::2]]
    if lib == "torch":
        torch = pytest.importorskip("torch")
        a, outs = torch.from_numpy(a), [torch.from_numpy(o) for o in outs]
    for out, fresh in zip(outs, [True, False], strict=True):
        _run.KEPT.clear()
        _run.compiled.cache_clear()  # each key is kept on its first call only
        assert xtile.tile(a, (1, 1000), out=out) is out
        assert same_bits(to_numpy(out), np.tile(to_numpy(a), (1, 1000)))
        ((key, (program, _)),) = _run.KEPT.items()  # kept for the next call into this layout
        assert (program.name != "copy") == fresh  # the one copy: the only way into strides
        assert program.name != "native"
        shape, strides = key[-1][:2]  # `out`'s raw key: shape and strides first
        assert (tuple(shape), tuple(strides)) == (tuple(out.shape), _strides(out))


def _strides(a: Any) -> tuple[int, ...]:
    """Strides as the backend's layout counts them: bytes (NumPy), elements (PyTorch)."""
    return tuple(a.strides) if isinstance(a, np.ndarray) else tuple(a.stride())


def test_out_of_runs_moved_as_words_at_any_offset() -> None:
    """Runs moved as integers into `out`: also where `out` starts off their alignment."""
    torch = pytest.importorskip("torch")
    x = torch.arange(4, dtype=torch.int16).reshape(2, 2, 1, 1)
    reps, shape = (6, 1, 9894, 4), (12, 2, 9894, 4)
    for offset in (0, 1, 2):
        out = torch.empty(math.prod(shape) + offset, dtype=torch.int16)[offset:].view(shape)
        assert xtile.tile(x, reps, out=out) is out
        assert torch.equal(out, torch.tile(x, reps))


@pytest.mark.parametrize("bits", ["conj", "neg", "plain"])
@pytest.mark.parametrize("x_bits", ["conj", "plain"])
def test_conj_and_neg_views_into_c_ordered_out(bits: str, x_bits: str) -> None:
    """A conj or neg view as `out` or input: values, not raw bytes, reach `out`."""
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 3, dtype=torch.complex64)
    x = x.conj() if x_bits == "conj" else x
    out = torch.zeros(8, 3000, dtype=torch.complex64)
    out = {"conj": out.conj(), "neg": out.conj().imag, "plain": out}[bits]
    source = x.imag if bits == "neg" else x
    assert xtile.tile(source, (2, 1000), out=out) is out
    assert torch.equal(out, torch.tile(source, (2, 1000)))


@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_kept_out_still_checks_each_call(lib: str, strided: bool) -> None:
    """An `out` of a layout seen before skips the plan, not the checks its layout cannot tell."""

    def zeros(dtype: Any = np.float64) -> Any:
        """A (6, 4) buffer of the layout under test, and its whole memory."""
        base = np.zeros((6, 8) if strided else (6, 4), dtype)
        return (base[:, ::2] if strided else base), base

    a = np.arange(12.0).reshape(3, 4)
    (good, _), (ints, _), (buf, base) = zeros(), zeros(np.int64), zeros()
    read_only = zeros()[0]
    read_only.flags.writeable = False
    inside = base.reshape(-1)[:12].reshape(3, 4)  # a C-ordered input in `buf`'s memory
    outs: dict[str, Any] = {"read-only": read_only, "dtype": ints, "shares memory": buf}
    if lib == "torch":
        torch = pytest.importorskip("torch")
        a, good, inside = torch.from_numpy(a), torch.from_numpy(good), torch.from_numpy(inside)
        outs = {"dtype": torch.from_numpy(ints), "shares memory": torch.from_numpy(buf)}
        outs["autograd"] = torch.from_numpy(zeros()[0]).requires_grad_()
        with torch.inference_mode():
            made = torch.zeros(tuple(base.shape), dtype=torch.float64)
            outs["inference"] = made[:, ::2] if strided else made
    for _ in range(2):  # the second call finds the first's program kept
        assert xtile.tile(a, (2, 1), out=good) is good
        assert same_bits(to_numpy(good), np.tile(to_numpy(a), (2, 1)))
    for why, out in outs.items():
        before = to_numpy(out.detach() if lib == "torch" else out).copy()
        x = inside if why == "shares memory" else a  # the same layout as `a`
        with pytest.raises((TypeError, ValueError), match=why):
            xtile.tile(x, (2, 1), out=out)
        assert same_bits(to_numpy(out.detach() if lib == "torch" else out), before), why
