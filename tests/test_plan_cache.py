"""The plan cache of repeated calls (`xtile._core.recall`): same answers, same errors."""

from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _core
from xtile._lib._tuning import PLAN_CACHE_SIZE


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_core, "_PLANS", {})
    monkeypatch.setattr(_core, "_LAYOUTS", {})


def test_a_repeated_call_runs_the_cached_plan() -> None:
    x = np.arange(6.0).reshape(2, 3)
    assert _core.recall(x, (2, 2)) is None
    first = xtile.tile(x, (2, 2))
    again = _core.recall(x, (2, 2))
    assert again is not None
    np.testing.assert_array_equal(again, np.tile(x, (2, 2)))
    # a fresh array each time, never the input's memory
    assert again is not first
    assert not np.shares_memory(again, first)
    assert not np.shares_memory(again, x)
    again[...] = 0
    np.testing.assert_array_equal(xtile.tile(x, (2, 2)), np.tile(x, (2, 2)))


@pytest.mark.parametrize(
    "reps", [(2.0, 2), (True, 2), [2, 2], np.asarray([2, 2]), (np.int64(2), 2), 2.0]
)
def test_only_int_repeats_are_looked_up(reps: Any) -> None:
    """Repeats of equal hash but another type (2.0, True) are validated as ever."""
    x = np.arange(6.0).reshape(2, 3)
    xtile.tile(x, (2, 2))
    xtile.tile(x, 2)
    assert _core.recall(x, reps) is None
    if isinstance(reps, float) or any(isinstance(r, (bool, float)) for r in np.ravel(reps)):
        with pytest.raises(TypeError, match="repeats"):
            xtile.tile(x, reps)


@pytest.mark.parametrize(
    "other",
    [
        lambda x: x.T.copy().T,  # same shape, other strides
        lambda x: x.astype(np.float32),
        lambda x: x[:, :2],
        lambda x: np.ma.masked_array(x, mask=x > 2),
    ],
)
def test_another_layout_is_another_plan(other: Any) -> None:
    x = np.arange(12.0).reshape(3, 4)
    xtile.tile(x, (2, 3))
    y = other(x)
    np.testing.assert_array_equal(xtile.tile(y, (2, 3)), np.tile(y, (2, 3)))
    if type(y) is np.ma.MaskedArray:
        assert type(xtile.tile(y, (2, 3))) is np.ma.MaskedArray
        assert _core.recall(y, (2, 3)) is None


def test_errors_are_never_cached() -> None:
    x = np.arange(6.0)
    for _ in range(2):
        with pytest.raises(ValueError, match="-1"):
            xtile.tile(x, (2, -1))
    assert not _core._PLANS


def test_the_cache_is_bounded() -> None:
    for n in range(1, PLAN_CACHE_SIZE + 10):
        xtile.tile(np.zeros(n), 2)
    assert 0 < len(_core._PLANS) <= PLAN_CACHE_SIZE
    np.testing.assert_array_equal(xtile.tile(np.arange(3), 2), [0, 1, 2, 0, 1, 2])
