"""
``python -m xtile``: check xtile against `numpy.tile` and each backend's own tile, here.

Runs the specifications' examples and random cases on every installed backend
and device, prints one row per (backend, device), and exits non-zero on any
mismatch. Needs NumPy, the reference. ``python -m xtile bench`` runs the
benchmark suite instead.
"""

import argparse
import sys
from typing import Any

import xtile

from ._testing import SPEC_EXAMPLES, Backend, BackendUnavailableError, dtypes, same_bits, to_numpy

TEXT_DTYPES = {"str", "bytes", "object", "StringDType"}


def _cases(rng: Any, n: int) -> list[tuple[tuple[int, ...], Any, str]]:
    """Spec examples, then `n` random (shape, repeats, layout) cases."""
    import numpy as np

    cases: list[tuple[tuple[int, ...], Any, str]] = [
        (np.asarray(e.data).shape if isinstance(e.data, list) else e.data, e.repeats, "C")
        for e in SPEC_EXAMPLES
    ]
    for _ in range(n):
        shape = tuple(int(d) for d in rng.integers(0, 5, size=rng.integers(0, 5)))
        reps: Any = tuple(int(r) for r in rng.integers(0, 4, size=rng.integers(0, 6)))
        if rng.random() < 0.2:
            reps = int(rng.integers(0, 4))
        cases.append((shape, reps, str(rng.choice(["C", "transposed", "strided"]))))
    return cases


def _check_backend(backend: Backend, n: int, seed: int) -> dict[str, Any]:
    """Run every case on one backend; a row of the report."""
    import numpy as np

    xp, device = backend.load()
    names = dtypes(xp, backend)
    rng = np.random.default_rng(seed)
    row: dict[str, Any] = {"numpy": 0, "native": 0, "failures": 0, "cases": 0}
    row["dtypes"] = len(names)
    for i, (shape, reps, layout) in enumerate(_cases(rng, n)):
        name = list(names)[i % len(names)]
        data = np.arange(1, int(np.prod(shape)) + 1).reshape(shape) % 127
        if name in TEXT_DTYPES:
            x = xp.asarray(data.astype(names[name]), device=device)
        else:
            x = xp.astype(xp.asarray(data, device=device), names[name])
        if layout == "transposed":
            x = xp.permute_dims(x, tuple(reversed(range(x.ndim))))
        elif layout == "strided" and x.ndim:
            x = x[::2, ...]
        row["cases"] += 1
        try:
            y = to_numpy(xtile.tile(x, reps))
            ok_numpy = same_bits(y, np.tile(to_numpy(x), reps))
            native = reps if not isinstance(reps, int) else (reps,)
            ok_native = name in TEXT_DTYPES or same_bits(y, to_numpy(xp.tile(x, native)))
        except Exception as e:  # noqa: BLE001  # a crash is a failure too: report it, go on
            print(f"  {backend.value}: {shape} x {reps} {name}: {type(e).__name__}: {e}")
            ok_numpy = ok_native = False
        row["numpy"] += ok_numpy
        row["native"] += ok_native
        row["failures"] += not (ok_numpy and ok_native)
    row["device"] = str(device).removeprefix("array_api_strict.")
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
    parser = argparse.ArgumentParser(prog="python -m xtile", description=__doc__)
    parser.add_argument("--cases", type=int, default=300, help="random cases per backend")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    header = (
        f"{'backend':<26}{'device':<22}{'dtypes':>7}{'cases':>7}"
        f"{'=numpy.tile':>13}{'=native':>9}{'failures':>10}"
    )
    print(f"xtile {xtile.__version__}: parity with numpy.tile and each backend's own tile")
    print(header)
    print("-" * len(header))
    failures = 0
    for backend in Backend:
        try:
            row = _check_backend(backend, args.cases, args.seed)
        except BackendUnavailableError as e:
            print(f"{backend.value:<26}skipped: {e}")
            continue
        failures += row["failures"]
        print(
            f"{backend.value:<26}{row['device']:<22}{row['dtypes']:>7}{row['cases']:>7}"
            f"{row['numpy']:>13}{row['native']:>9}{row['failures']:>10}"
        )
    print("OK: every case matched" if not failures else f"FAILED: {failures} mismatches")
    return int(failures > 0)


def _bench(argv: list[str]) -> int:
    """``python -m xtile bench``: time xtile, the native tile and a plain copy."""
    from . import _bench

    parser = argparse.ArgumentParser(prog="python -m xtile bench", description=_bench.__doc__)
    parser.add_argument("--backends", default=",".join(_bench.BACKENDS))
    parser.add_argument("--repeat", type=int, default=5, help="samples per timing")
    parser.add_argument("--csv", help="write the results to this CSV file")
    parser.add_argument("--plot", help="draw xtile vs native vs the copy bound to this PNG")
    args = parser.parse_args(argv)
    results = _bench.run(args.backends.split(","), repeat=args.repeat)
    print(_bench.table(results))
    if args.csv:
        _bench.write_csv(results, args.csv)
    if args.plot:
        _bench.plot(results, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
