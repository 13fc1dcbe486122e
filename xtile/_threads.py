"""The threads that write a big output: `threads`, ``XTILE_NUM_THREADS``, threadpoolctl."""

# A big copy is split into slabs, `SHARES` per thread, which the calling thread and a
# pool's threads (the pool made on the first such copy, remade after a fork) take in
# turns; the caller takes every slab no other thread has started, so on busy cores it
# waits for no thread the system does not run. The count is the first of: the innermost
# `threads` block, XTILE_NUM_THREADS, the CPUs this process may run on; a threadpoolctl
# limit lowers it. A copy that starts while another is in the pool runs on its caller's
# thread alone: calls from many threads never ask for more threads than there are CPUs.

import contextlib
import contextvars
import os
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

# the least copy split over threads (smaller ones are no faster on two)
PARALLEL_BYTES = 12 << 20
# slabs per thread: one the system does not run holds up the copy by a quarter of its share
SHARES = 4

_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("xtile_threads", default=None)


# the pool (None until the first split copy), whether a copy is in it, a threadpoolctl limit
_STATE = types.SimpleNamespace(limited=None)


def _forked() -> None:
    """A new pool on the next split copy: a forked child has none of its parent's threads."""
    _STATE.lock, _STATE.pool, _STATE.busy = threading.Lock(), None, False


_forked()


def _cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _default() -> int:
    """The count outside any block: ``XTILE_NUM_THREADS`` (a positive int), else the CPUs."""
    value = os.environ.get("XTILE_NUM_THREADS", "").strip()
    if not value:
        return _cpus()
    if not value.isdecimal() or int(value) < 1:
        msg = f"XTILE_NUM_THREADS must be a positive integer, not {value!r}."
        raise ValueError(msg)
    return int(value)


def count() -> int:
    """How many threads a big copy uses now: a `threads` block, the environment, the CPUs."""
    n = _LIMIT.get() or _default()
    return max(1, min(n, _STATE.limited or n))


@contextlib.contextmanager
def threads(n: int, /) -> Iterator[None]:
    """
    Write big outputs with at most `n` threads inside this block (in this thread or task).

    Outside any block xtile uses ``XTILE_NUM_THREADS`` if set, else every CPU the
    process may run on. PyTorch's copies use PyTorch's own threads
    (``torch.set_num_threads``); this count is for NumPy's, which xtile splits.

    Parameters
    ----------
    n : int
        The most threads, at least 1; 1 writes on the calling thread alone.

    Yields
    ------
    None
        Inside the block the count is `n`.

    Raises
    ------
    TypeError
        If `n` is not an int.
    ValueError
        If `n` is below 1.

    Examples
    --------
    >>> import numpy as np
    >>> import xtile
    >>> with xtile.threads(1):
    ...     xtile.tile(np.arange(3), 2)
    array([0, 1, 2, 0, 1, 2])
    """
    if type(n) is not int:
        msg = f"xtile.threads: n must be an int, not {type(n).__name__} ({n!r})."
        raise TypeError(msg)
    if n < 1:
        msg = f"xtile.threads: n must be at least 1, not {n}."
        raise ValueError(msg)
    token = _LIMIT.set(n)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def run(calls: Sequence[Callable[[], object]], most: int = 1 << 30, /) -> None:
    """
    Run `calls` (C copies that release the GIL) on up to `most` threads, this one among them.

    The threads take the calls in turns, and this thread takes every call that no other
    has started, then waits only for the calls started elsewhere: on busy cores a call
    waits for no thread the system has not run yet.
    """
    n = min(count(), most, len(calls))
    with _STATE.lock:
        shared = n > 1 and not _STATE.busy  # a copy already in the pool: this one alone
        if shared:
            _STATE.busy = True
            _STATE.pool = _STATE.pool or ThreadPoolExecutor(_cpus(), thread_name_prefix="xtile")
    if not shared:
        for call in calls:
            call()
        return
    left, taking, finished = iter(calls), threading.Lock(), threading.Event()
    pending, errors = [len(calls)], []

    def take() -> None:
        while True:
            with taking:
                call = next(left, None)
            if call is None:
                return
            try:
                call()
            except BaseException as e:  # noqa: BLE001 (raised by the caller, after the others)
                errors.append(e)
            with taking:
                pending[0] -= 1
                if not pending[0]:
                    finished.set()

    futures: list[Future[None]] = []
    try:
        for _ in range(n - 1):
            try:
                futures.append(_STATE.pool.submit(take))
            except RuntimeError:  # the interpreter is shutting down: no new threads
                break
        start = time.perf_counter()
        take()
        for future in futures:
            future.cancel()  # one not started finds nothing left: no need to run it
        # the calls other threads started, done before a return: a slab's time awake (a
        # sleeping thread may wake only when a busy core lets it), then asleep
        until = time.perf_counter() + (time.perf_counter() - start) * n / len(calls)
        while not finished.is_set() and time.perf_counter() < until:
            time.sleep(0)  # the GIL released for the thread that finishes
        finished.wait()
    finally:
        _STATE.busy = False
    if errors:
        raise errors[0]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def default_count() -> int:
    """The count outside any block; the CPUs where ``XTILE_NUM_THREADS`` is wrong."""
    try:
        return _default()
    except ValueError:  # raised by xtile's own calls; threadpoolctl's must not break
        return _cpus()


def _register_threadpoolctl() -> None:
    """Let ``threadpoolctl.threadpool_limits`` limit xtile's threads (a custom controller)."""
    # threadpoolctl finds controllers by the shared libraries loaded: xtile's go with
    # NumPy's core module; registered at import, so that a limit entered later applies
    try:
        from threadpoolctl import LibController, register  # type: ignore[import-untyped]
    except ImportError:  # not installed, or before 3.2: no custom controllers
        return

    class _Controller(LibController):  # type: ignore[misc]
        """The threads of xtile, as threadpoolctl sees them."""

        user_api = internal_api = "xtile"
        filename_prefixes = ("_multiarray_umath",)

        def get_num_threads(self) -> int:
            """The limit in force: threadpoolctl's, else the count outside any block."""
            return _STATE.limited or default_count()

        def set_num_threads(self, num_threads: int) -> None:
            """Limit every later copy; threadpoolctl restores the limit it read on exit."""
            # the count outside any block is no limit (the exit restores it): it must
            # not cap a `threads` block that asks for more
            _STATE.limited = None if num_threads == default_count() else max(1, num_threads)

        def get_version(self) -> str:
            """The version of xtile."""
            from . import __version__

            return __version__

    register(_Controller)


_register_threadpoolctl()
