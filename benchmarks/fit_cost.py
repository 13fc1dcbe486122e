"""
Fit a planned backend's cost model (`xtile._program.Model`) to measured times.

Every candidate program of random cases (``xtile._cli._bench.sweep_cases`` with
``--seed``, and half as many small outputs) is timed, the candidates of a case in
turns (`xtile._cli._bench.best_times`), best of ``--repeat``. What a program does is
what `xtile._program.features` counts: per kind of step its calls, inner loops,
elements, and bytes (in steps under `Model.big` bytes, and over). The prices are the
non-negative least-squares fit of those to the times, in relative error. Then the fit
is judged as the planner uses it: on the cases of ``--check`` (another seed, not
fitted on), the time of the program the prices pick over the fastest candidate's, for
the fitted prices and for the backend's own. It prints the prices to paste into
``xtile/_backends/<backend>.py`` where their picks are the better (PyTorch's refit, with
its `Model.grain`, picks worse than its prices: docs/performance.md). ``--cases gen2``
times the cases of ``benchmarks/shapes2.py`` instead (seeds ``--seed`` and ``--check``),
``--cases split`` the sweep's cases with a last axis of 1 repeated 2 to 4 times (copies
by index), ``--cases big`` outputs of `Model.big` bytes or more, half the sweep's, half
``gen2``'s.
``--only KINDS`` fits only those kinds' prices, the others kept at the backend's own;
``--only memory`` only the byte prices of big steps, each chosen from a grid for the
fastest picks on the fitted cases. ``torch-cuda``
and ``cupy`` time and fit the prices of a GPU (`xtile._backends.DEVICE`, CuPy's as
PyTorch's without the steps it lacks). Usage::

    python benchmarks/fit_cost.py [--backend numpy|torch|torch-cuda|cupy] [--n 80] [--seed 1]
        [--check 2] [--cases sweep|gen2|big|split] [--only split,...|memory] [--data FILE]
"""

import argparse
import math
import pickle
import sys
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from xtile import _program, _run
from xtile._backends import load
from xtile._cli import _bench

sys.path.insert(0, str(Path(__file__).parent))
import shapes2

# the kinds of step a model prices: its `Price` fields
KINDS = [
    f for f in _program.Model._fields if isinstance(getattr(_program.Model(), f), _program.Price)
]


def _cases(n: int, seed: int, big_bytes: int) -> list[_bench.Case]:
    """
    The sweep's `n` cases, `n // 2` small ones and `n // 4` big ones.

    Small: outputs of up to 4 Ki elements (what a call costs); big: the sweep's cases
    of `big_bytes` and more (what memory costs, the second byte price), which it draws
    rarely.
    """
    rng = np.random.default_rng(seed)
    small = []
    for _ in range(n // 2):
        rank = int(rng.integers(1, 4))
        shape = tuple(int(v) for v in rng.integers(1, 9, rank))
        reps = tuple(int(v) for v in rng.integers(1, 9, rank))
        small.append(_bench.Case(shape, reps, str(rng.choice(["int8", "float32", "float64"])), ""))
    big = [c for c in _bench.sweep_cases(16 * n, seed + 1000) if _out_bytes(c) >= big_bytes]
    return _bench.sweep_cases(n, seed) + small + big[: n // 4]


def _big_cases(n: int, seed: int, big_bytes: int) -> list[_bench.Case]:
    """`n` cases of outputs of `big_bytes` or more: half the sweep's, the rest `shapes2`'s."""

    def big(draw: list[_bench.Case]) -> list[_bench.Case]:
        """The cases of `draw` with outputs of `big_bytes` or more."""
        return [c for c in draw if _out_bytes(c) >= big_bytes]

    sweep = big(_bench.sweep_cases(40 * n, seed))[: n // 2]
    return sweep + big(shapes2.cases(40 * n, seed))[: n - len(sweep)]


def _out_bytes(case: _bench.Case) -> int:
    """The bytes of `case`'s output."""
    return math.prod(case.shape) * math.prod(case.reps) * np.dtype(case.dtype).itemsize


def _split_cases(n: int, seed: int) -> list[_bench.Case]:
    """The sweep's cases, each with a last axis of length 1 repeated 2 to 4 times: fills."""
    rng = np.random.default_rng(seed)
    return [
        c._replace(shape=(*c.shape, 1), reps=(*c.reps, int(rng.integers(2, 5))))
        for c in _bench.sweep_cases(n, seed)
    ]


def _measure(
    backend: Any, cases: list[_bench.Case], repeat: int, device: str
) -> list[list[tuple[Any, float]]]:
    """Per case, every candidate with its features and its measured time."""
    asarray: Any = np.asarray
    sync: Any = lambda a: a  # noqa: E731
    model = backend.model if device == "cpu" else backend.device
    if backend.name == "torch":
        import torch

        asarray = lambda a: torch.from_numpy(a).to(device)  # noqa: E731
        if device != "cpu":
            sync = lambda _: torch.cuda.synchronize()  # noqa: E731
    elif backend.name == "cupy":
        import cupy

        asarray = cupy.asarray
        sync = lambda _: cupy.cuda.get_current_stream().synchronize()  # noqa: E731
    found = []
    for i, c in enumerate(cases):
        print(f"\r{backend.name}: case {i + 1}/{len(cases)}", end="", flush=True)
        x = asarray((np.arange(math.prod(c.shape)) % 127).astype(c.dtype).reshape(c.shape))
        layout = backend.layout(x)
        programs = _program.candidates(layout, c.reps, model, True)
        calls = [partial(_run.compile_program(p, backend, backend.xp), x, None) for p in programs]
        times = _bench.best_times(calls, sync, repeat)  # sampled in turns
        found.append(
            [
                (_program.features(p, layout, model), t * 1e9)
                for p, t in zip(programs, times, strict=True)
            ]
        )
    print()
    return found


def _vector(
    steps: Any, kinds: list[str], big: int, shared: bool, loop: _program.Model
) -> np.ndarray:
    """
    A program's counts per price: per kind its calls, loops, elements, bytes, big bytes.

    A step's loops count what `loop` (a model whose every price is 1 ns a loop) charges
    for them: `grain[1]` times each in a step under `xtile._program.Model.grain`'s bytes
    (PyTorch copies it on one thread), once elsewhere.

    A step's bytes count at the first byte price, and again at the extra price of a
    big step: the fit keeps a big step's byte price at least the small one's. Where
    `shared`, a replication's inner loops are a copy's (the same copy kernel, inside the
    output): random cases have too few replications of many short blocks to price them
    apart. Its "elements" are its 4K-aliased bytes (`xtile._program.features`), which random
    cases rarely have: NumPy's price of them is measured by ``numpy_prices.py``, and a
    fit without ``--only`` that finds none sets it to 0 (keep the measured one). A
    repeat's "elements" are its source blocks of 1, 2, 4, 8, 16 or 32 bytes, priced by
    ``numpy_prices.py`` too; a fit of them (``--only repeat``) read 1.6-2.1 ns, with worse
    picks.
    """
    v = np.zeros(5 * len(kinds))
    for kind, (loops, elements, nbytes) in steps:
        i = 5 * kinds.index(kind)
        v[i : i + 4] += (1, 0, elements, nbytes)
        at = 5 * kinds.index("copy" if shared and kind == "replicate" else kind) + 1
        v[at] += _program._charge(loop, kind, (loops, elements, nbytes))
        v[i + 4] += nbytes if nbytes >= big else 0
    return v


def _fit(
    data: Any, kinds: list[str], big: int, fixed: np.ndarray, model: _program.Model
) -> np.ndarray:
    """
    The prices: a non-negative least-squares fit of the times, in relative error.

    The candidates within 1.5x of their case's fastest weigh more: the prices must
    rank those right, and only need to find the others dear. Only the prices NaN in
    `fixed` are fitted, to the time the others leave; a free replication's loops are
    priced as a copy's. `model`'s grain says which steps' loops cost more.
    """
    shared = "replicate" in kinds and bool(np.isnan(fixed[5 * kinds.index("replicate")]))
    per_loop = _program.Price(0.0, 1.0, 0.0, 0.0, 0.0)
    loop = model._replace(**dict.fromkeys(KINDS, per_loop))
    rows, targets = [], []
    for case in data:
        fastest = min(t for _, t in case)
        for steps, t in case:
            w = 1.0 if t <= 1.5 * fastest else 0.3
            rows.append(_vector(steps, kinds, big, shared, loop) / t * w)
            targets.append(w)
    a, b = np.array(rows), np.array(targets)
    free = np.isnan(fixed)
    coef = np.where(free, 0.0, fixed)
    coef[free] = _nnls(a[:, free], b - a[:, ~free] @ coef[~free])
    return coef


def _nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Non-negative least squares by shrinking the set of free columns."""
    cols = [j for j in range(a.shape[1]) if a[:, j].any()]
    while True:
        sol = np.linalg.lstsq(a[:, cols], b, rcond=None)[0]
        if (sol >= 0).all():
            coef = np.zeros(a.shape[1])
            coef[cols] = sol
            return coef
        cols = [c for c, v in zip(cols, sol, strict=True) if v > 0]


def _regret(data: Any, model: _program.Model) -> np.ndarray:
    """Per case, the time of the program `model` picks over the fastest candidate's."""
    out = []
    for case in data:
        priced = [sum(_program._charge(model, *step) for step in steps) for steps, _ in case]
        times = [t for _, t in case]
        out.append(times[int(np.argmin(priced))] / min(times))
    return np.array(out)


def _memory(data: Any, model: _program.Model, kinds: list[str]) -> _program.Model:
    """
    `model` with each kind's byte price of a big step chosen for the least regret on `data`.

    What a fit should get right is which candidate is fastest, and the regret is no
    linear function of the prices: each price is tried from a grid, one kind after the
    other, twice, keeping the one whose picks are fastest: 1 to 40 times the kind's byte
    price under `Model.big`.
    """
    best = np.log(_regret(data, model)).mean()
    for _ in range(2):
        for kind in kinds:
            for v in getattr(model, kind)[3] * np.geomspace(1, 40, 17):
                price: Any = _program.Price(*getattr(model, kind)[:4], float(f"{v:.4g}"))
                tried = model._replace(**{kind: price})
                if (r := np.log(_regret(data, tried)).mean()) < best - 1e-4:
                    best, model = r, tried
    return model


def main() -> None:
    """Time, fit, judge, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--backend", default="numpy", choices=["numpy", "torch", "torch-cuda", "cupy"]
    )
    parser.add_argument("--n", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", type=int, default=2, help="the seed of the cases judged")
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--data", help="a file for the timings: read if it exists, else written")
    parser.add_argument("--cases", default="sweep", choices=["sweep", "gen2", "big", "split"])
    parser.add_argument("--only", default="", help="the kinds to fit (default: all), or memory")
    args = parser.parse_args()
    name, _, device = args.backend.partition("-")
    backend, device = load(name), device or ("cuda" if name == "cupy" else "cpu")
    model = backend.model if device == "cpu" else backend.device
    big = model.big
    if args.data and Path(args.data).exists():
        train, check = pickle.loads(Path(args.data).read_bytes())
    else:
        draw = {
            "sweep": partial(_cases, big_bytes=big),
            "big": partial(_big_cases, big_bytes=big),
            "split": _split_cases,
        }.get(args.cases, shapes2.cases)
        train = _measure(backend, draw(args.n, args.seed), args.repeat, device)
        check = _measure(backend, draw(args.n, args.check), args.repeat, device)
        if args.data:
            Path(args.data).write_bytes(pickle.dumps((train, check)))
    report(train, check, big, model, [k for k in args.only.split(",") if k])


def report(train: Any, check: Any, big: int, model: _program.Model, only: list[str]) -> None:
    """Fit on `train` (`only` these kinds' prices), judge it and `model`'s own, print them."""
    kinds = [k for k in KINDS if any(k == s[0] for c in train for f, _ in c for s in f)]
    own = np.array([v for k in kinds for v in _as_coefficients(getattr(model, k))])
    if unknown := set(only) - {*kinds, "memory"}:
        sys.exit(f"--only: no step of kind {sorted(unknown)} in the timings; they have {kinds}")
    if "memory" in only and len(only) > 1:
        sys.exit("--only memory fits the big steps' byte prices of every kind: name no kind")
    if only == ["memory"]:
        fitted = _memory(train, model, kinds)
    else:
        free = [k for k in kinds if k in only] if only else kinds
        fixed = np.where(np.repeat([k in free for k in kinds], 5), np.nan, own)
        coef = _fit(train, kinds, big, fixed, model)
        if "replicate" in free and "copy" in kinds:  # its loops are priced as a copy's
            coef[5 * kinds.index("replicate") + 1] = coef[5 * kinds.index("copy") + 1]
        fits: dict[str, Any] = {
            k: _as_price(coef[5 * i : 5 * i + 5]) for i, k in enumerate(kinds) if k in free
        }
        fitted = model._replace(**fits)
    for prices, m in (("fitted", fitted), ("the backend's", model)):
        for name, data in (("fitted", train), ("held out", check)):
            r = _regret(data, m)
            print(
                f"{prices} prices, {name} cases ({len(r)}): picked / fastest candidate "
                f"geomean {np.exp(np.mean(np.log(r))):.3f}, worst {r.max():.2f}, "
                f"within 10% on {np.mean(r <= 1.1):.0%}"
            )
    for kind in kinds:
        print(f"    {kind}=({', '.join(f'{v:.4g}' for v in getattr(fitted, kind))}),")


def _as_coefficients(price: _program.Price) -> list[float]:
    """A `Model` price as the fit's columns: a big step's byte counts at both byte prices."""
    return [*price[:4], price[4] - price[3]]


def _as_price(coef: np.ndarray) -> _program.Price:
    """The fit's columns as a `Model` price: a big step's byte at both byte prices."""
    c = [float(f"{v:.4g}") for v in (*coef[:4], coef[3] + coef[4])]
    return _program.Price(*c)


if __name__ == "__main__":
    main()
