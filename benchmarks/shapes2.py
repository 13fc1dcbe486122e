"""
A second random case generator: input shapes and repeats as users write them.

`xtile._cli._bench.sweep_cases` draws, log-uniformly, the two sizes the planner reasons
about (the output's bytes, and the contiguous run of the broadcast copy: the block
of the input from its last repeated axis on) and then spreads them over axes. Its
thresholds were tuned on that distribution, so it is no longer an independent test
of them. `cases` draws from a distribution nobody tuned on:

- the *input shape* and the *repeats* directly, axis by axis, from mixtures
  (a dimension is 1 with p 0.3, small 2-8, medium 9-300, or large 301-20000
  log-uniform; a repeat is 1 with p 0.4, 2-4, 5-64, or occasionally 65-100000
  log-uniform), so that the run and output sizes are whatever follows;
- ranks 1-6 biased to 2-4 (the sweep's are uniform);
- eleven dtypes with other weights than the sweep's eight: ``bool``, ``uint8`` and
  ``float16``, which the sweep never draws, and more weight on ``float32`` and
  ``uint8``;
- "image-like" cases, ``(N, C, H, W)`` or channels-last ``(N, H, W, C)`` with the
  repeats tiling H and W (and now and then N), mostly ``uint8``, ``float32`` and
  ``float16``;
- "vector" cases: a vector tiled many times, ``(n,) x (k,)``, stacked
  ``(1, n) x (k, 1)`` or ``(k1, k2)``, or each element repeated ``(n, 1) x (1, k)``.

Input and repeats always have the same length (as in the sweep); at least one
repeat is not 1. A draw whose output is outside `OUT_BYTES` is resampled (its
shape and repeats, keeping its rank and dtype, so that the rank histogram stays
as drawn). Every case is of kind ``"gen2"``. Usage, to compare the two
distributions::

    python benchmarks/shapes2.py [--n 2000] [--seed 0]
"""

import argparse
import math
from collections.abc import Sequence

import numpy as np

from xtile._cli._bench import Case, sweep_cases

__all__ = [
    "DTYPES",
    "DTYPE_WEIGHTS",
    "FAMILIES",
    "OUT_BYTES",
    "RANK_WEIGHTS",
    "cases",
    "out_bytes",
    "run_bytes",
    "stats",
]

# the bounds on a case's output, in bytes (inclusive), as the sweep's
OUT_BYTES = (1 << 16, 1 << 26)
# dtypes and their weights: unlike the sweep's uniform eight, with bool, uint8, float16
DTYPES = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
DTYPE_WEIGHTS = (0.09, 0.12, 0.06, 0.06, 0.10, 0.09, 0.09, 0.19, 0.10, 0.05, 0.05)
# ranks 1-6 of generic cases, biased to 2-4
RANK_WEIGHTS = (0.08, 0.24, 0.28, 0.22, 0.10, 0.08)
# the families of cases and their weights
FAMILIES = {"generic": 0.7, "image": 0.15, "vector": 0.15}
_IMAGE_DTYPES = ("uint8", "float32", "float16", "bool", "float64")
_IMAGE_DTYPE_WEIGHTS = (0.35, 0.35, 0.15, 0.05, 0.10)
# resamples of shape and repeats for one rank and dtype before all is drawn again
_TRIES = 200


def out_bytes(case: Case) -> int:
    """
    The bytes of a case's output.

    Parameters
    ----------
    case : Case
        A case.

    Returns
    -------
    int
        The product of its shape and repeats, times its dtype's item size.
    """
    return math.prod(case.shape) * math.prod(case.reps) * np.dtype(case.dtype).itemsize


def run_bytes(case: Case) -> int:
    """
    The bytes of the contiguous run of a case's broadcast copy.

    Parameters
    ----------
    case : Case
        A case with at least one repeat other than 1.

    Returns
    -------
    int
        The bytes of the block of the input from its last repeated axis on.
    """
    last = max(i for i, r in enumerate(case.reps) if r != 1)
    return math.prod(case.shape[last:]) * np.dtype(case.dtype).itemsize


def cases(n: int, seed: int) -> list[Case]:
    """
    `n` random cases drawn by input shape and repeats, unlike `xtile._cli._bench.sweep_cases`.

    See the module's docstring for the distribution.

    Parameters
    ----------
    n : int
        How many cases.
    seed : int
        The seed: the same seed draws the same cases.

    Returns
    -------
    list of Case
        Cases of kind ``"gen2"``, each with an output of `OUT_BYTES` and at least
        one repeat other than 1.
    """
    rng = np.random.default_rng(seed)

    def log_int(low: int, high: int) -> int:  # numpydoc ignore=PR01,RT01
        """An int in ``[low, high]``, uniform in log scale."""
        value = math.exp(rng.uniform(math.log(low), math.log(high + 1)))
        return min(high, max(low, int(value)))

    def pick(options: Sequence[str], weights: Sequence[float]) -> str:  # numpydoc ignore=PR01,RT01
        """One of `options`, by `weights`."""
        p = np.asarray(weights) / sum(weights)
        return options[int(rng.choice(len(options), p=p))]

    def dim() -> int:  # numpydoc ignore=RT01
        """One axis's length: 1, small, medium or large."""
        u = rng.random()
        if u < 0.3:
            return 1
        if u < 0.6:
            return int(rng.integers(2, 9))
        if u < 0.9:
            return log_int(9, 300)
        return log_int(301, 20000)

    def rep() -> int:  # numpydoc ignore=RT01
        """One axis's repeat: mostly 1 or a few, now and then very many."""
        u = rng.random()
        if u < 0.4:
            return 1
        if u < 0.7:
            return int(rng.integers(2, 5))
        if u < 0.93:
            return log_int(5, 64)
        return log_int(65, 100000)

    def generic(rank: int) -> tuple[list[int], list[int]]:  # numpydoc ignore=PR01,RT01
        """Every axis's length and repeat drawn on its own."""
        return [dim() for _ in range(rank)], [rep() for _ in range(rank)]

    def image() -> tuple[list[int], list[int]]:  # numpydoc ignore=RT01
        """A batch of images tiled along H and W, channels first or last."""
        batch = int(rng.choice([1, 1, 2, 4, 8, 16, 32]))
        channels = int(rng.choice([1, 3, 3, 4, 8, 16, 64]))
        h = log_int(8, 512)
        w = h if rng.random() < 0.5 else log_int(8, 512)
        rh, rw = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        if rh == rw == 1:
            rh, rw = 2, 2
        rn = int(rng.integers(2, 5)) if rng.random() < 0.15 else 1
        if rng.random() < 0.3:  # channels last
            return [batch, h, w, channels], [rn, rh, rw, 1]
        return [batch, channels, h, w], [rn, 1, rh, rw]

    def vector() -> tuple[list[int], list[int]]:  # numpydoc ignore=RT01
        """A vector tiled many times: end to end, stacked, or each element repeated."""
        length = log_int(1, 5000)
        k = log_int(2, 100000)
        u = rng.random()
        if u < 0.35:
            return [length], [k]
        if u < 0.7:
            return [1, length], [k, 1]
        if u < 0.85:
            return [1, length], [log_int(2, 1000), log_int(2, 64)]
        return [length, 1], [1, k]

    out: list[Case] = []
    families, family_weights = list(FAMILIES), list(FAMILIES.values())
    while len(out) < n:
        family = pick(families, family_weights)
        if family == "image":
            dtype = pick(_IMAGE_DTYPES, _IMAGE_DTYPE_WEIGHTS)
        else:
            dtype = pick(DTYPES, DTYPE_WEIGHTS)
        rank = int(rng.choice(6, p=np.asarray(RANK_WEIGHTS) / sum(RANK_WEIGHTS))) + 1
        for _ in range(_TRIES):
            if family == "image":
                shape, reps = image()
            elif family == "vector":
                shape, reps = vector()
            else:
                shape, reps = generic(rank)
            case = Case(tuple(shape), tuple(reps), dtype, "gen2")
            if any(r != 1 for r in reps) and OUT_BYTES[0] <= out_bytes(case) <= OUT_BYTES[1]:
                out.append(case)
                break
    return out


def stats(drawn: Sequence[Case]) -> dict[str, object]:
    """
    Summary statistics of a list of cases.

    Parameters
    ----------
    drawn : sequence of Case
        Cases, each with at least one repeat other than 1.

    Returns
    -------
    dict
        ``ranks``: the number of cases of each rank; ``dtypes``: of each dtype;
        ``median_out_bytes``, ``median_run_bytes``; ``short_runs``: the fraction
        with runs under 64 bytes; ``repeated_axes``: the number of cases by how
        many axes repeat.
    """
    ranks: dict[int, int] = {}
    dtypes: dict[str, int] = {}
    repeated: dict[int, int] = {}
    for c in drawn:
        ranks[len(c.shape)] = ranks.get(len(c.shape), 0) + 1
        dtypes[c.dtype] = dtypes.get(c.dtype, 0) + 1
        k = sum(r != 1 for r in c.reps)
        repeated[k] = repeated.get(k, 0) + 1
    runs = [run_bytes(c) for c in drawn]
    return {
        "ranks": dict(sorted(ranks.items())),
        "dtypes": dict(sorted(dtypes.items(), key=lambda kv: -kv[1])),
        "repeated_axes": dict(sorted(repeated.items())),
        "median_out_bytes": float(np.median([out_bytes(c) for c in drawn])),
        "median_run_bytes": float(np.median(runs)),
        "short_runs": sum(r < 64 for r in runs) / len(runs),
    }


def main() -> None:
    """
    Print the summary statistics of `cases` and of `xtile._cli._bench.sweep_cases`, or time them.

    With ``--bench BACKENDS``, time xtile, the native tile and the copy on `cases`
    (as ``python -m xtile bench --sweep`` does on the sweep's) and print the summary.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bench", metavar="BACKENDS", help="e.g. numpy,torch-1thread,torch")
    parser.add_argument("--repeat", type=int, default=3, help="samples per timing (3)")
    args = parser.parse_args()
    if args.bench:
        from xtile._cli import _bench

        results = _bench.run(args.bench.split(","), cases(args.n, args.seed), repeat=args.repeat)
        print(f"shapes2.cases({args.n}, {args.seed})\n{_bench.summary(results)}")
        return
    for name, drawn in [
        ("sweep_cases", sweep_cases(args.n, args.seed)),
        ("shapes2.cases", cases(args.n, args.seed)),
    ]:
        print(f"{name}({args.n}, {args.seed}):")
        for key, value in stats(drawn).items():
            print(f"    {key}: {value}")


if __name__ == "__main__":
    main()
