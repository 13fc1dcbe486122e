"""
``python -m xtile``: check xtile against `numpy.tile` and each backend's own tile, here.

Runs the specifications' examples and random cases on every installed backend
and device, and the ONNX and OpenVINO layers against onnxruntime and OpenVINO,
prints one row each, and exits non-zero on any mismatch: by default a quick check
(10 random cases each, under a minute), with ``--full`` 300 each. Needs NumPy, the
reference. ``python -m xtile bench`` runs the benchmark suite instead.
"""

import argparse
import importlib
import importlib.util
import math
import secrets
import sys
import textwrap
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import xtile
from xtile import _front, _program

from .._testing import SPEC_EXAMPLES, Backend, BackendUnavailableError, _fuzz, dtypes

# random cases per backend: the default run takes well under a minute on 2 cores, --full
# about 6 minutes
_QUICK_CASES = 10
_FULL_CASES = 300


def _legend(n: str) -> str:
    """What the table's columns mean, with `n` random cases."""
    return textwrap.fill(
        "columns: dtypes = the dtypes drawn from; cases = the specifications' examples plus "
        f"{n} random cases (ranks 0-64, six memory layouts, every form of repeats); failures = "
        "cases whose result differs, bit for bit, from numpy.tile or the backend's own tile "
        "(for the layers: from the runtime's Tile); a failing case is printed above the "
        "table with its smallest failing form.",
        86,
    )


def _needs_numpy() -> None:
    """Exit with one line where NumPy, every command's reference, is not installed."""
    if importlib.util.find_spec("numpy") is None:  # (its --help is shown without it)
        sys.exit("python -m xtile needs NumPy: pip install numpy (xtile.tile itself does not).")


def _count(least: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least `least`."""

    def count(text: str) -> int:
        """`text` as an int, or an error that names it."""
        try:
            n = int(text)
        except ValueError:
            n = least - 1
        if n < least:
            msg = f"expected an integer of at least {least}, got {text!r}"
            raise argparse.ArgumentTypeError(msg)
        return n

    return count


def _row(name: str, row: dict[str, Any]) -> str:
    """One line of the table."""
    return f"{name:<26}{row['device']:<22}{row['dtypes']:>7}{row['cases']:>7}{row['failures']:>10}"


def _check_backend(backend: Backend, n: int, seed: int) -> dict[str, Any]:
    """The spec examples and `n` fuzz cases on one backend; a row of the report."""
    import numpy as np

    xp, device = backend.load()
    names = list(dtypes(xp, backend))
    rng = np.random.default_rng([seed, list(Backend).index(backend)])
    shapes = [
        np.asarray(e.data).shape if isinstance(e.data, list) else e.data for e in SPEC_EXAMPLES
    ]
    cases = [
        _fuzz.Case(shape, e.repeats, names[0], "C", "tuple")
        for shape, e in zip(shapes, SPEC_EXAMPLES, strict=True)
    ]
    cases += [_fuzz.draw(rng, names, backend.max_rank) for _ in range(n)]
    row: dict[str, Any] = {"cases": 0, "failures": 0, "dtypes": len(names)}
    for i, case in enumerate(cases):
        row["cases"] += 1
        problem = _fuzz.check(backend, case, seed + i)
        if problem is None:
            continue
        row["failures"] += 1

        def fails(c: _fuzz.Case, i: int = i) -> bool:
            return _fuzz.check(backend, c, seed + i) is not None

        small = _fuzz.shrink(case, fails)
        print(f"  {backend.value}: {case}\n    {problem}\n    shrunk: {small}")
    name = str(device).removeprefix("array_api_strict.")
    # a device with no name of its own (ndonnx's one device) shows as its library's default
    default = f"{type(device).__module__.partition('.')[0]} default"
    row["device"] = default if " at 0x" in name else name
    return row


def main(argv: list[str] | None = None) -> int:
    """
    Run the self-check and print its report.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments; default: ``sys.argv[1:]``.

    Returns
    -------
    int
        0 when every case matched on every backend, 1 otherwise.
    """
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        return _bench(argv[1:])
    if argv[:1] == ["explain"]:
        return _explain(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m xtile",
        usage=(
            "%(prog)s [-h] [--full | --cases N] [--seed S]\n"
            "       %(prog)s bench [-h] [--quick] ..."
            "\n       %(prog)s explain SHAPE REPEATS [--dtype D] [--backend B]"
        ),
        description=(
            "Check xtile against numpy.tile and each backend's own tile on every installed "
            "backend and device, and the ONNX and OpenVINO layers against onnxruntime and "
            "OpenVINO; exit 1 on any mismatch. 'python -m xtile bench --help': the benchmarks; "
            "'python -m xtile explain --help': the steps a call would run."
        ),
        epilog=_legend(f"N ({_QUICK_CASES}, or {_FULL_CASES} with --full)"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--full",
        action="store_true",
        help=f"the thorough check: {_FULL_CASES} random cases per backend (about 6 minutes)",
    )
    size.add_argument(
        "--cases",
        type=_count(0),
        metavar="N",
        help=f"random cases per backend (default: {_QUICK_CASES}, under a minute)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="the seed of the random cases, to replay a run (default: a new one, printed)",
    )
    args = parser.parse_args(argv)
    _needs_numpy()
    from .._testing import _oracles  # NumPy's

    seed = secrets.randbits(32) if args.seed is None else args.seed
    if args.cases is not None:
        cases, again = args.cases, f" --cases {args.cases}"
    else:
        cases, again = (_FULL_CASES, " --full") if args.full else (_QUICK_CASES, "")

    header = f"{'backend':<26}{'device':<22}{'dtypes':>7}{'cases':>7}{'failures':>10}"
    print(f"xtile {xtile.__version__}: parity with numpy.tile and each backend's own tile")
    print(f"seed {seed} (again: python -m xtile{again} --seed {seed})")
    print(header)
    print("-" * len(header))
    failures = 0
    for backend in Backend:
        try:
            row = _check_backend(backend, cases, seed)
        except BackendUnavailableError as e:
            print(f"{backend.value:<26}skipped: {e}")
            continue
        failures += row["failures"]
        print(_row(backend.value, row))
    for name, layer, runtime in _oracles.LAYERS:
        try:
            row = _oracles.check_layer(layer, runtime, cases, seed)
        except BackendUnavailableError as e:
            print(f"{name:<26}skipped: {e}")
            continue
        for problem in row["problems"]:
            print(f"  {name}: {problem}")
        failures += row["failures"]
        print(_row(name, row))
    print(_legend(str(cases)))
    print("OK: every case matched" if not failures else f"FAILED: {failures} mismatches")
    return int(failures > 0)


def _ints(text: str) -> tuple[int, ...]:
    """A shape or repeats from the command line: ``4000,3``, ``(4000, 3)`` or ``7``."""
    try:
        return tuple(int(v) for v in text.strip("()[] ").replace(" ", "").split(",") if v)
    except ValueError:
        msg = f"expected integers separated by commas, like 4000,3; got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def _explain(argv: list[str]) -> int:
    """``python -m xtile explain``: the program a call would run, and the candidates it beat."""

    parser = argparse.ArgumentParser(
        prog="python -m xtile explain",
        description=(
            "Print the program (the named steps) that xtile.tile would run on a C-ordered "
            "array of SHAPE and DTYPE tiled by REPEATS, on BACKEND, with its cost, and the "
            "candidate programs it beat with theirs. With --time, each program and the "
            "native tile are timed here too, in turns, beside their prices."
        ),
        epilog="example: python -m xtile explain 4000,3 1,1000 --dtype float32",
    )
    parser.add_argument("shape", type=_ints, help="the input's shape, e.g. 4000,3")
    parser.add_argument("repeats", type=_ints, help="the repeats, e.g. 1,1000")
    parser.add_argument("--dtype", default="float32", help="a NumPy dtype name (float32)")
    parser.add_argument(
        "--backend",
        default="numpy",
        choices=["numpy", "torch", "array_api_strict", "jax", "dask", "sparse"],
        help="whose primitives and costs (numpy)",
    )
    parser.add_argument(
        "--time",
        action="store_true",
        help="also time every program and the native tile here (best of 5, in turns)",
    )
    # a leading space keeps a negative value (-1,2) from reading as an option
    args = parser.parse_args([" " + a if a[:1] == "-" and a[1:2].isdigit() else a for a in argv])
    _needs_numpy()
    try:
        _front.non_negative(args.shape, op="explain", name="shape")
        _front.non_negative(args.repeats, op="explain")
        _front.tiled_shape(args.shape, args.repeats, op="explain")  # fits int64, as tile's
    except ValueError as e:
        parser.error(str(e))
    try:  # its layout, as a call reads it
        x = _empty(args.backend, args.shape, args.dtype, zeros=args.time)
    except ImportError as e:
        parser.error(f"backend {args.backend!r} cannot run here: {e}")
    except (ValueError, TypeError, AttributeError) as e:
        parser.error(str(e))
    xp, backend = _front.namespace(x, None, op="explain", name="x")
    size = _front._itemsize(x.dtype, xp)
    print(f"{args.backend}, {args.dtype} ({size} byte{'s' * (size > 1)} per element):")
    layout = None if backend.layout is None else backend.layout(x)
    if layout is None:
        print(
            "  the backend's own computation: one XLA program (JAX) or one task per block (Dask)"
            if backend.whole
            else "  one broadcast copy (the backend keeps no programs)"
        )
        if args.time:
            print("  (--time: no programs to time)")
        return 0
    model, reps = backend.model if layout.on_host else backend.device, tuple(args.repeats)
    chosen = _program.plan(layout, reps, model, True)
    found = sorted(_program.candidates(layout, reps, model, True), key=lambda p: p.cost)
    found = [chosen, *(p for p in found if p != chosen)]
    took = [""] * len(found)
    if args.time:  # each program alone, and the two tiles
        from .. import _run
        from ._bench import _same, best_times

        calls = [partial(_run.compile_program(p, backend, xp), x, None) for p in found]
        native = importlib.import_module(args.backend).tile
        tiles = [partial(native, x, reps), partial(xtile.tile, x, reps)]
        try:
            *times, native_s, xtile_s = best_times([*calls, *tiles], _same, 5)
        except MemoryError as e:
            parser.error(f"--time: the output does not fit in memory here ({e})")
        took = [f", took {t * 1e6:.1f} us" for t in times]
        native_us, xtile_us = native_s * 1e6, xtile_s * 1e6
        print(f"{args.backend}.tile took {native_us:.1f} us, xtile.tile {xtile_us:.1f} us")
    for i, (program, t) in enumerate(zip(found, took, strict=True)):
        head, _, steps = describe(program).partition("\n")
        print(("beat " if i else "runs ") + head + t + ("\n" + steps if steps and not i else ""))
    return 0


def _empty(backend: str, shape: tuple[int, ...], dtype: str, zeros: bool = False) -> Any:
    """An array of `backend`, uninitialised (its memory untouched: any size will do) or zeros."""
    import numpy as np

    if backend == "numpy":
        return (np.zeros if zeros else np.empty)(shape, dtype=dtype)
    if backend == "sparse":
        import sparse

        return sparse.zeros(shape, dtype=dtype)
    name = {"dask": "dask.array", "jax": "jax.numpy"}.get(backend, backend)
    module = importlib.import_module(name)
    if not hasattr(module, dtype):
        msg = f"--dtype {dtype!r} is not a dtype of {name}"
        raise TypeError(msg)
    return (module.zeros if zeros else module.empty)(shape, dtype=getattr(module, dtype))


def _bench(argv: list[str]) -> int:
    """``python -m xtile bench``: time xtile, the native tile and a plain copy."""
    from . import _bench

    parser = argparse.ArgumentParser(
        prog="python -m xtile bench",
        description=(
            "Time xtile, the backend's own tile and a plain copy of the output's size,\n"
            "interleaved, and print their speeds and ratios."
        ),
        epilog=_bench.HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--backends",
        help=(
            f"comma-separated, of: {', '.join(_bench.BACKENDS)} (default: these), "
            f"and on a CUDA device {', '.join(_bench.GPU_BACKENDS)}"
        ),
    )
    parser.add_argument(
        "--repeat", type=_count(1), metavar="N", help="samples per timing (5; 1 with --quick)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a first look in seconds: 3 cases, 1 sample each, on NumPy and PyTorch by default",
    )
    parser.add_argument("--csv", help="write the results to this CSV file")
    parser.add_argument("--plot", help="draw xtile vs native vs the copy bound to this PNG")
    parser.add_argument(
        "--sweep", type=_count(1), metavar="N", help="N random cases instead of the fixed matrix"
    )
    parser.add_argument("--seed", type=int, help="the sweep's seed (default: a new one)")
    parser.add_argument(
        "--cases",
        choices=["matrix", "realworld"],
        default="matrix",
        help=(
            "matrix: the fixed matrix on every backend; realworld: tile calls taken from real "
            "projects' code, each on its own library (NumPy, PyTorch, JAX), with its layout"
        ),
    )
    parser.add_argument(
        "--rerun",
        type=_count(1),
        metavar="N",
        help=(
            "time each case below 0.9 x/native N more times; print every reading (the "
            "first too) and their median"
        ),
    )
    args = parser.parse_args(argv)
    _needs_numpy()
    # refuse up front what would fail only after the whole run has been timed
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        parser.error('--plot needs matplotlib: pip install "xtile[bench]"')
    for flag, path in (("--csv", args.csv), ("--plot", args.plot)):
        if path and not Path(path).resolve().parent.is_dir():
            parser.error(f"{flag} {path}: its directory does not exist")
    valid = _bench.BACKENDS + _bench.GPU_BACKENDS
    if args.backends is not None:
        backends = args.backends.split(",")
    elif args.quick:
        backends = ["numpy", "torch"]
    else:
        backends = list(_bench.BACKENDS)
    for name in backends:
        if name not in valid:
            parser.error(f"unknown backend {name!r} in --backends; valid: {', '.join(valid)}")
    missing = {n: r for n in dict.fromkeys(backends) if (r := _bench.unavailable(n))}
    if missing and args.backends is not None:
        name, reason = next(iter(missing.items()))
        parser.error(f"backend {name!r} cannot run here: {reason}")
    for name, reason in missing.items():  # the default set runs what is installed
        print(f"{name}: skipped, {reason}")
    backends = [name for name in backends if name not in missing]
    cases = _bench.CASES[:3] if args.quick else _bench.CASES
    repeat = args.repeat or (1 if args.quick else 5)
    if args.sweep:
        seed = secrets.randbits(32) if args.seed is None else args.seed
        print(f"sweep of {args.sweep} cases, seed {seed}")
        cases = _bench.sweep_cases(args.sweep, seed)
    if args.cases == "realworld":
        from . import _realworld

        results = _realworld.run([b for b in backends if b in ("numpy", "torch", "jax")], repeat)
        print(_bench.table(results))
        print(f"\nthe realistic workload, per backend:\n{_bench.summary(results)}")
        return 0
    results = _bench.run(backends, cases, repeat=repeat)
    print(_bench.table(results))
    if args.sweep:
        print(f"\nthe sweep, per backend:\n{_bench.summary(results)}")
    if args.csv:
        _bench.write_csv(results, args.csv)
    if args.plot:
        _bench.plot(results, args.plot)
    if args.rerun:  # after the run's own files are written
        print(f"\n{_bench.reruns(_bench.rerun(results, cases, args.rerun, repeat))}")
    return 0


def describe(program: _program.Program, /) -> str:
    """The steps of `program`, one line each, as ``python -m xtile explain`` prints them."""
    p = program
    lines = [f"{p.name}: tile {p.shape} by {p.reps} -> {p.out_shape}, cost {p.cost / 1e3:.1f} us"]
    if not p.steps:
        lines.append("  1. empty: allocate the output, nothing to copy")
    for i, step in enumerate(p.steps, 1):
        lines.append(f"  {i}. {_step(step)}")
    return "\n".join(lines)


def _step(step: _program.Step, /) -> str:
    """One step, in words."""
    if isinstance(step, _program.Whole):
        return f"the backend's own tile by {step.reps}"
    if isinstance(step, _program.Repeat):
        return f"repeat: {step.shape} along axis {step.axis} x{step.r} into a fresh array"
    if isinstance(step, _program.Replicate):
        places = f" in {math.prod(step.places)} places" if math.prod(step.places) > 1 else ""
        return f"replicate: axis {step.axis}, [0:{step.n}] to [{step.n}:{step.stop}]{places}"
    how = f" (runs as items of {step.item} bytes)" if step.item else ""
    what = f"copy{how}: {step.shape}"
    what += f" by {step.reps}"
    what += " from [" + ", ".join(f":{n}" for n in step.source) + "]" if step.source else ""
    into = ", ".join(f"{a}:{b}" for a, b in step.region) if step.region else ""
    return f"{what} -> " + (f"output[{into}]" if into else "a fresh array")
