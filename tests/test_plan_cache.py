"""The programs kept for repeated calls (`xtile._run.compiled`): same answers, errors, keys."""

import itertools
import math
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _backends, _program, _run, _testing

compiled = _run.compiled


def _clear() -> None:
    compiled.cache_clear()
    _run.KEPT.clear()


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    """Each test starts with no program kept, and leaves none of its own."""
    _clear()
    yield
    _clear()


def test_a_repeated_call_runs_the_kept_program() -> None:
    x = np.arange(6.0).reshape(2, 3)
    first = xtile.tile(x, (2, 2))
    assert compiled.cache_info()[:2] == (0, 1)  # planned once
    again = xtile.tile(x, (2, 2))
    assert compiled.cache_info()[1:] == (1, 256, 1)  # not planned again
    np.testing.assert_array_equal(again, np.tile(x, (2, 2)))
    # a fresh array each time, never the input's memory
    assert again is not first
    assert not np.shares_memory(again, first)
    assert not np.shares_memory(again, x)
    again[...] = 0
    np.testing.assert_array_equal(xtile.tile(x, (2, 2)), np.tile(x, (2, 2)))
    assert compiled.cache_info().misses == 1


@pytest.mark.parametrize(
    ("reps", "refused"),
    [
        ((2.0, 2), True),
        ((True, 2), True),  # hashes as (1, 2), which is kept
        ((1.0, 2), True),
        ([2.0, 2], True),
        (2.0, True),
        (np.asarray([2, 2]), False),
        ((np.int64(2), 2), False),
    ],
)
def test_repeats_of_another_type_are_checked_as_ever(reps: Any, refused: bool) -> None:
    """Repeats of equal hash but another type (2.0, True) never reach a kept program."""
    x = np.arange(6.0).reshape(2, 3)
    for kept in [(2, 2), (1, 2), (2,), 2]:
        xtile.tile(x, kept)
    planned = compiled.cache_info().misses
    if refused:
        with pytest.raises(TypeError, match="repeats"):
            xtile.tile(x, reps)
    else:  # integers of another type: the same program
        np.testing.assert_array_equal(xtile.tile(x, reps), np.tile(x, (2, 2)))
    assert compiled.cache_info().misses == planned


def test_a_list_of_ints_is_the_same_key() -> None:
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(xtile.tile(x, [2, 2]), np.tile(x, (2, 2)))
    assert compiled.cache_info().currsize == 1
    np.testing.assert_array_equal(xtile.tile(x, [2, 2]), np.tile(x, (2, 2)))
    xtile.tile(x, (2, 2))  # the same program: not planned again
    xtile.tile(x, np.asarray([2, 2]))
    assert compiled.cache_info()[1:] == (1, 256, 1)


def test_an_int_repeat_takes_the_cached_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """`xtile.tile(x, 2)` repeated looks its program up as `(2,)`: no check or plan again."""
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(xtile.tile(x, 2), np.tile(x, 2))
    calls: list[object] = []
    slow = xtile._front.namespace
    monkeypatch.setattr(xtile._front, "namespace", lambda *a, **k: calls.append(a) or slow(*a, **k))
    for reps in [2, (2,), 2]:
        np.testing.assert_array_equal(xtile.tile(x, reps), np.tile(x, 2))
    assert not calls
    xtile.tile(np.arange(3.0), 1)  # a new key: checked once
    with pytest.raises(TypeError, match="bool"):  # `True` (hash 1) is no int here
        xtile.tile(np.arange(3.0), True)
    assert len(calls) == 2


@pytest.mark.parametrize(
    "other",
    [
        lambda x: x.T.copy().T,  # same shape, other strides
        lambda x: x.astype(np.float32),
        lambda x: x[:, :2],
        lambda x: x.view(np.int64),  # same shape, strides and itemsize: another dtype
    ],
    ids=["fortran", "float32", "sliced", "int64"],
)
def test_another_layout_is_another_key(other: Any) -> None:
    x = np.arange(12.0).reshape(3, 4)
    xtile.tile(x, (2, 3))
    y = other(x)
    np.testing.assert_array_equal(xtile.tile(y, (2, 3)), np.tile(y, (2, 3)))
    assert xtile.tile(y, (2, 3)).dtype == y.dtype
    same = _backends.load("numpy").layout(y) == _backends.load("numpy").layout(x)
    assert compiled.cache_info().currsize == (1 if same else 2)


def test_a_masked_array_plans_its_parts() -> None:
    """A masked array's data and mask are plain arrays with programs of their own."""
    x = np.arange(12.0).reshape(3, 4)
    y = np.ma.masked_array(x, mask=x > 2)
    for _ in range(2):
        got = xtile.tile(y, (2, 3))
        assert type(got) is np.ma.MaskedArray
        np.testing.assert_array_equal(np.ma.getdata(got), np.tile(x, (2, 3)))
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.tile(x > 2, (2, 3)))
    assert compiled.cache_info()[1:] == (2, 256, 2)  # float64 data, bool mask


def test_errors_are_never_kept() -> None:
    x = np.arange(6.0)
    for _ in range(2):
        with pytest.raises(ValueError, match="-1"):
            xtile.tile(x, (2, -1))
    assert not compiled.cache_info().currsize
    assert not _run.KEPT


def test_a_planning_error_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """`compiled` keeps a program only once made: a failed planning is tried again."""
    real = _run.ranked
    calls: list[tuple[int, ...]] = []

    def failing(*args: Any) -> Any:
        calls.append(args[1])
        if len(calls) == 1:
            msg = "planning failed"
            raise RuntimeError(msg)
        return real(*args)

    monkeypatch.setattr(_run, "ranked", failing)
    x = np.arange(6.0)
    with pytest.raises(RuntimeError, match="planning failed"):
        xtile.tile(x, (3,))
    assert compiled.cache_info().currsize == 0
    assert not _run.KEPT
    np.testing.assert_array_equal(xtile.tile(x, (3,)), np.tile(x, 3))
    assert calls == [(3,), (3,)]


def test_the_cache_is_bounded() -> None:
    maxsize = compiled.cache_info().maxsize
    assert maxsize == 256
    for n in range(1, maxsize + 10):
        xtile.tile(np.zeros(n), (2,))
    assert compiled.cache_info().currsize == maxsize
    assert len(_run.KEPT) <= maxsize
    np.testing.assert_array_equal(xtile.tile(np.arange(3), 2), [0, 1, 2, 0, 1, 2])


def _key(n: int) -> tuple[Any, ...]:
    """The `compiled` key of a C-ordered float64 array of shape (n,) tiled by 2."""
    layout = _backends.load("numpy").layout(np.zeros(n))
    return ("numpy", layout, (2,), True, frozenset())


def test_least_recently_used_goes_first() -> None:
    maxsize = compiled.cache_info().maxsize
    programs = [compiled(*_key(n)) for n in range(1, maxsize + 1)]  # full
    assert compiled.cache_info().currsize == maxsize
    assert compiled(*_key(1)) is programs[0]  # a hit: now 2 is the least recently used
    compiled(*_key(maxsize + 1))  # drops 2
    misses = compiled.cache_info().misses
    assert compiled(*_key(1)) is programs[0]
    assert compiled.cache_info().misses == misses
    assert compiled(*_key(2)) is not programs[1]  # dropped: planned again
    assert compiled.cache_info().misses == misses + 1
    program, call = compiled(*_key(2))
    assert program == programs[1][0]  # the same program, made again
    np.testing.assert_array_equal(call(np.arange(2.0), None), np.tile(np.arange(2.0), 2))


def _in_threads(work: Any, n: int = 8) -> None:
    """`work(i)` in `n` threads at once, each its own seed; returns when all are done."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_fill_and_evict() -> None:
    """8 threads look up 400 keys through a cache of 256: every answer right, the bound kept."""
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(seed: int) -> None:
        try:
            start.wait()
            rng = np.random.default_rng(seed)
            for _ in range(200):
                n = int(rng.integers(1, 400))
                program, call = compiled(*_key(n))
                assert program.shape == (n,)
                x = np.arange(float(n))
                np.testing.assert_array_equal(call(x, None), np.tile(x, 2))
                assert compiled.cache_info().currsize <= 256
        except BaseException as e:  # noqa: BLE001  # reported by the main thread
            errors.append(e)

    _in_threads(work)
    assert not errors
    info = compiled.cache_info()
    assert info.hits + info.misses == 8 * 200
    assert info.currsize <= info.maxsize
    assert len(_run.KEPT) <= info.maxsize


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
    assert compiled.cache_info().currsize <= compiled.cache_info().maxsize
    assert len(_run.KEPT) <= compiled.cache_info().maxsize


def test_a_strategy_switched_off_is_another_key() -> None:
    x = np.arange(3.0)
    xtile.tile(x, 40000)
    chosen = compiled("numpy", _key(3)[1], (40000,), True, frozenset())[0].name
    assert compiled.cache_info()[1:] == (1, 256, 1)
    off = chosen if chosen != "copy" else "staged"
    with _testing.switched_off(off):
        np.testing.assert_array_equal(xtile.tile(x, 40000), np.tile(x, 40000))
        np.testing.assert_array_equal(xtile.tile(x, 40000), np.tile(x, 40000))
        program = compiled("numpy", _key(3)[1], (40000,), True, frozenset({off}))[0]
        assert program.name != off
    assert compiled.cache_info()[1:] == (2, 256, 2)  # two misses, two programs
    np.testing.assert_array_equal(xtile.tile(x, 40000), np.tile(x, 40000))
    assert compiled.cache_info()[1:] == (2, 256, 2)


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
    assert compiled.cache_info()[1:] == (1, 256, 1)  # the second call ran the kept program
    assert torch.equal(again, torch.tile(x, reps))
    assert again.is_contiguous()
    assert again.data_ptr() not in {first.data_ptr(), x.data_ptr()}
    again.zero_()
    assert torch.equal(x, make(torch.arange(12.0).reshape(3, 4)))


def test_torch_cached_calls_differentiate() -> None:
    torch = pytest.importorskip("torch")
    w = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    for _ in range(2):  # the second call runs the kept program
        w.grad = None
        (xtile.tile(w, (2, 3)) * 2).sum().backward()
        assert torch.equal(w.grad, torch.full((3, 4), 12.0, dtype=torch.float64))
    assert compiled.cache_info().misses == 1
    assert torch.autograd.gradcheck(lambda t: xtile.tile(t, (2, 3)), (w,))
    from torch.autograd import forward_ad

    with forward_ad.dual_level():
        dual = forward_ad.make_dual(w.detach(), torch.ones_like(w))
        for _ in range(2):
            tangent = forward_ad.unpack_dual(xtile.tile(dual, (2, 3))).tangent
            assert torch.equal(tangent, torch.ones(6, 12, dtype=torch.float64))


def _in_parts(program: _program.Program) -> bool:
    """Whether `program` writes into views of its output (which autograd would record)."""
    return any(
        isinstance(s, _program.Replicate) or (isinstance(s, _program.Copy) and s.region is not None)
        for s in program.steps
    )


def test_torch_cached_parts_plan_differentiates() -> None:
    """A program in parts, kept by an untracked call, is not run for a tracked tensor."""
    torch = pytest.importorskip("torch")
    backend = _backends.load("torch")
    reps = (12, 1, 3)  # written as a corner, then extended inside the output
    x = torch.arange(7 * 5000.0, dtype=torch.float64).reshape(7, 5000, 1)
    assert torch.equal(xtile.tile(x, reps), torch.tile(x, reps))
    untracked = backend.layout(x)
    assert untracked is not None
    assert untracked.parts
    assert _in_parts(compiled("torch", untracked, reps, True, frozenset())[0])
    w = x.clone().requires_grad_()  # the same shape and strides, but tracked: another key
    tracked = backend.layout(w)
    assert tracked == untracked._replace(parts=False, raw=False)
    for _ in range(2):  # the second call runs the kept program
        w.grad = None
        y = xtile.tile(w, reps)
        assert y.grad_fn is not None
        weights = torch.arange(y.numel(), dtype=torch.float64).reshape(y.shape)
        (y * weights).sum().backward()
        w2 = x.clone().requires_grad_()
        (torch.tile(w2, reps) * weights).sum().backward()
        assert torch.equal(w.grad, w2.grad)
    assert compiled.cache_info().currsize == 2
    assert not _in_parts(compiled("torch", tracked, reps, True, frozenset())[0])


def test_torch_compile_after_cached_calls() -> None:
    """A cache filled eagerly does not reach dynamo: one graph, no break."""
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 5)
    xtile.tile(x, (2, 3))
    xtile.tile(x, (2, 3))
    compiled_fn = torch.compile(lambda t: xtile.tile(t, (2, 3)) + 1, fullgraph=True)
    assert torch.equal(compiled_fn(x), torch.tile(x, (2, 3)) + 1)


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
    """A type and layout with programs kept still has every check, before any planning."""
    x = np.zeros(shape)
    xtile.tile(x, 2)  # the type and layout are known
    xtile.tile(x, 2)
    planned = compiled.cache_info()
    with pytest.raises(error):
        xtile.tile(x, reps)
    assert compiled.cache_info() == planned


NUMPY = _backends.load("numpy")
# a C-ordered int64 (16, 1) by (34147, 1): its cheapest, staged, has rivals priced close
CLOSE_CASE = (np.arange(16).reshape(16, 1), (34147, 1))


def test_close_prices_are_settled_by_the_first_calls_times() -> None:
    """Three runs in a row each turn; past the first turn, the least but a turn's first wins."""
    x, reps = CLOSE_CASE
    programs = _program.ranked(NUMPY.layout(x), reps, NUMPY.model, True)  # type: ignore[misc]
    assert [p.name for p in programs] == ["staged", "native", "bytes"]  # the native first
    # 0 slow on every run; 1 slow in its first turn (a process's first calls fault) and at
    # each turn's first run; 2 fast in its first turn only: 1 wins
    slow = {0: [0.03] * 8, 1: [0.06] * 4 + [1e-3, 1e-3, 0.06, 1e-3], 2: [0.01, 0, 0] + [0.01] * 5}

    def timed(i: int, call: Any, ran: list[int]) -> Any:
        def slowed(x: Any, dest: Any) -> Any:
            time.sleep(slow[i][ran.count(i)] if len(ran) < 24 else 0)
            ran.append(i)
            return call(x, dest)

        return slowed

    for out in (None, np.empty((546352, 1), np.int64)):
        ran: list[int] = []
        made = [_run.compile_program(p, NUMPY, np) for p in programs]
        calls = tuple(timed(i, call, ran) for i, call in enumerate(made))
        run = _run._measured(programs, calls)
        _run.KEPT["a key"] = _run.KEPT["another"] = (programs[0], run)
        for _ in range(24 + 3):
            got = run(x, out)
            assert got is out if out is not None else got is not x
            np.testing.assert_array_equal(got, np.tile(x, reps))
        turns = ([0] * 3 + [1] * 3 + [2] * 3) * 2 + [0] * 2 + [1] * 2 + [2] * 2  # 8 in all
        assert ran == turns + [1] * 3  # then the fastest alone
        # every key that held the timed call holds the fastest now
        assert _run.KEPT["a key"] == _run.KEPT["another"] == (programs[1], calls[1])


def _clocked(monkeypatch: pytest.MonkeyPatch, took: Any) -> tuple[list[int], Any]:
    """Calls of two programs that each advance `_run`'s clock by ``took(i, ran)`` seconds."""
    clock, ran = [0.0], []
    monkeypatch.setattr(_run, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))

    def call(i: int) -> Any:
        def advance(_x: Any, _dest: Any) -> int:
            clock[0] += took(i, ran)
            ran.append(i)
            return i

        return advance

    x, reps = CLOSE_CASE
    programs = _program.ranked(NUMPY.layout(x), reps, NUMPY.model, True)[:2]  # type: ignore[misc]
    return ran, _run._measured(programs, (call(0), call(1)))


def test_short_runs_are_timed_until_each_ran_100_us(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of microseconds vary too much to tell apart in eight: each runs 100 us at least."""
    ran, run = _clocked(monkeypatch, lambda i, _: (4e-6, 2e-6)[i])  # 1 is the faster
    for _ in range(300):
        run(None, None)
    turns = [(i, len(list(g))) for i, g in itertools.groupby(ran)]
    assert turns[:-2] == [(0, 3), (1, 3)] * 9  # three runs in a row each
    assert turns[-2][0] == 0  # 0 done at 28 runs (100 us of 4 us past its first turn): 1 alone
    assert 28 <= ran.count(0) <= 29
    assert turns[-1][0] == 1  # its 53 runs, then decided: the faster alone


def test_a_clock_that_stands_still_ends_the_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a frozen clock (freezegun) the timing ends at 100 runs each: the cheapest."""
    ran, run = _clocked(monkeypatch, lambda _i, _: 0.0)
    for _ in range(250):
        assert run(None, None) in (0, 1)
    assert ran.count(1) == 100
    assert ran[-50:] == [0] * 50  # the first of equal times: the cheapest program


def test_a_program_fast_only_after_others_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """What counts is a run after one of the same program, as the kept program's runs are."""

    def took(i: int, ran: list[int]) -> float:
        # 0: fast after the other program's runs (0.1 ms), slow after its own (3 ms)
        return (1e-4 if ran[-1:] != [0] else 3e-3) if i == 0 else 1e-3

    ran, run = _clocked(monkeypatch, took)
    for _ in range(20):
        run(None, None)
    assert ran[:6] == [0, 0, 0, 1, 1, 1]
    assert ran[-3:] == [1] * 3  # the least times of all runs would keep 0


def test_tile_times_close_rivals_and_keeps_one() -> None:
    """`xtile.tile` keeps the timed call, then the program it chose, for fresh and `out=`."""
    x, reps = CLOSE_CASE
    out = np.empty((546352, 1), np.int64)
    for into in (None, out):
        for _ in range(28):  # 24 runs of three programs in turns, then
            got = xtile.tile(x, reps, out=into)
            np.testing.assert_array_equal(got, np.tile(x, reps))
    names = {p.name for p in _program.ranked(NUMPY.layout(x), reps, NUMPY.model, True)}  # type: ignore[misc]
    assert len(_run.KEPT) == 3  # fresh; `out=`, planned without `native`, and its layout's key
    for program, call in _run.KEPT.values():
        assert program.name in names
        assert not call.__qualname__.startswith("_measured")  # decided: no timing any more


def test_measured_switched_off_runs_the_cheapest_alone() -> None:
    """Switched off, the cheapest program runs alone from the first call."""
    x, reps = CLOSE_CASE
    layout = NUMPY.layout(x)
    off = frozenset({"measured"})
    (alone,) = _program.ranked(layout, reps, NUMPY.model, True, off)  # type: ignore[misc]
    assert alone == _program.plan(layout, reps, NUMPY.model, True)  # type: ignore[misc]
    with _testing.switched_off("measured"):
        np.testing.assert_array_equal(xtile.tile(x, reps), np.tile(x, reps))
    ((program, call),) = _run.KEPT.values()
    assert program == alone
    assert not call.__qualname__.startswith("_measured")


def test_torch_times_the_rivals_of_outputs_under_its_bound() -> None:
    """PyTorch times rivals of outputs under `Model.timed` bytes (bigger ones fault at first)."""
    torch = pytest.importorskip("torch")
    backend = _backends.load("torch")
    x, reps = CLOSE_CASE
    tensor = torch.from_numpy(x)
    layout = backend.layout(tensor)  # type: ignore[misc]
    nbytes = math.prod(_program.plan(layout, reps, backend.model, True).out_shape) * x.itemsize
    assert nbytes < backend.model.timed == 1 << 24
    timed = _program.ranked(layout, reps, backend.model, True)
    assert len(timed) > 1
    at_bound = backend.model._replace(timed=nbytes)  # a bigger output: the cheapest alone
    assert len(_program.ranked(layout, reps, at_bound, True)) == 1
    assert len(_program.ranked(layout, reps, backend.device, True)) == 1  # a GPU's: never
    for _ in range(8 * len(timed) + 1):  # eight runs of each, then the one chosen
        assert torch.equal(xtile.tile(tensor, reps), torch.tile(tensor, reps))
    (call,) = [c for k, (_, c) in _run.KEPT.items() if k[0] == "torch"]
    assert not call.__qualname__.startswith("_measured")  # decided
    big = torch.zeros((1024, 1024), dtype=torch.int8)  # 16 MiB out: untimed from its first call
    unbound = backend.model._replace(timed=1 << 40)  # where it has rivals
    assert len(_program.ranked(backend.layout(big), (4, 4), unbound, True)) > 1  # type: ignore[misc]
    assert torch.equal(xtile.tile(big, (4, 4)), torch.tile(big, (4, 4)))
    (call,) = [
        c for k, (_, c) in _run.KEPT.items() if k[0] == "torch" and k[1].shape == (1024, 1024)
    ]
    assert not call.__qualname__.startswith("_measured")


def test_torch_tile_is_a_rival_only_where_priced_close() -> None:
    """NumPy's chain of repeats is timed at any price; `torch.tile`, as any other, if close."""
    torch = pytest.importorskip("torch")
    backend = _backends.load("torch")
    x, reps = torch.zeros((1, 4, 2956, 8), dtype=torch.int8), (1, 1, 4, 4)
    layout = backend.layout(x)
    chosen, *rivals = _program.ranked(layout, reps, backend.model, True)  # type: ignore[arg-type]
    found = _program.candidates(layout, reps, backend.model, True)  # type: ignore[arg-type]
    (native,) = [p for p in found if p.name == "native"]
    assert native.cost > _program.CLOSE * chosen.cost  # priced far: no rival
    assert rivals
    assert all(p.name != "native" for p in rivals)
    cheap = backend.model._replace(native=tuple(v / 10 for v in backend.model.native))
    assert any(p.name == "native" for p in _program.ranked(layout, reps, cheap, True))  # type: ignore[arg-type]


SHORT_RUNS = ((2366, 2, 1, 3), (3, 2, 1, 1))  # runs of 6 elements: torch loops slowly


def _host(x: Any, reps: tuple[int, ...]) -> tuple[_program.Program, Any]:
    """The host rival's program for tensor `x` by `reps` (NumPy's plan), and its call."""
    backend = _backends.load("torch")
    layout, model = backend.layout(x), backend.model.host  # type: ignore[misc]
    host = _program.plan(layout, reps, model, True, frozenset({"native"}))._replace(name="host")  # type: ignore[arg-type]
    return host, _run.compile_program(host, backend, backend.xp)


def test_torch_short_runs_time_numpys_plan_too() -> None:
    """Where a tensor's runs are short, NumPy's plan is a rival; not elsewhere, nor if not raw."""
    torch = pytest.importorskip("torch")
    backend = _backends.load("torch")

    def names(x: Any, reps: tuple[int, ...], fresh: bool = True, *off: str) -> list[str]:
        layout = backend.layout(x)  # type: ignore[misc]
        return [p.name for p in _program.ranked(layout, reps, backend.model, fresh, frozenset(off))]

    shape, reps = SHORT_RUNS
    x = torch.zeros(shape)
    assert names(x, reps)[-1] == "host"
    assert "host" not in names(x, reps, False)  # into an `out` not C-ordered: its own programs
    assert "host" not in names(x, reps, True, "host")  # switched off (`benchmarks/ablation.py`)
    assert "host" not in names(torch.zeros((64, 1024)), (2, 2))  # runs of 4 KiB
    assert "host" not in names(torch.zeros(shape, dtype=torch.complex64).conj(), reps)
    assert _program.ranked(backend.layout(x), reps, backend.model, True)[-1] == _host(x, reps)[0]  # type: ignore[misc]
    assert backend.model.host == _backends.load("numpy").model
    assert "host" not in names(x.requires_grad_(), reps)  # untimed


@pytest.mark.parametrize(
    "dtype",
    ["bool", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
     "complex32", "complex64", "complex128", "float8_e4m3fn"],
)  # fmt: skip
@pytest.mark.parametrize(
    "view", ["contiguous", "transposed", "offset", "0-d", "expanded", "empty", "inference"]
)
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_the_host_program_writes_torch_tiles_bits(dtype: str, view: str) -> None:
    """NumPy's plan on a tensor's memory writes `torch.tile`'s bits, fresh and into `out`."""
    torch = pytest.importorskip("torch")
    dt = getattr(torch, dtype)
    bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.complex128}
    word = bits[dt.itemsize]
    with torch.inference_mode(view == "inference"):  # its tensors, made and written inside
        base = torch.arange(-300, 300, 3, dtype=torch.int64).to(word).reshape(20, 10)
        x = {"transposed": base.T, "offset": base[3:, 1:7], "0-d": base[2, 3],
             "expanded": base[:, :1].expand(20, 10), "empty": base[:0]}.get(view, base)  # fmt: skip
        x = x.view(dt)
        for reps in [(3, 2), (2, 1, 5), ()]:
            _check_host(x, reps, word)


def _check_host(x: Any, reps: tuple[int, ...], word: Any) -> None:
    """The host call of `x` by `reps`, fresh and into a C-ordered `out`, is `torch.tile`'s."""
    import torch

    dt = x.dtype
    want = torch.tile(x.view(word), reps)
    if not want.numel():  # nothing to write: the empty program, no host rival
        backend = _backends.load("torch")
        assert [p.name for p in _program.ranked(backend.layout(x), reps, backend.model, True)] == [  # type: ignore[misc]
            "empty"]  # fmt: skip
        assert torch.equal(xtile.tile(x, reps).view(word), want)
    else:
        call = _host(x, reps)[1]
        got = call(x, None)
        assert got.dtype == dt
        assert got.shape == want.shape
        assert got.is_contiguous()
        assert torch.equal(got.view(word), want)
        out = torch.empty(want.shape, dtype=dt, device=x.device)
        assert call(x, out) is out
        assert torch.equal(out.view(word), want)


def test_the_host_program_under_a_default_device_and_big() -> None:
    """A default device changes nothing (the output is `x`'s); a big output goes on threads."""
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    with torch.device("meta"):
        _check_host(x, (4, 5), torch.int32)
    _check_host(x[:1], (1, 1_200_000), torch.int32)  # 14.4 MB: timed (under 16 MiB), threads


def test_the_host_program_keeps_pytorch_s_own_contracts() -> None:
    """Autograd sees its writes, storages stay resizable, modes and ZeroTensors get PyTorch's."""
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    shape, reps = SHORT_RUNS
    x = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    call = _host(x, reps)[1]
    want = torch.tile(x, reps)
    out = torch.empty(want.shape)
    weights = torch.ones(want.shape, requires_grad=True)
    saved = (weights * out).sum()  # `out` saved for backward, then written
    version = out._version
    call(x, out)
    assert out._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.backward()
    got = call(x, None)
    for t in (x, out, got):  # as before the call: storages resizable
        t.resize_(t.numel() + 1)
    x = x.reshape(-1)[: math.prod(shape)].reshape(shape)
    assert torch.equal(call(x, None), want)
    traced = make_fx(lambda a: call(a, None))(x)  # a dispatch mode: PyTorch's own ops
    assert torch.equal(traced(x + 1), torch.tile(x + 1, reps))
    with FakeTensorMode(allow_non_fake_inputs=True):
        assert isinstance(fake := call(x, None), FakeTensor)
        assert fake.shape == want.shape
    zeros = torch._efficientzerotensor(shape)
    assert torch.equal(call(zeros, None), torch.zeros(want.shape))


def test_torch_short_runs_tile_right_on_every_call() -> None:
    """Every call of a short-run layout, before and after its choice, is `torch.tile`'s."""
    torch = pytest.importorskip("torch")
    shape, reps = SHORT_RUNS
    x = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    out = torch.empty(torch.tile(x, reps).shape)
    with torch.no_grad():  # autograd's leaf, untracked here: timed too
        for into in (None, out, None):
            for _ in range(30):
                got = xtile.tile(x.requires_grad_(into is None), reps, out=into)
                assert torch.equal(got.detach(), torch.tile(x, reps))
    assert not any(c.__qualname__.startswith("_measured") for _, c in _run.KEPT.values())


_HIDE_NUMPY = """if True:
    import importlib.machinery, sys, warnings
    class Hidden(importlib.machinery.PathFinder):  # finds no numpy, as if not installed
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name.partition(".")[0] == "numpy":
                return None
            return super().find_spec(name, path, target)
    finders = sys.meta_path
    sys.meta_path = [Hidden if f is importlib.machinery.PathFinder else f for f in finders]
    warnings.simplefilter("ignore")  # PyTorch's, that NumPy is missing
"""


def test_torch_without_numpy_times_no_host() -> None:
    """
    Where NumPy is not installed (PyTorch's is optional), PyTorch tiles by its own programs;
    ``python -m xtile`` refuses in one line, but shows its help.
    """
    pytest.importorskip("torch")
    code = (
        _HIDE_NUMPY
        + """if True:
        import torch, xtile
        from xtile import _backends, _run
        x = torch.arange(2366 * 6, dtype=torch.float32).reshape(2366, 2, 1, 3)
        for _ in range(30):
            assert torch.equal(xtile.tile(x, (3, 2, 1, 1)), torch.tile(x, (3, 2, 1, 1)))
        assert _backends.load("torch").model.host is None
        print("numpy" in sys.modules, *sorted({p.name for p, _ in _run.KEPT.values()}))
    """
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    said, *kept = done.stdout.split()
    assert said == "False"
    assert kept
    assert "host" not in kept
    main = _HIDE_NUMPY + "import runpy; runpy.run_module('xtile', run_name='__main__')"
    done = subprocess.run([sys.executable, "-c", main], check=False, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "python -m xtile needs NumPy: pip install numpy (xtile.tile itself does not)."
    )
    for command in ([], ["bench"], ["explain"]):  # each one's --help is shown without NumPy
        argv = ["xtile", *command, "--help"]
        show = (
            _HIDE_NUMPY
            + f"import runpy; sys.argv = {argv}; runpy.run_module('xtile', run_name='__main__')"
        )
        done = subprocess.run(
            [sys.executable, "-c", show], check=False, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(" ".join(["usage: python -m xtile", *command]))


def test_torch_autograd_inputs_are_not_timed() -> None:
    """A tensor autograd records runs one program: the gradients' bits never change."""
    torch = pytest.importorskip("torch")
    backend = _backends.load("torch")
    x, reps = CLOSE_CASE
    w = torch.from_numpy(x.astype(np.float64))
    plain = _program.ranked(backend.layout(w), reps, backend.model, True)  # type: ignore[misc]
    assert len(plain) > 1  # timed where untracked
    w.requires_grad_()
    assert len(_program.ranked(backend.layout(w), reps, backend.model, True)) == 1  # type: ignore[misc]
    weights = torch.linspace(0.1, 1.0, math.prod(np.tile(x, reps).shape), dtype=torch.float64)

    class Tiled(torch.nn.Module):  # an nn.Parameter in a module's forward, as users write
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(w.detach().clone())

        def forward(self) -> Any:
            return xtile.tile(self.w, reps)

    module = Tiled()
    for leaf, forward in ((w, lambda: xtile.tile(w, reps)), (module.w, module)):
        grads = set()
        for _ in range(12):
            leaf.grad = None
            (forward().reshape(-1) * weights).sum().backward()
            grads.add(leaf.grad.numpy().tobytes())  # type: ignore[union-attr]
        assert len(grads) == 1
    assert not any(c.__qualname__.startswith("_measured") for _, c in _run.KEPT.values())


def test_threads_time_rivals_at_once() -> None:
    """Calls from many threads while the rivals are timed: right answers, then one decision."""
    x, reps = CLOSE_CASE
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                np.testing.assert_array_equal(xtile.tile(x, reps), np.tile(x, reps))
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ((_, call),) = _run.KEPT.values()
    assert not call.__qualname__.startswith("_measured")


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a,
        np.asfortranarray,
        lambda a: a[::-1],
        lambda a: np.broadcast_to(a[:1], a.shape),  # zero-stride
        lambda a: np.repeat(a, 2, axis=1)[:, ::2],  # non-contiguous
        lambda a: a.astype(np.dtype([("a", "u1"), ("b", "<i8")], align=True)),  # padded
        lambda a: a[:0],  # empty
    ],
    ids=["C", "F", "reversed", "zero-stride", "strided", "padded", "empty"],
)
@pytest.mark.parametrize("big", [False, True], ids=["close", "big"])
def test_every_call_of_the_timing_phase_is_numpys(make: Any, big: bool) -> None:
    """Each call before and after the choice, of any layout, writes `numpy.tile`'s bytes."""
    # big: 8 MiB outputs, on the threads
    base = np.arange(64 * 64, dtype=np.int8).reshape(64, 64) if big else CLOSE_CASE[0]
    x = make(base % 7)
    reps = (64, 32 // x.itemsize) if big else CLOSE_CASE[1]
    want = np.tile(x, reps).tobytes()
    for _ in range(30):  # up to three programs, eight runs each, then the one chosen
        got = xtile.tile(x, reps)
        assert got.tobytes() == want
        assert not np.shares_memory(got, x)
    for order in "CF" if big and x.size else "":  # into `out=`, timed apart
        out = np.empty(np.tile(x, reps).shape, x.dtype, order=order)
        for _ in range(30):
            assert xtile.tile(x, reps, out=out) is out
            np.testing.assert_array_equal(out, np.tile(x, reps))  # a user's buffer's padding
    for _, call in _run.KEPT.values():
        assert not call.__qualname__.startswith("_measured")  # decided (or never timed)


@pytest.mark.parametrize(
    ("x", "reps"),
    [(np.ones((3, 4), np.float32), (2, 3)), CLOSE_CASE],  # short calls; long ones
)
def test_a_cleared_cache_keeps_the_call_again(x: Any, reps: tuple[int, ...]) -> None:
    """A layout whose call `KEPT` lost (past 256 keys) is kept again by its next call."""
    out = np.empty(np.tile(x, reps).shape, x.dtype)  # C-ordered: the plan's key and its own
    for repeats, into in itertools.product((reps, list(reps)), (None, out)):
        for _ in range(1000):  # the fast path's key, and the slow path's; timed, short calls
            xtile.tile(x, repeats, out=into)
        kept = dict(_run.KEPT)
        assert not any(c.__qualname__.startswith("_measured") for _, c in kept.values())
        _run.KEPT.clear()
        np.testing.assert_array_equal(xtile.tile(x, repeats, out=into), np.tile(x, reps))
        assert kept == _run.KEPT  # the decided call, not the timer `compiled` kept first
        _run.KEPT.clear()


@pytest.mark.parametrize(
    ("shape", "reps", "dtype"),
    [
        ((4000, 3), (1, 1000), "float32"),  # native priced 4.5 times the chosen
        ((1, 1, 1), (100000, 1, 1), "complex64"),
        ((16, 1), (34147, 1), "int64"),
        ((3, 4), (2, 3), "float32"),
        ((5, 7), (3, 2), "uint8"),
    ],
)
def test_the_native_program_is_a_rival_at_any_price(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: str
) -> None:
    """`numpy.tile`'s chain of repeats, where a candidate, is timed: its prices miss most."""
    layout = NUMPY.layout(np.empty(shape, dtype))
    found = _program.candidates(layout, reps, NUMPY.model, True)  # type: ignore[misc]
    native = min((p for p in found if p.name == "native"), key=lambda p: p.cost)
    chosen, *rivals = _program.ranked(layout, reps, NUMPY.model, True)  # type: ignore[misc]
    assert native == chosen or native == rivals[0]
    assert len(rivals) <= 2
    into = _program.ranked(layout, reps, NUMPY.model, False)  # type: ignore[misc]
    assert all(p.name != "native" for p in into)  # it makes its own output: not into `out`


def test_a_cached_out_checks_its_overlap_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether `out`'s elements overlap, its layout tells: checked on its first call only."""
    calls: list[object] = []
    real = _backends.overlaps_itself
    monkeypatch.setattr(_backends, "overlaps_itself", lambda *a: calls.append(a) or real(*a))
    x, out = np.arange(12.0).reshape(3, 4), np.empty((6, 4))
    for _ in range(3):
        assert xtile.tile(x, (2, 1), out=out) is out
    assert len(calls) == 1
    assert xtile.tile(x, [2, 1], out=out) is out  # the slow path checks every time
    assert len(calls) == 2
    with pytest.raises(ValueError, match="shares memory"):  # the rest: every call
        xtile.tile(out[:3], (2, 1), out=out)
