"""
Every input layout, through the public API only: bit for bit the native tile, first and cached call.

API.md, "Layouts and identity": zero, negative and Fortran strides, byte-swapped and unaligned
NumPy arrays, PyTorch conj/neg views, inference tensors, ``channels_last`` and storage offsets
all give the native tile's bits, on ``x``'s device whatever the default device, with ``x``'s
dtype object itself, on the first call and on every cached one. Layouts xtile cannot take raise
``TypeError`` naming the layout.
"""

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xtile

torch = pytest.importorskip("torch")

MiB = 2**20


# --------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def default_device(device: str) -> Iterator[None]:
    """Run the block with ``torch.set_default_device(device)``; always restore it."""
    torch.set_default_device(device)
    try:
        yield
    finally:
        torch.set_default_device(None)


def _torch_bits(t: Any) -> Any:
    """The tensor's logical values, conj/neg resolved, as integers of the same itemsize."""
    t = t.detach().resolve_conj().resolve_neg().contiguous()
    if t.is_complex():
        t = torch.view_as_real(t).contiguous()
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    if t.is_floating_point():
        return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t


def assert_torch_same(y: Any, ref: Any) -> None:
    """``y`` equals the native tile ``ref`` bit for bit (values after conj/neg resolution)."""
    assert y.shape == ref.shape
    assert y.dtype == ref.dtype
    assert y.device == ref.device
    if not (y.is_floating_point() or y.is_complex()):  # NaN != NaN: floats by their bits
        assert torch.equal(
            y.detach().resolve_conj().resolve_neg(), ref.detach().resolve_conj().resolve_neg()
        )
    assert torch.equal(_torch_bits(y), _torch_bits(ref))


def assert_numpy_same(y: Any, ref: Any, x: Any) -> None:
    """``y`` equals the native tile ``ref`` bit for bit and keeps ``x``'s dtype object."""
    assert type(y) is np.ndarray
    assert y.shape == ref.shape
    assert y.dtype == x.dtype
    assert y.dtype.metadata == x.dtype.metadata
    assert y.dtype.isalignedstruct == x.dtype.isalignedstruct
    assert y.dtype.str == x.dtype.str
    assert _numpy_bits(y) == _numpy_bits(ref)
    assert y.flags.writeable


def _numpy_bits(a: Any) -> Any:
    """The array's items, bit for bit; a struct's padding is left out (NumPy leaves it unset)."""
    if a.dtype.kind == "O":
        return a.ravel().tolist()
    if a.dtype.names is not None:
        return [_numpy_bits(a[name]) for name in a.dtype.names]
    return a.tobytes()


def _torch_span(t: Any) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def assert_torch_disjoint(y: Any, x: Any) -> None:
    """``y``'s storage does not overlap ``x``'s (an empty ``y`` holds nothing to share)."""
    (y0, y1), (x0, x1) = _torch_span(y), _torch_span(x)
    if y.numel() and y1 > y0 and x1 > x0:
        assert y1 <= x0 or x1 <= y0, "the result shares memory with x"


# --------------------------------------------------------------------------- regressions


# Guards: an expanded tensor (stride 0 on its last axis) whose inner block is 2, 4 or 8 bytes
# was viewed as a wider integer, which PyTorch refuses for a zero stride (RuntimeError).
@pytest.mark.parametrize(
    ("dtype", "base", "shape", "reps"),
    [
        (torch.float32, (1, 2), (3, 2), (2, 2)),  # the user's report
        (torch.int16, (1, 2), (3, 2), (2, 2)),
        (torch.int16, (1, 4), (5, 4), (2, 50)),
        (torch.int32, (1, 2), (3, 2), (3, 1000)),
        (torch.int32, (2, 1, 2), (2, 3, 2), (2, 50)),
        (torch.int16, (2, 1, 2), (2, 3, 2), (3, 1, 1000)),
        (torch.float64, (3, 1), (3, 4), (2, 2)),
        (torch.float64, (1, 2), (6, 2), (1, 3000)),
        (torch.int16, (1,), (4,), (20000,)),
        (torch.int32, (2, 1), (2, 2), (500, 1)),
    ],
)
@pytest.mark.usefixtures("impl")
def test_torch_expanded_short_inner_block(
    dtype: Any, base: tuple[int, ...], shape: tuple[int, ...], reps: tuple[int, ...]
) -> None:
    x = (torch.arange(int(np.prod(base))) + 1).to(dtype).reshape(base).expand(shape)
    ref = torch.tile(x, reps)
    for _ in range(2):
        assert_torch_same(xtile.tile(x, reps), ref)


# Guards: a conj-bit complex tensor (complex32 too) gives the native tile's values, not a
# RuntimeError from a dtype-changing view of a conjugate view.
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning")
@pytest.mark.parametrize("dtype", [torch.complex32, torch.complex64, torch.complex128])
@pytest.mark.parametrize("reps", [(1, 3), (2, 50), (1, 3000)])
@pytest.mark.usefixtures("impl")
def test_torch_conj_view(dtype: Any, reps: tuple[int, ...]) -> None:
    if dtype == torch.complex32:
        x = torch.ones(4, 2, dtype=dtype).conj()
    else:
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(4, 2, dtype=dtype, generator=gen).conj()
    assert x.is_conj()
    ref = torch.tile(x, reps)
    for _ in range(2):
        assert_torch_same(xtile.tile(x, reps), ref)


# Guards: a neg-bit tensor (the imaginary part of a conj view) gives the native tile's values.
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning")
@pytest.mark.parametrize("dtype", [torch.complex32, torch.complex64, torch.complex128])
@pytest.mark.parametrize("reps", [(1, 3), (2, 50), (1, 3000)])
@pytest.mark.usefixtures("impl")
def test_torch_neg_view(dtype: Any, reps: tuple[int, ...]) -> None:
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(4, 2, dtype=torch.complex64, generator=gen).to(dtype).conj().imag
    assert x.is_neg()
    ref = torch.tile(x, reps)
    for _ in range(2):
        assert_torch_same(xtile.tile(x, reps), ref)


# Guards: with another default device (meta) the result stays on x's device (cpu) and holds
# the tile; a path once allocated its output on the default device.
@pytest.mark.parametrize(
    ("shape", "reps"),
    [((4000, 3), (1, 100)), ((1000, 1000), (4, 4)), ((3,), (39639,)), ((2, 3, 4, 5), (10,) * 4)],
)
@pytest.mark.usefixtures("impl")
def test_torch_default_device_meta(shape: tuple[int, ...], reps: tuple[int, ...]) -> None:
    x = torch.arange(int(np.prod(shape)), dtype=torch.float32, device="cpu").reshape(shape)
    ref = torch.tile(x, reps)
    for _ in range(2):
        with default_device("meta"):
            y = xtile.tile(x, reps)
        assert y.device == x.device
        assert_torch_same(y, ref)


# Guards: an empty input tiled by repeats whose product overflows int64 is legal (the output has
# no elements, as numpy.tile says), not "array is too big".
@pytest.mark.usefixtures("impl")
def test_numpy_empty_with_huge_repeats() -> None:
    x = np.zeros((0, 3))
    reps = (2**32, 2**32)
    assert np.tile(x, reps).shape == (0, 12884901888)
    for _ in range(2):
        y = xtile.tile(x, reps)
        assert y.shape == (0, 12884901888)
        assert y.dtype == x.dtype


@pytest.mark.usefixtures("impl")
def test_array_api_strict_empty_with_huge_repeats() -> None:
    xps = pytest.importorskip("array_api_strict")
    x = xps.zeros((0, 3))
    for _ in range(2):
        y = xtile.tile(x, (2**32, 2**32))
        assert y.shape == (0, 12884901888)
        assert y.dtype == x.dtype
        assert type(y) is type(x)


# Guards: a plan cached for a plain dtype of the same layout must not replace x's dtype object:
# metadata and struct alignment survive on cached calls too.
@pytest.mark.parametrize(
    ("shape", "reps"),
    [
        ((2, 3), (2, 2)),
        ((5,), (3,)),
        ((100, 3), (1, 2000)),
        ((7,), (10000,)),
        ((3, 1, 4), (7, 1, 40)),
    ],
)
@pytest.mark.parametrize(
    ("dtype", "plain"),
    [
        (np.dtype(np.float64, metadata={"m": 1}), np.dtype(np.float64)),
        (np.dtype(np.int32, metadata={"m": 2}), np.dtype(np.int32)),
        (
            np.dtype([("a", "u1"), ("b", "<i4")], align=True),
            np.dtype(
                {"names": ["a", "b"], "formats": ["u1", "<i4"], "offsets": [0, 4], "itemsize": 8}
            ),
        ),
        (
            np.dtype(
                {"names": ["a", "b"], "formats": ["u1", "<i4"], "offsets": [0, 4], "itemsize": 8}
            ),
            np.dtype([("a", "u1"), ("b", "<i4")], align=True),
        ),
    ],
    ids=["metadata-f8", "metadata-i4", "aligned-struct", "unaligned-struct"],
)
@pytest.mark.usefixtures("impl")
def test_numpy_dtype_identity_after_cached_plan(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: np.dtype, plain: np.dtype
) -> None:
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    xtile.tile(raw.view(plain).reshape(shape), reps)  # a plan for this layout, plain dtype
    x = raw.copy().view(dtype).reshape(shape)
    assert x.dtype.metadata == dtype.metadata
    ref = np.tile(x, reps)
    for _ in range(2):
        y = xtile.tile(x, reps)
        assert y.dtype.metadata == x.dtype.metadata
        assert y.dtype.isalignedstruct == x.dtype.isalignedstruct
        assert_numpy_same(y, ref, x)


# Guards: an empty output of a tensor that requires grad stays in the graph, as torch.tile's
# does (else `y.sum().backward()` fails: "element 0 of tensors does not require grad").
@pytest.mark.parametrize(("shape", "reps"), [((3,), (0,)), ((2, 3), (0, 1)), ((0, 3), (2, 2))])
@pytest.mark.usefixtures("impl")
def test_torch_empty_output_keeps_autograd(shape: tuple[int, ...], reps: tuple[int, ...]) -> None:
    x = torch.ones(shape, requires_grad=True)
    assert torch.tile(x, reps).grad_fn is not None
    for _ in range(2):
        y = xtile.tile(x, reps)
        assert y.requires_grad
        assert y.grad_fn is not None
        y.sum().backward()
        assert torch.equal(x.grad, torch.zeros(shape))


# Guards: an out= made under torch.inference_mode() cannot be written outside it; xtile must say
# so (TypeError/ValueError) before writing, not fail with PyTorch's RuntimeError.
@pytest.mark.parametrize(("shape", "reps"), [((2, 3), (1, 2)), ((100, 30), (1, 200))])
@pytest.mark.usefixtures("impl")
def test_torch_out_inference_tensor(shape: tuple[int, ...], reps: tuple[int, ...]) -> None:
    with torch.inference_mode():
        out = torch.zeros(shape[0] * reps[0], shape[1] * reps[1])
    for _ in range(2):
        with pytest.raises((TypeError, ValueError), match="out"):
            xtile.tile(torch.ones(shape), reps, out=out)
        assert torch.count_nonzero(out) == 0


# Guards: an out= whose elements share memory (expanded) is a ValueError naming `out`.
@pytest.mark.parametrize(("width", "rows"), [(8, 6), (800, 600)])
@pytest.mark.usefixtures("impl")
def test_torch_self_overlapping_out(width: int, rows: int) -> None:
    out = torch.zeros(1, width).expand(rows, width)
    for _ in range(2):
        with pytest.raises(ValueError, match="out"):
            xtile.tile(torch.ones(1, width), (rows, 1), out=out)
        assert torch.count_nonzero(out) == 0


# Guards: torch.compile with repeats given as a tensor says repeats must be static, instead of
# Dynamo's data-dependent guard error.
@pytest.mark.filterwarnings("ignore")
def test_torch_compile_tensor_repeats_says_static() -> None:
    torch._dynamo.reset()

    def f(a: Any, r: Any) -> Any:
        return xtile.tile(a, r)

    compiled = torch.compile(f, fullgraph=True)
    try:
        with pytest.raises(Exception, match=r"(?s)repeats.{0,40}static") as info:
            compiled(torch.ones(2, 3), torch.tensor([2, 2]))
        assert "data-dependent" not in str(info.value)
    finally:
        torch._dynamo.reset()


def _nested_strided() -> Any:
    return torch.nested.nested_tensor([torch.ones(2, 3), torch.arange(12.0).reshape(4, 3)])


def _nested_jagged() -> Any:
    return torch.nested.nested_tensor(
        [torch.ones(2, 3), torch.arange(12.0).reshape(4, 3)], layout=torch.jagged
    )


# Guards: sparse and nested tensors give the tile or a TypeError naming the layout, never an
# internal RuntimeError/NotImplementedError.
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    ("make", "word"),
    [
        (lambda: torch.eye(3).to_sparse(), "sparse"),
        (lambda: torch.eye(3).to_sparse_csr(), "sparse"),
        (lambda: torch.eye(3).to_sparse_csc(), "sparse"),
        (_nested_strided, "nested"),
        (_nested_jagged, "nested"),
    ],
    ids=["sparse_coo", "sparse_csr", "sparse_csc", "nested", "nested_jagged"],
)
@pytest.mark.usefixtures("impl")
def test_torch_sparse_and_nested(make: Any, word: str) -> None:
    x = make()
    reps = (1, 1, 2) if word == "nested" else (2, 2)
    for _ in range(2):
        try:
            y = xtile.tile(x, reps)
        except TypeError as e:
            message = str(e)
        else:
            message = ""
        if message:
            assert word in message.lower()
            continue
        if word == "nested":
            assert y.is_nested
            for got, part in zip(y.unbind(), x.unbind(), strict=True):
                assert torch.equal(got, torch.tile(part, reps[1:]))
        else:
            assert torch.equal(y.to_dense(), torch.tile(x.to_dense(), reps))


# Guards: an output that validates but cannot be allocated is xtile's MemoryError naming the
# shape asked for, on the first call and on the second (cached) one.
@pytest.mark.parametrize("library", ["torch", "numpy"])
@pytest.mark.usefixtures("impl")
def test_memory_error_on_every_call(library: str) -> None:
    x = torch.zeros(2, 3) if library == "torch" else np.zeros((2, 3), dtype=np.float32)
    shape = (2 * 2**22, 3 * 2**22)
    for _ in range(2):
        with pytest.raises(MemoryError) as info:
            xtile.tile(x, (2**22, 2**22))
        assert str(shape) in str(info.value)


_CACHED_OOM = textwrap.dedent(
    """
    import resource, sys
    import numpy as np, torch, xtile

    cases = [((2, 3), (4000, 4000)), ((1000, 1000), (10, 10)), ((3,), (40_000_000,)),
             ((2, 3, 4, 5), (10, 10, 10, 200)), ((1, 8), (2000, 5000)), ((4000, 3), (1, 10000))]
    xs = []
    for lib in ("torch", "numpy"):
        for shape, reps in cases:
            x = torch.zeros(shape) if lib == "torch" else np.zeros(shape, np.float32)
            y = xtile.tile(x, reps)  # allocates fine and caches a plan
            del y
            xs.append((lib, shape, reps, x))
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + 64 * 2**20, resource.RLIM_INFINITY))
    bad = []
    for lib, shape, reps, x in xs:
        want = str(tuple(s * r for s, r in zip(shape, reps)))
        for _ in range(2):
            try:
                xtile.tile(x, reps)
                bad.append(f"{lib} {shape} {reps}: no error")
            except MemoryError as e:
                if want not in str(e):
                    bad.append(f"{lib} {shape} {reps}: {e}")
            except BaseException as e:
                bad.append(f"{lib} {shape} {reps}: {type(e).__name__}: {e}")
    print("\\n".join(bad))
    sys.exit(1 if bad else 0)
    """
)


# Guards: a cached plan whose output can no longer be allocated (the address space is capped
# after a first successful call) raises xtile's MemoryError naming the shape, as a first call.
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_memory_error_from_cached_plan() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CACHED_OOM],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


# --------------------------------------------------------------------------- properties

OUT_LIMIT = 4 * MiB

NUMPY_DTYPES = [
    np.dtype(np.bool_),
    *(np.dtype(t) for t in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8")),
    *(np.dtype(t) for t in ("f2", "f4", "f8", "c8", "c16")),
    np.dtype(">i4"),
    np.dtype(">f8"),
    np.dtype(">c16"),
    np.dtype(np.float64, metadata={"m": 1}),
    np.dtype(np.int16, metadata={"k": "v"}),
    np.dtype([("a", "u1"), ("b", "<i4")], align=True),
    np.dtype([("a", "u1"), ("b", "<i4")]),
    np.dtype([("a", "<f8"), ("b", "u1", (3,))]),
    np.dtype("U3"),
    np.dtype("S2"),
    np.dtype(object),
]


@st.composite
def shapes_and_reps(draw: st.DrawFn, itemsize: int, max_dim: int = 5) -> Any:
    """A rank 0-4 shape and repeats with outputs from empty to about OUT_LIMIT bytes."""
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, max_dim), min_size=rank, max_size=rank)))
    n_reps = draw(st.integers(0 if rank else 1, rank + 1))
    reps = draw(st.lists(st.integers(0, 4), min_size=n_reps, max_size=n_reps))
    pattern = draw(
        st.sampled_from([None, None, (1, 3000), (500, 1), (7, 1, 40), (40, 1, 1, 3), (20000,)])
    )
    if pattern is not None:  # a big output, where the fast paths run
        reps = [1] * max(0, len(pattern) - len(reps)) + reps
        for i, r in enumerate(pattern[::-1]):
            reps[-1 - i] = max(reps[-1 - i], r)
    promoted = (1,) * (len(reps) - rank) + shape
    full_reps = [1] * (rank - len(reps)) + reps
    while True:
        size = itemsize * int(np.prod([s * r for s, r in zip(promoted, full_reps, strict=True)]))
        if size <= OUT_LIMIT:
            break
        i = int(np.argmax(full_reps))
        full_reps[i] //= 2
    reps = full_reps[len(full_reps) - len(reps) :]
    return shape, tuple(reps)


def _numpy_values(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    n = int(np.prod(shape))
    if dtype.kind == "O":
        items = [int(v) if v % 2 else str(v) for v in rng.integers(-50, 50, n)]
        out = np.empty(n, dtype=object)
        out[:] = items
        return out.reshape(shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind == "U":
        return rng.choice(np.array(["", "a", "bc", "xyz", "\u00e9\u00df"], dtype=dtype), n).reshape(
            shape
        )
    if dtype.kind == "S":
        return rng.choice(np.array([b"", b"a", b"bc", b"\x00z"], dtype=dtype), n).reshape(shape)
    raw = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@st.composite
def numpy_arrays(draw: st.DrawFn) -> Any:
    """A NumPy array of any layout: C, F, unaligned, stepped, reversed, broadcast, read-only."""
    dtype = draw(st.sampled_from(NUMPY_DTYPES))
    shape, reps = draw(shapes_and_reps(dtype.itemsize))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rank = len(shape)
    broadcast = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
    small = tuple(1 if b else s for s, b in zip(shape, broadcast, strict=True))
    steps = draw(st.lists(st.sampled_from([1, 1, 2, -1, -2]), min_size=rank, max_size=rank))
    base_shape = tuple(s * abs(k) for s, k in zip(small, steps, strict=True))
    order = draw(st.sampled_from("CF"))
    unaligned = dtype.kind != "O" and draw(st.booleans())
    values = _numpy_values(rng, dtype, base_shape)
    if unaligned:
        buffer = np.zeros(values.nbytes + 1, dtype=np.uint8)
        probe = np.empty(base_shape, dtype=dtype, order=order)
        base = np.ndarray(base_shape, dtype=dtype, buffer=buffer, offset=1, strides=probe.strides)
        base[...] = values
    else:
        base = np.array(values, dtype=dtype, order=order)
    x = base[(..., *(slice(None, None, k) for k in steps))]
    if any(broadcast):
        x = np.broadcast_to(x, shape)
    if draw(st.booleans()):
        x.flags.writeable = False
    assert x.shape == shape
    assert x.dtype == dtype
    return x, reps, draw(st.booleans())


@pytest.mark.usefixtures("impl", "slabs")
@settings(max_examples=80, deadline=None)
@given(case=numpy_arrays())
def test_numpy_layouts(case: Any) -> None:
    x, reps, twin_first = case
    before = x.copy()
    ref = np.tile(x, reps)
    if twin_first and x.dtype.kind != "O":
        # the same layout with another dtype of this itemsize first: a plan cached for it
        # must not leak its dtype (or anything else) into x's result
        plain = np.dtype(f"V{x.dtype.itemsize}") if x.dtype.names else np.dtype(x.dtype.str)
        if plain == x.dtype and plain.metadata == x.dtype.metadata:
            plain = np.dtype(f"V{x.dtype.itemsize}")
        twin = x.view(plain)
        assert_numpy_same(xtile.tile(twin, reps), np.tile(twin, reps), twin)
    for _ in range(2):  # the first call, then the one a plan cache may serve
        y = xtile.tile(x, reps)
        assert_numpy_same(y, ref, x)
        assert not np.may_share_memory(y, x)
    assert _numpy_bits(x) == _numpy_bits(before)


TORCH_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]
_COMPLEX_OF = {
    torch.float16: torch.complex32,
    torch.float32: torch.complex64,
    torch.float64: torch.complex128,
}


def _torch_values(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...], views: bool) -> Any:
    n = int(np.prod(shape))
    if n == 0:
        return torch.zeros(shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.from_numpy(rng.integers(0, 2, n).astype(bool)).reshape(shape)
    if dtype.is_floating_point or dtype.is_complex:
        size = torch.empty((), dtype=dtype).element_size()
        raw = torch.from_numpy(rng.integers(0, 256, n * size, dtype=np.uint8))
        t = raw.view(dtype).reshape(shape).clone()
        if views:  # conj/neg resolution does arithmetic: keep NaN payloads out of it
            parts = torch.view_as_real(t) if t.is_complex() else t
            parts.copy_(torch.nan_to_num(parts, nan=1.5))
        return t
    info = torch.iinfo(dtype)
    return (
        torch.from_numpy(rng.integers(info.min, info.max, n, endpoint=True))
        .to(dtype)
        .reshape(shape)
    )


@st.composite
def torch_tensors(draw: st.DrawFn) -> Any:
    """A CPU tensor of any layout and flavour, and the repeats to tile it by."""
    dtype = draw(st.sampled_from(TORCH_DTYPES))
    itemsize = torch.empty((), dtype=dtype).element_size()
    shape, reps = draw(shapes_and_reps(itemsize))
    rank = len(shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    view = draw(st.sampled_from(["none", "conj", "neg"]))
    if view == "conj" and not dtype.is_complex:
        view = "none"
    if view == "neg" and dtype not in _COMPLEX_OF:
        view = "none"
    layout = draw(
        st.sampled_from(["contiguous", "expand", "transpose", "steps", "offset", "channels_last"])
    )
    if layout == "channels_last" and rank != 4:
        layout = "contiguous"
    flavour = draw(st.sampled_from(["plain", "inference", "grad", "grad_no_grad"]))
    if flavour.startswith("grad") and not (dtype.is_floating_point or dtype.is_complex):
        flavour = "plain"
    if view == "neg" and flavour.startswith("grad"):
        flavour = "plain"  # a neg view of a leaf does not require grad itself

    def values(s: tuple[int, ...]) -> Any:
        if view == "neg":  # the imaginary part of a conj view: a neg-bit tensor
            return _torch_values(rng, _COMPLEX_OF[dtype], s, views=True)
        return _torch_values(rng, dtype, s, views=view == "conj")

    if layout == "expand":
        mask = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        small = tuple(1 if b else d for d, b in zip(shape, mask, strict=True))
        base = values(small)
    elif layout == "transpose":
        perm = draw(st.permutations(range(rank)))
        base = values(tuple(shape[p] for p in perm))
    elif layout == "steps":
        steps = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
        base = values(tuple(d * k for d, k in zip(shape, steps, strict=True)))
    elif layout == "offset":
        k = draw(st.integers(1, 5))
        base = values((int(np.prod(shape)) + k,))
    else:
        base = values(shape)

    def build(base: Any) -> Any:
        t = base
        if view == "neg":
            t = t.conj().imag
        if layout == "expand":
            t = t.expand(shape)
        elif layout == "transpose":
            t = t.permute(tuple(int(i) for i in np.argsort(perm)))
        elif layout == "steps":
            t = t[tuple(slice(None, None, k) for k in steps)]
        elif layout == "offset":
            t = t[k:].view(shape)
        elif layout == "channels_last":
            t = t.contiguous(memory_format=torch.channels_last)
        if view == "conj":
            t = t.conj()
        return t

    if flavour == "inference":
        with torch.inference_mode():
            x = build(base.clone())
        assert x.is_inference()
    elif flavour.startswith("grad"):
        leaf = base.clone().requires_grad_(True)
        x = build(leaf)
    else:
        x = build(base)
    assert x.shape == shape
    assert x.dtype == dtype
    if layout != "channels_last":  # its copy may resolve the neg bit
        assert x.is_neg() == (view == "neg")
    assert x.is_conj() == (view == "conj")
    mode = draw(st.sampled_from(["eager", "eager", "inference_mode", "meta_default"]))
    return x, reps, flavour, mode, draw(st.booleans())


# a dtype of the same itemsize, to tile a same-layout twin first (a plan cache's key)
_TWIN = {
    torch.bool: torch.uint8,
    torch.uint8: torch.int8,
    torch.int8: torch.uint8,
    torch.int16: torch.float16,
    torch.float16: torch.bfloat16,
    torch.bfloat16: torch.int16,
    torch.int32: torch.float32,
    torch.float32: torch.int32,
    torch.int64: torch.float64,
    torch.float64: torch.complex64,
    torch.complex64: torch.int64,
}


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning")
@pytest.mark.usefixtures("impl", "slabs")
@settings(max_examples=100, deadline=None)
@given(case=torch_tensors())
def test_torch_layouts(case: Any) -> None:
    x, reps, flavour, mode, twin_first = case
    with torch.no_grad():
        before = _torch_bits(x).clone()
        meta = (x.shape, x.stride(), x.storage_offset(), x.is_conj(), x.is_neg())
        ref = torch.tile(x, reps)
        if twin_first and x.dtype in _TWIN and not (x.is_conj() or x.is_neg()):
            # the same layout with another dtype of this itemsize first: a plan cached for
            # it must not leak its dtype (or anything else) into x's result
            twin = x.detach().view(_TWIN[x.dtype])
            assert_torch_same(xtile.tile(twin, reps), torch.tile(twin, reps))
    for _ in range(2):  # the first call, then the one a plan cache may serve
        if flavour == "grad":
            y = xtile.tile(x, reps)
            if y.numel():  # empty outputs: test_torch_empty_output_keeps_autograd
                assert y.requires_grad
                assert y.grad_fn is not None
        elif flavour == "grad_no_grad":
            with torch.no_grad():
                y = xtile.tile(x, reps)
            assert not y.requires_grad
        elif mode == "inference_mode":
            with torch.inference_mode():
                y = xtile.tile(x, reps)
        elif mode == "meta_default":
            with default_device("meta"):
                y = xtile.tile(x, reps)
        else:
            y = xtile.tile(x, reps)
        assert y.device == x.device
        assert y.dtype == x.dtype
        assert_torch_same(y, ref)
        assert_torch_disjoint(y, x)
    with torch.no_grad():
        assert torch.equal(_torch_bits(x), before)
    assert (x.shape, x.stride(), x.storage_offset(), x.is_conj(), x.is_neg()) == meta
