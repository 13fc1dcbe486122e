"""The planner on its own, and every candidate it writes run by each backend's primitives."""

import importlib.util
import itertools
import math
from typing import Any

import array_api_compat.numpy as np_xp
import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

import xtile
from xtile import _backends, _program, _run
from xtile._cli._main import describe
from xtile._program import NONE, Copy, Layout, Model, Price, Program, Repeat, Replicate, Whole
from xtile._testing import STRATEGIES, Backend, switched_off, to_numpy

from ..conftest import absent
from .test_item_copies import strided_corner_items

NUMPY = _backends.load("numpy")
# the names `candidates` may give (docs/how-it-works.md)
NAMES = {"copy", "bytes", "native", "staged", "extended", "empty"}
DTYPES = {1: "int8", 2: "int16", 4: "int32", 8: "int64", 16: "complex128"}
SENTINEL = -1  # never a value of `_array`: a byte left unwritten shows


def _have(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _array(shape: tuple[int, ...], itemsize: int, order: str = "C") -> Any:
    """A NumPy array of `shape`, elements of `itemsize` bytes, values 1 to 120."""
    a = (np.arange(math.prod(shape)) % 120 + 1).astype(DTYPES[itemsize]).reshape(shape)
    return np.asfortranarray(a) if order == "F" and a.ndim > 1 else a


def _c_layout(shape: tuple[int, ...], itemsize: int, **flags: bool) -> Layout:
    """A C-ordered input's layout (strides in bytes), every flag on unless given."""
    strides = tuple(itemsize * math.prod(shape[i + 1 :]) for i in range(len(shape)))
    flags = {"as_bytes": True, "unrecorded": True, "on_host": True, **flags}
    return Layout(shape, strides, itemsize, **flags)


def _writes_into_output(program: Program) -> bool:
    """Whether a step writes into a part of the output (a region copy, a replication)."""
    return any(
        isinstance(s, Replicate) or (isinstance(s, Copy) and s.region is not None)
        for s in program.steps
    )


def _has_items(program: Program) -> bool:
    """Whether a copy moves its runs as items of several elements."""
    return any(isinstance(s, Copy) and s.item for s in program.steps)


def _out_like(program: Program, x: Any, fresh: bool) -> Any:
    """An output of `x`'s library filled with the sentinel: C-ordered, else Fortran-ordered."""
    shape = program.out_shape
    if type(x).__module__.startswith("torch"):
        import torch

        if fresh:
            return torch.full(shape, SENTINEL, dtype=x.dtype, device=x.device)
        return torch.full(shape[::-1], SENTINEL, dtype=x.dtype, device=x.device).permute(
            tuple(reversed(range(len(shape))))
        )
    if type(x).__module__.startswith("cupy"):
        import cupy

        out = cupy.full(shape if fresh else shape[::-1], SENTINEL, x.dtype)
        return out if fresh else out.T
    if isinstance(x, np.ndarray):
        if fresh:
            return np.full(shape, SENTINEL, dtype=x.dtype)
        return np.full(shape[::-1], SENTINEL, dtype=x.dtype).T
    import array_api_strict as xp  # the only other library run here

    return xp.full(shape, SENTINEL, dtype=x.dtype)


def _check(program: Program, x: Any, backend: _backends.Backend, xp: Any, fresh: bool) -> None:
    """
    `program` run by `backend`'s primitives writes `numpy.tile`'s every byte.

    Into an output filled with a sentinel (C-ordered for a fresh program, Fortran-ordered
    for one that writes an existing `out=`), so that a dropped step shows; a fresh
    program also into no output at all: a new array apart from `x`.
    """
    call = _run.compile_program(program, backend, xp)
    want = np.tile(to_numpy(x), program.reps)
    why = f"{backend.name}: {describe(program)}"
    out = _out_like(program, x, fresh)
    got = call(x, out)
    np.testing.assert_array_equal(to_numpy(out), want, why)
    np.testing.assert_array_equal(to_numpy(got), want, why)
    if fresh:
        got = call(x, None)
        assert tuple(got.shape) == program.out_shape, why
        np.testing.assert_array_equal(to_numpy(got), want, why)
        if isinstance(x, np.ndarray):
            assert not np.shares_memory(got, x), why


# (shape, repeats, itemsize): the cases that once picked each strategy of the old planner
CASES = [
    ((8, 8), (2, 2), 4),  # small
    ((300, 300), (4, 4), 4),  # long runs
    ((4000, 3), (1, 100), 4),  # short runs of a long input
    ((40, 3), (1, 1000), 4),  # one repeated axis
    ((2, 3, 4, 5), (10, 10, 10, 10), 4),
    ((2, 2, 2, 2, 2, 2), (3, 3, 3, 3, 3, 3), 4),
    ((3, 1), (39639, 2), 8),  # a repeat with divisors
    ((3, 1), (39631, 2), 8),  # a prime repeat: whole copies, then the rest
    ((50, 40, 3), (6, 5, 10), 4),
    ((1, 418, 1, 1, 2), (1, 52, 6, 1, 1), 16),  # a small corner
    ((400, 2), (3, 1000), 4),  # a word run
    ((490, 1, 1, 1), (2, 1, 1, 600), 1),  # a long fill
    ((2,), (110941,), 8),
    ((40, 2), (3, 1000), 4),
    ((129, 3), (50, 9), 2),
    ((3, 5, 2), (2, 3, 700), 16),
    ((), (3, 4), 8),  # 0-D
    ((3, 4), (1, 1), 2),  # nothing repeats
    ((3, 4), (2,), 1),  # promoted repeats
    ((3,), (2, 1, 2), 4),  # promoted input
    ((0, 3), (2, 2), 4),  # empty
    ((5,), (0,), 4),
]


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "out"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(("shape", "reps", "itemsize"), CASES, ids=str)
def test_programs(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, order: str, fresh: bool
) -> None:
    """
    Every candidate is named from the documented set and tiles right; the plan is the cheapest.

    What each case picks depends on the fitted costs; what must hold is that every
    candidate writes `numpy.tile`'s bytes, on NumPy (and PyTorch), and that `plan` is
    the cheapest of them.
    """
    x = _array(shape, itemsize, order)
    layout = NUMPY.layout(x)
    assert layout is not None
    found = _program.candidates(layout, reps, NUMPY.model, fresh)
    names = [p.name for p in found]
    assert set(names) <= NAMES, names
    if 0 in _program.promote(shape, reps)[0] or 0 in reps:
        assert names == ["empty"]
        assert found[0].steps == ()
    else:
        assert names.count("copy") == 1, names  # the one broadcast copy, always there
        assert found[0].name == "copy"
        assert found[0].steps == (Copy(*_program.promote(shape, reps)),)
    chosen = _program.plan(layout, reps, NUMPY.model, fresh)
    assert chosen == min(found, key=lambda p: p.cost)
    for program in found:
        if len(found) > 1:  # priced where there is a choice
            assert program.cost == _program.cost(program, layout, NUMPY.model)
            assert 0 < program.cost < math.inf
        full_shape, full_reps = _program.promote(shape, reps)
        assert program.out_shape == tuple(d * r for d, r in zip(full_shape, full_reps, strict=True))
        _check(program, x, NUMPY, NUMPY.xp, fresh)
    if _have("torch"):
        import torch

        backend = _backends.load("torch")
        t = torch.from_numpy(x)
        torch_layout = backend.layout(t)
        assert torch_layout is not None
        torch_found = _program.candidates(torch_layout, reps, backend.model, fresh)
        assert {p.name for p in torch_found} <= NAMES
        assert _program.plan(torch_layout, reps, backend.model, fresh) == min(
            torch_found, key=lambda p: p.cost
        )
        for program in torch_found:
            _check(program, t, backend, backend.xp, fresh)


@pytest.mark.parametrize(("shape", "reps", "itemsize"), CASES, ids=str)
def test_flags_gate_the_candidates(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int
) -> None:
    """
    Bytes and extended need raw items and a fresh output; parts of an output need plain
    writes; a model without prices (array-api-strict's, CuPy's) gets one copy.
    """
    m = NUMPY.model

    def names(fresh: bool = True, model: Model = m, **flags: bool) -> set[str]:
        found = _program.candidates(_c_layout(shape, itemsize, **flags), reps, model, fresh)
        assert _program.plan(_c_layout(shape, itemsize, **flags), reps, model, fresh) in found
        return {p.name for p in found}

    def programs(fresh: bool = True, **flags: bool) -> list[Program]:
        return _program.candidates(_c_layout(shape, itemsize, **flags), reps, m, fresh)

    assert not names(as_bytes=False) & {"bytes", "extended"}
    assert not any(_has_items(p) for p in programs(as_bytes=False))
    assert not names(fresh=False) & {"bytes", "extended"}
    assert not any(_has_items(p) for p in programs(fresh=False))
    assert "extended" not in names(unrecorded=False)
    assert not any(_writes_into_output(p) for p in programs(unrecorded=False))
    assert names(on_host=False) == names()  # the prices gate them, not where the input lives
    unpriced = _program.candidates(_c_layout(shape, itemsize), reps, Model(), True)
    assert {p.name for p in unpriced} <= {"copy", "empty"}
    for p in unpriced:
        assert len(p.steps) <= 1
        assert all(isinstance(s, Copy) and s.region is None for s in p.steps)
    # a step the backend lacks (an infinite cost) is never a candidate
    assert "bytes" not in names(model=m._replace(item=NONE, void=NONE))
    assert "native" not in names(model=m._replace(repeat=NONE, native=NONE))
    assert "extended" not in names(model=m._replace(replicate=NONE))
    # only the repeated axes of an input with more than one element ever need a program
    if all(r == 1 for r in reps) and shape:
        assert names() == {"copy"}


def test_every_strategy_is_a_candidate_somewhere() -> None:
    """The cases above exercise every name of the documented set."""
    seen = set()
    for (shape, reps, itemsize), fresh in itertools.product(CASES, [True, False]):
        layout = _c_layout(shape, itemsize)
        seen |= {p.name for p in _program.candidates(layout, reps, NUMPY.model, fresh)}
    assert seen == NAMES
    # and slabs: how `plan` may run a big extended program (test_slabs.py), not a candidate
    assert set(STRATEGIES) == NAMES - {"copy", "empty"}


WORDS = frozenset({2, 4, 8, 16})  # a device's; the host's stop at 8


@pytest.mark.parametrize(
    ("shape", "reps", "itemsize"),
    [
        ((1000, 1000), (4, 4), 4),  # 4000-byte runs: 500 words of 8 bytes
        ((1000, 1000), (4, 4), 1),
        ((4000, 3), (1, 1000), 4),  # 12 bytes: no word wider than its items divides it
        ((1000, 1), (1, 4000), 4),  # a fill: no run to widen
        ((300, 300), (4, 4), 16),  # wider than the words: the dtype's own items
        ((1000, 1000), (2, 2), 1),
        ((6, 6), (3, 3), 2),  # 12 bytes: words of 4
    ],
)
def test_a_device_copy_moves_the_widest_word(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int
) -> None:
    """A device's bytes program moves its runs as the widest word that divides them."""
    if _have("torch"):
        model = _backends.load("torch").device
        assert model.words == WORDS
        assert model.void == NONE  # no run of any size as one item: words only
    else:
        model = Model(copy=Price(2e4, 0, 0.01, 0, 0), item=Price(4e4, 0, 0.01, 0, 0), words=WORDS)
    layout = _c_layout(shape, itemsize, on_host=False)
    found = _program.candidates(layout, reps, model, True)
    assert found[0].name == "copy"
    last = max(i for i, r in enumerate(reps) if r != 1)
    run = math.prod(shape[last:]) * itemsize
    widest = max((w for w in WORDS if run % w == 0 and w > itemsize), default=0)
    items = [s.item for p in found if p.name == "bytes" for s in p.steps if s.item]  # type: ignore[union-attr]
    assert items == ([widest] if widest else [])
    plain = Copy(shape, reps)
    assert _program.plan(layout, reps, model, True) == min(found, key=lambda p: p.cost)
    with switched_off(*STRATEGIES):
        assert _program.plan(layout, reps, model, True).steps == (plain,)
    assert not _has_items(_program.plan(layout._replace(as_bytes=False), reps, model, True))
    into = _program.plan(layout, reps, model, False, True)  # `out=`
    assert not _has_items(into)
    assert not any(isinstance(s, Whole) for s in into.steps)


@pytest.mark.parametrize("offset", [0, 1, 2, 4, 8])
@pytest.mark.parametrize("stride", [1000, 1001, 1004])
def test_a_device_copy_of_unaligned_runs(offset: int, stride: int) -> None:
    """Runs whose offset or row stride is not a multiple of the word copy element by element."""
    torch = pytest.importorskip("torch")
    backend = _backends.load("torch")
    base = torch.arange(offset + 16 * stride, dtype=torch.int8)
    x = base[offset:].as_strided((16, 1000), (stride, 1))
    layout = backend.layout(x)._replace(on_host=False)  # as on a GPU
    found = _program.candidates(layout, (17, 16), backend.device, True)
    (words,) = (p for p in found if p.name == "bytes")
    assert words.steps[0].item == 8  # type: ignore[union-attr]
    for program in found:
        _check(program, x, backend, backend.xp, True)


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


_STRUCT = np.dtype([("a", "i1"), ("b", "<f8")], align=True)  # 8-byte aligned, padded


@pytest.mark.parametrize("make", list(_DEVICE_LAYOUTS), ids=str)
def test_a_device_copy_of_any_layout(make: str) -> None:
    """As on a GPU: each layout tiles exactly; runs move as words only where items may."""
    torch = pytest.importorskip("torch")
    backend = _backends.load("torch")
    x = _DEVICE_LAYOUTS[make](torch)
    layout = backend.layout(x)._replace(on_host=False)
    found = _program.candidates(layout, (17, 16), backend.device, True)
    assert ("bytes" in {p.name for p in found}) == (make in {"expanded", "inference"})
    for program in found:
        got = _run.compile_program(program, backend, backend.xp)(x, None)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(
            got.detach().resolve_conj().resolve_neg().numpy(),
            np.tile(x.detach().resolve_conj().resolve_neg().numpy(), (17, 16)),
            describe(program),
        )


def _staged_with_a_rest() -> Program:
    """A staged program for (3, 1) by (39631, 2): whole copies of the stage, then the rest."""
    found = _program.candidates(_c_layout((3, 1), 8), (39631, 2), NUMPY.model, True)
    parts = [
        p
        for p in found
        if p.name == "staged" and isinstance(p.steps[-1], Copy) and p.steps[-1].source is not None
    ]
    assert parts
    return min(parts, key=lambda p: p.cost)


def _region(region: Any) -> str:
    return "output[" + ", ".join(f"{a}:{b}" for a, b in region) + "]"


def test_explain_names_every_step() -> None:
    """One line per step under a heading that names the candidate, its tile and its cost."""
    programs = [
        *_program.candidates(_c_layout((50, 40, 3), 4), (6, 5, 10), NUMPY.model, True),
        *_program.candidates(_c_layout((3, 1), 8), (39631, 2), NUMPY.model, True),
        *_program.candidates(_c_layout((2, 3), 4), (2, 0), NUMPY.model, True),
        _staged_with_a_rest(),
    ]
    for program in programs:
        text = describe(program)
        head, *lines = text.split("\n")
        assert head.startswith(f"{program.name}: tile {program.shape} by {program.reps}")
        assert f"-> {program.out_shape}" in head
        assert len(lines) == max(1, len(program.steps))
        for i, (line, step) in enumerate(zip(lines, program.steps, strict=False), 1):
            assert line.startswith(f"  {i}. ")
            word = {Repeat: "repeat", Replicate: "replicate", Whole: "own tile"}.get(
                type(step), "copy"
            )
            assert word in line
            if isinstance(step, Copy) and step.region is not None:
                assert line.endswith("-> " + _region(step.region))
            if isinstance(step, Copy) and step.item:
                assert f"items of {step.item} bytes" in line
        if not program.steps:
            assert "empty" in lines[0]
    rest = _staged_with_a_rest().steps[-1]
    assert isinstance(rest, Copy)
    assert rest.region is not None
    assert rest.region[0][1] == 39631 * 3  # the rest ends the output
    assert _region(rest.region) in describe(_staged_with_a_rest())


def test_the_sentinel_catches_a_dropped_step() -> None:
    """The checks here can fail: the same program less its last step leaves bytes unwritten."""
    x = _array((3, 1), 8)
    program = _staged_with_a_rest()
    _check(program, x, NUMPY, NUMPY.xp, True)
    short = program._replace(steps=program.steps[:-1])
    with pytest.raises(AssertionError):
        _check(short, x, NUMPY, NUMPY.xp, True)


def _gpus_for(
    shape: tuple[int, ...],
    itemsize: int,
    layout: str,
    gpus: Any = (Backend.TORCH_CUDA, Backend.CUPY),
) -> list[tuple[Any, _backends.Backend, Any, Layout, Model]]:
    """(array, backend, namespace, layout, model) on each of `gpus` here, `_array`s of `layout`."""
    found = []
    for gpu in (g for g in gpus if g not in absent()):
        xp, device = gpu.load()
        a = xp.asarray(_array((1 + math.prod(shape),), itemsize), device=device)
        a = xp.reshape(a[1:] if layout == "offset" else a[:-1], shape)  # one element off, or not
        if layout == "fortran" and shape:
            axes = tuple(reversed(range(len(shape))))
            a = xp.permute_dims(xp.asarray(xp.permute_dims(a, axes), copy=True), axes)
        elif layout == "steps" and shape:  # every other element of a last axis twice as long
            a = xp.asarray(_array((*shape[:-1], 2 * shape[-1]), itemsize), device=device)[..., ::2]
        elif layout == "expanded" and shape:  # stride 0 on the first axis
            a = xp.broadcast_to(xp.asarray(_array((1, *shape[1:]), itemsize), device=device), shape)
        elif layout == "reversed" and shape and gpu is Backend.CUPY:  # negative strides
            a = a[::-1]
        backend = _backends.load(gpu.modname)
        layout_ = backend.layout(a)  # type: ignore[misc]
        found.append((a, backend, backend.xp, layout_, backend.device))
    return found


def _backends_for(x: Any) -> list[tuple[Any, _backends.Backend, Any, Layout, Model]]:
    """(array, backend, namespace, layout, model) of every backend that runs programs here."""
    layout = NUMPY.layout(x)
    assert layout is not None
    found: list[tuple[Any, _backends.Backend, Any, Layout, Model]] = [
        (x, NUMPY, NUMPY.xp, layout, NUMPY.model),
        # the standard primitives alone, priced as a backend that has no others
        (x, _backends.STANDARD, np_xp, layout, _backends.STANDARD.model),
    ]
    if _have("torch"):
        import torch

        backend = _backends.load("torch")
        t = torch.from_numpy(x)
        tl = backend.layout(t)
        assert tl is not None
        found.append((t, backend, backend.xp, tl, backend.model))
        # as on a GPU: untuned, priced by the device's model
        found.append((t, backend, backend.xp, tl._replace(on_host=False), backend.device))
    if _have("array_api_strict"):
        import array_api_strict

        backend = _backends.load("array_api_strict")
        a = array_api_strict.asarray(np.ascontiguousarray(x))
        al = backend.layout(a)
        assert al is not None
        found.append((a, backend, backend.xp, al, backend.model))
    return found


shapes = st.lists(st.integers(1, 6), min_size=0, max_size=4).map(tuple)
itemsizes = st.sampled_from([1, 2, 4, 16])
GPU_LAYOUTS = ["contiguous", "offset", "fortran", "steps", "expanded", "reversed"]


@pytest.mark.usefixtures("slabs")
@given(
    shape=shapes,
    reps=st.lists(st.sampled_from([0, 1, 2, 3, 5, 7, 64, 301]), min_size=0, max_size=4).map(tuple),
    itemsize=itemsizes,
    transposed=st.booleans(),
    fresh=st.booleans(),
    past_caches=st.booleans(),
)
def test_every_program_tiles_right(
    shape: tuple[int, ...],
    reps: tuple[int, ...],
    itemsize: int,
    transposed: bool,
    fresh: bool,
    past_caches: bool,
) -> None:
    """
    Every candidate of every backend writes `numpy.tile`'s every byte, into a sentinel.

    Each model's stage is made small so that small cases stage in levels and in parts; a
    dropped step (the rest of a part, a doubling step) leaves sentinel bytes. Past the
    caches (`Model.big` made 1 byte), a part stages whole 64-byte lines where it can.
    """
    full_shape, full_reps = _program.promote(shape, reps)
    assume(math.prod(full_shape) * math.prod(full_reps) < 1 << 20)
    x = _array(shape, itemsize)
    if transposed:
        x = x.T.copy().T  # Fortran order: the same values, other strides
    _every_program(_backends_for(x), reps, fresh, past_caches)


def _every_program(
    found: list[tuple[Any, _backends.Backend, Any, Layout, Model]],
    reps: tuple[int, ...],
    fresh: bool,
    past_caches: bool,
) -> None:
    """Every candidate of each of `found`'s models, its stage 512 bytes, checked by `_check`."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_program, "STAGE_BYTES", 1 << 9)
        for a, backend, xp, layout, model in found:
            small = model._replace(stage=1 << 9, big=1 if past_caches else model.big)
            for program in _program.candidates(layout, reps, small, fresh):
                assert program.name in NAMES
                _check(program, a, backend, xp, fresh)


@pytest.mark.skipif(
    Backend.TORCH_CUDA in absent() and Backend.CUPY in absent(), reason="no CUDA device"
)
# more repeats than axes: the runs' axes counted in the promoted shape (a defect once)
@example(shape=(2, 4), reps=(1, 2, 1), itemsize=4, layout="contiguous", fresh=True)
@given(
    shape=shapes,
    reps=st.lists(st.sampled_from([0, 1, 2, 3, 5, 7, 64]), min_size=0, max_size=4).map(tuple),
    itemsize=itemsizes,
    layout=st.sampled_from(GPU_LAYOUTS),
    fresh=st.booleans(),
)
def test_every_program_tiles_right_on_a_gpu(
    shape: tuple[int, ...], reps: tuple[int, ...], itemsize: int, layout: str, fresh: bool
) -> None:
    """
    Every candidate of a GPU's model (PyTorch's, CuPy's) writes `numpy.tile`'s every byte.

    Runs move as items of up to 16 bytes where both sides align to them: an input one
    element off its allocation's start (`offset`) moves them element by element. Inputs
    also come Fortran-ordered, with gaps, expanded (stride 0) and, on CuPy, reversed.
    """
    full_shape, full_reps = _program.promote(shape, reps)
    assume(math.prod(full_shape) * math.prod(full_reps) < 1 << 18)
    _every_program(_gpus_for(shape, itemsize, layout), reps, fresh, False)


def test_past_the_rank_one_copy_of_fewer_axes() -> None:
    """A view deeper than `MAX_DIMS`: the smallest paired repeats first, whole, then one copy."""
    shape, reps = (1,) * 55 + (2,) * 5, (1,) * 55 + (2,) * 5  # 65 view axes
    x = _array(shape, 1)
    (program,) = _program.candidates(NUMPY.layout(x), reps, NUMPY.model, True)
    assert program.name == "copy"
    *repeats, last = program.steps
    assert repeats
    assert all(isinstance(s, Repeat) for s in repeats)
    assert isinstance(last, Copy)
    assert len(_program.view_shapes(last.shape, last.reps)[1]) <= _program.MAX_DIMS
    _check(program, x, NUMPY, NUMPY.xp, True)
    _check(program, x, _backends.STANDARD, np_xp, True)


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
    assert _program._one_axis(extents, out_extents) == one


def test_stage_and_steps_stay_in_their_bounds() -> None:
    """Every staged array fits its model's stage; every step's region and copy lie in the output."""
    models = [NUMPY.model] + ([_backends.load("torch").device] if _have("torch") else [])
    for shape, reps in itertools.product(
        [(3,), (2, 5), (7, 1, 3), (2, 2, 2, 2), (100, 100, 3)],
        [(39639,), (3, 1000), (2, 9, 401), (5, 1, 1, 700), (10, 10, 10)],
    ):
        for itemsize, fresh in itertools.product((1, 2, 8, 16), (True, False)):
            layout = _c_layout(shape, itemsize)
            for model in models:
                for program in _program.candidates(layout, reps, model, fresh):
                    _in_bounds(program, itemsize, model.stage)
            # into `out`: no program whose output `numpy.repeat` makes (a temporary)
            into = _program.plan(layout, reps, NUMPY.model, fresh, True)
            assert not isinstance(into.steps[-1], Repeat), describe(into)


@pytest.mark.parametrize(
    ("reps", "chain"), [((3, 1000), True), ((1, 1000), True), ((4000, 3), False)], ids=str
)
def test_numpys_chain_of_repeats_is_a_candidate_within_the_stage(
    reps: tuple[int, int], chain: bool
) -> None:
    """`numpy.tile`'s own program is a candidate unless an array between passes the stage."""
    layout = _c_layout((2, 5), 8)  # by (4000, 3): 320 KB between
    found = [p for p in _program.candidates(layout, reps, NUMPY.model, True) if p.name == "native"]
    assert len(found) == chain
    for program in found:
        assert all(isinstance(s, Repeat) for s in program.steps)
        _in_bounds(program, 8)
        _check(program, _array((2, 5), 8), NUMPY, NUMPY.xp, True)


def _in_bounds(program: Program, itemsize: int, stage: int = _program.STAGE_BYTES) -> None:
    out_shape, why = program.out_shape, describe(program)
    ndim = len(out_shape)
    fresh = [s for s in program.steps if not _writes_into_output(program._replace(steps=(s,)))]
    for step in program.steps:
        if isinstance(step, Copy):
            assert len(step.shape) == len(step.reps) == ndim, why
            tiled = tuple(d * r for d, r in zip(step.shape, step.reps, strict=True))
            if step.region is not None:
                extents = tuple(b - a for a, b in step.region)
                assert extents == tiled, why
                assert all(
                    0 <= a <= b <= n for (a, b), n in zip(step.region, out_shape, strict=True)
                ), why
            if step.source is not None:
                assert all(n > 0 for n in step.source), why
        elif isinstance(step, Replicate):
            assert step.axis < ndim, why
            assert 0 < step.n < step.stop <= out_shape[step.axis], why
            assert len(step.places) == step.axis, why
            assert all(p <= n for p, n in zip(step.places, out_shape, strict=False)), why
        else:
            assert isinstance(step, Repeat | Whole), why
    if program.name == "staged":  # every staged array, all but the output, fits the stage
        staged = fresh if _writes_into_output(program) else fresh[:-1]
        for step in staged:
            assert isinstance(step, Copy | Repeat), why
            size = math.prod(step.shape) * (
                step.r if isinstance(step, Repeat) else math.prod(step.reps)
            )
            assert size * itemsize <= stage, why
    if program.name == "native" and isinstance(program.steps[0], Repeat):
        # NumPy's chain: `numpy.tile`'s order, each array but the output within the stage
        assert [s.axis for s in program.steps] == [i for i, r in enumerate(program.reps) if r != 1]
        for step in program.steps[:-1]:
            assert isinstance(step, Repeat), why
            assert math.prod(step.shape) * step.r * itemsize <= _program.STAGE_BYTES, why
    if program.name == "extended":  # each repeated axis is filled to its end
        replicated = {s.axis: s.stop for s in program.steps if isinstance(s, Replicate)}
        assert all(stop == out_shape[a] for a, stop in replicated.items()), why


_BIG_LAYOUTS = {
    "C": lambda a: a,
    "strided": lambda a: a[:, ::2],
    "F": np.asfortranarray,
    "reversed": lambda a: a[::-1],
    "expanded": lambda a: np.broadcast_to(a[:1], a.shape),
    "padded": lambda a: a.astype(_STRUCT),
}


@pytest.mark.parametrize("make", list(_BIG_LAYOUTS))
@pytest.mark.parametrize("reps", [(3000, 1), (1, 3000), (60, 50)])
def test_a_big_tile_of_any_layout_is_numpys(make: str, reps: tuple[int, int]) -> None:
    """
    Past the caches, every byte as numpy.tile: fresh, and into an `out` off a 64-byte line.

    Placed outputs, 8 KiB parts of whole lines, and (into `out`) a source of 6 KiB read
    from a copy apart from `out` where the runs are the whole source, as (3000, 1) has.
    """
    x = _BIG_LAYOUTS[make]((np.arange(2 * 752) % 251).astype(np.int32).reshape(2, 752) - 7)
    out = xtile.tile(x, reps)
    assert out.nbytes >= 8 << 20
    assert out.flags.aligned
    assert out.tobytes() == np.tile(x, reps).tobytes()
    raw = np.zeros(out.nbytes + 64, np.uint8)[16 : 16 + out.nbytes]
    buf = raw.view(out.dtype).reshape(out.shape)
    assert xtile.tile(x, reps, out=buf) is buf
    assert buf.tobytes() == out.tobytes()


@pytest.mark.parametrize(
    ("shape", "reps"), [((114, 38, 2), (3, 2, 54)), ((3, 4, 29, 8), (1, 1, 4, 4))], ids=str
)
@pytest.mark.parametrize("strided", [False, True], ids=["C", "every-other-row"])
def test_item_copies_into_a_corner_of_several_blocks_on_every_backend(
    shape: tuple[int, ...], reps: tuple[int, ...], strided: bool
) -> None:
    """Runs as items into a strided corner: NumPy's, PyTorch's (and as on a GPU) primitives."""
    x = _array((2 * shape[0], *shape[1:]), 2)[::2] if strided else _array(shape, 2)
    ran = set()  # runs contiguous either way; the input not C-ordered when strided
    for a, backend, xp, layout, model in _backends_for(x):
        for program in _program.candidates(layout, reps, model, True):
            if strided_corner_items(program):  # into a corner of several C-ordered blocks
                _check(program, a, backend, xp, True)
                ran.add(backend.name)
    assert ran >= {"numpy"} | ({"torch"} if _have("torch") else set())
