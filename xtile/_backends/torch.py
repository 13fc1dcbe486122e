"""PyTorch: the copy by tensor methods, runs as integers, in place, huge pages, `torch.tile`."""

import ctypes
import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import array_api_compat.torch as xp
import torch
from torch.autograd import forward_ad

from .._program import Copy, Layout, Model, Price, Replicate, view_shapes
from . import DEVICE, Backend, Call, check_apart

# a run of 2, 4, 8 or (on a device) 16 bytes as one item; copies move items bit for bit
_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.complex128}
HUGE_BYTES = 1 << 24  # the least fresh output backed by huge pages (benchmarks/threads.py)
_HUGE_PAGE, _MADV_HUGEPAGE = 1 << 21, 14
_wrapped = torch._C._functorch.is_functorch_wrapped_tensor
Shape = tuple[int, ...]


def _layout(t: torch.Tensor, /) -> Layout | None:
    """What the planner reads of a plain tensor, eager (`of`); None for one that gets one copy."""
    if type(t) is not torch.Tensor or t.layout != torch.strided or t.is_nested or t.is_quantized:
        return None
    if _wrapped(t) or torch.jit.is_tracing():  # type: ignore[attr-defined, no-untyped-call]
        return None
    unrecorded = not _recorded(t)
    as_bytes = unrecorded and not t.is_conj() and not t.is_neg()
    size = t.element_size()
    return Layout(t.shape, t.stride(), size, as_bytes, unrecorded, t.is_cpu, size)


def _raw_key(t: torch.Tensor, /) -> tuple[Any, ...] | None:
    """What a plain, eager tensor's `_layout` follows from; None where more is needed."""
    if t.layout != torch.strided or t.is_nested or _wrapped(t) or forward_ad._current_level >= 0:
        return None
    if torch.jit.is_tracing():  # type: ignore[attr-defined, no-untyped-call]
        return None
    recorded = t.requires_grad and torch.is_grad_enabled()
    return (t.shape, t.stride(), t.dtype, t.device, recorded, t.is_conj(), t.is_neg())


def _copy(step: Copy, /) -> Call:
    """The broadcast copy of `step` into a fresh tensor or `dest` (any strides)."""
    out_shape = tuple(d * r for d, r in zip(step.shape, step.reps, strict=True))
    if not step.shape:  # 0-D: the methods need at least one size
        return lambda x, dest: x.clone() if dest is None else dest.copy_(x)
    if 0 in out_shape:  # no view of that shape; autograd's graph kept, as by `torch.tile`
        return lambda x, dest: x.reshape(-1)[:0].clone().view(*out_shape) if dest is None else dest
    spread, view_shape = view_shapes(step.shape, step.reps)
    # big: of 16-byte elements (the widest) past `HUGE_BYTES` (a small call stops there)
    pairs, big = len(view_shape) > len(out_shape), (size := math.prod(out_shape)) * 16 >= HUGE_BYTES
    if step.item:
        plain = _copy(step._replace(item=0))
        last = max(i for i, r in enumerate(step.reps) if r != 1)
        head, runs = (*step.shape[:last], -1), len(step.shape) - last
        copies: dict[int, Call] = {}

        def copy_items(x: Any, dest: Any) -> Any:
            # the runs as integers where they are aligned (a `dest` is C-ordered); else not
            words = _words(x, head, runs, step.item)
            into = None if dest is None else _words(dest, (*out_shape[:last], -1), runs, step.item)
            if words is None or (dest is not None and into is None):
                return plain(x, dest)
            n = words.shape[-1]
            if n not in copies:
                copies[n] = _copy(Copy((*step.shape[:last], n), step.reps[: last + 1]))
            made = copies[n](words, into)
            return made.view(x.dtype).view(*out_shape) if dest is None else dest

        return copy_items

    # a view: `x` gains the length-1 axes of pairs, unless `expand` can prepend them all
    # (the fewer calls, the less host time)
    grow = _strip(spread) != _strip(step.shape)

    def copy(x: Any, dest: Any) -> Any:
        view = (x.view(*spread) if grow else x).expand(*view_shape)
        if dest is not None:
            (dest.view(*view_shape) if pairs else dest).copy_(view)  # splits axes only: a view
            return dest
        # a planned tensor is plain, untraced (`_layout`) and eager (`of`): on the CPU, unrecorded
        if big and size * x.element_size() >= HUGE_BYTES and x.is_cpu and not _recorded(x):
            fresh = _empty(out_shape, x)
            fresh.view(*view_shape).copy_(view)
            return fresh
        if pairs and 0 not in x.stride():  # no axis of `x` expanded: reshape copies
            return view.reshape(*out_shape)
        made = view.clone(memory_format=torch.contiguous_format)
        return made.view(*out_shape) if pairs else made  # no pair: of the output's shape

    return copy


def _strip(shape: Shape, /) -> Shape:
    """`shape` without its leading 1s."""
    return shape[next((i for i, d in enumerate(shape) if d != 1), len(shape)) :]


def _words(t: torch.Tensor, head: Shape, runs: int, item: int, /) -> torch.Tensor | None:
    """`t` as `head`, its last `runs` axes as integers of `item` bytes; None if unaligned."""
    size, before = t.element_size(), t.stride()[: max(t.dim() - runs, 0)]
    if (t.storage_offset() * size) % item or any(st * size % item for st in before):
        return None
    return t.view(*head).view(_WORDS[item])  # a view: the runs are contiguous


@functools.cache
def _madvise() -> Callable[[int, int, int], int] | None:
    """Linux's ``madvise``, where transparent huge pages are not off; else None."""
    try:
        if "[never]" in Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text():
            return None
    except OSError:  # not Linux, or no transparent huge pages
        return None
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


def _empty(shape: Shape, t: torch.Tensor, /) -> torch.Tensor:
    """A new C-ordered tensor of `shape` like `t`; a big one on the CPU advised huge pages."""
    out = torch.empty(shape, dtype=t.dtype, device=t.device)
    nbytes = out.element_size() * out.numel()
    if nbytes >= HUGE_BYTES and out.is_cpu and (madvise := _madvise()) is not None:
        start = -(-out.data_ptr() // _HUGE_PAGE) * _HUGE_PAGE
        end = (out.data_ptr() + nbytes) // _HUGE_PAGE * _HUGE_PAGE
        if end > start:
            madvise(start, end - start, _MADV_HUGEPAGE)  # a hint: its failure changes nothing
    return out


def _replicate(out: Any, step: Replicate, /) -> None:
    """A prefix along an axis copied to the rest of it (its parts never overlap)."""
    places, axis, n, stop = step
    region = out[tuple(slice(0, e) for e in places)]
    whole = stop // n
    rest = region.narrow(axis, n, (whole - 1) * n).unflatten(axis, (whole - 1, n))
    rest.copy_(region.narrow(axis, 0, n).unsqueeze(axis).expand_as(rest))
    if left := stop - whole * n:
        region.narrow(axis, whole * n, left).copy_(region.narrow(axis, 0, left))


def _unwrap(t: torch.Tensor, /) -> None:
    """Nothing to unwrap; a sparse, nested or quantized tensor is refused, naming its layout."""
    if t.layout != torch.strided or t.is_nested or t.is_quantized:
        kind = "nested" if t.is_nested else "quantized" if t.is_quantized else str(t.layout)
        msg = (
            f"xtile.tile: cannot tile a tensor of layout {kind}, only strided ones: convert "
            "it first (`x.to_dense()`, `x.dequantize()`, each component of a nested tensor)."
        )
        raise TypeError(msg)


def _recorded(t: torch.Tensor, /) -> bool:
    """Whether autograd or forward AD would record writes to `t` (not torch.func's wrappers)."""
    return bool(
        (t.requires_grad and torch.is_grad_enabled())
        # a tangent lives only inside a dual level (a cheap check first)
        or (forward_ad._current_level >= 0 and forward_ad.unpack_dual(t).tangent is not None)  # type: ignore[no-untyped-call]
    )


def _check_out(t: torch.Tensor, o: torch.Tensor, op: str, seen: bool, /) -> None:
    """`o` (`out`) and `t` (`x`) outside autograd and torch.func; `o` apart from `t`'s memory."""
    # seen: the plan cache's key, both layouts read this call, says neither is recorded or wrapped
    tracked = not seen and (_recorded(t) or _recorded(o) or _wrapped(t) or _wrapped(o))
    if o.requires_grad or tracked:
        msg = f"{op}: `out` cannot take a tile that autograd, forward AD or torch.func tracks."
        raise TypeError(msg)
    if o.is_inference() and not torch.is_inference_mode_enabled():
        msg = f"{op}: `out` is an inference tensor: write it inside `torch.inference_mode()`."
        raise TypeError(msg)
    check_apart(t, o, op, o.stride(), 1, _overlap, seen)


def _overlap(a: torch.Tensor, b: torch.Tensor, /) -> bool:
    """Whether the memory spans of `a` and `b` overlap (a bound: strided views may not)."""
    if a.is_meta or not a.numel() or not b.numel():  # one device: `out`'s is checked first
        return False  # meta tensors have no memory (every address is 0)
    sa, sb = a.untyped_storage(), b.untyped_storage()  # apart when their allocations are
    if sa.data_ptr() + sa.nbytes() <= sb.data_ptr() or sb.data_ptr() + sb.nbytes() <= sa.data_ptr():
        return False

    def span(t: torch.Tensor) -> tuple[int, int]:  # strides are >= 0
        extent = sum((d - 1) * s for d, s in zip(t.shape, t.stride(), strict=True))
        return t.data_ptr(), t.data_ptr() + (extent + 1) * t.element_size()

    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


MODEL = Model(  # benchmarks/fit_cost.py
    copy=Price(7555.0, 1.045, 0.01703, 0.01103, 0.01103),
    item=Price(16460.0, 1.889, 0.02985, 0.014, 0.09248),
    replicate=Price(23420.0, 1.045, 0.0, 0.02567, 0.02567),
    native=Price(14020.0, 1.161, 0.02367, 0.009114, 0.352),
    big=1 << 25,  # glibc's largest mmap threshold: above it, every output is faulted anew
    grain_bytes=1 << 18,  # GRAIN_SIZE (32,768) of 8-byte elements: under it, one thread
    grain_factor=2.5,
    words=frozenset({2, 4, 8}),
    interleaved=True,
)
BACKEND = Backend(
    "torch",
    model=MODEL,
    device=DEVICE,
    layout=_layout,
    copy=_copy,
    replicate=_replicate,
    whole=lambda x, reps, _xp, _tile: torch.tile(x, reps),
    unwrap=_unwrap,
    check_out=_check_out,
    empty=_empty,
    xp=xp,
    raw_key=_raw_key,
)
