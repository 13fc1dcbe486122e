"""
PyTorch's primitives: the copy by tensor methods, short runs as integers, copies in place.

array-api-compat's wrappers of ``reshape`` and ``broadcast_to`` cost a third of a
small tile's time, so the copy calls tensor methods. On the CPU a contiguous run
of 2, 4 or 8 bytes is moved as one integer, and copies between parts of one
output need no temporary. Each primitive takes only the tensors it is written
for (`_layout`); GPUs get the one copy, its runs moved as the widest integers
that divide them, and ``torch.compile`` the one copy.
"""

import ctypes
import functools
from collections.abc import Callable
from pathlib import Path

import torch
from torch.autograd import forward_ad

from .._agnostic import CopyCall, Primitives, view_shapes
from .._lib._helpers import overlaps_itself
from .._lib._typing import Array, ArrayNamespace, Plan, Shape
from .._plan import Layout, Move, Spread, Tuning, items

__all__ = ["PRIMITIVES"]

# the integers a run of 2, 4 or 8 bytes is moved as
_WORDS = {2: torch.int16, 4: torch.int32, 8: torch.int64}
# the least fresh output advised to be backed by huge pages (measured: docs/performance.md)
HUGE_BYTES = 1 << 24
_HUGE_PAGE, _MADV_HUGEPAGE = 1 << 21, 14
# asked on every call (module attributes cost a lookup each)
_compiling = torch.compiler.is_compiling
_wrapped = torch._C._functorch.is_functorch_wrapped_tensor


def _layout(x: Array, /) -> Layout | None:
    """
    What the planner reads of a plain tensor; None for one that gets the one copy, uncached.

    A subclass (``nn.Parameter``), a tensor that ``torch.compile`` or torch.func
    traces, a sparse, nested or quantized one (refused by `_unwrap`): None. Its items are
    moved as bytes only without a conjugate or negative bit and outside autograd (a
    dtype view is not differentiable); parts of its output are written in place
    only outside autograd, forward AD and torch.func.
    The tuning applies on the CPU.
    """
    t: torch.Tensor = x  # type: ignore[assignment]
    if (
        type(t) is not torch.Tensor
        or t.layout != torch.strided
        or t.is_nested
        or t.is_quantized
        or _compiling()
        or _wrapped(t)
    ):
        return None
    plain = not _recorded(t)
    raw = plain and not t.is_conj() and not t.is_neg()
    size = t.element_size()
    # tuple.__new__: a NamedTuple's own __new__ costs a tenth of a small tile
    return tuple.__new__(Layout, (t.shape, t.stride(), size, raw, plain, t.is_cpu, size))


def _copier(plan: Plan, item: int, _xp: ArrayNamespace, /) -> CopyCall:
    """
    The broadcast copy of a tensor tiled by `plan`, into a fresh tensor or `out` (any strides).

    Sizes go as separate ints, which PyTorch parses faster than a tuple; always a
    copy (a reshape of a broadcast could alias `x`, unless the broadcast has an axis
    pair that no view can merge and `x` is contiguous). With `item` (into a fresh
    tensor): each contiguous run as one integer, where `x`'s runs are aligned for
    the integer view; else element by element.
    """
    shape, out_shape = plan.shape, plan.out_shape
    if not shape:  # 0-D: PyTorch's methods need at least one size
        return lambda x, out: x.clone() if out is None else out.copy_(x)  # type: ignore[attr-defined]
    if not plan.size:  # no view of its shape; autograd's graph kept, as by `torch.tile`
        return lambda x, out: (
            x.reshape(-1)[:0].clone().view(*out_shape)  # type: ignore[attr-defined]
            if out is None
            else out
        )
    spread, view_shape = view_shapes(shape, plan.reps)
    pairs = len(view_shape) > len(out_shape)
    if item:
        plain = _copier(plan, 0, _xp)
        head, runs = (*shape[: plan.last], plan.run), len(shape) - plan.last
        # the copy of the runs' integers, by their count per run (fixed by the program's dtype)
        copies: dict[int, CopyCall] = {}

        def copy_items(x: Array, out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
            """The runs as integers where they are aligned; else element by element."""
            t: torch.Tensor = x  # type: ignore[assignment]
            if out is None and (words := _words(t, head, runs, item)) is not None:
                n = words.shape[-1]
                if n not in copies:
                    copies[n] = _copier(items(plan, n), 0, _xp)
                tiled: torch.Tensor = copies[n](words, None)  # type: ignore[assignment]
                return tiled.view(t.dtype).view(*out_shape)
            return plain(x, out)

        return copy_items

    def copy(x: Array, out: Array | None) -> Array:  # numpydoc ignore=PR01,RT01
        """One copy of the broadcast view: a fresh tensor, or into a view of `out`."""
        t: torch.Tensor = x  # type: ignore[assignment]
        view = t.view(*spread).expand(*view_shape)  # inserts length-1 axes: a view
        if out is not None:
            o: torch.Tensor = out  # type: ignore[assignment]
            o.view(*view_shape).copy_(view)  # splits axes only: a view
            return o
        if (
            plan.size * 16 >= HUGE_BYTES  # 16: the widest element; a small call stops here
            and plan.size * t.element_size() >= HUGE_BYTES
            and _advisable(t)
        ):
            fresh = _empty(out_shape, t)
            fresh.view(*view_shape).copy_(view)
            return fresh
        if pairs and t.is_contiguous():
            return view.reshape(*out_shape)  # an unmergeable pair: reshape copies
        return view.clone(memory_format=torch.contiguous_format).view(*out_shape)

    return copy


def _words(t: torch.Tensor, head: Shape, runs: int, item: int, /) -> torch.Tensor | None:
    """
    `t` viewed as `head` (its runs last), the runs as integers of `item` bytes; None if unaligned.

    The runs are `t`'s last `runs` axes, contiguous by the plan. The integer view
    needs the storage offset and every stride before the runs, in bytes, to be
    multiples of `item`.
    """
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


def _advisable(t: torch.Tensor, /) -> bool:
    """Whether a tile of `t` may go into a tensor made by `_empty`: plain, CPU, eager, untraced."""
    return bool(
        type(t) is torch.Tensor
        and t.is_cpu
        and not _compiling()
        and torch._C._get_tracing_state() is None  # a trace would keep the empty's dtype, device
        and not _tracked(t)
    )


def _empty(shape: Shape, x: Array, /) -> torch.Tensor:
    """
    A new C-ordered tensor of `shape` like `x`; a big one on the CPU backed by huge pages.

    PyTorch's CPU allocator leaves a big block to be faulted in 4 KiB pages; the
    whole huge pages inside it are advised (``MADV_HUGEPAGE``) before the first
    write, where the kernel has transparent huge pages. It stays PyTorch's tensor.
    """
    t: torch.Tensor = x  # type: ignore[assignment]
    out = torch.empty(shape, dtype=t.dtype, device=t.device)
    nbytes = out.element_size() * out.numel()
    if nbytes >= HUGE_BYTES and out.is_cpu and (madvise := _madvise()) is not None:
        start = -(-out.data_ptr() // _HUGE_PAGE) * _HUGE_PAGE
        end = (out.data_ptr() + nbytes) // _HUGE_PAGE * _HUGE_PAGE
        if end > start:
            madvise(start, end - start, _MADV_HUGEPAGE)  # a hint: its failure changes nothing
    return out


def _region(out: torch.Tensor, places: tuple[int, ...], /) -> torch.Tensor:
    """The region of `out` whose axes before the step's have the extents `places`."""
    return out[tuple(slice(0, e) for e in places)]


def _move(out: Array, step: Move, /) -> None:
    """One doubling step inside a fresh output: its parts never overlap."""
    places, axis, at, n = step
    region = _region(out, places)  # type: ignore[arg-type]
    region.narrow(axis, at, n).copy_(region.narrow(axis, 0, n))


def _spread(out: Array, step: Spread, /) -> None:
    """The prefix copied to the other whole places at once (broadcast), then the rest."""
    places, axis, k, total = step
    region = _region(out, places)  # type: ignore[arg-type]
    whole = total // k
    prefix = region.narrow(axis, 0, k)
    rest = region.narrow(axis, k, (whole - 1) * k).unflatten(axis, (whole - 1, k))  # type: ignore[no-untyped-call]
    rest.copy_(prefix.unsqueeze(axis).expand_as(rest))
    if total > whole * k:
        left = total - whole * k
        region.narrow(axis, whole * k, left).copy_(region.narrow(axis, 0, left))


def _unwrap(x: Array, /) -> None:
    """Nothing to unwrap; a sparse, nested or quantized tensor is refused, naming its layout."""
    t: torch.Tensor = x  # type: ignore[assignment]
    if t.layout != torch.strided or t.is_nested or t.is_quantized:
        kind = "nested" if t.is_nested else "quantized" if t.is_quantized else str(t.layout)
        msg = (
            f"xtile.tile: cannot tile a tensor of layout {kind}; only strided tensors are "
            "taken. Convert it first (`x.to_dense()`, `x.dequantize()`, or tile each "
            "component of a nested tensor)."
        )
        raise TypeError(msg)


def _tracked(t: torch.Tensor, /) -> bool:
    """Whether autograd, forward AD or torch.func would record or batch writes to `t`."""
    return _recorded(t) or _wrapped(t)


def _recorded(t: torch.Tensor, /) -> bool:
    """Whether autograd or forward AD would record writes to `t` (not torch.func's wrappers)."""
    return bool(
        (t.requires_grad and torch.is_grad_enabled())
        # a tangent lives only inside a dual level (a cheap check first)
        or (forward_ad._current_level >= 0 and forward_ad.unpack_dual(t).tangent is not None)  # type: ignore[no-untyped-call]
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
    if o.is_inference() and not torch.is_inference_mode_enabled():
        msg = (
            f"{op}: `out` is an inference tensor, which cannot be written outside "
            "`torch.inference_mode()`; pass a normal tensor, or call inside inference mode."
        )
        raise TypeError(msg)
    if overlaps_itself(tuple(o.shape), o.stride(), 1):
        msg = (
            f"{op}: `out` has elements that share memory (strides {o.stride()}, e.g. an "
            "expanded tensor); pass a tensor whose elements are distinct, e.g. `out.clone()`."
        )
        raise ValueError(msg)
    if _overlap(t, o):
        msg = f"{op}: `out` shares memory with the input; pass a separate tensor."
        raise ValueError(msg)


def _overlap(a: torch.Tensor, b: torch.Tensor, /) -> bool:
    """Whether the memory spans of `a` and `b` overlap (a bound: strided views may not)."""
    if a.device != b.device or a.is_meta or not a.numel() or not b.numel():
        return False  # meta tensors have no memory (every address is 0)
    sa, sb = a.untyped_storage(), b.untyped_storage()  # apart when their allocations are
    if sa.data_ptr() + sa.nbytes() <= sb.data_ptr() or sb.data_ptr() + sb.nbytes() <= sa.data_ptr():
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


PRIMITIVES = Primitives(
    tuning=Tuning(stage=True, extend=True, interleaved=True, words=frozenset(_WORDS)),
    layout=_layout,
    copier=_copier,
    move=_move,
    spread=_spread,
    unwrap=_unwrap,
    check_out=_check_out,
    empty=_empty,
)
