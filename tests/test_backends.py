"""
Each backend and device: present here, or skipped once with why.

The suite runs its backend tests on the present backends only (conftest's
`pytest_generate_tests`), so an absent one (CUDA without a GPU, CuPy not installed)
shows as one skip here, not as one skip per test.
"""

import numpy as np
import pytest

import xtile
import xtile._backends
import xtile._run
from xtile._testing import Backend, same_bits, to_numpy

from .conftest import absent


@pytest.mark.parametrize("backend", list(Backend), ids=lambda b: b.value)
def test_backend(backend: Backend) -> None:
    xp, device = backend.load_or_skip()
    assert backend not in absent()
    x = backend.asarray(np.arange(6).reshape(2, 3), xp, device)
    assert same_bits(to_numpy(xtile.tile(x, (2, 1))), np.tile(np.arange(6).reshape(2, 3), (2, 1)))


def test_cupy_one_copy_kept_and_out_apart() -> None:
    """A small CuPy tile: one copy, kept per layout; `out` is refused on `x`'s memory."""
    cp = pytest.importorskip("cupy")
    Backend.CUPY.load_or_skip()
    base = cp.arange(24, dtype=cp.float32).reshape(4, 6)
    x = base[:, ::2]
    y = xtile.tile(x, (2, 3))
    assert y.flags.c_contiguous
    assert same_bits(to_numpy(y), np.tile(to_numpy(x), (2, 3)))
    layout = xtile._backends.load("cupy").layout(x)  # type: ignore[misc]
    program, _ = xtile._run.KEPT[("cupy", layout, (2, 3), True, frozenset())]
    assert [type(s).__name__ for s in program.steps] == ["Copy"]
    for out in (cp.zeros((8, 9), cp.float32), cp.zeros((9, 8), cp.float32).T):
        assert xtile.tile(x, (2, 3), out=out) is out
        assert same_bits(to_numpy(out), to_numpy(y))
    with pytest.raises(ValueError, match="shares memory"):
        xtile.tile(x, (1, 1), out=base[:, ::2])


def test_cupy_out_apart_across_owners() -> None:
    """Two CuPy arrays over one buffer by DLPack (two owners): an overlapping `out` is refused."""
    cp = pytest.importorskip("cupy")
    Backend.CUPY.load_or_skip()
    base = cp.arange(100, dtype=cp.float32)
    x, out = cp.from_dlpack(base[:50]), cp.from_dlpack(base[10:60])
    with pytest.raises(ValueError, match="shares memory"):
        xtile.tile(x, 1, out=out)
    assert same_bits(to_numpy(base), np.arange(100, dtype=np.float32))  # nothing written


def test_cupy_moves_long_runs_as_16_byte_items() -> None:
    """A big CuPy tile by GPU prices: runs as `complex128`; unaligned, element by element."""
    cp = pytest.importorskip("cupy")
    Backend.CUPY.load_or_skip()
    a = np.arange(1001 * 1000, dtype=np.float32)
    flat = cp.asarray(a)
    for start in (0, 1):  # 4 bytes off: no 16-byte items, the same program
        x = flat[start : start + 10**6].reshape(1000, 1000)
        want = np.tile(a[start : start + 10**6].reshape(1000, 1000), (4, 4))
        layout = xtile._backends.load("cupy").layout(x)  # type: ignore[misc]
        for out in (None, cp.empty((4000, 4000), cp.float32)):
            got = xtile.tile(x, (4, 4), out=out)
            assert got is out or out is None
            assert same_bits(to_numpy(got), want)
            program, _ = xtile._run.KEPT[("cupy", layout, (4, 4), True, frozenset())]
            assert [s.item for s in program.steps] == [16], program
