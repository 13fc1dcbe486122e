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


def test_cupy_strided_input_and_out() -> None:
    """A small CuPy tile of a strided view, fresh or into `out`; `out` on `x`'s memory refused."""
    cp = pytest.importorskip("cupy")
    Backend.CUPY.load_or_skip()
    base = cp.arange(24, dtype=cp.float32).reshape(4, 6)
    x = base[:, ::2]
    y = xtile.tile(x, (2, 3))
    assert y.flags.c_contiguous
    assert same_bits(to_numpy(y), np.tile(to_numpy(x), (2, 3)))
    assert same_bits(to_numpy(xtile.tile(x, (2, 3))), to_numpy(y))  # the call kept
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


def test_cupy_big_tile_aligned_or_not() -> None:
    """A big CuPy tile, fresh or into `out`, of an input on or off a 16-byte alignment."""
    cp = pytest.importorskip("cupy")
    Backend.CUPY.load_or_skip()
    a = np.arange(1001 * 1000, dtype=np.float32)
    flat = cp.asarray(a)
    for start in (0, 1):  # 4 bytes off the alignment of 16-byte items
        x = flat[start : start + 10**6].reshape(1000, 1000)
        want = np.tile(a[start : start + 10**6].reshape(1000, 1000), (4, 4))
        for out in (None, cp.empty((4000, 4000), cp.float32)):
            got = xtile.tile(x, (4, 4), out=out)
            assert got is out or out is None
            assert same_bits(to_numpy(got), want)
