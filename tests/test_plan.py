"""The planner on its own, and every program it writes run through each backend's primitives."""

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from xtile import _agnostic, _fast, _plan
from xtile._lib._compat import array_namespace
from xtile._plan import Copy, Layout, Move, Repeat, Spread, Stage

NUMPY = _fast.lookup("numpy")
assert NUMPY is not None


def _layout(shape: tuple[int, ...], itemsize: int, **flags: bool) -> Layout:
    strides = tuple(itemsize * math.prod(shape[i + 1 :]) for i in range(len(shape)))
    return Layout(shape, strides, itemsize, **{"raw": True, "parts": True, "tuned": True, **flags})


def _kinds(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, fresh: bool = True, **flags: bool
) -> str:
    """The program's steps by name, e.g. "stage copy copy"."""
    program = _plan.program(_layout(shape, itemsize, **flags), reps, NUMPY.tuning, fresh=fresh)
    names = []
    for step in program.steps:
        name = type(step).__name__.lower()
        if isinstance(step, Copy) and step.item:
            name = "bytes"
        names.append(name)
    return " ".join(dict.fromkeys(names))  # each kind once, in order


@pytest.mark.parametrize(
    ("shape", "reps", "itemsize", "kinds"),
    [
        ((8, 8), (2, 2), 4, "copy"),  # small: one copy
        ((1000, 1000), (4, 4), 4, "copy"),  # long runs
        ((4000, 3), (1, 1000), 4, "copy move"),  # too large to stage: doubled in the output
        ((40, 3), (1, 1000), 4, "stage repeat"),  # one repeated axis left: one pass
        ((2, 3, 4, 5), (10, 10, 10, 10), 4, "stage copy"),
        ((2, 2, 2, 2, 2, 2), (3, 3, 3, 3, 3, 3), 4, "stage copy"),
        ((3, 1), (39639, 2), 8, "stage repeat"),  # part of a repeat: 181, a divisor
        ((3, 1), (39631, 2), 8, "stage copy"),  # a prime: whole copies, then the rest
        ((100, 100, 3), (10, 10, 10), 4, "copy move spread"),  # too large to stage
        ((1, 418, 1, 1, 2), (1, 52, 6, 1, 1), 16, "bytes spread"),  # a small corner: copied
        ((4000, 2), (3, 1000), 4, "bytes"),  # a word run: moved as it is, one item
        ((490, 1, 1, 1), (2, 1, 1, 600), 1, "copy"),  # a long fill stays a fill
    ],
)
def test_programs(shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, kinds: str) -> None:
    assert _kinds(shape, reps, itemsize) == kinds


def test_word_runs_into_out_are_staged() -> None:
    """A fresh output moves runs of a machine word as items; `out=` (any strides) stages them."""
    assert _kinds((2,), (1109415,), 8) == "repeat"
    assert _kinds((2,), (1109415,), 8, fresh=False) == "stage copy"
    assert _kinds((40, 2), (3, 1000), 4) == "bytes"
    assert _kinds((40, 2), (3, 1000), 4, fresh=False) == "stage copy"


def test_flags_gate_the_strategies() -> None:
    """Bytes and extend need raw items; parts of an output need plain writes; untuned: one copy."""
    case = ((100, 100, 3), (10, 10, 10), 4)
    assert _kinds(*case, raw=False) == "copy"
    assert _kinds(*case, parts=False) == "bytes"
    assert _kinds(*case, tuned=False) == "copy"
    assert _kinds((3, 1), (39631, 2), 8, parts=False) == "stage repeat"  # whole repeats only


@pytest.mark.parametrize(
    ("shape", "reps", "itemsize", "item"),
    [
        ((1000, 1000), (4, 4), 4, 8),  # 4000-byte runs: 500 words of 8 bytes
        ((1000, 1000), (4, 4), 1, 8),
        ((4000, 3), (1, 1000), 4, 4),  # 12 bytes: its own words, no wider
        ((1000, 1), (1, 4000), 4, 4),  # a fill: no run to widen
        ((300, 300), (4, 4), 16, 8),  # wider than the words: the dtype's own items
        ((1000, 1000), (2, 2), 1, 1),  # under DEVICE_ELEMENTS: as it is
    ],
)
def test_a_device_copy_moves_the_widest_word(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, item: int
) -> None:
    """Untuned (a GPU): one copy, each run as the widest of the words that divides it."""
    torch = _fast.lookup("torch") if _have("torch") else None
    words = torch.tuning if torch is not None else _plan.Tuning(words=frozenset({2, 4, 8}))
    (step,) = _plan.program(_layout(shape, itemsize, tuned=False), reps, words).steps
    assert isinstance(step, Copy)
    assert step.item == (item if item > itemsize else 0)
    with _plan.switched_off("bytes"):
        assert _plan.program(_layout(shape, itemsize, tuned=False), reps, words).steps == (
            Copy(step.plan),
        )
    assert _plan.program(_layout(shape, itemsize, tuned=False, raw=False), reps, words).steps == (
        Copy(step.plan),
    )


@pytest.mark.parametrize("offset", [0, 1, 2, 4, 8])
@pytest.mark.parametrize("stride", [1000, 1001, 1004])
def test_a_device_copy_of_unaligned_runs(offset: int, stride: int) -> None:
    """Runs whose offset or row stride is not a multiple of the word copy element by element."""
    torch = pytest.importorskip("torch")
    prims = _fast.lookup("torch")
    assert prims is not None
    base = torch.arange(offset + 16 * stride, dtype=torch.int8)
    x = base[offset:].as_strided((16, 1000), (stride, 1))
    layout = prims.layout(x)._replace(tuned=False)  # as on a GPU
    program = _plan.program(layout, (17, 16), prims.tuning)
    assert program.steps[0].item == 8  # type: ignore[union-attr]
    got = _agnostic.run(x, program, array_namespace(x), prims)
    np.testing.assert_array_equal(got.numpy(), np.tile(x.numpy(), (17, 16)))


_DEVICE_LAYOUTS = {
    "expanded": lambda t: t.arange(1000, dtype=t.int8).expand(16, 1000),
    "transposed": lambda t: t.arange(16000, dtype=t.int8).view(1000, 16).T,
    "conj": lambda t: t.ones(16, 500, dtype=t.complex64).conj(),
    "neg": lambda t: t._neg_view(t.ones(16, 1000, dtype=t.complex64)),
    "requires_grad": lambda t: t.ones(16, 1000, requires_grad=True),
    "inference": lambda t: _inference(t, t.ones(16, 1000, dtype=t.int16)),
}


def _inference(torch: Any, a: Any) -> Any:
    with torch.inference_mode():
        return a.clone()


@pytest.mark.parametrize("make", list(_DEVICE_LAYOUTS), ids=str)
def test_a_device_copy_of_any_layout(make: str) -> None:
    """As on a GPU: each layout tiles exactly; runs move as words only where items may."""
    torch = pytest.importorskip("torch")
    prims = _fast.lookup("torch")
    assert prims is not None
    x = _DEVICE_LAYOUTS[make](torch)
    layout = prims.layout(x)._replace(tuned=False)
    program = _plan.program(layout, (17, 16), prims.tuning)
    assert bool(program.steps[0].item) == (make in {"expanded", "inference"})  # type: ignore[union-attr]
    got = _agnostic.run(x, program, array_namespace(x), prims)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(
        got.detach().resolve_conj().resolve_neg().numpy(),
        np.tile(x.detach().resolve_conj().resolve_neg().numpy(), (17, 16)),
    )


def test_switched_off() -> None:
    case = ((100, 100, 3), (10, 10, 10), 4)
    with _plan.switched_off("extend"):
        assert _kinds(*case) == "bytes"
        with _plan.switched_off("bytes"):
            assert _kinds(*case) == "copy"
        assert _kinds(*case) == "bytes"
    assert _kinds(*case) == "copy move spread"
    with pytest.raises(ValueError, match="nope"), _plan.switched_off("nope"):
        pass


def test_explain_names_every_step() -> None:
    program = _plan.program(_layout((3, 1), 8), (39631, 2), NUMPY.tuning)
    text = _plan.explain(program)
    assert text.count("\n") == len(program.steps)
    assert "stage" in text
    assert "-> output[118680:118893, 0:2]" in text  # the rest, after 460 whole copies


def _run(x: Any, program: _plan.Program, prims: _agnostic.Primitives) -> Any:
    """`program` run into an output filled with a sentinel, so a byte left unwritten shows."""
    xp = array_namespace(x)
    out = xp.full(program.plan.out_shape, 77, dtype=x.dtype)
    return _agnostic.run(x, program, xp, prims, out)


shapes = st.lists(st.integers(1, 6), min_size=1, max_size=4).map(tuple)


@pytest.mark.usefixtures("slabs")
@given(
    shape=shapes,
    reps=st.lists(st.sampled_from([1, 2, 3, 5, 7, 64, 301]), min_size=1, max_size=4).map(tuple),
    dtype=st.sampled_from(["int8", "int16", "float32", "complex128"]),
    transposed=st.booleans(),
    data=st.data(),
)
def test_every_program_tiles_right(
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    dtype: str,
    transposed: bool,
    data: st.DataObject,
) -> None:
    """
    With any strategies switched off, each program writes `numpy.tile`'s every byte.

    The thresholds are lowered so that small cases take every strategy; a dropped
    step (the rest of a part, a doubling step) leaves sentinel bytes.
    """
    assume(math.prod(shape) * math.prod(reps[-len(shape) :]) * math.prod(reps) < 1 << 22)
    x = np.arange(math.prod(shape), dtype=dtype).reshape(shape)
    if transposed:
        x = x.T.copy().T  # Fortran order: the same values, other strides
    off = data.draw(st.sets(st.sampled_from(_plan.STRATEGIES)))
    backends: list[tuple[Any, _agnostic.Primitives]] = [(x, NUMPY), (x, _agnostic.STANDARD)]
    torch = _fast.lookup("torch") if _have("torch") else None
    if torch is not None:
        import torch as t

        backends.append((t.from_numpy(x), torch))
        # as on a GPU (untuned: the one copy, runs as wide words), into a fresh output
        device = torch._replace(layout=lambda a: torch.layout(a)._replace(tuned=False))  # type: ignore[misc]
        backends.append((t.from_numpy(x), device))
    with pytest.MonkeyPatch.context() as m:
        for name, value in [
            ("SMALL_BYTES", 0),
            ("DEVICE_ELEMENTS", 0),
            ("STAGE_BYTES", 1 << 9),
            ("STAGED_RUN_BYTES", 64),
        ]:
            m.setattr(_plan, name, value)
        m.setattr(_plan, "STEP_BYTES", 1)
        m.setattr(_plan, "LONG_RUN_BYTES", 48)
        m.setattr(_plan, "PART_RUN_BYTES", 32)
        with _plan.switched_off(*off):
            for a, prims in backends:
                layout = prims.layout(a) if prims.layout is not None else None
                if layout is None:
                    continue
                program = _plan.program(layout, reps, prims.tuning)
                want, why = np.tile(x, reps), _plan.explain(program)
                np.testing.assert_array_equal(np.asarray(_run(a, program, prims)), want, why)
                if not layout.tuned:
                    got = _agnostic.run(a, program, array_namespace(a), prims)
                    np.testing.assert_array_equal(np.asarray(got), want, why)


def _have(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_the_sentinel_catches_a_dropped_step() -> None:
    """The property above can fail: the same program less its last step leaves bytes unwritten."""
    x = np.arange(3.0).reshape(3, 1)
    program = _plan.program(_layout((3, 1), 8), (39631, 2), NUMPY.tuning)
    assert isinstance(program.steps[-1], Copy)
    np.testing.assert_array_equal(_run(x, program, NUMPY), np.tile(x, (39631, 2)))
    short = program._replace(steps=program.steps[:-1])
    assert not np.array_equal(_run(x, short, NUMPY), np.tile(x, (39631, 2)))


@pytest.mark.parametrize(
    ("extents", "out_extents", "one"),
    [
        ((), (), True),
        ((5,), (10,), True),
        ((2, 3), (4, 3), True),  # the inner axis whole: one axis
        ((2, 3), (4, 6), False),
        ((2, 1, 3), (2, 2, 3), False),  # an axis between of length 2 in the output
        ((1, 2, 1, 3), (1, 4, 1, 3), True),
    ],
)
def test_one_axis(extents: tuple[int, ...], out_extents: tuple[int, ...], one: bool) -> None:
    assert _plan._one_axis(extents, out_extents) == one


def test_stage_and_steps_stay_in_their_bounds() -> None:
    """Every staged array fits the stage; every step's region lies in the output."""
    for shape, reps in itertools.product(
        [(3,), (2, 5), (7, 1, 3), (2, 2, 2, 2)], [(39639,), (3, 1000), (2, 9, 401), (5, 1, 1, 700)]
    ):
        for itemsize in (1, 2, 8, 16):
            program = _plan.program(_layout(shape, itemsize), reps, NUMPY.tuning)
            out_shape = program.plan.out_shape
            for step in program.steps:
                if isinstance(step, Stage):
                    assert step.plan.size * itemsize <= _plan.STAGE_BYTES
                elif isinstance(step, Copy) and step.region is not None:
                    assert all(
                        0 <= a <= b <= n for (a, b), n in zip(step.region, out_shape, strict=True)
                    )
                elif isinstance(step, Move | Spread):
                    assert step.axis < len(out_shape)
                else:
                    assert isinstance(step, Copy | Repeat)
