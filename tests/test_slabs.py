"""A big extended program in slabs of its first axis: planned by cost, written by threads."""

import math
import threading
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _backends, _program, _threads
from xtile._program import Copy, Program, Repeat, Replicate, Slabs
from xtile._testing import switched_off

NUMPY = _backends.load("numpy")
# outputs of 23-48 MB whose cheapest whole program is extended (python -m xtile explain)
SLABBED = [
    ((4000, 3), (1, 1000), "float32"),
    ((2000, 5), (1, 800), "float32"),
    ((51, 1, 21, 1), (1, 15, 45, 50), "uint8"),
    ((756, 6, 1), (1, 317, 4), "float32"),
    ((4000, 3), (1000,), "float32"),  # `repeats` shorter than the input: its first is 1
]


def _plan(shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, **kw: Any) -> Program:
    """NumPy's plan of a C-ordered input of `shape` and `dtype` (into a fresh output)."""
    layout = NUMPY.layout(np.empty(shape, dtype))  # type: ignore[misc]
    assert layout is not None
    return _program.plan(layout, reps, kw.get("m", NUMPY.model), True, kw.get("off", frozenset()))


@pytest.mark.parametrize(("shape", "reps", "dtype"), SLABBED, ids=str)
def test_a_big_extended_program_is_planned_in_slabs(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: str
) -> None:
    """Cuts cover the first axis in order; each slab's program writes into the output alone."""
    program = _plan(shape, reps, dtype)
    assert program.name == "slabs", program.name
    whole = _plan(shape, reps, dtype, off=frozenset({"slabs"}))
    assert whole.name == "extended"
    assert program.cost < whole.cost  # chosen by cost
    (step,) = program.steps
    assert isinstance(step, Slabs)
    starts, stops = zip(*step.cuts, strict=True)
    assert (starts[0], stops[-1]) == (0, shape[0])
    assert starts[1:] == stops[:-1]
    assert len({b - a for a, b in step.cuts}) <= 2  # at most two sizes: two plans
    threads = NUMPY.model.threads
    assert program.cost == pytest.approx(sum(p.cost for p in step.programs))
    itemsize = np.dtype(dtype).itemsize
    for (a, b), part in zip(step.cuts, step.programs, strict=True):
        assert part.out_shape == (b - a, *program.out_shape[1:])
        assert part.name == "staged"  # room to stage: what slabs are for
        assert not isinstance(part.steps[-1], Repeat)
        for s in part.steps:  # two levels of a stage at once on each thread: one stage
            if isinstance(s, Repeat):
                made = math.prod(s.shape) * s.r * itemsize
            elif isinstance(s, Copy) and s.region is None and s is not part.steps[-1]:
                made = math.prod(s.shape) * math.prod(s.reps) * itemsize
            else:
                continue
            assert made * 2 * threads <= _program.STAGE_BYTES, (s, made)


@pytest.mark.parametrize(("shape", "reps", "dtype"), SLABBED, ids=str)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_slabs_write_the_tile(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, threads: int
) -> None:
    """Fresh, into `out` and into a `out` that is a view: the bytes of `numpy.tile`."""
    x = (np.arange(math.prod(shape)) % 251).astype(dtype).reshape(shape)
    expected = np.tile(x, reps)
    with xtile.threads(threads):
        assert xtile.tile(x, reps).tobytes() == expected.tobytes()
        out = np.full(expected.shape, 7, dtype)
        assert xtile.tile(x, reps, out=out) is out
        assert out.tobytes() == expected.tobytes()
        wider = np.full((2 * expected.shape[0], *expected.shape[1:]), 7, dtype)
        xtile.tile(x, reps, out=wider[1::2])  # not C-ordered: no slabs, the same tile
        assert wider[1::2].tobytes() == expected.tobytes()
        assert np.array_equal(wider[::2], np.full_like(wider[::2], 7))  # untouched


@pytest.mark.parametrize(
    ("shape", "reps", "dtype", "why"),
    [
        ((4000, 3), (1, 1000), "float32", "switched off"),
        ((4000, 3), (1, 1, 1000), "float32", "`x` gains a first axis of 1"),
        ((4000, 3), (2, 1000), "float32", "the first axis repeated"),
        ((4000, 3), (1, 160), "float32", "under the model's big size"),
        ((4000, 3), (1, 1000), "float32", "one thread by the model (PyTorch's)"),
        ((32, 1, 106, 106), (1, 1, 5, 5), "bool", "its slabs cost more (runs as items)"),
        ((54, 1, 22, 38, 1), (1, 2, 4, 1, 47), "int16", "its slabs cost more (copies)"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " in v else "",
)
def test_no_slabs(shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, why: str) -> None:
    """Only an extended program of a big output, cut along an axis of `x` repeated once."""
    off = frozenset({"slabs"}) if why == "switched off" else frozenset()
    m = NUMPY.model._replace(threads=1) if "one thread" in why else NUMPY.model
    assert _plan(shape, reps, dtype, off=frozenset({"slabs"}), m=m).name == "extended"
    program = _plan(shape, reps, dtype, off=off, m=m)
    assert program.name != "slabs"
    assert not any(isinstance(s, Slabs) for s in program.steps)


def _layouts(x: np.ndarray[Any, Any]) -> dict[str, Any]:
    """`x`'s values in the layouts users pass: every one is planned by its own strides."""
    return {
        "reversed": np.ascontiguousarray(x[::-1])[::-1],
        "fortran": np.asfortranarray(x),
        "strided": np.repeat(x, 2, axis=-1)[..., ::2],
        "broadcast": np.broadcast_to(x[:1], x.shape),  # zero strides along the first axis
        "masked": np.ma.masked_greater(x, 90),
        "padded": x.astype([("a", "u1"), ("b", x.dtype)]) if x.dtype != bool else x,
    }


@pytest.mark.parametrize(("shape", "reps", "dtype"), SLABBED[:2], ids=str)
@pytest.mark.parametrize("kind", list(_layouts(np.zeros((2, 2)))))
def test_slabs_of_any_layout(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, kind: str
) -> None:
    """Non-contiguous, zero-stride, masked and padded inputs: slabs, and the tile's bytes."""
    x = _layouts((np.arange(math.prod(shape)) % 100).astype(dtype).reshape(shape))[kind]
    if kind == "padded":
        x = np.array(x, dtype=np.dtype(x.dtype, align=True))  # padding bytes between fields
    data = np.ma.getdata(x)
    assert _program.plan(NUMPY.layout(data), reps, NUMPY.model, True).name == "slabs"  # type: ignore[misc, arg-type]
    got, expected = xtile.tile(x, reps), np.tile(x, reps)
    assert got.tobytes() == expected.tobytes()
    if kind == "masked":
        assert (np.ma.getmaskarray(got) == np.ma.getmaskarray(expected)).all()
    out = np.empty_like(np.asarray(expected))
    if kind != "masked":  # `out` takes plain arrays
        assert xtile.tile(x, reps, out=out).tobytes() == expected.tobytes()


def test_switched_off_runs_the_whole_program() -> None:
    """``switched_off("slabs")`` is another key, and runs the extended program whole."""
    x = np.arange(12000, dtype=np.float32).reshape(4000, 3)
    with switched_off("slabs"):
        kept = xtile.tile(x, (1, 1000))
    assert kept.tobytes() == np.tile(x, (1, 1000)).tobytes()


def test_threads_take_the_slabs_in_turns() -> None:
    """More calls than threads: at most `count()` at once, every call once."""
    lock, running, most, done = threading.Lock(), [0], [0], []

    def call(i: int) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.01)
        with lock:
            running[0] -= 1
            done.append(i)

    with xtile.threads(2):
        _threads.run([lambda i=i: call(i) for i in range(7)])  # type: ignore[misc]
    assert sorted(done) == list(range(7))
    assert most[0] <= 2


def test_explain_shows_the_slabs(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m xtile explain` prints each slab size's program and the whole it beat."""
    from xtile._cli import main

    assert main(["explain", "4000,3", "1,1000"]) == 0
    printed = capsys.readouterr().out
    heads = [line for line in printed.splitlines()[1:] if not line.startswith("  ")]
    assert heads[0].startswith("chosen slabs:")
    x = np.empty((4000, 3), np.float32)
    (step,) = _plan(x.shape, (1, 1000), "float32").steps
    assert f"slabs: {len(step.cuts)} of axis 0 on threads" in printed  # type: ignore[union-attr]
    # numpy.tile's own program, at any price; the whole, priced close
    assert [h.partition(":")[0] for h in heads[1:3]] == ["rival native", "rival extended"]


def test_replicate_in_slabs_of_one_place_copies_the_rest() -> None:
    """A replication spread over a whole axis (one place): the bytes NumPy's tile writes."""
    out = np.zeros((1, 9, 4), np.int16)
    out[0, :2] = [[1, 2, 3, 4], [5, 6, 7, 8]]
    NUMPY.replicate(out, Replicate((1,), 1, 2, 9))  # type: ignore[misc]
    assert out.tobytes() == np.tile(out[:, :2], (1, 5, 1))[:, :9].tobytes()
