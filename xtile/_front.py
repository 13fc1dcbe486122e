"""The front door of `xtile.tile`, `xtile.onnx`, `xtile.openvino`: every check once, then run."""

import math
import operator
import reprlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NamedTuple

from array_api_compat import device, is_lazy_array, is_numpy_array, is_writeable_array

from . import _backends, _program, _run
from ._backends import Backend, Call, library, symbolic

Array = Any
Shape = tuple[int, ...]
INT64_MAX = 2**63 - 1


def short(value: object, /) -> str:
    """A repr that stays readable in an error message: short, and on one line."""
    return " ".join(reprlib.repr(value).split())


def _ints(v: object, /) -> bool:
    """Whether `v` is a tuple of Python ints (not a bool, nor a float of equal hash)."""
    for r in v if type(v) is tuple else (None,):  # noqa: SIM110 (a loop: faster than all())
        if type(r) is not int:
            return False
    return True


def namespace(x: object, xp: Any, /, *, op: str, name: str) -> tuple[Any, Backend]:
    """The namespace and backend of array `x`; `TypeError` for anything else."""
    if (found := _backends.of(x)) is None:
        if is_numpy_array(x):  # one array-api-compat refuses (numpy.matrix)
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
            f"got {type(x).__name__} {short(x)}{hint}."
        )
        raise TypeError(msg)
    if xp is None or (isinstance(xp, ModuleType) and library(xp) == library(found[0])):
        return found if xp is None else (xp, found[1])
    given = f"the namespace {xp.__name__}" if isinstance(xp, ModuleType) else short(xp)
    msg = (
        f"{op}: `xp` is {given}, not the namespace of `{name}`, a "
        f"{type(x).__module__}.{type(x).__name__} (of {library(found[0])}); leave `xp` out."
    )
    raise TypeError(msg)


def _array_ints(a: Array, /, *, op: str, name: str, int64: bool, dims: str) -> Shape:
    """An integer array of any namespace and device as host ints, in one transfer."""
    xp = _backends.of(a)[0]  # type: ignore[index]
    if int64 and a.dtype != xp.int64:
        msg = f"{op}: `{name}` must be an int64 array; got {short(a)} of dtype {a.dtype}."
        raise TypeError(msg)
    if not xp.isdtype(a.dtype, "integral"):
        msg = f"{op}: `{name}` must have an integer dtype; got {short(a)} of dtype {a.dtype}."
        raise TypeError(msg)
    if a.ndim > 1:
        msg = f"{op}: `{name}` must be {dims}; got a {a.ndim}-D array of shape {tuple(a.shape)}."
        raise ValueError(msg)
    why = (
        f"a tensor of shape {tuple(a.shape)} traced by torch.compile (make it outside)"
        if _backends.compiling()
        else f"the traced value {a} (under `jax.jit`, `jax.vmap`, `jax.grad`: mark it static, "
        "`static_argnums`)"
        if type(a).__module__.startswith("jax") and "Tracer" in type(a).__name__
        else f"a tensor on the meta device (shape {tuple(a.shape)}), which holds no values"
        if str(getattr(a, "device", "")) == "meta"
        else ""
    )
    try:
        if not why:
            if library(xp) == "dask":
                a = a.compute()  # one graph evaluation, not one per element
            if a.ndim == 0:
                return (int(a),)
            values = a.tolist() if hasattr(a, "tolist") else [int(a[i]) for i in range(a.shape[0])]
            return tuple(int(v) for v in values)
    except (TypeError, ValueError) as e:  # a lazy array with no value (an ndonnx argument)
        why = f"a lazy {type(a).__name__} of shape {tuple(a.shape)} that holds no values ({e})"
    msg = (
        f"{op}: `{name}` must be static (concrete), since it sets the output shape; got "
        f"{why}. Pass Python ints."
    )
    raise TypeError(msg)


def host_ints(
    repeats: object,
    /,
    *,
    op: str,
    name: str = "repeats",
    int64: bool = False,
    dims: str = "0-D or 1-D",
) -> tuple[Shape, int]:
    """`repeats` (an int, a sequence, an integer array) as host ints, and its rank (0 or 1)."""
    if _ints(repeats):
        return repeats, 1  # type: ignore[return-value]
    if _backends.of(repeats) is not None:
        return _array_ints(repeats, op=op, name=name, int64=int64, dims=dims), repeats.ndim  # type: ignore[attr-defined]
    if (isinstance(repeats, int) and not isinstance(repeats, bool)) or symbolic(repeats):
        return (repeats,), 0  # type: ignore[return-value]
    if isinstance(repeats, Sequence) and not isinstance(repeats, str | bytes):
        return tuple(_element(v, i, op=op, name=name) for i, v in enumerate(repeats)), 1
    msg = (
        f"{op}: `{name}` must be an int, a sequence of ints or an integer array; "
        f"got {short(repeats)} ({type(repeats).__name__})."
    )
    raise TypeError(msg)


def _element(v: object, i: int, /, *, op: str, name: str) -> int:
    """One element of a repeats sequence: a Python int or a 0-D integer array."""
    if (isinstance(v, int) and not isinstance(v, bool)) or symbolic(v):
        return v  # type: ignore[return-value]
    if _backends.of(v) is not None and getattr(v, "ndim", None) == 0:
        return _array_ints(v, op=op, name=name, int64=False, dims="0-D")[0]
    msg = f"{op}: `{name}` must hold integers; got {short(v)} ({type(v).__name__}) at position {i}."
    raise TypeError(msg)


def non_negative(reps: Shape, /, *, op: str, name: str = "repeats") -> Shape:
    """`reps`, or `ValueError` naming the first negative repeat."""
    if neg := next(((i, r) for i, r in enumerate(reps) if isinstance(r, int) and r < 0), None):
        msg = f"{op}: `{name}` must be non-negative; got {neg[1]} at position {neg[0]} of {reps}."
        raise ValueError(msg)
    return reps


def tiled_shape(dims: tuple[int | None, ...], reps: Shape, /, *, op: str) -> tuple[int | None, ...]:
    """The output shape of a tile by non-negative `reps`, checked to fit int64."""
    shape, reps = _program.promote(dims, reps)  # type: ignore[arg-type]
    out = tuple(
        0 if type(r) is int and r == 0 else None if d is None else d * r
        for d, r in zip(shape, reps, strict=True)
    )
    big = [v for v in (*reps, *out) if type(v) is int and v > INT64_MAX]  # a symbol: as it runs
    too_many = all(type(v) is int for v in out) and math.prod(out) > INT64_MAX
    if big or too_many:
        many = "has more elements than int64 can count"
        what = many if too_many else f"holds {big[0]}, past int64's maximum"
        msg = f"{op}: the output shape {out} (`repeats` {reps}) {what} ({INT64_MAX})."
        raise ValueError(msg)
    return out


def check_shape(shape: object, /, *, op: str) -> tuple[int | None, ...]:
    """A shape whose items are non-negative ints (or symbolic sizes) or None."""
    if not isinstance(shape, Sequence) or isinstance(shape, str | bytes):
        msg = f"{op}: `shape` must be a sequence of ints or None; got {short(shape)}."
        raise TypeError(msg)
    dims = tuple(
        None if v is None else _element(v, i, op=op, name="shape") for i, v in enumerate(shape)
    )
    non_negative(tuple(0 if d is None else d for d in dims), op=op, name="shape")
    return dims


def _numpy_reps(repeats: object, _x: Array, _xp: Any, op: str) -> Shape:
    """`xtile.tile`'s repeats: host ints, non-negative."""
    return non_negative(host_ints(repeats, op=op)[0], op=op)


class Layer(NamedTuple):
    """A front door: its name and its input's in messages, how it reads the repeats."""

    op: str
    name: str
    parse: Callable[[object, Array, Any, str], Shape]  # (repeats, x, xp, op): checked ints
    bare: bool = True  # a bare int is the repeats of one axis


TILE = Layer("xtile.tile", "x", _numpy_reps)


def _call_key(
    x: Array, repeats: object, out: Array | None, layer: Layer, raw: Any, /
) -> tuple[Any, ...] | None:
    """
    What a call is kept by: `x`'s raw key (`Backend.raw_key`), the repeats, the layer.

    With `out`, of `x`'s type, its raw key too; None for a call that is not kept.
    """
    form = repeats if _ints(repeats) else _repeats_form(repeats, layer.bare)
    known = None if form is None else raw(x)
    if known is None or out is None:  # a layer's parser names it
        return None if known is None else (type(x), known, form, layer.parse)
    into = raw(out) if type(out) is type(x) else None
    return None if into is None else (type(x), known, form, layer.parse, into)


def _repeats_form(repeats: object, bare: bool, /) -> tuple[Any, ...] | None:
    """`repeats` as a call is kept by: ints, or a NumPy array's dtype, rank and values; or None."""
    if type(repeats) is int and bare:
        return (repeats,)
    if type(repeats) is list:
        repeats = tuple(repeats)
    if _ints(repeats):
        return repeats  # type: ignore[return-value]
    found = _backends.of(repeats)  # a host array's values are cheap (a device's: a transfer)
    if found is None or found[1].name != "numpy" or repeats.ndim > 1:  # type: ignore[attr-defined]
        return None  # (a masked element reads None: a key never kept)
    values = repeats.tolist()  # type: ignore[attr-defined]
    return (repeats.dtype, repeats.ndim, *(values if repeats.ndim else [values]))  # type: ignore[attr-defined]


def tile(
    x: Array, repeats: object, xp: Any = None, out: Array | None = None, layer: Layer = TILE, /
) -> Array:
    """
    The tile of `x` by `repeats` as `layer` reads them, into a fresh array or `out`.

    A spec layer's parser checks the input's dtype too: its calls are kept per dtype.
    """
    op = layer.op
    # a call seen before: its checks passed, but those of `out`'s memory and flags
    raw = None if xp is not None or _backends.compiling() else _run.RAW_KEYS.get(type(x))
    key = None if raw is None else _call_key(x, repeats, out, layer, raw)
    kept = None if key is None else _run.KEPT.get(key)
    if kept is not None:
        if out is not None:
            xp, backend = _backends.of(x)  # type: ignore[misc]
            _check_each_out(x, out, xp, backend, op, seen=True)
        return _allocating(kept[1], x, out, kept[0].out_shape, None, op)
    given = xp
    xp, backend = namespace(x, xp, op=op, name=layer.name)
    reps = layer.parse(repeats, x, xp, op)
    parts = None if backend.unwrap is None else backend.unwrap(x)  # before the shape is read
    shape = tuple(x.shape)
    if any(d is None or (isinstance(d, float) and math.isnan(d)) for d in shape):
        # only a library whose own tile takes run-time sizes (ndonnx's: a Tile node)
        if backend.whole is None or out is not None or not hasattr(x, "dynamic_shape"):
            msg = (
                f"{op}: unsupported lazy shape {shape} of `{type(x).__name__}`; the "
                "output shape depends on it (for Dask, call `compute_chunk_sizes()` first)."
            )
            raise TypeError(msg)
        tiled_shape(shape, reps, op=op)  # the known sizes fit int64
        return backend.whole(x, reps, xp, None)
    shape, full = _program.promote(shape, reps)
    out_shape = tuple(map(operator.mul, shape, full))
    # past int64: a repeat, or the bytes of the axes as allocators count them (which
    # bound the elements); a symbolic size is checked as it runs (under Dynamo, all)
    ints = not _backends.compiling() and all(type(v) is int for v in (*out_shape, *full))
    if ints and (
        max((0, *full)) > INT64_MAX
        or math.prod([d for d in out_shape if d]) * _itemsize(x.dtype, xp) > INT64_MAX
    ):
        tiled_shape(shape, full, op=op)  # raises where the element count is past int64
        msg = f"{op}: the output shape {out_shape} spans more bytes than int64 can count."
        raise ValueError(msg)
    if out is not None:
        _check_out(x, out, out_shape, xp, backend, op)
    if key is None and given is None and backend.raw_key and not _backends.compiling():
        key = _call_key(x, repeats, out, layer, backend.raw_key)
    if layer is not TILE and getattr(x.dtype, "hasobject", False):
        key = None  # a spec layer read its values (NumPy's object dtype): never kept
    if parts is None:
        return _plain(x, reps, out_shape, xp, backend, out, op, key)
    if out is not None:
        msg = f"{op}: `out` takes the tile of a plain array, not of a {type(x).__name__}."
        raise TypeError(msg)
    # the tile of each of its plain arrays, `parts[0]`, rebuilt as `x`'s type by `parts[1]`
    return parts[1](*(_plain(a, reps, out_shape, xp, backend, None, op) for a in parts[0]))


def _plain(
    x: Array,
    reps: Shape,
    out_shape: Shape,
    xp: Any,
    backend: Backend,
    out: Array | None,
    op: str,
    key: tuple[Any, ...] | None = None,
) -> Array:
    """The tile of a plain array by its planned program, kept under `key` for the next call."""
    layout = None if backend.layout is None else backend.layout(x)
    if layout is not None:
        into = None if out is None else backend.layout(out)  # type: ignore[misc]
        # a C-ordered `out` of plain items takes what a fresh output takes, but the
        # programs that make their own output
        fresh = out is None or (into is not None and into.as_bytes and _program.c_ordered(into))
        kept = _run.compiled(backend.name, layout, reps, fresh, out is not None)
        if out is None or into is not None:
            _keep(x, backend, key, kept)
        return _allocating(kept[1], x, out, out_shape, xp, op)
    shape, full = _program.promote(tuple(x.shape), reps)
    # the library's own tile where it has one: JAX's, Dask's, ndonnx's; PyTorch's for a
    # tensor it traces, compiles, exports or wraps (it takes symbolic sizes: one ONNX Tile)
    whole = backend.whole is not None
    steps = (_program.Whole(full),) if whole else _program.fit_rank(shape, full, backend.max_dims)
    # `tile`: a Dask task's
    program = _program.Program(shape, full, out_shape, steps)
    call = _run.compile_program(program, backend, xp, tile)
    if backend.layout is None and not _backends.compiling():  # JAX's: one XLA program
        _keep(x, backend, key, (program, call))
    return _allocating(call, x, out, out_shape, xp, op)


def _keep(
    x: Array, backend: Backend, key: tuple[Any, ...] | None, kept: tuple[_program.Program, Call]
) -> None:
    """Keep `kept` for the next call of `key` (None: not kept), looked up by `x`'s type."""
    if key is not None:
        _run.RAW_KEYS[type(x)] = backend.raw_key  # type: ignore[assignment]
        _run.keep(key, kept)


def _allocating(
    run: Call, x: Array, out: Array | None, out_shape: Shape, xp: Any, op: str
) -> Array:
    """``run(x, out)``; an allocator's failure as a `MemoryError` naming the output."""
    try:
        return run(x, out)
    except (MemoryError, RuntimeError) as e:
        oom = "can't allocate memory" in (text := str(e).lower()) or "out of memory" in text
        if not (isinstance(e, MemoryError) or oom):
            raise
        xp = xp or _backends.of(x)[0]  # type: ignore[index]
        nbytes = f"{math.prod(out_shape) * _itemsize(x.dtype, xp):_} bytes".replace("_", ",")
        said = "" if type(e).__module__.startswith("numpy") else str(e).strip().partition("\n")[0]
        msg = (
            f"{op}: cannot allocate the output of shape {out_shape} and dtype {x.dtype} "
            f"({nbytes})" + (f"; the allocator said: {said}" if said else ".")
        )
        raise MemoryError(msg) from e


def _itemsize(dtype: Any, xp: Any) -> int:
    """The bytes per element of `dtype`."""
    size = getattr(dtype, "itemsize", None)
    if isinstance(size, int):
        return size
    if xp.isdtype(dtype, "bool"):
        return 1
    info = xp.iinfo(dtype) if xp.isdtype(dtype, "integral") else xp.finfo(dtype)
    return int(info.bits) * (2 if xp.isdtype(dtype, "complex floating") else 1) // 8


def _check_out(x: Array, out: Array, out_shape: Shape, xp: Any, backend: Backend, op: str) -> None:
    """Refuse an `out` the tile cannot be written into, naming both sides."""
    lib = library(xp)
    found = _backends.of(out)
    if type(out) is not type(x) and (found is None or library(found[0]) != lib):
        msg = f"{op}: `out` must be an array of the input's library ({lib}); got {type(out)}."
        raise TypeError(msg)
    _check_each_out(x, out, xp, backend, op)
    if tuple(out.shape) != out_shape:
        msg = f"{op}: `out` has shape {tuple(out.shape)}; the tile has shape {out_shape}."
        raise ValueError(msg)


def _check_each_out(
    x: Array, out: Array, xp: Any, backend: Backend, op: str, seen: bool = False
) -> None:
    """`out`'s checks of every call (its data, device); of its layout too, unless `seen`."""
    lib = library(xp)
    lazy = lib not in _backends.MUTABLE and is_lazy_array(out)  # Dask's are "writable"
    if lazy or not is_writeable_array(out):
        empty = "lazy: it has no memory to write into"
        why = "read-only" if lib == "numpy" else empty if lazy and lib != "jax" else "immutable"
        fix = "pass a writable one" if lib == "numpy" else "leave `out` out, use the result"
        msg = f"{op}: `out` is a {lib} array, which is {why}; {fix}."
        raise TypeError(msg)
    if out.dtype != x.dtype:
        msg = f"{op}: `out` has dtype {out.dtype}; the tile has the input's dtype {x.dtype}."
        raise TypeError(msg)
    # the attribute (`device()` takes longer); NumPy 1 has none: only the CPU
    if getattr(out, "device", None) != getattr(x, "device", None):
        msg = f"{op}: `out` is on device {device(out)}; the input is on device {device(x)}."
        raise ValueError(msg)
    if backend.check_out is not None:
        backend.check_out(x, out, op, seen)  # memory shared with `x`, autograd
