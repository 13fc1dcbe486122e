"""The plan cache of repeated calls (`xtile._cache`): same answers, same errors, a whole key."""

import threading
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _dispatch, _plan
from xtile._cache import PlanCache
from xtile._dispatch import PLANS


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    PLANS.clear()


def test_a_repeated_call_runs_the_cached_plan() -> None:
    x = np.arange(6.0).reshape(2, 3)
    first = xtile.tile(x, (2, 2))
    assert PLANS.info()[:2] == (0, 1)  # planned once
    again = _dispatch.recall(x, (2, 2))
    assert PLANS.info()[:2] == (1, 1)  # and run again
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
    assert _dispatch.recall(x, reps) is None
    if isinstance(reps, float) or any(isinstance(r, (bool, float)) for r in np.ravel(reps)):
        with pytest.raises(TypeError, match="repeats"):
            xtile.tile(x, reps)


def test_a_list_of_ints_is_looked_up() -> None:
    x = np.arange(6.0).reshape(2, 3)
    xtile.tile(x, [2, 2])
    again = _dispatch.recall(x, [2, 2])
    assert again is not None
    np.testing.assert_array_equal(again, np.tile(x, (2, 2)))
    assert PLANS.info().currsize == 1
    xtile.tile(x, (2, 2))  # the same program: not planned again
    assert PLANS.info().currsize == 1


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
        assert _dispatch.recall(y, (2, 3)) is None


def test_errors_are_never_cached() -> None:
    x = np.arange(6.0)
    for _ in range(2):
        with pytest.raises(ValueError, match="-1"):
            xtile.tile(x, (2, -1))
    assert not PLANS.info().currsize


def test_the_cache_is_bounded() -> None:
    maxsize = PLANS.info().maxsize
    for n in range(1, maxsize + 10):
        xtile.tile(np.zeros(n), 2)
    assert PLANS.info().currsize == maxsize
    np.testing.assert_array_equal(xtile.tile(np.arange(3), 2), [0, 1, 2, 0, 1, 2])


def test_least_recently_used_goes_first() -> None:
    planned: list[int] = []

    def plan(n: int) -> Any:
        planned.append(n)
        return _plan.Program(_plan._plan((n,), (2,)), ())

    cache = PlanCache(plan, 2)
    a = cache.lookup(1)
    cache.lookup(2)
    assert cache.lookup(1) is a  # now 2 is the least recently used
    cache.lookup(3)
    cache.lookup(2)  # dropped: planned again
    assert planned == [1, 2, 3, 2]
    assert cache.info() == (1, 4, 2, 2)
    cache.clear()
    assert cache.info() == (0, 0, 2, 0)


def test_errors_are_not_kept() -> None:
    calls: list[int] = []

    def plan(n: int) -> int:
        calls.append(n)
        if n < 0:
            raise ValueError(n)
        return n

    cache = PlanCache(plan, 4)
    for _ in range(2):
        with pytest.raises(ValueError, match="-1"):
            cache.lookup(-1)
    assert calls == [-1, -1]
    assert cache.info().currsize == 0


def _in_threads(work: Any, n: int = 8) -> None:
    """`work(i)` in `n` threads at once, each its own seed; returns when all are done."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_fill_and_evict() -> None:
    """8 threads look up 40 keys each through a cache of 16: every answer right, the bound kept."""

    def plan(n: int) -> Any:
        return _plan.Program(_plan._plan((n,), (3,)), ())

    cache = PlanCache(plan, 16)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(seed: int) -> None:
        try:
            start.wait()
            rng = np.random.default_rng(seed)
            for _ in range(200):
                n = int(rng.integers(1, 40))
                assert cache.lookup(n).plan.shape == (n,)
                assert cache.info().currsize <= 16
        except BaseException as e:  # noqa: BLE001  # reported by the main thread
            errors.append(e)

    _in_threads(work)
    assert not errors
    info = cache.info()
    assert info.hits + info.misses == 8 * 200
    assert info.currsize == 16


def test_threads_tile_through_the_cache() -> None:
    """xtile.tile itself from 8 threads, over more layouts than the cache keeps."""
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            rng = np.random.default_rng(seed)
            for _ in range(150):
                shape = tuple(int(d) for d in rng.integers(1, 30, size=2))
                reps = tuple(int(r) for r in rng.integers(1, 40, size=2))
                x = rng.random(shape)
                np.testing.assert_array_equal(xtile.tile(x, reps), np.tile(x, reps))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    _in_threads(work)
    assert not errors
    assert PLANS.info().currsize <= PLANS.info().maxsize


def test_a_strategy_switched_off_is_another_key() -> None:
    x = np.arange(3.0)
    xtile.tile(x, 40000)
    with _plan.switched_off("stage"):
        np.testing.assert_array_equal(xtile.tile(x, 40000), np.tile(x, 40000))
    assert PLANS.info()[1:] == (2, 256, 2)  # two misses, two programs


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
    assert _dispatch.recall(x, reps) is not None
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


def test_torch_cached_parts_plan_differentiates() -> None:
    """A program in parts, cached by an untracked call, is not run for a tracked tensor."""
    torch = pytest.importorskip("torch")
    reps = (12, 1, 3)  # written as a corner, then extended inside the output
    x = torch.arange(7 * 5000.0, dtype=torch.float64).reshape(7, 5000, 1)
    assert torch.equal(xtile.tile(x, reps), torch.tile(x, reps))
    w = x.clone().requires_grad_()  # the same shape and strides, but tracked: another key
    y = xtile.tile(w, reps)
    assert y.grad_fn is not None
    weights = torch.arange(y.numel(), dtype=torch.float64).reshape(y.shape)
    (y * weights).sum().backward()
    w2 = x.clone().requires_grad_()
    (torch.tile(w2, reps) * weights).sum().backward()
    assert torch.equal(w.grad, w2.grad)
    assert PLANS.info().currsize == 2


def test_torch_compile_after_cached_calls() -> None:
    """A cache filled eagerly does not reach dynamo: one graph, no break."""
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 5)
    xtile.tile(x, (2, 3))
    xtile.tile(x, (2, 3))
    compiled = torch.compile(lambda t: xtile.tile(t, (2, 3)) + 1, fullgraph=True)
    assert torch.equal(compiled(x), torch.tile(x, (2, 3)) + 1)


@pytest.mark.parametrize(
    ("shape", "reps", "error"),
    [
        ((0, 3), (2**64, 1), ValueError),  # an empty output, a repeat past int64
        ((3,), (-1,), ValueError),
        ((2, 3), (2**40, 2**40), ValueError),  # past int64 elements
    ],
)
def test_a_cached_type_refuses_what_a_first_call_refuses(
    shape: tuple[int, ...], reps: tuple[int, ...], error: type[Exception]
) -> None:
    """`recall` plans on a miss, but never for repeats the full path refuses."""
    xtile.tile(np.zeros(shape), 2)  # the type is known
    x = np.zeros(shape)
    assert _dispatch.recall(x, reps) is None
    with pytest.raises(error):
        xtile.tile(x, reps)
