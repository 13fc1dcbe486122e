"""
Each backend and device: present here, or skipped once with why.

The suite runs its backend tests on the present backends only (conftest's
`pytest_generate_tests`), so an absent one (CUDA without a GPU, CuPy not installed)
shows as one skip here, not as one skip per test.
"""

import numpy as np
import pytest

import xtile
from xtile._testing import Backend, same_bits, to_numpy

from .conftest import absent


@pytest.mark.parametrize("backend", list(Backend), ids=lambda b: b.value)
def test_backend(backend: Backend) -> None:
    xp, device = backend.load_or_skip()
    assert backend not in absent()
    x = backend.asarray(np.arange(6).reshape(2, 3), xp, device)
    assert same_bits(to_numpy(xtile.tile(x, (2, 1))), np.tile(np.arange(6).reshape(2, 3), (2, 1)))
