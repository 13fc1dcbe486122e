"""Runs moved as items of a machine word or longer: every byte written, into any output."""

import math
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _backends, _program, _run
from xtile._backends import numpy as numpy_backend
from xtile._cli._main import describe
from xtile._program import Copy, Program

NUMPY = _backends.load("numpy")
PADDED = np.dtype([("a", "u1"), ("b", "<f8")], align=True)  # 7 bytes of padding an item

CASES = [
    ((16, 4, 32, 32), (1, 1, 5, 6)),  # 32-byte runs (as uint8): numpy.take's fastest
    ((3, 4), (2, 3)),
    ((2, 3, 5), (1, 4, 1)),
    ((7,), (5,)),  # one run, the whole input
    ((100, 1), (1, 3)),  # runs of one element
    ((3, 1, 2), (2, 2, 1, 1)),  # `x` gains an axis
    ((1, 4, 29, 8), (1, 1, 4, 4)),
    ((2, 3, 4, 2), (1, 2, 3, 2)),
]


def _array(shape: tuple[int, ...], dtype: Any) -> Any:
    """An array of `shape` and `dtype` whose every byte is set, padding too (1 to 251)."""
    x = np.zeros(shape, dtype)
    x.view(np.uint8).reshape(-1)[:] = np.arange(x.nbytes) % 251 + 1
    return x


def _each_writes_every_byte(x: Any, reps: tuple[int, ...], which: Any) -> None:
    """Every candidate with steps `which` finds: `numpy.tile`'s bytes, fresh and into `out`."""
    want = np.tile(x, reps)
    found = [p for p in _program.candidates(NUMPY.layout(x), reps, NUMPY.model, True) if which(p)]
    assert found, f"no program has {which.__name__}"
    for program in found:
        call = _run.compile_program(program, NUMPY, NUMPY.xp)
        got = call(x, None)
        assert got.dtype == x.dtype, describe(program)
        assert got.shape == want.shape, describe(program)
        assert got.tobytes() == want.tobytes(), describe(program)
        out = np.zeros_like(want)
        out.view(np.uint8)[...] = 0xEE  # a byte left unwritten shows
        assert call(x, out) is out
        assert out.tobytes() == want.tobytes(), describe(program)


def _corner_blocks(step: Copy, out_shape: tuple[int, ...]) -> int:
    """The C-ordered blocks of the output that `step`'s region (a corner) is."""
    extents = [b - a for a, b in step.region or ()]
    cut = max((i for i, e in enumerate(extents) if e != out_shape[i]), default=0)
    return math.prod(extents[:cut])


def strided_corner_items(program: Program) -> list[Copy]:
    """The item copies of `program` into a corner that is not C-ordered."""
    return [
        s
        for s in program.steps
        if isinstance(s, Copy) and s.item and s.region is not None
        and _corner_blocks(s, program.out_shape) > 1
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("shape", "reps"),
    [((114, 38, 2), (3, 2, 54)), ((78, 69, 5), (1, 11, 46)), ((1, 4, 29, 8), (1, 1, 4, 4)),
     ((2, 3, 4, 2), (1, 2, 3, 2)), ((6, 5, 3), (1, 2, 4))],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("dtype", ["uint8", "float16", ">i4", "complex128", PADDED], ids=str)
def test_item_copies_into_a_strided_corner_write_every_byte(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: Any
) -> None:
    """An extended program's corner of several blocks takes its runs as items."""
    _each_writes_every_byte(_array(shape, dtype), reps, strided_corner_items)


@pytest.mark.parametrize("corner", [False, True], ids=["fresh", "corner"])
def test_runs_as_items_go_by_index_into_a_corner_only(
    monkeypatch: pytest.MonkeyPatch, corner: bool
) -> None:
    """NumPy's runs as items: a fill of 2-4 by index into a corner (in cache), else one pass."""
    passes: list[tuple[int, ...]] = []
    real = numpy_backend._by_index
    monkeypatch.setattr(
        numpy_backend, "_by_index", lambda t, s: (passes.append(t.shape), real(t, s))
    )
    x = _array((3, 1, 8, 64), "float32")
    reps = (1, 57, 1, 3)  # runs of 256 bytes, each written 3 times in a row: a fill
    region = tuple((0, d * r) for d, r in zip(x.shape, reps, strict=True)) if corner else None
    copy = NUMPY.copy(Copy(x.shape, reps, region, item=256))  # type: ignore[misc]
    out = copy(x, np.empty((3, 57, 8, 192), np.float32) if corner else None)
    np.testing.assert_array_equal(out, np.tile(x, reps))
    assert passes == ([(3, 57, 8, 3)] if corner else [])


@pytest.mark.parametrize(
    ("dtype", "moved"),
    [("complex64", "u8"), (">c8", "u8"), ("complex128", "c16"), ("bool", "?"), (PADDED, "V16")],
    ids=str,
)
def test_numpy_moves_complex64_as_uint64_and_padding_as_bytes(dtype: Any, moved: str) -> None:
    """NumPy fills complex64 items 1.6 times slower than uint64 ones (a view costs a small call
    0.5 us); padding must move too."""
    x = np.zeros((3, 2), dtype)
    assert numpy_backend._whole_items(x, True).dtype == np.dtype(moved)  # into a fill
    assert numpy_backend._whole_items(x).dtype == np.dtype(moved if moved == "V16" else dtype)
    assert numpy_backend._whole_items(x.astype(object), True).dtype == object


@pytest.mark.parametrize("dtype", ["<c8", ">c8"])
@pytest.mark.parametrize("into", ["fresh", "C", "F", "strided"])
def test_complex64_fills_keep_every_byte(dtype: str, into: str) -> None:
    """Complex64 fills move as uint64: NaN payloads and -0 come out as `numpy.tile` writes them."""
    bits = np.array([0x7FC00001_80000000, 0x00000001_7F800001, 1 << 63], "<u8")
    for shape, reps in [
        ((), (2,)),
        ((3, 1), (2, 5)),
        ((4, 3, 1), (1, 2, 32)),
        ((2, 0, 1), (1, 1, 4)),
    ]:
        x = np.resize(bits, shape).view("<c8").astype(dtype)  # a cast keeps the bit patterns
        want = np.tile(x, reps)
        out = {
            "fresh": None,
            "C": np.empty(want.shape, dtype),
            "F": np.empty(want.shape, dtype, order="F"),
            "strided": np.empty((*want.shape, 2), dtype)[..., 0],
        }[into]
        got = xtile.tile(x, reps, out=out)
        assert got.dtype == want.dtype
        assert np.ascontiguousarray(got).tobytes() == want.tobytes(), (shape, reps)
