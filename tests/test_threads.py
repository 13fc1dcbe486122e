"""Big outputs on every thread: the count and its controls, exact copies in slabs, huge pages."""

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _threads
from xtile._testing import slabs_at_every_size


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every NumPy copy in slabs on 2 threads, whatever its size; yields the slab counts run."""
    runs: list[int] = []
    real = _threads.run

    def spy(calls: Sequence[Callable[[], object]]) -> None:
        runs.append(len(calls))
        real(calls)

    monkeypatch.setattr(_threads, "run", spy)
    with slabs_at_every_size():
        yield runs


@pytest.mark.parametrize(("n", "error"), [(0, ValueError), (-2, ValueError), (1.5, TypeError)])
def test_threads_refuses(n: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=f"not .*{n}"), xtile.threads(n):
        pass  # pragma: no cover


def test_threads_refuses_bool() -> None:
    with pytest.raises(TypeError, match="not bool"), xtile.threads(True):
        pass  # pragma: no cover


def test_count_from_blocks_env_and_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XTILE_NUM_THREADS", raising=False)
    assert _threads.count() == _threads._cpus()
    monkeypatch.setenv("XTILE_NUM_THREADS", "3")
    assert _threads.count() == 3
    with xtile.threads(5):
        assert _threads.count() == 5
        with xtile.threads(1):
            assert _threads.count() == 1
        assert _threads.count() == 5
    assert _threads.count() == 3


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_bad_env_named(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("XTILE_NUM_THREADS", value)
    monkeypatch.setattr(_threads, "PARALLEL_BYTES", 0)
    with pytest.raises(ValueError, match=f"XTILE_NUM_THREADS.*{value!r}"):
        xtile.tile(np.zeros((40, 30)), (3, 2))


def _python(code: str) -> str:
    """The output of `code` run by this Python in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "XTILE_NUM_THREADS"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True, text=True, check=True, timeout=120, env=env,
    )  # fmt: skip
    return done.stdout


def test_threadpoolctl_imported_after_xtile() -> None:
    pytest.importorskip("threadpoolctl")
    code = (
        "import numpy, xtile; from xtile import _threads\n"
        "from threadpoolctl import threadpool_limits\n"
        "with threadpool_limits(1):\n    print(_threads.count())\n"
        "print(_threads.count() == _threads._cpus())"
    )
    assert _python(code).split() == ["1", "True"]


def test_threadpoolctl_survives_a_bad_env(monkeypatch: pytest.MonkeyPatch) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.setenv("XTILE_NUM_THREADS", "abc")
    info = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "xtile"]
    assert [i["num_threads"] for i in info] == [_threads._cpus()]


def test_threadpoolctl_limit_above_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.delenv("XTILE_NUM_THREADS", raising=False)
    many = _threads._cpus() + 6
    with xtile.threads(many), threadpoolctl.threadpool_limits(many - 4, user_api="xtile"):
        assert _threads.count() == many - 4
    assert _threads.count() == _threads._cpus()


def test_a_big_tile_at_interpreter_exit() -> None:
    """At shutdown the pool takes no new work: the caller's thread writes every slab."""
    code = (
        "import atexit, numpy as np, xtile\n"
        "def last():\n"
        "    with xtile.threads(2):\n"
        "        y = xtile.tile(np.ones((1000, 1000)), (2, 2))\n"
        "    print(bool((y == 1).all()), y.shape)\n"
        "atexit.register(last)\n"
        "xtile.tile(np.ones((1000, 1000)), (2, 2))  # the pool exists\n"
    )
    assert _python(code).strip() == "True (2000, 2000)"


def test_threadpoolctl_limits_xtile(monkeypatch: pytest.MonkeyPatch) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.setenv("XTILE_NUM_THREADS", "3")  # a limit of 1 is below the default
    before = _threads.count()
    info = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "xtile"]
    assert [i["num_threads"] for i in info] == [before]
    with threadpoolctl.threadpool_limits(1):
        assert _threads.count() == 1
        with xtile.threads(4):  # a block inside the limit stays under it
            assert _threads.count() == 1
    assert _threads.count() == before
    with threadpoolctl.threadpool_limits(user_api="blas", limits=1):
        assert _threads.count() == before  # another library's limit


CASES = [
    ((40, 30), (3, 2), "float64"),  # long runs: one copy
    ((4000, 3), (1, 100), "float32"),  # short runs: staged
    ((1, 7), (3000, 1), "int8"),  # one axis repeats: numpy.repeat, one pass (into out=: copies)
    ((30, 100), (5, 1), "float64"),  # one axis repeats, long blocks: their copy in slabs
    ((129, 3), (50, 9), "int16"),  # a prefix extended inside the output
    ((3, 5, 2), (2, 3, 700), "complex128"),
    ((1000, 3), (1, 3), "uint8"),  # runs of 3 bytes as void items
    ((600, 2), (1, 3), "float64"),  # a short broadcast last axis: one copy per index
]


@pytest.mark.parametrize(("shape", "reps", "dtype"), CASES)
@pytest.mark.parametrize("order", ["C", "F", "reversed"])
def test_slabs_are_exact(
    split: list[int], shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, order: str
) -> None:
    x = (np.arange(np.prod(shape)) % 101).astype(dtype).reshape(shape)
    x = np.asfortranarray(x) if order == "F" else x[::-1] if order == "reversed" else x
    want = np.tile(x, reps)
    y = xtile.tile(x, reps)
    np.testing.assert_array_equal(y, want)
    out = np.full(want.shape[::-1], 7, dtype).T  # Fortran strides
    assert xtile.tile(x, reps, out=out) is out
    np.testing.assert_array_equal(out, want)
    assert max(split, default=0) > 1  # some copy went in slabs (`out=` too)


@pytest.mark.parametrize("dtype", [object, np.dtypes.StringDType()])
def test_items_with_pointers_stay_on_one_thread(split: list[int], dtype: Any) -> None:
    x = np.array([["a", "bc"], ["def", ""]], dtype=dtype)
    np.testing.assert_array_equal(xtile.tile(x, (300, 20)), np.tile(x, (300, 20)))
    assert split == []


@pytest.mark.parametrize(("shape", "reps", "dtype"), CASES[:4])
def test_three_uneven_slabs(
    split: list[int], shape: tuple[int, ...], reps: tuple[int, ...], dtype: str
) -> None:
    x = (np.arange(np.prod(shape)) % 101).astype(dtype).reshape(shape)
    with xtile.threads(3):
        y = xtile.tile(x, reps)
        out = np.empty_like(y)
        xtile.tile(x, reps, out=out)
    np.testing.assert_array_equal(y, np.tile(x, reps))
    np.testing.assert_array_equal(out, np.tile(x, reps))
    assert max(split) >= 3  # slabs on three threads


def test_one_thread_never_splits(split: list[int]) -> None:
    with xtile.threads(1):
        np.testing.assert_array_equal(
            xtile.tile(np.eye(30), (20, 20)), np.tile(np.eye(30), (20, 20))
        )
    assert split == []


def test_many_callers_share_the_pool(split: list[int]) -> None:
    """8 user threads at once: exact results, and the pool never grows past the CPUs."""
    x = (np.arange(3000) % 97).astype(np.float64).reshape(30, 100)  # one broadcast copy
    want = np.tile(x, (40, 7))
    results: list[bool] = []

    def caller() -> None:
        with xtile.threads(2):
            results.extend(np.array_equal(xtile.tile(x, (40, 7)), want) for _ in range(30))

    callers = [threading.Thread(target=caller) for _ in range(8)]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    assert results == [True] * 240
    assert max(split) == 2 * _threads.SHARES
    workers = [t for t in threading.enumerate() if t.name.startswith("xtile")]
    assert 1 <= len(workers) <= _threads._cpus()
    assert not _threads._STATE.busy


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_forked_child_makes_its_own_pool() -> None:
    """
    After a fork the child has none of the parent's pool threads: it makes its own.

    In a fresh process (one that has loaded JAX warns at every fork, rightly).
    """
    code = (
        "import os, numpy as np, xtile\n"
        "from xtile import _testing, _threads\n"
        "_threads.PARALLEL_BYTES = 0\n"
        "want = np.tile(np.eye(20), (30, 30))\n"
        "# the one broadcast copy, whatever the costs pick: it goes in slabs at any size\n"
        "with xtile.threads(2), _testing.switched_off(*_testing.STRATEGIES):\n"
        "    xtile.tile(np.eye(20), (30, 30))\n"
        "    assert _threads._STATE.pool is not None  # the parent's pool exists\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        ok = np.array_equal(xtile.tile(np.eye(20), (30, 30)), want)\n"
        "        os._exit(0 if ok and _threads._STATE.pool is not None else 3)\n"
        "    print(os.waitpid(pid, 0)[1])\n"
    )
    assert _python(code).strip() == "0"


def _thp_mode() -> str:
    try:
        return Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return "[never]"


@pytest.mark.skipif("[never]" in _thp_mode(), reason="no transparent huge pages here")
def test_big_torch_output_advised_for_huge_pages() -> None:
    """A big fresh CPU output's whole huge pages are advised, and it stays a normal tensor."""
    torch = pytest.importorskip("torch")
    from xtile._backends import torch as fast

    x = torch.arange(3000, dtype=torch.float32).reshape(1000, 3)
    y = xtile.tile(x, (2, 1000))
    assert y.numel() * y.element_size() >= fast.HUGE_BYTES
    assert torch.equal(y, torch.tile(x, (2, 1000)))
    start = -(-y.data_ptr() // (1 << 21)) * (1 << 21)
    flags = _vm_flags(start)
    assert "hg" in flags.split(), flags  # MADV_HUGEPAGE on the range
    assert y.untyped_storage().resizable()
    y.resize_(10)  # the framework's own tensor: resizable, freed as any
    assert y.numel() == 10


def _vm_flags(address: int) -> str:
    """The VmFlags of the mapping of this process that holds `address`."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(a, 16) for a in head.split("-"))
            inside = lo <= address < hi
        elif inside and line.startswith("VmFlags:"):
            return line
    return ""


@pytest.mark.parametrize("mode", ["grad", "inference", "no_grad"])
def test_big_torch_output_in_every_mode(mode: str) -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(3000, dtype=torch.float64).reshape(1000, 3)
    if mode == "grad":
        x.requires_grad_(True)
        y = xtile.tile(x, (2, 1000))
        assert y.grad_fn is not None
    elif mode == "inference":
        with torch.inference_mode():
            y = xtile.tile(x, (2, 1000))
        assert y.is_inference()
    else:
        with torch.no_grad():
            y = xtile.tile(x, (2, 1000))
    assert torch.equal(y.detach(), torch.tile(x.detach(), (2, 1000)))


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:Converting a tensor to a Python boolean:Warning")
def test_traced_big_output_follows_the_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under torch.jit.trace the output is the copy's own, not an empty of the traced dtype."""
    torch = pytest.importorskip("torch")
    from xtile._backends import torch as fast

    monkeypatch.setattr(fast, "HUGE_BYTES", 0)
    traced = torch.jit.trace(lambda a: xtile.tile(a, (2, 3)), torch.ones(4, 5))
    y = traced(torch.arange(20).reshape(4, 5))
    assert y.dtype == torch.int64
    assert torch.equal(y, torch.tile(torch.arange(20).reshape(4, 5), (2, 3)))
