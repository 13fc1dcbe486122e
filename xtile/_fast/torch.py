"""
PyTorch: the broadcast copy with tensor methods; on the CPU, staging and doubling.

Measured against the standard-only tile (``docs/performance.md``): array-api-compat's
wrappers of ``reshape`` and ``broadcast_to`` cost a third of a small tile's time,
and a large CPU tensor with short runs is written faster by block doubling inside
the output, as onnxruntime does. GPUs and ``torch.compile`` keep the one copy.
"""

import math
from collections.abc import Callable

import torch
from torch.autograd.forward_ad import unpack_dual

from .._agnostic import outer_block, rest_axis, staging, view_shapes
from .._lib._helpers import chain
from .._lib._tuning import TORCH_FILL_BYTES, TORCH_PART_RUN_BYTES
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan

__all__ = ["FAST_PATH"]


def _copy(x: Array, plan: Plan, _xp: ArrayNamespace, /, out: Array | None = None) -> Array:
    """
    The standard-only copy, step for step, with tensor methods.

    Sizes go as separate ints, which PyTorch parses faster than a tuple; ``clone``,
    not ``contiguous``, since the latter aliases an all-ones tile. Into `out` of any
    strides: its view of the broadcast shape only splits axes, always a view.
    """
    t: torch.Tensor = x  # type: ignore[assignment]
    shape, reps = plan.shape, plan.reps
    if not shape:  # 0-D: PyTorch's methods need at least one size
        return t.clone() if out is None else out.copy_(t)  # type: ignore[attr-defined]
    if out is None:
        return _final_copier(plan, t, contiguous=t.is_contiguous())(t)
    spread, view_shape = view_shapes(shape, reps)
    o: torch.Tensor = out  # type: ignore[assignment]
    o.view(*view_shape).copy_(t.view(*spread).expand(*view_shape))
    return o


# the integers a block of 2, 4 or 8 bytes is copied as
_WORDS = {2: torch.int16, 4: torch.int32, 8: torch.int64}
# runs PyTorch copies as one integer: staged in part like any other short run, 16 bytes
# too (NumPy copies those as words, PyTorch element by element): (1, 1, 2, 1, 1) x
# (57942, 1, 1, 1, 1) int64 0.49 -> 2.72 of `torch.tile` on two threads, 0.84 -> 4.5 on one
_WORD_RUNS = frozenset(_WORDS)


def _words(t: torch.Tensor, plan: Plan, /) -> torch.Tensor | None:
    """
    The blocks of a plain tensor after its last repeated axis viewed as integers, or None.

    Where such a block is 2, 4 or 8 bytes of several elements, the copy moves one
    integer per block, not each element: a one-element broadcast is then a fill
    ((2, 1) x (25713, 1) int16: 5 us against 62 us). Outside autograd, forward AD,
    torch.func and ``torch.compile`` (a dtype view is not differentiable), and where
    the block is contiguous and aligned for the integer view.
    """
    last, run = plan.last, plan.run
    itemsize = t.element_size()
    dtype = _WORDS.get(run * itemsize)
    if dtype is None or run == 1 or not t.is_cpu:
        return None
    if type(t) is not torch.Tensor or torch.compiler.is_compiling() or _tracked(t):
        return None
    shape = plan.shape
    strides = t.reshape(shape).stride() if t.dim() != len(shape) else t.stride()
    expected = 1
    for d, st in zip(reversed(shape[last:]), reversed(strides[last:]), strict=True):
        if d != 1 and st != expected:
            return None  # the block is not contiguous
        expected *= d
    if t.storage_offset() % run or any(st % run for st in strides[:last]):
        return None  # the integer view needs the blocks aligned to its size
    return t.reshape(*shape[:last], run).view(dtype)  # a view: the block is contiguous


def _word_plan(plan: Plan, /) -> Plan:
    """The plan of the tile of `_words`' integers: one per block."""
    last, run = plan.last, plan.run
    shape, reps, out_shape, size = plan
    return Plan((*shape[:last], 1), reps[: last + 1], (*out_shape[:last], reps[last]), size // run)


def _stage_itemsize(x: Array, /) -> int:
    """CPU tensors stage, outside ``torch.compile``, which plans its own copy."""
    t: torch.Tensor = x  # type: ignore[assignment]
    if t.is_cpu and not torch.compiler.is_compiling():
        return t.element_size()
    return 0


def _double(x: Array, plan: Plan, _run_bytes: int, /, out: Array | None = None) -> Array | None:
    """
    Tile a CPU tensor by block doubling inside the output, as onnxruntime does.

    `x` is copied once into the output's first block; then, axis by axis from the
    innermost, the filled part is copied onto the next part of equal size, doubling
    it, so every copy moves long runs and the output is written once. PyTorch copies
    between non-overlapping parts of one tensor without a temporary (NumPy does not).
    Only for a plain tensor outside autograd, forward AD and torch.func, whose
    in-place copies would be recorded or batched.
    """
    t: torch.Tensor = x  # type: ignore[assignment]
    if type(t) is not torch.Tensor or _tracked(t):
        return None
    if out is None and _words(t, plan) is not None:
        return None  # one integer per block copies faster (into a fresh tensor)
    shape, reps = plan.shape, plan.reps
    o: torch.Tensor = torch.empty(plan.out_shape, dtype=t.dtype) if out is None else out  # type: ignore[assignment]
    filled = list(shape)
    o[tuple(slice(0, s) for s in shape)].copy_(t)
    for axis in reversed(range(len(shape))):
        before = tuple(slice(0, f) for f in filled[:axis])
        after = tuple(slice(0, f) for f in filled[axis + 1 :])
        done, total = shape[axis], shape[axis] * reps[axis]
        while 0 < done < total:
            n = min(done, total - done)
            o[(*before, slice(done, done + n), *after)].copy_(o[(*before, slice(0, n), *after)])
            done += n
        filled[axis] = total
    return o


def _layout(x: Array, /) -> tuple[object, ...] | None:
    """
    The plan cache's key of a plain tensor: shape, strides, dtype and device.

    None under ``torch.compile`` (dynamo traces the tile itself) and torch.func.
    """
    t: torch.Tensor = x  # type: ignore[assignment]
    if (
        type(t) is not torch.Tensor
        or torch.compiler.is_compiling()
        or torch._C._functorch.is_functorch_wrapped_tensor(t)
    ):
        return None
    return t.shape, t.stride(), t.dtype, t.device


def _compile(x: Array, plan: Plan, /) -> Callable[[Array], Array] | None:
    """
    A cached call's tile: its staging levels and final copy, each planned once.

    Each copy is views and a clone, which autograd and forward AD record as ever.
    None where the full tile doubles on the CPU (which depends on autograd's state
    at the call): it is then run as it is. A plan in parts (`in_parts`) is made where
    the first call's tensor is untracked; a tracked one of its layout runs it too,
    autograd recording its copies into views of the output. A plan from the first
    block (`from_block`) checks each call's tensor: a tracked one takes one copy.
    """
    t: torch.Tensor = x  # type: ignore[assignment]
    itemsize = t.element_size()
    levels, final, run_bytes = (
        staging(
            plan,
            itemsize,
            ragged=_parts(t),
            part_run_bytes=TORCH_PART_RUN_BYTES,
            word_runs=_WORD_RUNS,
        )
        if t.is_cpu
        else ([], plan, 0)
    )
    if run_bytes:
        return None
    contiguous = t.is_contiguous()
    if t.is_cpu and not levels and (block := outer_block(final, itemsize, FAST_PATH)):
        return _block_copier(final, block, _final_copier(final, t, contiguous=contiguous))
    steps = []
    for level in levels:
        steps.append(_copier(level, contiguous=contiguous))
        contiguous = True  # each level's output is a fresh tensor
    if rest_axis(final) is not None:
        steps.append(_parts_copier(final))
    else:
        steps.append(_final_copier(final, t, contiguous=contiguous))
    return chain(steps)


def _block_copier(
    plan: Plan, block: Plan, one_copy: Callable[[Array], Array], /
) -> Callable[[Array], Array]:
    """`from_block` for a cached plan, its copies planned once; `one_copy` for a tracked tensor."""
    repeats, out_shape, block_shape = plan.size // block.size, plan.out_shape, block.out_shape
    spread, view_shape = view_shapes(block.shape, block.reps)

    def copy(a: Array) -> Array:  # numpydoc ignore=PR01,RT01
        """The first block, then copied from there to the others."""
        t: torch.Tensor = a  # type: ignore[assignment]
        if not _parts(t):
            return one_copy(a)
        out = torch.empty((repeats, *block_shape), dtype=t.dtype, device=t.device)
        out[0].view(view_shape).copy_(t.view(spread).expand(view_shape))
        out[1:].copy_(out[:1].expand(repeats - 1, *block_shape))
        return out.view(out_shape)

    return copy


def _parts_copier(plan: Plan, /) -> Callable[[Array], Array]:
    """
    `in_parts` for a cached plan, its two copies planned once.

    Staging splits only an outermost axis (`stage_cuts`): the output is flat, the
    staged tensor repeated, then a prefix of it.
    """
    axis = rest_axis(plan)
    assert axis is not None  # the caller checked
    block, repeats, size, out_shape = (
        math.prod(plan.shape),
        plan.reps[axis],
        plan.size,
        plan.out_shape,
    )
    head = block * repeats

    def copy(staged: Array) -> Array:  # numpydoc ignore=PR01,RT01
        """The staged tensor `repeats` times, then its first ``size - head`` elements."""
        s: torch.Tensor = staged.view(-1)  # type: ignore[attr-defined]  # a fresh staging level
        out = torch.empty(size, dtype=s.dtype, device=s.device)
        out[:head].view(repeats, block).copy_(s.expand(repeats, block))
        out[head:].copy_(s[: size - head])
        return out.view(*out_shape)

    return copy


def _final_copier(plan: Plan, t: torch.Tensor, /, *, contiguous: bool) -> Callable[[Array], Array]:
    """`_copier`, with the integer copy of `_words` where blocks of `t`'s kind may allow it."""
    copy = _copier(plan, contiguous=contiguous)
    if t.is_cpu and plan.run > 1 and plan.run * t.element_size() in _WORDS:
        return _word_copier(plan, copy)
    return copy


def _word_copier(plan: Plan, copy: Callable[[Array], Array], /) -> Callable[[Array], Array]:
    """`copy`, or where `_words` applies to the tensor of this call, its integer copy."""
    out_shape = plan.out_shape
    words_copy = _copier(_word_plan(plan), contiguous=True)

    def word_copy(a: Array) -> Array:  # numpydoc ignore=PR01,RT01
        """The copy of one integer per block, where the blocks allow."""
        t: torch.Tensor = a  # type: ignore[assignment]
        words = _words(t, plan)
        if words is None:
            return copy(a)
        tiled: torch.Tensor = words_copy(words)  # type: ignore[assignment]
        return tiled.view(t.dtype).view(*out_shape)

    return word_copy


def _copier(plan: Plan, /, *, contiguous: bool) -> Callable[[Array], Array]:
    """The copy of `_copy` for a tensor of ``plan.shape``, as a call."""
    shape, reps, out_shape, _ = plan
    if not shape:
        return lambda a: a.clone()  # type: ignore[attr-defined]
    spread, view_shape = view_shapes(shape, reps)
    if contiguous and len(view_shape) > len(out_shape):
        # an (r, d) pair of strides 0 and not 0 cannot merge in a view: reshape copies
        # (one call fewer than `_copy`); with no pair it could alias `x`
        return lambda a: a.view(*spread).expand(*view_shape).reshape(*out_shape)  # type: ignore[attr-defined]
    return lambda a: (
        a.view(*spread)  # type: ignore[attr-defined]
        .expand(*view_shape)
        .clone(memory_format=torch.contiguous_format)
        .view(*out_shape)
    )


def _parts(x: Array, /) -> bool:
    """Whether copies into views of one output are plain writes: an untracked plain tensor."""
    t: torch.Tensor = x  # type: ignore[assignment]
    return type(t) is torch.Tensor and not _tracked(t)


def _tracked(t: torch.Tensor, /) -> bool:
    """Whether autograd, forward AD or torch.func would record or batch writes to `t`."""
    return bool(
        (t.requires_grad and torch.is_grad_enabled())
        or torch._C._functorch.is_functorch_wrapped_tensor(t)
        or unpack_dual(t).tangent is not None  # type: ignore[no-untyped-call]
    )


def _check_out(x: Array, out: Array, op: str, /) -> None:
    """`out` and `x` outside autograd and torch.func; `out` apart from `x`'s memory."""
    t: torch.Tensor = x  # type: ignore[assignment]
    o: torch.Tensor = out  # type: ignore[assignment]
    if o.requires_grad or _tracked(t) or _tracked(o):
        msg = (
            f"{op}: `out` cannot take a tile that autograd, forward AD or torch.func "
            "tracks (writes into `out` would not be differentiated); leave `out` out."
        )
        raise TypeError(msg)
    if _overlap(t, o):
        msg = f"{op}: `out` shares memory with the input; pass a separate tensor."
        raise ValueError(msg)


def _overlap(a: torch.Tensor, b: torch.Tensor, /) -> bool:
    """Whether the memory spans of `a` and `b` overlap (a bound: strided views may not)."""
    if a.device != b.device or not a.numel() or not b.numel():
        return False

    def span(t: torch.Tensor) -> tuple[int, int]:  # numpydoc ignore=PR01,RT01
        """The first and past-the-last byte addresses of `t`'s elements."""
        extent = sum((d - 1) * abs(s) for d, s in zip(t.shape, t.stride(), strict=True))
        start = t.data_ptr() - sum(
            (d - 1) * s for d, s in zip(t.shape, t.stride(), strict=True) if s < 0
        )
        return start, start + (extent + 1) * t.element_size()

    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


FAST_PATH = FastPath(
    copy=_copy,
    stage_itemsize=_stage_itemsize,
    double=_double,
    layout=_layout,
    compile=_compile,
    check_out=_check_out,
    parts=_parts,
    fill_bytes=TORCH_FILL_BYTES,
    part_run_bytes=TORCH_PART_RUN_BYTES,
    word_runs=_WORD_RUNS,
)
