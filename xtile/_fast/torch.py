"""
PyTorch: the broadcast copy with tensor methods; on the CPU, staging and doubling.

Measured against the standard-only tile (``docs/performance.md``): array-api-compat's
wrappers of ``reshape`` and ``broadcast_to`` cost a third of a small tile's time,
and a large CPU tensor with short runs is written faster by block doubling inside
the output, as onnxruntime does. GPUs and ``torch.compile`` keep the one copy.
"""

import torch
from torch.autograd.forward_ad import unpack_dual

from .._agnostic import view_shapes
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan

__all__ = ["FAST_PATH"]


def _copy(x: Array, plan: Plan, _xp: ArrayNamespace, /) -> Array:
    """
    The standard-only copy, step for step, with tensor methods.

    Sizes go as separate ints, which PyTorch parses faster than a tuple; ``clone``,
    not ``contiguous``, since the latter aliases an all-ones tile.
    """
    t: torch.Tensor = x  # type: ignore[assignment]
    shape, reps, out_shape, _ = plan
    if not shape:  # 0-D: PyTorch's methods need at least one size
        return t.clone()
    spread, view_shape = view_shapes(shape, reps)
    view = t.view(*spread).expand(*view_shape)
    return view.clone(memory_format=torch.contiguous_format).view(*out_shape)


def _stage_itemsize(x: Array, /) -> int:
    """CPU tensors stage, outside ``torch.compile``, which plans its own copy."""
    t: torch.Tensor = x  # type: ignore[assignment]
    if t.is_cpu and not torch.compiler.is_compiling():
        return t.element_size()
    return 0


def _double(x: Array, plan: Plan, _run_bytes: int, /) -> Array | None:
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
    if (
        type(t) is not torch.Tensor
        or (t.requires_grad and torch.is_grad_enabled())
        or torch._C._functorch.is_functorch_wrapped_tensor(t)
        or unpack_dual(t).tangent is not None  # type: ignore[no-untyped-call]
    ):
        return None
    shape, reps = plan.shape, plan.reps
    out = torch.empty(plan.out_shape, dtype=t.dtype)
    filled = list(shape)
    out[tuple(slice(0, s) for s in shape)].copy_(t)
    for axis in reversed(range(len(shape))):
        before = tuple(slice(0, f) for f in filled[:axis])
        after = tuple(slice(0, f) for f in filled[axis + 1 :])
        done, total = shape[axis], shape[axis] * reps[axis]
        while 0 < done < total:
            n = min(done, total - done)
            out[(*before, slice(done, done + n), *after)].copy_(out[(*before, slice(0, n), *after)])
            done += n
        filled[axis] = total
    return out


FAST_PATH = FastPath(copy=_copy, stage_itemsize=_stage_itemsize, double=_double)
