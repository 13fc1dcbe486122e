"""Validation and host-side shape arithmetic shared by every public function."""

import math
import operator
import reprlib
from collections.abc import Sequence
from typing import TypeVar

from array_api_compat import is_lazy_array, is_writeable_array

from . import _compat
from ._typing import Array, ArrayNamespace, Plan, Shape

__all__ = [
    "INT64_MAX",
    "UnknownShapeError",
    "check_non_negative",
    "check_shape",
    "eager_shape",
    "host_ints",
    "itemsize",
    "namespace_of",
    "out_of_memory",
    "overlaps_itself",
    "plan",
    "promote",
    "tiled_shape",
]

INT64_MAX = 2**63 - 1
_INT = {int}
_D = TypeVar("_D", int, int | None)


def _short(value: object) -> str:
    """Repr that stays readable in an error message: short, and on one line."""
    return " ".join(reprlib.repr(value).split())


def namespace_of(
    x: object, xp: ArrayNamespace | None, /, *, op: str, name: str
) -> ArrayNamespace:  # numpydoc ignore=PR01,RT01
    """The namespace of array `x` (`xp` when given); `TypeError` for a non-array."""
    if xp is None and (cached := _compat.cached_namespace(x)) is not None:
        return cached
    if not _compat.is_array_api_obj(x):
        if _compat.is_numpy_array(x):  # a subclass array-api-compat refuses: numpy.matrix
            msg = (
                f"{op}: `{name}` is a {type(x).__module__}.{type(x).__name__}; of the subclasses "
                "of numpy.ndarray only masked arrays and memory maps are taken: convert it "
                f"with `np.asarray({name})`."
            )
            raise TypeError(msg)
        hint = (
            "; convert it first, e.g. `xp.asarray(...)` with the namespace of your arrays"
            if isinstance(x, int | float | complex | list | tuple) or hasattr(type(x), "__array__")
            else ""
        )
        msg = (
            f"{op}: `{name}` must be an array of a namespace that array-api-compat "
            f"supports (NumPy, CuPy, PyTorch, JAX, Dask, array-api-strict, ...); "
            f"got {type(x).__name__} {_short(x)}{hint}."
        )
        raise TypeError(msg)
    return _compat.array_namespace(x) if xp is None else xp


class UnknownShapeError(TypeError):
    """An array whose shape has unknown dimensions (None, or Dask's nan)."""


def eager_shape(x: Array, /, *, op: str) -> tuple[int, ...]:  # numpydoc ignore=PR01,RT01
    """Shape of `x` as ints; `UnknownShapeError` for a lazy shape (None, or Dask's nan)."""
    shape = tuple(x.shape)
    # Dask's unknown sizes are float nan; torch.compile's symbolic sizes must not be
    # passed to math.isnan
    if any(d is None or (isinstance(d, float) and math.isnan(d)) for d in shape):
        msg = (
            f"{op}: unsupported lazy shape {shape} of `{type(x).__name__}`; the "
            "output shape depends on it (for Dask, call `compute_chunk_sizes()` first)."
        )
        raise UnknownShapeError(msg)
    return shape


def _array_ints(
    a: Array, /, *, op: str, name: str, int64_only: bool, dims: str = "0-D or 1-D"
) -> tuple[tuple[int, ...], int]:
    """Bring an integer array of any namespace and device to the host, once."""
    xp = _compat.array_namespace(a)
    if int64_only:
        if a.dtype != xp.int64:
            msg = f"{op}: `{name}` must be an int64 array; got {_short(a)} of dtype {a.dtype}."
            raise TypeError(msg)
    elif not xp.isdtype(a.dtype, "integral"):
        msg = f"{op}: `{name}` must have an integer dtype; got {_short(a)} of dtype {a.dtype}."
        raise TypeError(msg)
    if a.ndim > 1:
        msg = f"{op}: `{name}` must be {dims}; got a {a.ndim}-D array of shape {tuple(a.shape)}."
        raise ValueError(msg)
    if _compat.is_jax_array(a):
        import jax

        if isinstance(a, jax.core.Tracer):
            msg = (
                f"{op}: `{name}` must be static (concrete), since it sets the output "
                "shape; under a JAX transformation (`jax.jit`, `jax.vmap`, `jax.grad`, "
                "...) pass Python ints, or mark the argument static (`static_argnums`). "
                f"Got the traced value {a}."
            )
            raise TypeError(msg)
    if _compat.compiling_torch() is not None:
        msg = (
            f"{op}: `{name}` must be static, since it sets the output shape: under "
            "`torch.compile` pass Python ints, or a tensor made outside the compiled "
            f"region; got a tensor of shape {tuple(a.shape)} traced by the compiler."
        )
        raise TypeError(msg)
    if str(_compat.device(a)) == "meta":
        msg = (
            f"{op}: `{name}` must hold values, since they set the output shape; got a "
            f"tensor on the meta device (shape {tuple(a.shape)}), which holds none. Pass "
            "Python ints."
        )
        raise TypeError(msg)
    if _compat.library(xp) == "dask":
        a = a.compute()  # type: ignore[attr-defined]  # one graph evaluation, not one per element
    try:
        if a.ndim == 0:
            return (int(a),), 0
        # `tolist` is one transfer from any device; array-api-strict and ndonnx lack it
        values = a.tolist() if hasattr(a, "tolist") else [int(a[i]) for i in range(a.shape[0])]
    except (TypeError, ValueError) as e:  # a lazy array with no value (an ndonnx argument)
        msg = (
            f"{op}: `{name}` must be static (concrete), since it sets the output shape; "
            f"got a lazy {type(a).__name__} of shape {tuple(a.shape)} that holds no values "
            f"({e}). Pass Python ints."
        )
        raise TypeError(msg) from e
    return tuple(int(v) for v in values), 1


def _element_int(v: object, i: int, /, *, op: str, name: str) -> int:
    """One element of a repeats sequence: a Python int or a 0-D integer array."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if _compat.is_array_api_obj(v) and getattr(v, "ndim", None) == 0:
        return _array_ints(v, op=op, name=name, int64_only=False)[0][0]
    msg = (
        f"{op}: `{name}` must hold integers; got {_short(v)} ({type(v).__name__}) at position {i}."
    )
    raise TypeError(msg)


def host_ints(
    repeats: object,
    /,
    *,
    op: str,
    name: str = "repeats",
    int64_only: bool = False,
    dims: str = "0-D or 1-D",
) -> tuple[tuple[int, ...], int]:
    """
    Validate `repeats` and return it as host ints with its dimensionality.

    This is the one place where a repeats array is materialised: its values set
    the output shape, so they are needed on the host before anything else.

    Parameters
    ----------
    repeats : object
        An int, a sequence of ints, or a 0-D or 1-D integer array of any
        namespace and device.
    op : str
        The operation named in error messages.
    name : str, optional
        The parameter named in error messages.
    int64_only : bool, optional
        Require an array to be int64 (ONNX) rather than of any integer dtype.
    dims : str, optional
        The dimensionalities the message for an array of more than one dimension
        asks for: ONNX Tile-6/13 take no scalar repeats, so they ask for "1-D".

    Returns
    -------
    tuple of int
        The values.
    int
        0 for a scalar (int or 0-D array), 1 for a sequence or 1-D array.

    Raises
    ------
    TypeError
        For a non-integer value or dtype, or a traced JAX array.
    ValueError
        For an array with more than one dimension.
    """
    if type(repeats) is tuple and set(map(type, repeats)) <= _INT:
        return repeats, 1  # the common case, kept cheap for small tiles
    if _compat.is_array_api_obj(repeats):
        return _array_ints(repeats, op=op, name=name, int64_only=int64_only, dims=dims)
    if isinstance(repeats, int) and not isinstance(repeats, bool):
        return (repeats,), 0
    if isinstance(repeats, Sequence) and not isinstance(repeats, str | bytes):
        return tuple(_element_int(v, i, op=op, name=name) for i, v in enumerate(repeats)), 1
    msg = (
        f"{op}: `{name}` must be an int, a sequence of ints or an integer array; "
        f"got {_short(repeats)} ({type(repeats).__name__})."
    )
    raise TypeError(msg)


def check_non_negative(
    reps: tuple[int, ...], /, *, op: str, name: str = "repeats"
) -> None:  # numpydoc ignore=PR01
    """Raise `ValueError` naming the first negative repeat."""
    if not reps or min(reps) >= 0:
        return
    for i, r in enumerate(reps):
        if r < 0:
            msg = f"{op}: `{name}` must be non-negative; got {r} at position {i} of {reps}."
            raise ValueError(msg)


def promote(
    shape: tuple[_D, ...], reps: tuple[int, ...], /
) -> tuple[tuple[_D | int, ...], tuple[int, ...]]:  # numpydoc ignore=PR01,RT01
    """Prepend 1s to the shorter of `shape` and `reps` (NumPy / OpenVINO Tile-1)."""
    if len(shape) == len(reps):
        return shape, reps
    ndim = max(len(shape), len(reps))
    return (1,) * (ndim - len(shape)) + shape, (1,) * (ndim - len(reps)) + reps


def tiled_shape(
    shape: tuple[int | None, ...], reps: tuple[int, ...], /, *, op: str
) -> tuple[int | None, ...]:  # numpydoc ignore=PR01,RT01
    """Output shape of a tile of non-negative `reps`, checked to fit in int64."""
    shape, reps = promote(shape, reps)
    out = tuple(
        0 if r == 0 else None if d is None else d * r for d, r in zip(shape, reps, strict=True)
    )
    # every intermediate dimension must be a valid int64 size too
    big = [v for v in (*reps, *out) if v is not None and v > INT64_MAX]
    too_many = None not in out and math.prod(out) > INT64_MAX  # type: ignore[arg-type]
    if big or too_many:
        what = (
            "has more elements than int64 can count"
            if too_many
            else f"holds {big[0]}, past int64's maximum"
        )
        msg = f"{op}: the output shape {out} (`repeats` {reps}) {what} ({INT64_MAX})."
        raise ValueError(msg)
    return out


def plan(x: Array, reps: Shape, /, *, op: str) -> Plan:  # numpydoc ignore=PR01,RT01
    """
    The promoted shape and repeats of the tile of `x`, and its output shape.

    The hot path of every tile, hence inlined; the output is checked to fit in
    int64 before anything is allocated.
    """
    shape = tuple(x.shape)
    if not set(map(type, shape)) <= _INT:
        shape = eager_shape(x, op=op)
    if len(shape) != len(reps):
        shape, reps = promote(shape, reps)
    out = tuple(map(operator.mul, shape, reps))
    size = math.prod(out)
    # with no empty axis every dimension and repeat is at most the size
    if size > INT64_MAX or (size == 0 and max((*out, *reps)) > INT64_MAX):
        tiled_shape(shape, reps, op=op)  # raises, with the message
    return Plan(shape, reps, out, size)


def check_shape(
    shape: object, /, *, op: str
) -> tuple[int | None, ...]:  # numpydoc ignore=PR01,RT01
    """Validate a shape whose items are non-negative ints or None."""
    if not isinstance(shape, Sequence) or isinstance(shape, str | bytes):
        msg = f"{op}: `shape` must be a sequence of ints or None; got {_short(shape)}."
        raise TypeError(msg)
    dims: list[int | None] = []
    for i, item in enumerate(shape):
        d = None if item is None else _index(item)
        if d is None and item is not None:
            msg = f"{op}: `shape` must hold ints or None; got {_short(item)} at position {i}."
            raise TypeError(msg)
        if d is not None and d < 0:
            msg = f"{op}: `shape` must be non-negative; got {d} at position {i}."
            raise ValueError(msg)
        dims.append(d)
    return tuple(dims)


def _index(value: object, /) -> int | None:
    """`value` as a Python int when it is an integer (NumPy's included), not a bool; else None."""
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b":
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def out_of_memory(e: BaseException, /) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether `e` is an allocator's failure (`MemoryError`, PyTorch's and XLA's)."""
    if isinstance(e, MemoryError):
        return True
    text = str(e).lower()
    return "can't allocate memory" in text or "out of memory" in text


def itemsize(dtype: object, xp: ArrayNamespace, /) -> int:  # numpydoc ignore=PR01,RT01
    """The bytes per element of `dtype`: its ``itemsize``, else from its dtype info."""
    size = getattr(dtype, "itemsize", None)
    if isinstance(size, int):
        return size
    if xp.isdtype(dtype, "bool"):
        return 1
    info = xp.iinfo(dtype) if xp.isdtype(dtype, "integral") else xp.finfo(dtype)
    bits = int(info.bits) * (2 if xp.isdtype(dtype, "complex floating") else 1)
    return bits // 8


def check_out(
    x: Array, out: object, p: Plan, xp: ArrayNamespace, /, *, op: str
) -> None:  # numpydoc ignore=PR01
    """
    Refuse an `out` the tile of `x` by `p` cannot be written into, before writing.

    Not an array of `x`'s library, or not writable (immutable or lazy): `TypeError`;
    another shape or device: `ValueError`; another dtype: `TypeError`. Each message
    names both sides.
    """
    lib = _compat.library(xp)
    if type(out) is not type(x) and (
        not _compat.is_array_api_obj(out) or _compat.library(_compat.array_namespace(out)) != lib
    ):
        msg = (
            f"{op}: `out` must be an array of the input's library ({lib}); "
            f"got {type(out).__module__}.{type(out).__name__}."
        )
        raise TypeError(msg)
    lazy, writable = is_lazy_array(out), is_writeable_array(out)  # no narrowing by these
    if lazy or not writable:
        why = (
            "read-only"
            if lib == "numpy"
            else "lazy: it has no memory to write into"
            if lazy and lib != "jax"
            else "immutable"
        )
        fix = "pass a writable one" if lib == "numpy" else "leave `out` out, use the result"
        msg = f"{op}: `out` is a {lib} array, which is {why}; {fix}."
        raise TypeError(msg)
    if tuple(out.shape) != p.out_shape:
        msg = f"{op}: `out` has shape {tuple(out.shape)}; the tile has shape {p.out_shape}."
        raise ValueError(msg)
    if out.dtype != x.dtype:
        msg = f"{op}: `out` has dtype {out.dtype}; the tile has the input's dtype {x.dtype}."
        raise TypeError(msg)
    there, here = getattr(out, "device", None), getattr(x, "device", None)
    if there is None or here is None:  # NumPy before 2
        there, here = _compat.device(out), _compat.device(x)
    if there != here:
        msg = f"{op}: `out` is on device {there}; the input is on device {here}."
        raise ValueError(msg)


def overlaps_itself(
    shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int, /
) -> bool:  # numpydoc ignore=PR01,RT01
    """
    Whether two elements of an array of `shape` and `strides` may share memory.

    Its axes of length above 1, by stride, must each step over everything inside
    (strides and `itemsize` in one unit); a layout that interleaves axes without
    overlap is taken for overlapping, which no framework makes.
    """
    if 0 in shape:
        return False
    axes = sorted((abs(st), d) for d, st in zip(shape, strides, strict=True) if d > 1)
    extent = itemsize
    for st, d in axes:
        if st < extent:
            return True
        extent = st * d
    return False
