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
    "reps", [(2.0, 2), (True, 2), [2.0, 2], np.asarray([2, 2]), (np.int64(2), 2), 2.0]
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


def test_a_list_of_ints_is_looked_up() -> None:
    x = np.arange(6.0).reshape(2, 3)
    xtile.tile(x, [2, 2])
    again = _core.recall(x, [2, 2])
    assert again is not None
    np.testing.assert_array_equal(again, np.tile(x, (2, 2)))
    assert len(_core._PLANS) == 1
    xtile.tile(x, (2, 2))  # the same plan: not planned again
    assert len(_core._PLANS) == 1


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


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t,
        lambda t: t.T,  # transposed
        lambda t: t[:1].expand(3, 4),  # stride 0: a reshape could alias it
        lambda t: t[:, :1],
    ],
    ids=["contiguous", "transposed", "expanded", "column"],
)
@pytest.mark.parametrize("reps", [(2, 2), (1, 1), (3, 1), (1, 5), (2, 1, 1)])
def test_torch_cached_calls_are_fresh_tensors(make: Any, reps: tuple[int, ...]) -> None:
    torch = pytest.importorskip("torch")
    x = make(torch.arange(12.0).reshape(3, 4))
    first = xtile.tile(x, reps)
    again = xtile.tile(x, reps)
    assert (type(x), (x.shape, x.stride(), x.dtype, x.device), reps) in _core._PLANS
    assert torch.equal(again, torch.tile(x, reps))
    assert again.is_contiguous()
    assert again.data_ptr() not in {first.data_ptr(), x.data_ptr()}
    again.zero_()
    assert torch.equal(x, make(torch.arange(12.0).reshape(3, 4)))


def test_torch_cached_calls_differentiate() -> None:
    torch = pytest.importorskip("torch")
    w = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    for _ in range(2):  # the second call runs the cached plan
        w.grad = None
        (xtile.tile(w, (2, 3)) * 2).sum().backward()
        assert torch.equal(w.grad, torch.full((3, 4), 12.0, dtype=torch.float64))
    assert torch.autograd.gradcheck(lambda t: xtile.tile(t, (2, 3)), (w,))
    from torch.autograd import forward_ad

    with forward_ad.dual_level():
        dual = forward_ad.make_dual(w.detach(), torch.ones_like(w))
        for _ in range(2):
            tangent = forward_ad.unpack_dual(xtile.tile(dual, (2, 3))).tangent
            assert torch.equal(tangent, torch.ones(6, 12, dtype=torch.float64))


def test_torch_cached_block_plan_differentiates() -> None:
    """A plan from the first block, cached by an untracked call, leaves tracked ones to autograd."""
    torch = pytest.importorskip("torch")
    reps = (12, 1, 3)  # the output from its first block (`_agnostic.from_block`)
    x = torch.arange(7 * 5000.0, dtype=torch.float64).reshape(7, 5000, 1)
    assert torch.equal(xtile.tile(x, reps), torch.tile(x, reps))
    run = _core._PLANS[type(x), (x.shape, x.stride(), x.dtype, x.device), reps]
    assert run.__qualname__.startswith("_block_copier")
    w = x.clone().requires_grad_()  # the same layout: the cached plan
    y = xtile.tile(w, reps)
    assert y.grad_fn is not None
    weights = torch.arange(y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * weights).sum().backward()
    w2 = x.clone().requires_grad_()
    (torch.tile(w2, reps) * weights).sum().backward()
    assert torch.equal(w.grad, w2.grad)


def test_torch_compile_after_cached_calls() -> None:
    """A cache filled eagerly does not reach dynamo: one graph, no break."""
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 5)
    xtile.tile(x, (2, 3))
    xtile.tile(x, (2, 3))
    compiled = torch.compile(lambda t: xtile.tile(t, (2, 3)) + 1, fullgraph=True)
    assert torch.equal(compiled(x), torch.tile(x, (2, 3)) + 1)
