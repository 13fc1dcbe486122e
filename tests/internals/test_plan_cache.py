"""The programs kept for repeated calls (`xtile._run.compiled`): same answers, errors, keys."""

import itertools
import math
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _backends, _program, _run

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
    real = _run.plan
    calls: list[tuple[int, ...]] = []

    def failing(*args: Any) -> Any:
        calls.append(args[1])
        if len(calls) == 1:
            msg = "planning failed"
            raise RuntimeError(msg)
        return real(*args)

    monkeypatch.setattr(_run, "plan", failing)
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
    return ("numpy", layout, (2,), True, False)


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
    assert untracked.unrecorded
    assert _in_parts(compiled("torch", untracked, reps, True, False)[0])
    w = x.clone().requires_grad_()  # the same shape and strides, but tracked: another key
    tracked = backend.layout(w)
    assert tracked == untracked._replace(unrecorded=False, as_bytes=False)
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
    assert not _in_parts(compiled("torch", tracked, reps, True, False)[0])


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
# a C-ordered int64 (16, 1) by (34147, 1): staged, its candidates priced close
CLOSE_CASE = (np.arange(16).reshape(16, 1), (34147, 1))


SHORT_RUNS = ((2366, 2, 1, 3), (3, 2, 1, 1))  # runs of 6 elements


def test_torch_short_runs_tile_right_on_every_call() -> None:
    """Every call of a short-run layout, first and kept, is `torch.tile`'s."""
    torch = pytest.importorskip("torch")
    shape, reps = SHORT_RUNS
    x = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    out = torch.empty(torch.tile(x, reps).shape)
    with torch.no_grad():  # autograd's leaf, untracked here
        for into in (None, out, None):
            for _ in range(3):
                got = xtile.tile(x.requires_grad_(into is None), reps, out=into)
                assert torch.equal(got.detach(), torch.tile(x, reps))


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


def test_torch_without_numpy() -> None:
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
        print("numpy" in sys.modules, *sorted({p.name for p, _ in _run.KEPT.values()}))
    """
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    said, *kept = done.stdout.split()
    assert said == "False"
    assert kept
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


def test_torch_autograd_gradients_never_change() -> None:
    """A tensor autograd records runs one program: the gradients' bits never change."""
    torch = pytest.importorskip("torch")
    x, reps = CLOSE_CASE
    w = torch.from_numpy(x.astype(np.float64))
    w.requires_grad_()
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
def test_every_call_is_numpys(make: Any, big: bool) -> None:
    """Each call, first and kept, of any layout, writes `numpy.tile`'s bytes."""
    # big: 8 MiB outputs, on the threads
    base = np.arange(64 * 64, dtype=np.int8).reshape(64, 64) if big else CLOSE_CASE[0]
    x = make(base % 7)
    reps = (64, 32 // x.itemsize) if big else CLOSE_CASE[1]
    want = np.tile(x, reps).tobytes()
    for _ in range(3):  # the first call, then the kept one
        got = xtile.tile(x, reps)
        assert got.tobytes() == want
        assert not np.shares_memory(got, x)
    for order in "CF" if big and x.size else "":  # into `out=`
        out = np.empty(np.tile(x, reps).shape, x.dtype, order=order)
        for _ in range(3):
            assert xtile.tile(x, reps, out=out) is out
            np.testing.assert_array_equal(out, np.tile(x, reps))  # a user's buffer's padding


@pytest.mark.parametrize(
    ("x", "reps"),
    [(np.ones((3, 4), np.float32), (2, 3)), CLOSE_CASE],  # short calls; long ones
)
def test_a_cleared_cache_keeps_the_call_again(x: Any, reps: tuple[int, ...]) -> None:
    """A layout whose call `KEPT` lost (past 256 keys) is kept again by its next call."""
    out = np.empty(np.tile(x, reps).shape, x.dtype)  # C-ordered: the plan's key and its own
    for repeats, into in itertools.product((reps, list(reps)), (None, out)):
        for _ in range(3):  # the fast path's key, and the slow path's
            xtile.tile(x, repeats, out=into)
        kept = dict(_run.KEPT)
        _run.KEPT.clear()
        np.testing.assert_array_equal(xtile.tile(x, repeats, out=into), np.tile(x, reps))
        assert kept == _run.KEPT  # the same call kept again
        _run.KEPT.clear()


def test_a_cached_out_checks_its_overlap_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether `out`'s elements overlap, its layout tells: checked on its first call only."""
    calls: list[object] = []
    real = _backends.overlaps_itself
    monkeypatch.setattr(_backends, "overlaps_itself", lambda *a: calls.append(a) or real(*a))
    x, out = np.arange(12.0).reshape(3, 4), np.empty((6, 4))
    for _ in range(3):
        assert xtile.tile(x, (2, 1), out=out) is out
    assert len(calls) == 1
    assert xtile.tile(x, (np.int64(2), 1), out=out) is out  # the slow path checks every time
    assert len(calls) == 2
    with pytest.raises(ValueError, match="shares memory"):  # the rest: every call
        xtile.tile(out[:3], (2, 1), out=out)
