"""The benchmark suite runs on every backend and writes its table, CSV and plot."""

import csv
import dataclasses
import sys
from pathlib import Path

import pytest

from xtile._cli import _bench, main


def test_bench_smoke(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    backends = [b for b in _bench.BACKENDS if b != "torch"]  # torch-1thread is the same code
    for name in ("torch", "jax", "dask", "array_api_strict"):
        pytest.importorskip(name)
    case = _bench.Case((8, 8), (2, 3), "float32", "tiny")
    results = _bench.run(backends, cases=[case], repeat=1)
    assert [r.backend for r in results] == backends
    assert all(r.xtile_s > 0 and r.native_s > 0 and r.copy_s > 0 for r in results)
    assert "geomean" in _bench.table(results)
    _bench.write_csv(results, str(tmp_path / "bench.csv"))
    with (tmp_path / "bench.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(backends)
    _bench.plot(results, str(tmp_path / "bench.png"))
    assert (tmp_path / "bench.png").stat().st_size > 0


def test_sweep_cases_cover_their_bounds() -> None:
    """The sweep draws what it says: ranks 1-6, its dtypes, output and run sizes in bounds."""
    import math

    import numpy as np

    cases = _bench.sweep_cases(300, seed=3)
    assert cases == _bench.sweep_cases(300, seed=3)
    assert cases != _bench.sweep_cases(300, seed=4)
    assert {len(c.shape) for c in cases} == set(range(1, 7))
    assert {c.dtype for c in cases} == set(_bench.SWEEP_DTYPES)
    runs = []
    for c in cases:
        assert len(c.shape) == len(c.reps)
        itemsize = np.dtype(c.dtype).itemsize
        out = math.prod(c.shape) * math.prod(c.reps) * itemsize
        assert _bench.SWEEP_OUT_BYTES[0] <= out <= _bench.SWEEP_OUT_BYTES[1]
        last = max(i for i, r in enumerate(c.reps) if r != 1)
        runs.append(math.prod(c.shape[last:]) * itemsize)
    # runs of a few bytes to far past the long-run threshold, all outputs repeated
    assert min(runs) <= 2
    assert max(runs) >= 1 << 18


def test_summary_lists_the_worst() -> None:
    results = [
        _bench.Result("numpy", f"case{i}", "sweep", "float32", 10**6, 1.0, 1.0, t)
        for i, t in enumerate([0.5, 1.0, 2.0])
    ]
    text = _bench.summary(results, worst=2)
    assert "3 cases" in text
    assert "min 0.50" in text
    assert "1 below 0.9;" in text
    assert "case2" in text
    assert "case0" not in text


def test_bound_is_the_faster_of_copy_and_fill() -> None:
    def result(copy_s: float, bound_s: float) -> _bench.Result:
        return _bench.Result("numpy", "c", "sweep", "int8", 64 << 20, copy_s, 1.0, 2.0, bound_s)

    assert result(1.0, 0.5).vs_bound == 0.25  # every core writes faster than the copy
    assert result(0.5, 1.0).vs_bound == 0.25
    assert result(1.0, float("nan")).vs_bound == 0.5  # no fill timed (a GPU): the copy
    assert "xtile/bound on the 1 outputs >= 32 MB: min 0.25" in _bench.summary([result(1, 0.5)])


def test_at_the_bound_is_the_native_time_over_the_bounds() -> None:
    # native 1 s, xtile 2 s; the bound: the fill (0.25 s), else the copy (0.5 s)
    fill = _bench.Result("numpy", "c", "sweep", "int8", 64 << 20, 0.5, 1.0, 2.0, 0.25)
    copy = dataclasses.replace(fill, bound_s=float("nan"))
    assert (fill.at_bound, copy.at_bound) == (4.0, 2.0)
    assert "a tile at the bound on every case: geomean 2.83;" in _bench.summary([fill, copy])
    assert "min 0.50 (at the bound: 2.83);" in _bench.table([fill, copy])
    untimed = dataclasses.replace(copy, copy_s=float("nan"))  # benchmarks/versus.py's
    assert "at the bound" not in _bench.summary([untimed])


def test_fill_writes_every_byte() -> None:
    assert (_bench.fill(3 << 20) == 1).all()
    assert _bench.fill(0).size == 0


def test_per_call_script() -> None:
    """benchmarks/per_call.py runs and prints one row per backend."""
    import subprocess
    import sys

    script = Path(__file__).parents[1] / "benchmarks" / "per_call.py"
    args = ["--rounds", "2", "--number", "1", "--shape", "3,4", "--reps", "2,1"]
    done = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, check=True
    )
    assert "numpy " in done.stdout
    assert "(3, 4) x (2, 1)" in done.stdout


def test_ablation_script() -> None:
    """benchmarks/ablation.py times every strategy off in turn and checks every variant."""
    import subprocess
    import sys

    script = Path(__file__).parents[1] / "benchmarks" / "ablation.py"
    args = ["--backends", "numpy", "--cases", "sweep:3:2,gen2:3:2", "--repeat", "1"]
    done = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, check=True
    )
    from xtile._testing import STRATEGIES

    for name in STRATEGIES:
        assert f"| {name} |" in done.stdout
    assert "gen2:3:2" in done.stdout


@pytest.mark.parametrize(
    ("script", "args", "printed"),
    [
        ("threads.py", ["--draws", "3", "--sizes", "1", "--backends", "numpy", "--repeat", "1"],
         "T=1 MiB"),
        ("bandwidth.py", ["--limit", "1", "--backends", "numpy", "--repeat", "1"], "x/bound"),
        ("versus.py", ["--before", ".", "--cases", "gen2", "--n", "2", "--backends", "numpy",
                       "--repeat", "1"], "before / after time"),
        ("versus.py", ["--before", ".", "--cases", "gen2", "--n", "2", "--seed", "1,2",
                       "--backends", "numpy", "--repeat", "1", "--changed"],
         "no case of 4 planned otherwise"),
        # the summary's last line (its first, `xtile / native tile (fresh)`, in the same print)
        ("out_tile.py", ["--sweep", "2", "--min-mb", "0", "--backends", "numpy", "--repeat", "1"],
         "into a result of xtile.tile, vs a fresh call: min"),
        # small outputs: `out=`'s checks make it slower than a fresh call, so cases rerun
        ("out_tile.py", ["--sweep", "2", "--min-mb", "0", "--backends", "numpy", "--repeat", "1",
                         "--rerun", "1"], "stay below on the median"),
        ("versus.py", ["--before", ".", "--cases", "gen2", "--n", "3", "--backends", "numpy",
                       "--repeat", "1", "--out", "--rerun", "1"], ", again "),
        # the named cases hold the chains the stage keeps out: its summary's last line
    ],
)  # fmt: skip
def test_benchmark_scripts(script: str, args: list[str], printed: str) -> None:
    """The ablation of the thread and huge-page sizes, the bandwidth table, before/after."""
    import subprocess
    import sys

    root = Path(__file__).parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / script), *args],
        capture_output=True, text=True, check=True, cwd=root,
    )  # fmt: skip
    assert printed in done.stdout


def _result(case: str = "(8, 8)x(2, 3)", backend: str = "numpy") -> _bench.Result:
    """A made-up timing: xtile twice as fast as the native tile."""
    return _bench.Result(backend, case, "matrix", "float32", 10**6, 1.0, 2.0, 1.0, 0.5)


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """`python -m xtile bench` without timing anything: the backends each run was given."""
    calls: list[list[str]] = []

    def run(backends: list[str], cases: object, repeat: int) -> list[_bench.Result]:
        del cases, repeat
        calls.append(list(backends))
        return [_result(backend=b) for b in backends]

    monkeypatch.setattr(_bench, "run", run)
    return calls


def test_bench_plot_needs_matplotlib_up_front(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ran: list[list[str]]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(SystemExit) as e:
        main(["bench", "--quick", "--backends", "numpy", "--plot", "x.png"])
    assert e.value.code == 2
    assert ran == []  # refused before timing anything
    assert 'pip install "xtile[bench]"' in capsys.readouterr().err


def test_bench_quick_honours_backends(ran: list[list[str]]) -> None:
    assert main(["bench", "--quick", "--backends", "numpy"]) == 0
    assert ran == [["numpy"]]


def test_bench_unknown_backend_is_one_line(
    capsys: pytest.CaptureFixture[str], ran: list[list[str]]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["bench", "--backends", "numpy,nump"])
    assert e.value.code == 2
    assert ran == []
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        "python -m xtile bench: error: unknown backend 'nump' in --backends; valid: "
        + ", ".join(_bench.BACKENDS + _bench.GPU_BACKENDS)
    )


def test_bench_missing_backend_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ran: list[list[str]]
) -> None:
    monkeypatch.setitem(sys.modules, "jax.numpy", None)  # as if not installed
    with pytest.raises(SystemExit):
        main(["bench", "--backends", "numpy,jax"])
    assert ran == []
    err = capsys.readouterr().err
    assert "error: backend 'jax' cannot run here: jax.numpy is not installed" in err
    # the default set runs what is installed, and says what it skipped
    assert main(["bench"]) == 0
    assert "jax" not in ran[-1]
    assert "jax: skipped, jax.numpy is not installed" in capsys.readouterr().out


def test_bench_table_columns_stay_aligned() -> None:
    long_case = f"{(1,) * 12}x{(2,) * 12}"
    lines = _bench.table([_result(), _result(long_case)]).splitlines()
    assert len(lines[0]) == len(lines[2]) == len(lines[3])  # header and each row
    assert lines[0].index("x/native") + 8 == lines[3].index("2.00") + 4  # right-aligned


def test_bench_table_says_what_its_ratios_mean() -> None:
    text = _bench.table([_result()])
    assert "x/native: the native tile's time / xtile's, above 1 = xtile faster" in text
    assert "x/bound: the bound's" in text


def test_bench_sweep_seed_printed_once(
    capsys: pytest.CaptureFixture[str], ran: list[list[str]]
) -> None:
    assert main(["bench", "--sweep", "2", "--seed", "5", "--backends", "numpy"]) == 0
    out = capsys.readouterr().out
    assert out.count("sweep of 2 cases, seed 5") == 1
    assert out.startswith("sweep of 2 cases, seed 5\n")
    assert "numpy: 1 cases" in out  # the summary (the stub times one case)
    assert ran == [["numpy"]]


def test_summary_heads_its_worst_list() -> None:
    lines = _bench.summary([_result()]).splitlines()
    assert lines[1] == "  slowest against the native tile (x/native, x/bound, case, dtype, output):"
    assert lines[2].startswith("     2.00 (bound")


def test_bench_help_is_self_contained(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["bench", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "performance.md" not in out
    assert "`" not in out
    for column in ("backend", "case", "out MB", "bound, native, xtile", "x/native", "x/bound"):
        assert f"\n  {column}  " in out or f"\n  {column}\n" in out
    assert "The bound is the faster of" in out
    assert "above 1, xtile is faster" in out


@pytest.mark.parametrize(
    ("args", "least"),
    [(["--repeat", "0"], 1), (["--sweep", "0"], 1), (["--sweep", "-3"], 1),
     (["--repeat", "x"], 1)],
)  # fmt: skip
def test_bench_counts_are_checked(
    capsys: pytest.CaptureFixture[str], ran: list[list[str]], args: list[str], least: int
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["bench", "--backends", "numpy", *args])
    assert e.value.code == 2
    assert ran == []
    assert f"expected an integer of at least {least}, got '{args[1]}'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "repeat"),
    [([], 5), (["--quick"], 1), (["--quick", "--repeat", "3"], 3), (["--repeat", "2"], 2)],
)  # fmt: skip
def test_bench_quick_takes_a_given_repeat(
    monkeypatch: pytest.MonkeyPatch, args: list[str], repeat: int
) -> None:
    seen: list[int] = []

    def run(backends: list[str], cases: object, repeat: int) -> list[_bench.Result]:
        del cases
        seen.append(repeat)
        return [_result(backend=b) for b in backends]

    monkeypatch.setattr(_bench, "run", run)
    assert main(["bench", "--backends", "numpy", *args]) == 0
    assert seen == [repeat]


@pytest.mark.parametrize("flag", ["--csv", "--plot"])
def test_bench_output_directory_checked_up_front(
    capsys: pytest.CaptureFixture[str], ran: list[list[str]], tmp_path: Path, flag: str
) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "absent" / "x.png"
    with pytest.raises(SystemExit) as e:
        main(["bench", "--quick", "--backends", "numpy", flag, str(path)])
    assert e.value.code == 2
    assert ran == []
    assert f"{flag} {path}: its directory does not exist" in capsys.readouterr().err


def test_progress_bar_only_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    _bench._progress(1, 2, "numpy (8, 8)x(2, 3)")  # captured: not a terminal
    assert capsys.readouterr().err == ""
