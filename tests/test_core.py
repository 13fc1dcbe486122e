"""The standard-only tile's cost model, and the NumPy fast path's helpers, on their own."""

import importlib
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtile import _agnostic
from xtile._lib import _tuning
from xtile._lib._typing import FastPath, Plan


@pytest.mark.parametrize(
    ("shape", "reps", "itemsize", "cuts"),
    [
        ((1000, 1000), (4, 4), 4, ()),  # long runs: copy directly
        ((4000, 3), (1, 1000), 4, ()),  # x too large to stage
        ((100, 100, 3), (10, 10, 10), 4, ()),  # x too large to stage
        ((2, 3, 4, 5), (10, 10, 10, 10), 4, ((3, 10),)),
        ((2, 2, 2, 2, 2, 2), (4, 4, 4, 4, 4, 4), 4, ((4, 4),)),
        ((2, 2, 2, 2, 2, 2), (3, 3, 3, 3, 3, 3), 4, ((4, 3), (2, 3))),  # two levels
        ((3, 1, 4, 2), (9, 7, 1, 16), 4, ((3, 16),)),
        ((8, 8), (32, 32), 4, ((1, 32),)),
        ((4, 4, 40), (8, 8, 8), 4, ((2, 8),)),
        ((4, 4, 40), (8, 8, 8), 16, ()),  # complex128: the same runs are long
        # part of one axis's repeats: the fewest divisor making 4 KiB runs
        ((3,), (39639,), 8, ((0, 181),)),  # 39639 = 3 * 73 * 181
        ((1, 21), (1, 12825), 4, ((1, 57),)),
        ((2, 1, 2), (4000, 3, 3), 1, ((1, 3), (0, 125))),  # a whole level, then part
        ((2, 1, 2), (4000, 3, 3), 4, ((1, 3),)),  # 144-byte runs copy well: no part
        ((2,), (7192,), 8, ()),  # a 16-byte word copies well: no part
        ((3,), (39631,), 8, ()),  # a prime repeat: no divisor to stage (see test_ragged)
        ((490, 1, 1, 1), (1, 1, 1, 385), 1, ()),  # a fill stays a fill
    ],
)
def test_plans(
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    itemsize: int,
    cuts: tuple[tuple[int, int], ...],
) -> None:
    assert _agnostic.stage_cuts(_plan(shape, reps), itemsize) == cuts


def test_part_run_bytes() -> None:
    """A backend stages part of a repeat below its own run bound and for its own non-words."""
    p = _plan((2, 1, 5, 1), (3344, 1, 1, 1))  # runs of 80 bytes: x, repeated
    assert _agnostic.stage_cuts(p, 8) == ((0, 76),)  # 3344 = 44 * 76
    assert _agnostic.stage_cuts(p, 8, part_run_bytes=64) == ()
    assert _agnostic.stage_cuts(p, 4, part_run_bytes=64) == ((0, 152),)  # 40-byte runs
    words = _plan((1, 2), (57942, 1))  # runs of 16 bytes: a word to NumPy, not to PyTorch
    assert _agnostic.stage_cuts(words, 8) == ()
    assert _agnostic.stage_cuts(words, 8, word_runs=frozenset({2, 4, 8})) == ((0, 261),)
    torch_fast = pytest.importorskip("xtile._fast.torch")
    assert torch_fast.FAST_PATH.part_run_bytes == _tuning.TORCH_PART_RUN_BYTES == 64
    assert torch_fast.FAST_PATH.word_runs == {2, 4, 8}


@pytest.mark.parametrize(
    ("shape", "reps", "itemsize", "cuts", "rest"),
    [
        ((3,), (39631,), 8, ((0, 171),), (0, 130 * 3)),  # 39631 = 231 * 171 + 130
        ((1, 5, 1), (1, 60013, 1), 4, ((1, 205),), (1, 153 * 5)),  # 60013 = 292 * 205 + 153
        ((4,), (11338,), 16, (), None),  # runs of 64 bytes copy well: not in parts
        ((2, 5), (3, 8009), 4, (), None),  # inside an outer repeated axis: not in parts
        ((3,), (13,), 8, (), None),  # too small to pay for two parts
        ((3,), (39639,), 8, ((0, 181),), None),  # a divisor: no rest
    ],
)
def test_ragged(
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    itemsize: int,
    cuts: tuple[tuple[int, int], ...],
    rest: tuple[int, int] | None,
) -> None:
    """Where no divisor fits, the fewest repeats for long runs, and the rest apart."""
    p = _plan(shape, reps)
    assert _agnostic.stage_cuts(p, itemsize, ragged=True) == cuts
    _, final, _ = _agnostic.staging(p, itemsize, ragged=True)
    assert final.out_shape == p.out_shape
    axis = _agnostic.rest_axis(final)
    if rest is None:
        assert axis is None
    else:
        assert axis == rest[0]
        assert p.out_shape[axis] - final.shape[axis] * final.reps[axis] == rest[1]


NUMPY_LIKE = FastPath(repeat_blocks=_tuning.NUMPY_REPEAT_BLOCKS)
TORCH_LIKE = FastPath(fill_bytes=64)


@pytest.mark.parametrize(
    ("shape", "reps", "itemsize", "fast", "block"),
    [
        # 418 x 6 x 2 complex128 (78 KiB), then copied to 51 more places
        ((1, 418, 1, 1, 2), (1, 52, 6, 1, 1), 16, NUMPY_LIKE, ((418, 1, 1, 2), (1, 6, 1, 1))),
        ((7, 5000, 1), (12, 1, 3), 1, TORCH_LIKE, ((7, 5000, 1), (1, 1, 3))),  # a 3-byte fill
        ((3, 32, 1), (15, 6, 51), 8, NUMPY_LIKE, ((3, 32, 1), (1, 6, 51))),  # 408-byte fills
        ((3, 32, 1), (15, 6, 51), 8, TORCH_LIKE, None),  # which PyTorch writes well as they are
        ((8424, 1), (3, 8), 8, TORCH_LIKE, None),  # so it does 64-byte fills
        ((1, 418, 1, 1, 2), (1, 52, 6, 1, 1), 4, NUMPY_LIKE, None),  # under 1 MiB: one copy
        ((4, 4, 4), (7, 1779, 1), 16, NUMPY_LIKE, None),  # runs of 256 bytes copy well
        # NumPy stages the other axes and repeats 32-byte blocks; PyTorch has no such pass
        ((5, 1, 2, 1, 2), (14, 1471, 1, 1, 1), 8, NUMPY_LIKE, None),
        (
            (5, 1, 2, 1, 2),
            (14, 1471, 1, 1, 1),
            8,
            TORCH_LIKE,
            ((5, 1, 2, 1, 2), (1, 1471, 1, 1, 1)),
        ),
        ((400, 3), (1, 1000), 1, NUMPY_LIKE, None),  # one repeat outside: the block is the output
        ((2000, 1, 4), (30, 2, 1), 2, NUMPY_LIKE, None),  # 8-byte runs: block doubling
        ((600, 200, 1), (4, 1, 2), 1, NUMPY_LIKE, None),  # no repeat inside the outermost axis
        ((180000, 1), (3, 3), 8, NUMPY_LIKE, None),  # a block over 4 MiB
    ],
)
def test_outer_block(
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    itemsize: int,
    fast: FastPath,
    block: tuple[tuple[int, ...], tuple[int, ...]] | None,
) -> None:
    """Where the output is its first block repeated, copied from there: that block's plan."""
    got = _agnostic.outer_block(_plan(shape, reps), itemsize, fast)
    assert got == (None if block is None else _plan(*block))


def test_backends_outer_block_bounds() -> None:
    """NumPy's and PyTorch's entries carry the bounds measured for them."""
    np_fast = pytest.importorskip("xtile._fast.numpy")
    assert np_fast.FAST_PATH.repeat_blocks == _tuning.NUMPY_REPEAT_BLOCKS
    assert np_fast.FAST_PATH.fill_bytes is None  # LONG_RUN_BYTES
    torch_fast = pytest.importorskip("xtile._fast.torch")
    assert torch_fast.FAST_PATH.fill_bytes == _tuning.TORCH_FILL_BYTES
    assert torch_fast.FAST_PATH.repeat_blocks is None


@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=5),
    reps=st.lists(st.integers(1, 4), min_size=1, max_size=5),
    backend=st.sampled_from(["standard", "numpy", "torch"]),
)
def test_from_block(shape: list[int], reps: list[int], backend: str) -> None:
    """With no thresholds, every plan with a block repeated is tiled right from it."""
    np = pytest.importorskip("numpy")
    from array_api_compat import array_namespace

    n = max(len(shape), len(reps))
    p = _plan((1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(reps)) + tuple(reps))
    x = np.arange(math.prod(shape), dtype=np.int16).reshape(shape)
    if backend == "torch":
        torch = pytest.importorskip("torch")
        x = torch.asarray(x)
    copy = _agnostic.copy
    if backend != "standard":
        copy = importlib.import_module(f"xtile._fast.{backend}").FAST_PATH.copy
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_agnostic, "OUTER_MIN_BYTES", 0)
        m.setattr(_agnostic, "OUTER_MAX_RUN_BYTES", 1 << 30)
        m.setattr(_agnostic, "short_run", lambda *_: 0)
        block = _agnostic.outer_block(p, 2, FastPath(fill_bytes=1 << 30))
    if block is None:
        axis = next((i for i, d in enumerate(p.shape) if d != 1), None)
        assert (
            axis is None
            or p.reps[axis + 1 :] == (1,) * (n - axis - 1)
            or all(r == 1 for r in p.reps[: axis + 1])
        )
        return
    assert block.size * math.prod(p.reps[: n - len(block.shape) + 1]) == p.size
    y = _agnostic.from_block(x, p, block, array_namespace(x), copy)
    assert np.array_equal(np.asarray(y), np.tile(np.asarray(x), reps))


@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=7),
    reps=st.lists(st.integers(1, 9), min_size=1, max_size=7),
    itemsize=st.sampled_from([1, 2, 4, 8, 16]),
    ragged=st.booleans(),
)
def test_plan_bounds(shape: list[int], reps: list[int], itemsize: int, ragged: bool) -> None:
    """Levels go outwards, never build the output itself, and stay within the stage bound."""
    n = max(len(shape), len(reps))
    shape_t = (1,) * (n - len(shape)) + tuple(shape)
    reps_t = (1,) * (n - len(reps)) + tuple(reps)
    p = _plan(shape_t, reps_t)
    cuts = _agnostic.stage_cuts(p, itemsize, ragged=ragged)
    axes = [a for a, _ in cuts]
    assert axes == sorted(set(axes), reverse=True)
    for i, (a, r) in enumerate(cuts):
        assert r != 1
        if r == reps_t[a]:  # a whole repeat: an outer repeat is left for the output
            assert any(r != 1 for r in reps_t[:a])
        else:  # part of it: the last level, by a divisor unless ragged
            assert ragged or reps_t[a] % r == 0
            assert r < reps_t[a]
            assert i == len(cuts) - 1
        stage = math.prod(shape_t) * r * math.prod(reps_t[a + 1 :]) * itemsize
        assert stage <= _tuning.STAGE_MAX_BYTES
    last = max((i for i, r in enumerate(reps_t) if r != 1), default=-1)
    if last < 0 or math.prod(shape_t[last:]) * itemsize >= _tuning.LONG_RUN_BYTES:
        assert cuts == ()
    _, final, _ = _agnostic.staging(p, itemsize, ragged=ragged)
    assert final.out_shape == p.out_shape
    axis = _agnostic.rest_axis(final)
    for i, (d, r, m) in enumerate(zip(final.shape, final.reps, p.out_shape, strict=True)):
        assert d * r == m if i != axis else 0 < m - d * r < d


@pytest.mark.parametrize(
    ("shape", "strides", "axis"),
    [
        ((), (), (1, 0)),
        ((1, 1), (40, 8), (1, 0)),
        ((4000,), (12000,), (4000, 12000)),
        ((40, 30), (10800, 120), None),  # a partial inner axis: two strides
        ((2, 1, 3), (24, 99, 8), (6, 8)),  # the length-1 axis drops out
        ((2, 3), (48, 8), None),
    ],
)
def test_as_one_axis(
    shape: tuple[int, ...], strides: tuple[int, ...], axis: tuple[int, int] | None
) -> None:
    """NumPy's doubling copies 1-D: the outer block must be one strided axis."""
    np_fast = pytest.importorskip("xtile._fast.numpy")
    assert np_fast._as_one_axis(shape, strides) == axis


@pytest.mark.parametrize(
    ("shape", "reps", "itemsize", "run"),
    [
        ((4000, 3), (1, 1000), 4, 12),
        ((100, 100, 3), (10, 10, 10), 4, 12),
        ((4000, 8), (1, 100), 4, 0),  # 32 bytes: the broadcast copy is as fast
        ((1000, 1), (1, 4000), 4, 0),  # single elements: a fill loop
        ((3, 4), (1, 1), 8, 0),  # nothing repeated
    ],
)
def test_short_run(shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, run: int) -> None:
    assert _agnostic.short_run(_plan(shape, reps), itemsize) == run


def test_numpy_doubles_only_byte_loops() -> None:
    """NumPy copies runs of 2, 4, 8, 16 bytes as words: faster than doubling."""
    import numpy as np

    from xtile._fast.numpy import FAST_PATH

    assert FAST_PATH.double is not None
    x = np.arange(4000 * 6, dtype=np.uint8).reshape(4000, -1)
    plan = _plan((4000, 6), (1, 100))
    ref = np.tile(x, (1, 100))
    for run in (2, 4, 8, 16):
        assert FAST_PATH.double(x, plan, run) is None
    for run in (3, 6, 12, 20, 24):
        assert np.array_equal(FAST_PATH.double(x, plan, run), ref)
    assert FAST_PATH.double(x.astype(object), plan, 12) is None


def _plan(shape: tuple[int, ...], reps: tuple[int, ...]) -> Plan:
    out = tuple(d * r for d, r in zip(shape, reps, strict=True))
    return Plan(shape, reps, out, math.prod(out))
