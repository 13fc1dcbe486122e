"""
The benchmark suite behind ``python -m xtile bench`` and ``benchmarks/bench_tile.py``.

For every case and backend it times, side by side in one run, `xtile.tile`, the
backend's own tile, a plain copy of an array of the output's size, and (on the CPU)
a fresh buffer of the output's bytes written by every core: the faster of the last
two is the machine's bound, which a Tile cannot beat (it must allocate and write
every output byte once). Harness code: it needs NumPy, and imports each backend it
is asked for.
"""

import csv
import itertools
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, NamedTuple, TypeVar

import xtile
from xtile import _threads
from xtile._testing import Backend, BackendUnavailableError

__all__ = [
    "BACKENDS",
    "CASES",
    "GPU_BACKENDS",
    "HELP",
    "LEGEND",
    "Case",
    "Result",
    "copy_on_every_core",
    "fill",
    "plot",
    "rerun",
    "reruns",
    "run",
    "summary",
    "sweep_cases",
    "table",
    "unavailable",
    "write_csv",
]

_T = TypeVar("_T")
_TORCH_THREADS: dict[str, int] = {}  # the default thread count, before any change


class Case(NamedTuple):
    """One benchmark case: an input shape, repeats, a dtype, and what it stresses."""

    shape: tuple[int, ...]
    reps: tuple[int, ...]
    dtype: str
    kind: str


CASES = [
    Case((1000, 1000), (4, 4), "float32", "long inner runs"),
    Case((4000, 3), (1, 1000), "float32", "short inner runs"),
    Case((100, 100, 3), (10, 10, 10), "float32", "short inner runs, 3 axes"),
    Case((2, 3, 4, 5), (10, 10, 10, 10), "float32", "4 repeated axes"),
    Case((2, 2, 2, 2, 2, 2), (4, 4, 4, 4, 4, 4), "float32", "6 repeated axes"),
    Case((1, 1000), (4000, 1), "float32", "pure broadcast, outer"),
    Case((1000, 1), (1, 4000), "float32", "pure broadcast, inner"),
    Case((2000, 2000), (2, 1), "float32", "large input, small repeats"),
    Case((1000, 1000), (2, 2), "float64", "large input, small repeats"),
    Case((8, 8), (2, 2), "float32", "tiny (per-call overhead)"),
    Case((1000, 1000), (4, 4), "bool", "dtype"),
    Case((1000, 1000), (4, 4), "int8", "dtype"),
    Case((500, 500), (4, 4), "float64", "dtype"),
    Case((300, 300), (4, 4), "complex128", "dtype"),
]

# printed under the table; the help's epilog says more
LEGEND = """\
x/native: the native tile's time / xtile's, above 1 = xtile faster; x/bound: the bound's
time / xtile's, 1 = as fast as this machine writes a fresh output (--help: the columns)"""

HELP = """\
The table, one row per backend and case:
  backend   numpy, torch (all threads), torch-1thread (torch.set_num_threads(1)), jax
            (eager), jax-jit (both tiles under jax.jit), array_api_strict, dask (one
            chunk, computed), on a GPU torch-cuda, jax-gpu, cupy
  case      the input's shape x the repeats (--sweep: random cases)
  out MB    the output's size in megabytes
  bound, native, xtile
            GB/s of output (output bytes / seconds per call) of the bound, of the
            backend's own tile (numpy.tile, torch.tile, ...) and of xtile.tile
  x/native  the native tile's time / xtile's time: above 1, xtile is faster
  x/bound   the bound's time / xtile's time: 1 is as fast as the bound

The bound is the faster of two ways to get a fresh array of the output's size: a plain
copy of one (which reads as many bytes as it writes) and, on the CPU, a new buffer of
the output's bytes written by every core. A tile must allocate and write every output
byte, so it cannot beat the second by much; it reads only its input, so broadcasts and
short inputs can pass the plain copy.

Each time is the fastest of --repeat samples, each sample long enough to last 20 ms,
with the contenders' samples taken in turns, so that a slow phase of the machine weighs
on all alike: compare the ratios, not the absolute speeds.

Under the table, per backend: the geometric mean and the minimum of x/native, the
geometric mean x/native would have if xtile ran at the bound on every case (what this
machine allows a tile against the native one), and the least x/bound on outputs of
32 MB or more (where memory bandwidth dominates). With
--sweep, a summary per backend follows: the same numbers, how many cases are below 0.9,
and the cases slowest against the native tile.

--rerun N times each case below 0.9 x/native N more times, in N passes over them all
after the run (so that one case's readings lie apart in time), and prints each one's
readings and their median: on a noisy machine one reading can be a slow phase, a page
fault or an allocator's state, which a median of several tells from a loss.

--csv writes the seconds per call (copy_s: the plain copy, bound_s: the buffer written by
every core, native_s, xtile_s) and the ratios xtile_vs_native (x/native), xtile_vs_copy
and xtile_vs_bound (x/bound)."""

# what the sweep draws from: its dtypes, and its bounds on outputs and runs, in bytes
SWEEP_DTYPES = ["int8", "int16", "int32", "int64", "float32", "float64", "complex64", "complex128"]
SWEEP_OUT_BYTES = (1 << 16, 1 << 26)
SWEEP_RUN_BYTES = (1, 1 << 20)


def sweep_cases(n: int, seed: int) -> list[Case]:
    """
    `n` random cases, none tuned for: ranks 1-6, every layout of repeats, eight dtypes.

    Each case draws, log-uniformly, its output's size in `SWEEP_OUT_BYTES` and the
    contiguous run of its broadcast copy (the block of the input from its last
    repeated axis on) in `SWEEP_RUN_BYTES`, then spreads them over random axes:
    a random last repeated axis, random axes inside it (of repeat 1) and outside
    it (repeated or not, of length 1 or more).

    Parameters
    ----------
    n : int
        How many cases.
    seed : int
        The seed: the same seed draws the same cases.

    Returns
    -------
    list of Case
        Cases of kind ``"sweep"``.
    """
    import numpy as np

    rng = np.random.default_rng(seed)

    def log_uniform(low: float, high: float) -> float:
        """A float between `low` and `high`, uniform in log scale."""
        return float(np.exp(rng.uniform(np.log(low), np.log(high))))

    def split(total: int, parts: int) -> list[int]:
        """`parts` positive ints whose product is about `total`, at random."""
        weights = rng.dirichlet(np.ones(parts)) if parts > 1 else np.ones(1)
        return [max(1, round(total**w)) for w in weights]

    cases: list[Case] = []
    while len(cases) < n:
        dtype = str(rng.choice(SWEEP_DTYPES))
        itemsize = np.dtype(dtype).itemsize
        rank = int(rng.integers(1, 7))
        last = int(rng.integers(0, rank))  # the last repeated axis
        run = max(1, round(log_uniform(*SWEEP_RUN_BYTES) / itemsize))
        out = log_uniform(*SWEEP_OUT_BYTES) / itemsize
        if out < 2 * run:
            continue
        # the run spreads over the axes from `last` on; the rest over the others
        shape = [1] * last + split(run, rank - last)
        rest = out / math.prod(shape)
        outer = [i for i in range(last) if rng.random() < 0.7]
        factors = split(round(rest), 1 + 2 * len(outer))
        reps = [1] * rank
        reps[last] = max(2, factors[0])
        for i, d, r in zip(outer, factors[1::2], factors[2::2], strict=True):
            shape[i] = d
            reps[i] = r if rng.random() < 0.7 else 1
        if rng.random() < 0.3 and last > 0:  # a repeat of an axis of length 1
            i = int(rng.integers(0, last))
            shape[i], reps[i] = 1, reps[i] * shape[i]
        nbytes = math.prod(shape) * math.prod(reps) * itemsize
        if SWEEP_OUT_BYTES[0] <= nbytes <= SWEEP_OUT_BYTES[1]:
            cases.append(Case(tuple(shape), tuple(reps), dtype, "sweep"))
    return cases


@dataclass
class Result:
    """Timings of one (backend, case), in seconds per call."""

    backend: str
    case: str
    kind: str
    dtype: str
    out_bytes: int
    copy_s: float
    native_s: float
    xtile_s: float
    bound_s: float = math.nan

    @property
    def vs_native(self) -> float:
        """The native tile's time over xtile's: how many times faster xtile is."""
        return self.native_s / self.xtile_s

    @property
    def vs_copy(self) -> float:
        """The plain copy's time over xtile's: xtile's speed against the copy bound."""
        return self.copy_s / self.xtile_s

    @property
    def vs_bound(self) -> float:
        """
        The machine's bound over xtile's time.

        The bound is the faster of the plain copy and a fresh buffer of the output's
        bytes written by every core (`fill`); the copy alone where not measured.
        """
        return min(self.copy_s, self.bound_s) / self.xtile_s if self.bound_s > 0 else self.vs_copy

    @property
    def at_bound(self) -> float:
        """The native tile's time over the bound's: xtile / native of a tile at the bound."""
        return self.vs_native / self.vs_bound


# calls of each function before its samples: xtile's first call of a layout plans it
SETTLE = 3


def best_times(
    fns: list[Callable[[], Any]], sync: Callable[[Any], Any], repeat: int
) -> list[float]:
    """
    Best seconds per call of each function, sampled in turns.

    The samples of the functions alternate, so that a slow phase of the machine
    (other tenants, page-cache or frequency changes) weighs on all of them alike:
    their ratios are measured side by side. Each function first runs `SETTLE` times,
    so that what is timed is the program xtile keeps, not its planning.

    Parameters
    ----------
    fns : list of callable
        The calls to time.
    sync : callable
        Waits for a result (JAX dispatches asynchronously).
    repeat : int
        Samples per function; each runs enough calls to last 20 ms.

    Returns
    -------
    list of float
        Each function's fastest sample, in seconds per call.
    """
    numbers = []
    for fn in fns:  # settle, and find how many calls last 20 ms
        for _ in range(SETTLE):
            sync(fn())
        number = 1
        while _sample(fn, sync, number) * number <= 0.02:
            number *= 4
        numbers.append(number)
    best = [math.inf] * len(fns)
    for _ in range(repeat):
        for i, (fn, number) in enumerate(zip(fns, numbers, strict=True)):
            best[i] = min(best[i], _sample(fn, sync, number))
    return best


def _sample(fn: Callable[[], Any], sync: Callable[[Any], Any], number: int) -> float:
    """Seconds per call over `number` calls."""
    t0 = time.perf_counter()
    for _ in range(number):
        sync(fn())
    return (time.perf_counter() - t0) / number


def fill(nbytes: int) -> Any:
    """
    A fresh buffer of `nbytes`, written by every CPU this process may run on.

    The machine's bound on writing a fresh output: each thread fills its slab (NumPy
    releases the GIL), so the page faults and the writes go in parallel.

    Parameters
    ----------
    nbytes : int
        The size of the buffer.

    Returns
    -------
    numpy.ndarray
        The buffer, of uint8.
    """
    import numpy as np

    buffer = np.empty(nbytes, np.uint8)
    copy_on_every_core(buffer, np.ones(1, np.uint8))
    return buffer


def copy_on_every_core(buffer: Any, source: Any) -> None:
    """
    ``numpy.copyto(buffer, source)``, in slabs of `buffer`'s first axis, one per CPU.

    Parameters
    ----------
    buffer : numpy.ndarray
        Written.
    source : numpy.ndarray
        Broadcast to `buffer`.
    """
    import numpy as np

    n = max(1, min(_threads._cpus(), buffer.shape[0] if buffer.ndim else 1))
    if n == 1:
        np.copyto(buffer, source)
        return
    source = np.broadcast_to(source, buffer.shape)
    cuts = [buffer.shape[0] * i // n for i in range(n + 1)]
    pool = _POOLS.setdefault(n, ThreadPoolExecutor(n - 1, thread_name_prefix="bench"))
    parts = [(buffer[a:b], source[a:b]) for a, b in itertools.pairwise(cuts)]
    done = [pool.submit(np.copyto, *part) for part in parts[1:]]
    np.copyto(*parts[0])
    for d in done:
        d.result()


_POOLS: dict[int, ThreadPoolExecutor] = {}


class _Contender(NamedTuple):
    """One backend's contenders: its tile, xtile and a plain copy, and how to wait."""

    asarray: Callable[[Any], Any]
    native: Callable[[Any, tuple[int, ...]], Any]
    copy: Callable[[Any], Any]
    tile: Callable[[Any, tuple[int, ...]], Any]
    sync: Callable[[Any], Any]


def _backends(names: Iterable[str]) -> Iterator[tuple[str, _Contender]]:
    """The backends to race, each with its own tile and plain copy."""
    import numpy as np

    def same(a: _T) -> _T:
        """No wait: the backend is synchronous."""
        return a

    for name in names:
        if name == "numpy":
            yield name, _Contender(np.asarray, np.tile, np.copy, xtile.tile, same)
        elif name == "torch-cuda":
            import torch

            def synced(a: _T) -> _T:
                """Wait for the device's queue: CUDA runs asynchronously."""
                torch.cuda.synchronize()
                return a

            cuda = partial(torch.asarray, device="cuda")
            yield name, _Contender(cuda, torch.tile, torch.clone, xtile.tile, synced)
        elif name.startswith("torch"):
            import torch

            _TORCH_THREADS.setdefault("all", torch.get_num_threads())
            torch.set_num_threads(1 if name == "torch-1thread" else _TORCH_THREADS["all"])
            yield name, _Contender(torch.asarray, torch.tile, torch.clone, xtile.tile, same)
        elif name.startswith("jax"):
            import jax
            import jax.numpy as jnp

            jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]

            def block(a: Any) -> Any:
                return a.block_until_ready()

            if name == "jax-gpu":
                gpu = partial(jax.device_put, device=jax.devices("gpu")[0])
                yield name, _Contender(gpu, jnp.tile, jnp.copy, xtile.tile, block)
            elif name == "jax-jit":
                yield (
                    name,
                    _Contender(
                        jnp.asarray,
                        partial(_jitted, jnp.tile),
                        jax.jit(jnp.copy),
                        partial(_jitted, xtile.tile),
                        block,
                    ),
                )
            else:
                yield name, _Contender(jnp.asarray, jnp.tile, jnp.copy, xtile.tile, block)
        elif name == "cupy":
            import cupy

            def cupy_synced(a: _T) -> _T:
                """Wait for the device: CuPy's kernels run asynchronously."""
                cupy.cuda.get_current_stream().synchronize()
                return a

            yield name, _Contender(cupy.asarray, cupy.tile, cupy.copy, xtile.tile, cupy_synced)
        elif name == "array_api_strict":
            import array_api_strict as xp

            yield (
                name,
                _Contender(xp.asarray, xp.tile, partial(xp.asarray, copy=True), xtile.tile, same),
            )
        elif name == "dask":
            import dask.array as da

            def compute(a: Any) -> Any:
                return a.compute()

            def from_numpy(a: Any) -> Any:
                return da.from_array(a, chunks=-1)  # type: ignore[no-untyped-call]

            yield name, _Contender(from_numpy, da.tile, lambda a: a.copy(), xtile.tile, compute)
        else:
            msg = f"unknown backend {name!r}"
            raise ValueError(msg)


_JITTED: dict[Any, Any] = {}


def _jitted(f: Callable[..., Any], x: Any, reps: tuple[int, ...]) -> Any:
    """``f(x, reps)`` under ``jax.jit``, compiled once per (f, reps)."""
    import jax

    if (f, reps) not in _JITTED:
        _JITTED[f, reps] = jax.jit(partial(lambda a, f, reps: f(a, reps), f=f, reps=reps))
    return _JITTED[f, reps](x)


BACKENDS = ["numpy", "torch-1thread", "torch", "jax", "jax-jit", "array_api_strict", "dask"]
# on a CUDA device, each timed with a wait for the device after every call
GPU_BACKENDS = ["torch-cuda", "jax-gpu", "cupy"]
# the self-check's backend (library and device) each one runs on
_HARNESS = {
    "numpy": Backend.NUMPY,
    "torch-1thread": Backend.TORCH,
    "torch": Backend.TORCH,
    "jax": Backend.JAX,
    "jax-jit": Backend.JAX,
    "array_api_strict": Backend.ARRAY_API_STRICT,
    "dask": Backend.DASK,
    "torch-cuda": Backend.TORCH_CUDA,
    "jax-gpu": Backend.JAX_GPU,
    "cupy": Backend.CUPY,
}


def unavailable(name: str) -> str | None:
    """
    Why backend `name` cannot run here, or None if it can.

    Imports the backend's library, as the run would.

    Parameters
    ----------
    name : str
        A name from `BACKENDS` or `GPU_BACKENDS`.

    Returns
    -------
    str or None
        The reason, e.g. "jax is not installed" or "no CUDA device for torch".
    """
    try:
        _HARNESS[name].load()
    except BackendUnavailableError as e:
        return str(e)
    return None


def run(
    backends: Iterable[str] = BACKENDS, cases: Iterable[Case] = CASES, repeat: int = 5
) -> list[Result]:
    """
    Time every case on every backend, with a progress bar on a terminal's stderr.

    Parameters
    ----------
    backends : iterable of str
        Names from `BACKENDS` and `GPU_BACKENDS`.
    cases : iterable of Case
        The cases.
    repeat : int, optional
        Samples per timing.

    Returns
    -------
    list of Result
        One per (backend, case).
    """
    import numpy as np

    cases = list(cases)
    names = list(backends)
    results: list[Result] = []
    total = len(cases) * len(names)
    for name, b in _backends(names):
        for case in cases:
            _progress(len(results), total, f"{name} {case.shape}x{case.reps}")
            data = np.arange(math.prod(case.shape)).reshape(case.shape) % 127
            x = b.asarray(data.astype(case.dtype))
            r = case.reps
            out_shape = xtile.tile_shape(case.shape, r)
            big = b.asarray(np.ones(out_shape, dtype=case.dtype))
            nbytes = math.prod(out_shape) * np.dtype(case.dtype).itemsize  # type: ignore[arg-type]
            fns = [partial(b.copy, big), partial(b.native, x, r), partial(b.tile, x, r)]
            timed: list[Callable[[], Any]] = [partial(_synced, b.sync, f) for f in fns]
            if name not in GPU_BACKENDS:
                timed.append(partial(fill, nbytes))
            copy_s, native_s, xtile_s, *bound = best_times(timed, _same, repeat)
            results.append(
                Result(
                    backend=name,
                    case=f"{case.shape}x{case.reps}",
                    kind=case.kind,
                    dtype=case.dtype,
                    out_bytes=nbytes,
                    copy_s=copy_s,
                    native_s=native_s,
                    xtile_s=xtile_s,
                    bound_s=bound[0] if bound else math.nan,
                )
            )
            del big
    _progress(total, total, "done")
    return results


def _synced(sync: Callable[[Any], Any], fn: Callable[[], Any]) -> Any:
    """``fn()``, waited for."""
    return sync(fn())


def _same(a: _T) -> _T:
    """No wait."""
    return a


def _progress(done: int, total: int, label: str) -> None:
    """Draw a one-line progress bar on stderr, if a terminal (not in a log)."""
    if not sys.stderr.isatty():
        return
    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done == total else ""
    bar = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<40}"
    sys.stderr.write(f"\r{bar}{end}")
    sys.stderr.flush()


def table(results: list[Result]) -> str:
    """
    The results as a text table, with GB/s of output bytes and the ratios.

    Parameters
    ----------
    results : list of Result
        From `run`.

    Returns
    -------
    str
        One line per result, then geometric means of the ratios per backend, then
        `LEGEND`.
    """
    width = max([len("case"), *(len(r.case) for r in results)]) + 2  # columns stay aligned
    header = (
        f"{'backend':<17}{'case':<{width}}{'dtype':<11}{'out MB':>8}{'bound':>7}{'native':>8}"
        f"{'xtile':>7}{'x/native':>10}{'x/bound':>9}"
    )
    lines = [header, f"{'':<{17 + width + 19}}{'(GB/s of output)':>22}"]
    for r in results:
        bound = r.xtile_s * r.vs_bound
        gbps = [r.out_bytes / t / 1e9 for t in (bound, r.native_s, r.xtile_s)]
        lines.append(
            f"{r.backend:<17}{r.case:<{width}}{r.dtype:<11}{r.out_bytes / 1e6:>8.2f}"
            f"{gbps[0]:>7.1f}{gbps[1]:>8.1f}{gbps[2]:>7.1f}{r.vs_native:>10.2f}{r.vs_bound:>9.2f}"
        )
    lines.append("")
    for backend in dict.fromkeys(r.backend for r in results):
        rs = [r for r in results if r.backend == backend]
        big = [r for r in rs if r.out_bytes >= 32e6]
        lines.append(
            f"{backend:<17} geomean xtile/native {_geomean(r.vs_native for r in rs):.2f}, "
            f"min {min(r.vs_native for r in rs):.2f} (at the bound: "
            f"{_geomean(r.at_bound for r in rs):.2f}); xtile/bound on outputs >= 32 MB: "
            f"min {min((r.vs_bound for r in big), default=math.nan):.2f}"
        )
    return "\n".join([*lines, "", LEGEND])


def summary(results: list[Result], worst: int = 10) -> str:
    """
    Per backend: the geomean and minimum of xtile / native, and the worst cases.

    Parameters
    ----------
    results : list of Result
        From `run`, typically over `sweep_cases`.
    worst : int, optional
        How many of the slowest cases against the native tile to list per backend.

    Returns
    -------
    str
        A paragraph per backend.
    """
    lines = []
    for backend in dict.fromkeys(r.backend for r in results):
        rs = sorted((r for r in results if r.backend == backend), key=lambda r: r.vs_native)
        big = [r.vs_bound for r in rs if r.out_bytes >= 32e6]
        slow = sum(r.vs_native < 0.9 for r in rs)
        at = _geomean(r.at_bound for r in rs)  # NaN where no bound was timed
        ceiling = "" if math.isnan(at) else f"a tile at the bound on every case: geomean {at:.2f}; "
        lines.append(
            f"{backend}: {len(rs)} cases, xtile/native geomean "
            f"{_geomean(r.vs_native for r in rs):.2f}, min {rs[0].vs_native:.2f}, "
            f"{slow} below 0.9; {ceiling}xtile/bound on the {len(big)} outputs >= 32 MB: "
            f"min {min(big, default=math.nan):.2f}"
        )
        lines.append("  slowest against the native tile (x/native, x/bound, case, dtype, output):")
        lines += [
            f"    {r.vs_native:5.2f} (bound {r.vs_bound:4.2f})  {r.case} {r.dtype}, "
            f"{r.out_bytes / 1e6:.2f} MB"
            for r in rs[:worst]
        ]
    return "\n".join(lines)


def rerun(
    results: list[Result], cases: list[Case], times: int, repeat: int = 5, below: float = 0.9
) -> list[list[Result]]:
    """
    Time each case below `below` x/native again, `times` times, in passes over them all.

    Parameters
    ----------
    results : list of Result
        From ``run(backends, cases)``: one per backend and case, in that order.
    cases : list of Case
        The cases of that run.
    times : int
        The readings to add to each.
    repeat : int, optional
        Samples per timing, as `run`'s.
    below : float, optional
        The x/native under which a case is timed again.

    Returns
    -------
    list of list of Result
        Per case timed again, in the order of `results`: its first reading, then the
        new ones.
    """
    slow = [(r, cases[i % len(cases)]) for i, r in enumerate(results) if r.vs_native < below]
    readings = [[r] for r, _ in slow]
    for _ in range(times):  # a pass over all, then the next: a slow phase hits one reading
        for (r, case), seen in zip(slow, readings, strict=True):
            seen.extend(run([r.backend], [case], repeat))
    return readings


def reruns(readings: list[list[Result]], below: float = 0.9) -> str:
    """
    The readings of `rerun`: each case's x/native readings and median, then a count.

    Parameters
    ----------
    readings : list of list of Result
        From `rerun`.
    below : float, optional
        The x/native the count is of cases whose median stays under.

    Returns
    -------
    str
        A line per case, then one per backend.
    """
    lines = [f"cases below {below} x/native, timed again (x/native of each reading -> median):"]
    medians: dict[str, list[float]] = {}
    for rs in readings:
        ratios = [r.vs_native for r in rs]
        medians.setdefault(rs[0].backend, []).append(median := statistics.median(ratios))
        lines.append(
            f"  {rs[0].backend:<14} {rs[0].case} {rs[0].dtype}, {rs[0].out_bytes / 1e6:.2f} MB: "
            f"{' '.join(f'{v:.2f}' for v in ratios)} -> {median:.2f}"
        )
    if not readings:
        lines.append("  none")
    lines += [
        f"{backend}: {sum(m < below for m in ms)} of {len(ms)} below {below} on the median, "
        f"least median {min(ms):.2f}"
        for backend, ms in medians.items()
    ]
    return "\n".join(lines)


def _geomean(values: Iterable[float]) -> float:
    """Geometric mean."""
    vs = list(values)
    return math.exp(sum(math.log(v) for v in vs) / len(vs))


def write_csv(results: list[Result], path: str) -> None:
    """
    Write the results, with GB/s and ratios, to a CSV file.

    Parameters
    ----------
    results : list of Result
        From `run`.
    path : str
        The file to write.
    """
    with open(path, "w", newline="") as f:  # noqa: PTH123
        fields = [*asdict(results[0]), "xtile_vs_native", "xtile_vs_copy", "xtile_vs_bound"]
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for r in results:
            ratios = {
                "xtile_vs_native": r.vs_native,
                "xtile_vs_copy": r.vs_copy,
                "xtile_vs_bound": r.vs_bound,
            }
            writer.writerow(asdict(r) | ratios)


def plot(results: list[Result], path: str) -> None:
    """
    Draw xtile, the native tile and the copy bound (GB/s) per case and backend.

    Parameters
    ----------
    results : list of Result
        From `run`.
    path : str
        The PNG file to write.
    """
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    backends = list(dict.fromkeys(r.backend for r in results))
    fig, axes = plt.subplots(len(backends), 1, figsize=(12, 3.2 * len(backends)), squeeze=False)
    for ax, backend in zip(axes[:, 0], backends, strict=True):
        rs = [r for r in results if r.backend == backend]
        xs = range(len(rs))
        for label, attr, style in [
            ("plain copy of the output's size", "copy_s", "k_"),
            ("native tile", "native_s", "s"),
            ("xtile", "xtile_s", "o"),
        ]:
            ax.plot(xs, [r.out_bytes / getattr(r, attr) / 1e9 for r in rs], style, label=label)
        ax.set_title(backend)
        ax.set_ylabel("GB/s of output")
        ax.set_xticks(
            list(xs), [f"{r.case} {r.dtype}" for r in rs], rotation=30, ha="right", fontsize=7
        )
        ax.legend(fontsize=7)
    fig.suptitle(
        "Higher is faster. The plain copy reads as many bytes as it writes; a tile reads only "
        "its input, so broadcasts and short inputs pass it.",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
