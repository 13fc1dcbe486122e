"""
Ablation: xtile with each of its strategies switched off in turn, against the native tile.

For every backend and case it builds the input once and times, interleaved in one
`xtile._cli._bench.best_times` call: the native tile; `xtile.tile` as users call it;
`xtile.tile` inside ``xtile._testing.switched_off()`` with nothing off (all on, the
baseline of the ratios, with the same cost of entering the block as the others);
and `xtile.tile` inside ``switched_off(name)`` for each name of
``xtile._testing.STRATEGIES``. Each variant's result is checked once per case against
the native tile; a variant that differs or raises is reported and left out.

Reported per backend and case source, for each strategy: the geomean, min and max
of *time with it off / time all on* (what the strategy gains: above 1 it helps),
how many cases it changed by more than 10% either way, and the cases where it hurts
most (ratio below 1); and xtile / native as in `xtile._cli._bench` (the native tile's
time over xtile's: above 1 xtile is faster). Usage::

    python benchmarks/ablation.py [--backends numpy,torch-1thread,torch]
        [--cases sweep:23:300,gen2:5:300,matrix] [--repeat 5] [--csv FILE]
        [--only staged,extended] [--changed]

``--changed`` keeps only the cases whose NumPy or PyTorch (CPU) program or its rivals
(fresh, or into a C-ordered `out`) the strategies change: what they gain where they act,
timed quickly.

Case sources: ``sweep:SEED:N`` is ``xtile._cli._bench.sweep_cases(N, SEED)``,
``gen2:SEED:N`` is ``shapes2.cases(N, SEED)`` (``benchmarks/shapes2.py``) and
``matrix`` is ``xtile._cli._bench.CASES``.
"""

import argparse
import csv
import gc
import importlib.util
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapes2  # benchmarks/shapes2.py, beside this script

import xtile
from xtile import _backends, _program, _run, _testing
from xtile._cli import _bench, _realworld

# a strategy "changed" a case when it moves its time by more than this, either way
CHANGED = 0.10
# how many of the cases where a strategy hurts most to list
WORST = 5


@dataclass
class Row:
    """One (backend, source, case): its seconds per call for every variant."""

    backend: str
    source: str
    case: _bench.Case
    out_bytes: int
    run_bytes: int
    native_s: float
    xtile_s: float
    on_s: float
    off_s: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:  # numpydoc ignore=RT01
        """The case as ``shape x reps dtype``."""
        return f"{self.case.shape}x{self.case.reps} {self.case.dtype}"

    def gain(self, name: str) -> float:
        """
        What strategy `name` gains in this case.

        Parameters
        ----------
        name : str
            A strategy of `off_s`.

        Returns
        -------
        float
            Seconds per call with it off over seconds with all on; NaN where
            either variant failed its check.
        """
        return self.off_s.get(name, math.nan) / self.on_s


def parse_sources(spec: str) -> list[tuple[str, list[_bench.Case]]]:
    """
    The case sources of a ``--cases`` argument.

    Parameters
    ----------
    spec : str
        Comma-separated sources: ``sweep:SEED:N``, ``gen2:SEED:N``, ``matrix`` or
        ``realworld``.

    Returns
    -------
    list of (str, list of Case)
        Each source's name, as given, and its cases.

    Raises
    ------
    ValueError
        For a source of another form.
    """
    sources = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        kind, *args = item.split(":")
        if kind == "matrix" and not args:
            sources.append((item, list(_bench.CASES)))
        elif kind == "realworld" and not args:  # the sites' shapes, C-ordered, on NumPy's dtypes
            half = {"bfloat16": "float16"}
            cases = {
                _bench.Case(s.shape, s.reps, half.get(s.dtype, s.dtype), s.project)
                for s in _realworld.SITES
            }
            sources.append((item, sorted(cases)))
        elif kind in {"sweep", "gen2"} and len(args) == 2 and all(a.isdigit() for a in args):
            seed, n = int(args[0]), int(args[1])
            draw = _bench.sweep_cases if kind == "sweep" else shapes2.cases
            drawn = draw(n, seed)
            sources.append((item, drawn))
        else:
            msg = f"unknown case source {item!r}: sweep:SEED:N, gen2:SEED:N or matrix"
            raise ValueError(msg)
    return sources


def replanned(
    sources: Sequence[tuple[str, Sequence[_bench.Case]]], strategies: Sequence[str]
) -> list[tuple[str, list[_bench.Case]]]:
    """
    The cases whose NumPy or PyTorch program or rivals change with `strategies` off.

    Parameters
    ----------
    sources : sequence of (str, sequence of Case)
        Named lists of cases (`parse_sources`).
    strategies : sequence of str
        Names of ``xtile._testing.STRATEGIES``.

    Returns
    -------
    list of (str, list of Case)
        Each source with only those cases: timing them alone is quick, and no noise of
        the cases a strategy does not touch dilutes what it gains.
    """
    numpy = _backends.load("numpy")
    # NumPy's prices, and PyTorch's on the CPU
    models = [numpy.model] + [
        _backends.load("torch").model for _ in [1] if importlib.util.find_spec("torch")
    ]

    def changes(case: _bench.Case) -> bool:  # numpydoc ignore=RT01
        """Whether switching `strategies` off changes the case's program."""
        layout = numpy.layout(np.empty(case.shape, case.dtype))  # type: ignore[misc]
        assert layout is not None  # a plain array's: the planner reads a tensor's alike

        def plans() -> list[Any]:  # numpydoc ignore=RT01
            """The programs, fresh and into a C-ordered `out`, by each model."""
            return [
                _program.plan(layout, case.reps, model, True, into)
                for model in models
                for into in (False, True)
            ]

        on = plans()
        with _testing.switched_off(*strategies):
            return plans() != on

    return [(name, [c for c in cases if changes(c)]) for name, cases in sources]


def _equal(a: Any, b: Any) -> bool:
    """Whether `a` and `b` hold the same values, of the same shape and dtype."""
    if type(a).__module__.startswith("torch"):
        import torch

        return type(a) is type(b) and a.dtype == b.dtype and bool(torch.equal(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and np.array_equal(a, b)


def _within(names: Sequence[str], x: Any, reps: tuple[int, ...]) -> Callable[[], Any]:
    """The call of the program `xtile.tile` plans for `x` with the strategies `names` off."""
    with _testing.switched_off(*names):  # the planner patched: its candidates filtered
        xtile.tile(x, reps)
        kept = list(_run.KEPT.values())
    if not kept:  # a backend that plans nothing (JAX, Dask): its own computation
        return lambda: xtile.tile(x, reps)
    ((_, call),) = {id(v): v for v in kept}.values()  # kept under one key or two
    return lambda: call(x, None)


def run(
    backends: Iterable[str],
    sources: Sequence[tuple[str, Sequence[_bench.Case]]],
    strategies: Sequence[str],
    repeat: int = 5,
) -> list[Row]:
    """
    Time every case of every source on every backend, each strategy off in turn.

    Parameters
    ----------
    backends : iterable of str
        Names from `xtile._cli._bench.BACKENDS`.
    sources : sequence of (str, sequence of Case)
        Named lists of cases (`parse_sources`).
    strategies : sequence of str
        The strategies to switch off, one at a time: names of ``xtile._testing.STRATEGIES``.
    repeat : int, optional
        Samples per timing.

    Returns
    -------
    list of Row
        One per (backend, source, case).
    """
    names = list(backends)
    total = len(names) * sum(len(cs) for _, cs in sources)
    rows: list[Row] = []
    start = time.perf_counter()
    for backend, b in _bench._backends(names):
        for source, source_cases in sources:
            for case in source_cases:
                _progress(len(rows), total, start, f"{backend} {source} {case.shape}x{case.reps}")
                rows.append(_measure(backend, b, source, case, strategies, repeat))
                if rows[-1].errors:
                    sys.stderr.write(f"\nMISMATCH {backend} {rows[-1].label}: {rows[-1].errors}\n")
    _progress(total, total, start, "done")
    sys.stderr.write("\n")
    return rows


def _measure(
    backend: str,
    b: Any,
    source: str,
    case: _bench.Case,
    strategies: Sequence[str],
    repeat: int,
) -> Row:
    """One case on one backend (`b`, from `xtile._cli._bench._backends`): checked, then timed."""
    data = np.arange(math.prod(case.shape)).reshape(case.shape) % 127
    x, r = b.asarray(data.astype(case.dtype)), case.reps

    def tile() -> Any:  # numpydoc ignore=RT01
        """`xtile.tile` of the case."""
        return b.tile(x, r)

    calls: dict[str, Callable[[], Any]] = {
        "native": lambda: b.native(x, r),
        "xtile": tile,
        "on": _within((), x, r),
    }
    for name in strategies:
        calls[name] = _within((name,), x, r)
    errors = []
    try:
        expected = b.sync(calls["native"]())
    except Exception as e:  # noqa: BLE001
        errors.append(f"native: {type(e).__name__}: {e}")
        calls = {}
    for name, call in list(calls.items())[1:]:
        try:
            same = _equal(b.sync(call()), expected)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{name}: {type(e).__name__}: {e}")
            del calls[name]
            continue
        if not same:
            errors.append(f"{name}: differs from the native tile")
            del calls[name]
    expected = None
    gc.collect()
    times: dict[str, float] = {}
    if "on" in calls:
        times = dict(
            zip(calls, _bench.best_times(list(calls.values()), b.sync, repeat), strict=True)
        )
    return Row(
        backend=backend,
        source=source,
        case=case,
        out_bytes=shapes2.out_bytes(case),
        run_bytes=shapes2.run_bytes(case),
        native_s=times.get("native", math.nan),
        xtile_s=times.get("xtile", math.nan),
        on_s=times.get("on", math.nan),
        off_s={n: times[n] for n in strategies if n in times},
        errors=errors,
    )


def _progress(done: int, total: int, start: float, label: str) -> None:
    """A one-line progress bar on stderr, with the time spent and left."""
    spent = time.perf_counter() - start
    left = spent / done * (total - done) if done else math.nan
    sys.stderr.write(
        f"\r{done}/{total} {spent / 60:5.1f} min, ~{left / 60:5.1f} min left  {label[:60]:<60}"
    )
    sys.stderr.flush()


def _geomean(values: Iterable[float]) -> float:
    """The geometric mean; NaN of none."""
    logs = [math.log(v) for v in values]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def report(rows: Sequence[Row], strategies: Sequence[str], worst: int = WORST) -> str:
    """
    The markdown report: a table per backend and source, then where each strategy hurts.

    Parameters
    ----------
    rows : sequence of Row
        From `run`.
    strategies : sequence of str
        The strategies switched off.
    worst : int, optional
        How many of the cases where a strategy hurts most to list.

    Returns
    -------
    str
        Markdown.
    """
    lines = []
    for backend in dict.fromkeys(r.backend for r in rows):
        for source in dict.fromkeys(r.source for r in rows if r.backend == backend):
            rs = [r for r in rows if r.backend == backend and r.source == source]
            timed = [r for r in rs if math.isfinite(r.on_s)]
            vs_native = [r.native_s / r.xtile_s for r in timed if math.isfinite(r.xtile_s)]
            on_native = [r.native_s / r.on_s for r in timed]
            failed = sum(bool(r.errors) for r in rs)
            lines += [
                f"### {backend}, {source}: {len(rs)} cases",
                "",
                f"xtile / native (native time over xtile's): geomean "
                f"{_geomean(vs_native):.2f}, min {min(vs_native, default=math.nan):.2f}; "
                f"inside `switched_off()` (all on): geomean {_geomean(on_native):.2f}, "
                f"min {min(on_native, default=math.nan):.2f}."
                + (f" **{failed} cases with mismatches.**" if failed else ""),
                "",
                (
                    "| strategy | gain geomean (off / on) | min | max "
                    f"| changed > {CHANGED:.0%} | helps > {CHANGED:.0%} "
                    f"| hurts > {CHANGED:.0%} | cases |"
                ),
                "|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            hurts = []
            for name in strategies:
                gains = [g for r in timed if math.isfinite(g := r.gain(name))]
                lines.append(
                    f"| {name} | {_geomean(gains):.3f} | {min(gains, default=math.nan):.2f} "
                    f"| {max(gains, default=math.nan):.2f} "
                    f"| {sum(abs(g - 1) > CHANGED for g in gains)} "
                    f"| {sum(g > 1 + CHANGED for g in gains)} "
                    f"| {sum(g < 1 - CHANGED for g in gains)} | {len(gains)} |"
                )
                below = sorted((g, i) for i, r in enumerate(timed) if (g := r.gain(name)) < 1)
                if below:
                    hurts.append(f"- `{name}` hurts most (off / on):")
                    hurts += [
                        f"    - {g:.2f}  {timed[i].label}, {timed[i].out_bytes / 1e6:.2f} MB out, "
                        f"run {timed[i].run_bytes} B; "
                        f"xtile / native {timed[i].native_s / timed[i].xtile_s:.2f}"
                        for g, i in below[:worst]
                    ]
            lines += ["", *hurts, ""]
    errors = [r for r in rows if r.errors]
    if errors:
        lines.append(f"### Mismatches: {len(errors)}")
        lines += [f"- {r.backend} {r.source} {r.label}: {'; '.join(r.errors)}" for r in errors]
    return "\n".join(lines)


def write_csv(rows: Sequence[Row], strategies: Sequence[str], path: str) -> None:
    """
    Write one line per (backend, source, case), with every time and ratio.

    Parameters
    ----------
    rows : sequence of Row
        From `run`.
    strategies : sequence of str
        The strategies switched off.
    path : str
        The file to write.
    """
    with open(path, "w", newline="") as f:  # noqa: PTH123
        writer = csv.writer(f)
        writer.writerow(
            [
                "backend",
                "source",
                "shape",
                "reps",
                "dtype",
                "kind",
                "out_bytes",
                "run_bytes",
                "native_s",
                "xtile_s",
                "on_s",
                *(f"{n}_off_s" for n in strategies),
                "xtile_vs_native",
                *(f"{n}_gain" for n in strategies),
                "errors",
            ]
        )
        for r in rows:
            writer.writerow(
                [
                    r.backend,
                    r.source,
                    r.case.shape,
                    r.case.reps,
                    r.case.dtype,
                    r.case.kind,
                    r.out_bytes,
                    r.run_bytes,
                    r.native_s,
                    r.xtile_s,
                    r.on_s,
                    *(r.off_s.get(n, math.nan) for n in strategies),
                    r.native_s / r.xtile_s,
                    *(r.gain(n) for n in strategies),
                    "; ".join(r.errors),
                ]
            )


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the ablation and print its report.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 1 if any variant differed from the native tile.
    """
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backends", default="numpy,torch-1thread,torch")
    parser.add_argument("--cases", default="sweep:23:300,gen2:5:300,matrix")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--csv", help="write every time and ratio to this CSV file")
    parser.add_argument("--only", help="comma-separated strategies to switch off (default: all)")
    parser.add_argument(
        "--changed",
        action="store_true",
        help="only the cases whose NumPy or PyTorch program they change",
    )
    args = parser.parse_args(argv)
    strategies = list(_testing.STRATEGIES)
    if args.only:
        strategies = [s.strip() for s in args.only.split(",") if s.strip()]
        unknown = set(strategies) - set(_testing.STRATEGIES)
        if unknown:
            parser.error(f"unknown strategies {sorted(unknown)}; they are {_testing.STRATEGIES}")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    sources = parse_sources(args.cases)
    if args.changed:
        sources = replanned(sources, strategies)
    sys.stderr.write(
        f"xtile {xtile.__version__}; strategies off in turn: {', '.join(strategies)}; "
        f"{sum(len(c) for _, c in sources)} cases x {len(backends)} backends\n"
    )
    rows = run(backends, sources, strategies, args.repeat)
    if args.csv:
        write_csv(rows, strategies, args.csv)
    print(report(rows, strategies))
    return 1 if any(r.errors for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
