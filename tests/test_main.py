"""``python -m xtile``: the self-check's table, its help, and the quick benchmark."""

import re
import subprocess
import sys
from typing import Any

import pytest

import xtile
from xtile._cli._main import describe
from xtile._testing import Backend, BackendUnavailableError, _oracles


def _run(*args: str) -> str:
    """Run ``python -m xtile`` as a user does; its standard output."""
    return subprocess.run(
        [sys.executable, "-m", "xtile", *args], capture_output=True, text=True, check=True
    ).stdout


def test_self_check_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "xtile", "--cases", "3", "--seed", "0"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    # OpenVINO's telemetry, if imported, forks after JAX started threads: JAX warns
    assert "os.fork()" not in done.stderr
    out = done.stdout
    assert "seed 0 (again: python -m xtile --cases 3 --seed 0)" in out
    for backend in Backend:
        assert backend.value in out
    rows = [line.split() for line in out.splitlines()]
    assert not any(row[1:2] == ["Device"] for row in rows)  # a device of no name (ndonnx's)
    for name, _, _ in _oracles.LAYERS:
        assert name in out
    # the legend says the N of this run
    assert "examples plus 3 random cases" in " ".join(out.split())
    assert out.rstrip().endswith("OK: every case matched")


@pytest.mark.parametrize(
    ("args", "n", "again"),
    [([], 10, "python -m xtile --seed 5"), (["--full"], 300, "python -m xtile --full --seed 5"),
     (["--cases", "7"], 7, "python -m xtile --cases 7 --seed 5")],
)  # fmt: skip
def test_self_check_is_quick_by_default(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    n: int,
    again: str,
) -> None:
    """10 random cases per backend and layer by default, 300 with --full; the replay line."""
    from xtile._cli import _main, main

    seen: list[int] = []

    def check(*given: object) -> dict[str, object]:
        seen.append(given[-2])  # type: ignore[arg-type]  # (..., n, seed)
        return {"device": "cpu", "dtypes": 1, "cases": 1, "failures": 0, "problems": []}

    monkeypatch.setattr(_main, "_check_backend", check)
    monkeypatch.setattr(_oracles, "check_layer", check)
    assert main([*args, "--seed", "5"]) == 0
    assert seen == [n] * (len(Backend) + len(_oracles.LAYERS))
    assert f"(again: {again})" in capsys.readouterr().out


def test_self_check_full_or_cases(capsys: pytest.CaptureFixture[str]) -> None:
    from xtile._cli import main

    with pytest.raises(SystemExit):
        main(["--full", "--cases", "3"])
    assert "not allowed with argument" in capsys.readouterr().err
    for n in ("-1", "x"):
        with pytest.raises(SystemExit) as e:
            main(["--cases", n])
        assert e.value.code == 2
        assert f"expected an integer of at least 0, got '{n}'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "layer", "runtime"), _oracles.LAYERS, ids=[n for n, _, _ in _oracles.LAYERS]
)
def test_layers_match_their_runtimes(name: str, layer: object, runtime: object) -> None:
    del name  # the id
    row = _checked(layer, runtime, 60)
    assert row["failures"] == 0, row["problems"]


def test_layer_oracle_can_fail() -> None:
    """A layer that drops a repeat is caught."""
    _, layer, runtime = _oracles.LAYERS[0]
    row = _checked(lambda x, reps: layer(x, reps * 0), runtime, 20)
    assert row["failures"] > 0


def _checked(layer: Any, runtime: Any, n: int) -> dict[str, Any]:
    """`n` cases of `layer` against `runtime`; skipped where the runtime is not installed."""
    try:
        return _oracles.check_layer(layer, runtime, n, seed=1)
    except BackendUnavailableError as e:
        pytest.skip(str(e))


def test_help_is_plain_text() -> None:
    out = _run("--help")
    assert "python -m xtile bench" in out.splitlines()[1]  # in the usage lines
    assert "`" not in out
    assert "--seed S" in out


def test_bench_quick() -> None:
    out = _run("bench", "--quick", "--rerun", "1")
    assert "geomean xtile/native" in out
    assert "cases below 0.9 x/native, timed again" in out  # its cases, or "none"


def test_rerun_times_the_slow_cases_again_in_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bench --rerun N``: each case under the line read N more times, and their median."""
    from xtile._cli import _bench

    cases = [_bench.Case((8, 8), (2, 2), "float32", "a"), _bench.Case((3,), (5,), "int8", "b")]
    results = _bench.run(["numpy"], cases, repeat=1)
    timed, run = [], _bench.run

    def counted(backends: list[str], of: list[Any], repeat: int) -> list[Any]:
        timed.append(of)
        return run(backends, of, repeat)

    monkeypatch.setattr(_bench, "run", counted)
    readings = _bench.rerun(results, cases, 2, repeat=1, below=float("inf"))
    assert timed == [[c] for c in cases] * 2  # a pass over all, then the next
    assert [rs[0] for rs in readings] == results
    assert [{(r.backend, r.case, r.dtype) for r in rs} for rs in readings] == [
        {("numpy", r.case, r.dtype)} for r in results
    ]
    assert all(len(rs) == 3 for rs in readings)
    lines = _bench.reruns(readings, below=float("inf")).splitlines()
    ratios = [f"{r.vs_native:.2f}" for r in readings[1]]
    assert lines[2].split(": ")[-1].split(" -> ")[0] == " ".join(ratios)
    median = sorted(readings[1], key=lambda r: r.vs_native)[1].vs_native
    assert lines[2].endswith(f" -> {median:.2f}")
    assert lines[3].startswith("numpy: 2 of 2 below inf on the median, least median ")
    assert _bench.rerun(results, cases, 2, repeat=1, below=0.0) == []
    assert _bench.reruns([]).splitlines()[1:] == ["  none"]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize(
    ("shape", "reps", "dtype"),
    [
        ((3, 1), (39631, 2), "float64"),
        ((16, 1), (34147, 1), "int64"),
        ((100, 100, 3), (10, 10, 10), "float32"),
        ((4000, 3), (1, 1000), "float32"),
        ((2366, 2, 1, 3), (3, 2, 1, 1), "float32"),
        ((8, 8), (2, 2), "uint8"),
    ],
    ids=str,
)
def test_explain_says_what_runs(
    capsys: pytest.CaptureFixture[str],
    backend: str,
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    dtype: str,
) -> None:
    """``explain`` prints the program a call of that layout runs, then each candidate it beat."""
    from xtile import _run
    from xtile._cli import main

    library = pytest.importorskip(backend)
    arg = ",".join(map(str, shape)), ",".join(map(str, reps))
    assert main(["explain", *arg, "--dtype", dtype, "--backend", backend]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.startswith(f"{backend}, {dtype} (")
    heads = [line for line in lines if not line.startswith("  ")]
    assert heads[0].startswith("runs ")
    assert all(h.startswith("beat ") for h in heads[1:])
    costs = [float(h.rpartition("cost ")[2].removesuffix(" us")) for h in heads[1:]]
    assert costs == sorted(costs)  # the cheapest first
    _run.KEPT.clear()
    x = library.zeros(shape, dtype=getattr(library, dtype))
    xtile.tile(x, reps)
    ((program, _),) = {id(v): v for v in _run.KEPT.values()}.values()  # the one printed
    ran = describe(program).splitlines()
    assert lines[: len(ran)] == ["runs " + ran[0], *ran[1:]]


def test_explain_of_a_backend_without_programs(capsys: pytest.CaptureFixture[str]) -> None:
    """JAX computes the whole tile as one XLA program; `explain` says so, and times nothing."""
    from xtile._cli import main

    pytest.importorskip("jax")
    assert main(["explain", "3,4", "2", "--backend", "jax"]) == 0
    assert "the backend's own computation" in capsys.readouterr().out
    assert main(["explain", "3,4", "2", "--backend", "jax", "--time"]) == 0
    assert "(--time: no programs to time)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["explain", "3,x", "2"])
    assert "integers separated by commas" in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["numpy", "torch", "array_api_strict"])
def test_explain_time(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """``explain --time``: the two tiles' times, then each program's beside its price."""
    from xtile._cli import _bench, main

    pytest.importorskip(backend)
    timed = _bench.best_times
    monkeypatch.setattr(_bench, "best_times", lambda fns, sync, _: timed(fns, sync, 1))
    case = ["explain", "32,32", "39,2", "--dtype", "float64", "--backend", backend]
    assert main(case) == 0
    untimed = capsys.readouterr().out.splitlines()
    assert main([*case, "--time"]) == 0
    header, tiles, *lines = capsys.readouterr().out.splitlines()
    assert header == untimed[0]
    assert re.fullmatch(rf"{backend}\.tile took \d+\.\d us, xtile\.tile \d+\.\d us", tiles)
    heads = [line for line in lines if not line.startswith("  ")]
    assert len(heads) > 1 or backend == "array_api_strict"
    for head, said in zip(heads, [u for u in untimed[1:] if not u.startswith("  ")], strict=True):
        price, took = head.split(", took ")
        assert price == said  # the same programs, in the same order
        assert re.fullmatch(r"\d+\.\d us", took)
    assert [u for u in lines if u.startswith("  ")] == [u for u in untimed if u.startswith("  ")]


@pytest.mark.parametrize(
    ("args", "said"),
    [(["3", "-2"], "`repeats` must be non-negative; got -2 at position 0 of (-2,)"),
     (["2,-3", "2"], "`shape` must be non-negative; got -3 at position 1 of (2, -3)"),
     (["3", "2", "--dtype", "float33"], "float33"),
     (["3", "2", "--backend", "torch", "--dtype", "float33"], "not a dtype of torch"),
     (["4,3", "-1,2"], "`repeats` must be non-negative; got -1 at position 0 of (-1, 2)"),
     (["4,3", "(-1, 2)"], "`repeats` must be non-negative; got -1 at position 0 of (-1, 2)"),
     (["4,3", "100000000000,100000000000"], "more elements than int64 can count")],
)  # fmt: skip
def test_explain_refuses_in_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    from xtile._cli import main

    if "torch" in args:
        pytest.importorskip("torch")
    with pytest.raises(SystemExit) as e:
        main(["explain", *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert said in err.splitlines()[-1]


@pytest.mark.parametrize(
    ("backend", "module"),
    [("torch", "torch"), ("jax", "jax.numpy"), ("dask", "dask.array"),
     ("array_api_strict", "array_api_strict"), ("sparse", "sparse")],
)  # fmt: skip
def test_explain_without_the_backend_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, backend: str, module: str
) -> None:
    """A backend not installed (its import fails) is refused in one line, as ``bench`` does."""
    from xtile._cli import main

    monkeypatch.setitem(sys.modules, module, None)  # what `import` finds of a missing module
    with pytest.raises(SystemExit) as e:
        main(["explain", "4000,3", "1,1000", "--backend", backend])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"backend {backend!r} cannot run here" in err.splitlines()[-1]


def test_explain_takes_the_backends_dtypes(capsys: pytest.CaptureFixture[str]) -> None:
    from xtile._cli import main

    pytest.importorskip("torch")
    assert main(["explain", "2,3", "2", "--backend", "torch", "--dtype", "bfloat16"]) == 0
    assert "torch, bfloat16 (2 bytes per element)" in capsys.readouterr().out


def test_explain_help_is_complete() -> None:
    out = _run("explain", "--help")
    for word in ("SHAPE", "REPEATS", "--dtype", "--backend", "candidate"):
        assert word in out


def test_explain_into_a_closed_pipe_says_nothing() -> None:
    """``python -m xtile explain ... | true`` (a reader that leaves at once): no traceback."""
    run = subprocess.run(
        f"{sys.executable} -m xtile explain 3,1 39631,2 --dtype float64 | true",
        shell=True,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Traceback" not in run.stderr, run.stderr
