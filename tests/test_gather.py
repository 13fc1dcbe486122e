"""NumPy's gather: each run of the output taken by its index among the input's runs."""

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _backends, _program, _run
from xtile._backends import numpy as numpy_backend
from xtile._cli._main import describe
from xtile._program import Copy, Program
from xtile._testing import switched_off

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


def _gathers(program: Program) -> list[Copy]:
    """The steps of `program` that gather."""
    return [s for s in program.steps if isinstance(s, Copy) and s.gather]


def _array(shape: tuple[int, ...], dtype: Any) -> Any:
    """An array of `shape` and `dtype` whose every byte is set, padding too (1 to 251)."""
    x = np.zeros(shape, dtype)
    x.view(np.uint8).reshape(-1)[:] = np.arange(x.nbytes) % 251 + 1
    return x


@pytest.mark.parametrize(("shape", "reps"), CASES, ids=str)
@pytest.mark.parametrize("dtype", ["uint8", "float16", ">i4", "complex128", PADDED], ids=str)
def test_every_gathering_program_writes_every_byte(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: Any
) -> None:
    """As a whole program, a staged one's last copy and an extended one's corner; fresh or not."""
    _each_writes_every_byte(_array(shape, dtype), reps, _gathers)


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


def test_what_a_gather_takes() -> None:
    """A C-ordered input of raw items, a C-ordered output (or corner), an index within the stage."""
    m = NUMPY.model
    x = _array((16, 4, 32, 32), "uint8")
    reps = (1, 1, 5, 6)

    def gathers(a: Any, fresh: bool = True, model: _program.Model = m, r: Any = reps) -> int:
        programs = _program.candidates(NUMPY.layout(a), r, model, fresh)
        return sum(len(_gathers(p)) for p in programs)

    assert gathers(x)
    assert not gathers(np.asfortranarray(x))  # `numpy.take` would copy it
    assert not gathers(x[:, :, ::-1])
    assert not gathers(x, fresh=False)  # a strided `out`
    assert not gathers(x.astype(object))
    assert not gathers(x, model=m._replace(gather=_program.NONE))
    # 12,000 runs in each of 4 blocks: an index of 96 KB, past the stage
    big = _array((2, 2, 1000, 16, 2), "uint8")
    assert not gathers(big, r=(4, 3, 1))
    assert gathers(big, model=m._replace(stage=1 << 17), r=(4, 3, 1))
    for program in _program.candidates(NUMPY.layout(x), reps, m, True):
        for step in _gathers(program):
            if step.region is not None:  # a corner that is one C-ordered block
                assert _corner_blocks(step, program.out_shape) == 1, describe(program)


@pytest.mark.parametrize(
    ("run", "fast"), [(32, True), (16, True), (4, True), (24, False), (3, False)], ids=str
)
def test_a_gather_is_priced_by_its_runs(run: int, fast: bool) -> None:
    """Runs of 1, 2, 4, 8, 16 or 32 bytes move as items (elements), others by call (loops)."""
    x = _array((16, 4, 32, run), "uint8")
    layout = NUMPY.layout(x)
    found = _program.candidates(layout, (1, 1, 5, 6), NUMPY.model, True)
    (program,) = [p for p in found if p.name == "gather"]
    ((kind, (loops, elements, nbytes)),) = _program.features(program, layout, NUMPY.model)
    runs = 16 * 4 * 32 * 5 * 6
    assert kind == "gather"
    assert (loops, elements) == ((0, runs) if fast else (runs, 0))
    assert nbytes == runs * run


def test_the_public_call_gathers(tmp_path: Path) -> None:
    """`xtile.tile` plans a gather here, into a fresh array and `out`; switched off, it does not."""
    x = _array((16, 4, 32, 32), "uint8")
    reps = (1, 1, 5, 6)
    want = np.tile(x, reps)
    program, _ = _run.compiled("numpy", NUMPY.layout(x), reps, True, False)
    assert program.name == "gather"
    np.testing.assert_array_equal(xtile.tile(x, reps), want)
    out = np.empty_like(want)
    assert xtile.tile(x, reps, out=out) is out
    np.testing.assert_array_equal(out, want)
    with switched_off("gather"):
        off, _ = _run.compiled("numpy", NUMPY.layout(x), reps, True, False)
        np.testing.assert_array_equal(xtile.tile(x, reps), want)
    assert not _gathers(off)
    assert "numpy.take" in describe(program)
    # a masked array's data and mask, each gathered; a memory map's data, as a plain array
    masked = np.ma.masked_greater(x, 90)
    got = xtile.tile(masked, reps)
    np.testing.assert_array_equal(got.mask, np.tile(masked.mask, reps))
    np.testing.assert_array_equal(got.data, want)
    mapped = np.memmap(tmp_path / "x", np.uint8, "w+", shape=x.shape)
    mapped[...] = x
    tiled = xtile.tile(mapped, reps)
    assert type(tiled) is np.ndarray
    np.testing.assert_array_equal(tiled, want)


def strided_corner_items(program: Program) -> list[Copy]:
    """The item copies (not gathers) of `program` into a corner that is not C-ordered."""
    return [
        s
        for s in program.steps
        if isinstance(s, Copy) and s.item and not s.gather and s.region is not None
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
    """An extended program's corner of several blocks takes its runs as items (not gathered)."""
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
