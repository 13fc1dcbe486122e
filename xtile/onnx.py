"""ONNX Tile-1, Tile-6 and Tile-13: strict layers over the one core."""

import functools
from typing import Any

from array_api_compat import is_lazy_array

from . import _front
from ._tile import Array, ArrayNamespace, Repeats

__all__ = ["tile", "tile_shape", "tile_v1"]

# the array-API (and NumPy) dtype names; ONNX's are the same but for two
_DTYPES = (  # noqa: SIM905 (the names on two lines, not fifteen)
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 "
    "complex64 complex128"
).split()
_ONNX_NAMES = {"float32": "float", "float64": "double"}
# the type constraint T of each version, in ONNX's type names: data, not branches
_TILE_13_TYPES = frozenset({_ONNX_NAMES.get(n, n) for n in _DTYPES} | {"string"})
TYPE_CONSTRAINTS = {
    1: frozenset({"double", "float", "float16"}),
    6: _TILE_13_TYPES - {"bfloat16"},
    13: _TILE_13_TYPES,
}


def _onnx_type(x: Array, xp: ArrayNamespace) -> str:
    """The ONNX element type of `x`, or the dtype's own name when ONNX has none."""
    dtype = x.dtype
    for name in _DTYPES:
        ref = getattr(xp, name, None)
        if ref is not None and dtype == ref:  # NumPy: `dtype == None` is float64
            return _ONNX_NAMES.get(name, name)
    kind = getattr(dtype, "kind", None)  # NumPy dtypes, also under Dask and JAX
    if getattr(dtype, "name", None) == "bfloat16":  # ml_dtypes.bfloat16 on NumPy, Dask
        return "bfloat16"
    # tensor(string) is any NumPy text array, or an object array of str
    strs = kind == "O" and not is_lazy_array(x) and all(isinstance(v, str) for v in x.flat)
    if kind in {"U", "S", "T"} or strs:
        return "string"
    return str(dtype)


def _check_type(x: Array, version: int, /, *, xp: ArrayNamespace) -> None:
    """Raise `TypeError` unless `x`'s element type is in the version's constraint."""
    if (onnx_type := _onnx_type(x, xp)) not in (allowed := TYPE_CONSTRAINTS[version]):
        hint = " (bfloat16 needs opset 13 or later)" if onnx_type == "bfloat16" else ""
        msg = (
            f"ONNX Tile-{version}: input type tensor({onnx_type}) (dtype {x.dtype}) is not "
            f"in the type constraint T{hint}; allowed: {', '.join(sorted(allowed))}."
        )
        raise TypeError(msg)


def _onnx_repeats(repeats: Repeats, ndim: int | None, /, *, op: str) -> tuple[int, ...]:
    """Tile-6/13 repeats: a 1-D int64 tensor or sequence, one non-negative entry per axis."""
    reps, reps_ndim = _front.host_ints(repeats, op=op, int64=True, dims="1-D")
    if reps_ndim == 0:
        msg = f"{op}: repeats must be a 1-D tensor or a sequence of ints; got the scalar {reps[0]}."
        raise ValueError(msg)
    if ndim is not None and len(reps) != ndim:
        msg = (
            f"{op}: repeats has {len(reps)} elements but input has {ndim} dimensions "
            f"(ONNX Tile does not broadcast); got repeats {reps}."
        )
        raise ValueError(msg)
    return _front.non_negative(reps, op=op)


# `input`: the ONNX input's name
def tile(
    input: Array,
    repeats: Repeats,
    /,
    *,
    opset: int = 13,
    xp: ArrayNamespace | None = None,
    out: Array | None = None,
) -> Array:
    """
    ONNX Tile-6 (opsets 6 to 12) and Tile-13 (opset 13 and later).

    ``output_dim[i] = input_dim[i] * repeats[i]``, with exactly one repeat per
    axis of `input`: unlike `xtile.tile`, ONNX Tile never broadcasts.

    Parameters
    ----------
    input : array
        Input tensor of any shape, of an element type in the operator's type
        constraint T for `opset` (Tile-6 has no bfloat16). Text arrays count as
        ``tensor(string)`` on NumPy.
    repeats : array or sequence of ints
        A 1-D int64 array (of any namespace and device) or a sequence of ints,
        with ``input.ndim`` non-negative entries.
    opset : int, optional
        The model's opset version, 6 or later. Default: 13.
    xp : array_namespace, optional
        The standard-compatible namespace for `input`. Default: infer.
    out : array, optional
        An array to write the result into and return, instead of a fresh one:
        as for `xtile.tile`.

    Returns
    -------
    array
        The tiled tensor: same namespace, dtype and device as `input`, never
        sharing memory with it; `out` itself where given.

    Raises
    ------
    TypeError
        If `input` is not an array or its type is not in T for `opset`, or
        `repeats` is not int64 (an array) or ints; `out` as for `xtile.tile`.
    ValueError
        If `opset` is below 6 (use `tile_v1`), `repeats` is not 1-D, has not one
        entry per axis or holds a negative repeat, or the output would have more
        elements than int64 can count; `out` as for `xtile.tile`.
    MemoryError
        If the output cannot be allocated, as `xtile.tile`.

    See Also
    --------
    tile_v1 : ONNX Tile-1 (opsets 1 to 5).
    xtile.tile : NumPy semantics, with broadcasting.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import xtile
    >>> xtile.onnx.tile(xp.asarray([[1, 2], [3, 4]]), [1, 2])
    Array([[1, 2, 1, 2],
           [3, 4, 3, 4]], dtype=array_api_strict.int64)
    """
    if isinstance(opset, bool) or not isinstance(opset, int):
        msg = f"ONNX Tile: `opset` must be an int; got {opset!r}."
        raise TypeError(msg)
    if opset < 6:
        msg = (
            f"ONNX Tile: opset {opset} has Tile-1, whose inputs are (input, tiles, axis); "
            "call `xtile.onnx.tile_v1` for it. `xtile.onnx.tile` covers opset 6 and later."
        )
        raise ValueError(msg)
    return _front.tile(input, repeats, xp, out, _LAYERS[13 if opset >= 13 else 6])


def _parse(version: int, repeats: object, x: Any, xp: Any, op: str) -> tuple[int, ...]:
    """Check the input's type in `version`'s constraint, and `repeats`; return the repeats."""
    _check_type(x, version, xp=xp)
    return _onnx_repeats(repeats, x.ndim, op=op)


# one parser per version: the plan cache keeps a layer's calls by its parser and dtype
_LAYERS = {
    v: _front.Layer(f"ONNX Tile-{v}", "input", functools.partial(_parse, v), bare=False)
    for v in (6, 13)
}


def tile_v1(
    input: Array,
    tiles: int | Array,
    axis: int | Array,
    /,
    *,
    xp: ArrayNamespace | None = None,
    out: Array | None = None,
) -> Array:
    """
    ONNX Tile-1: repeat the whole input `tiles` times along one `axis`.

    ``output.shape[axis] == input.shape[axis] * tiles``; the other axes are
    unchanged.

    Parameters
    ----------
    input : array
        Input tensor of float16, float32 or float64.
    tiles : int or array
        Number of copies: an int, or an int64 array with one element.
    axis : int or array
        The axis to tile along, negative counting from the end: an int, or an
        int64 array with one element.
    xp : array_namespace, optional
        The standard-compatible namespace for `input`. Default: infer.
    out : array, optional
        An array to write the result into and return, instead of a fresh one:
        as for `xtile.tile`.

    Returns
    -------
    array
        The tiled tensor: same namespace, dtype and device as `input`, never
        sharing memory with it; `out` itself where given.

    Raises
    ------
    TypeError
        If `input` is not a float16/32/64 array, or `tiles` or `axis` is not an
        int or an int64 array; `out` as for `xtile.tile`.
    ValueError
        If `tiles` or `axis` has more than one element, `axis` is out of range,
        `tiles` is negative, or the output would have more elements than int64
        can count; `out` as for `xtile.tile`.
    MemoryError
        If the output cannot be allocated, as `xtile.tile`.

    See Also
    --------
    tile : ONNX Tile-6 and Tile-13.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import xtile
    >>> xtile.onnx.tile_v1(xp.asarray([[1.0, 2.0]]), 3, -1)
    Array([[1., 2., 1., 2., 1., 2.]], dtype=array_api_strict.float64)
    """

    # the parser reads both: a call is kept by the pair
    return _front.tile(input, (tiles, axis), xp, out, _TILE_1)


def _parse_tiles_axis(pair: Any, x: Any, xp: Any, op: str) -> tuple[int, ...]:
    """Tile-1's input type, and its repeats from ``(tiles, axis)``."""
    _check_type(x, 1, xp=xp)
    n_tiles, ax = _one_int(pair[0], op=op, name="tiles"), _one_int(pair[1], op=op, name="axis")
    if not -x.ndim <= ax < x.ndim:
        msg = f"{op}: `axis` {ax} is out of range for an input of {x.ndim} dimensions."
        raise ValueError(msg)
    _front.non_negative((n_tiles,), op=op, name="tiles")
    return tuple(n_tiles if i == ax % x.ndim else 1 for i in range(x.ndim))


_TILE_1 = _front.Layer("ONNX Tile-1", "input", _parse_tiles_axis)


def _one_int(value: int | Array, /, *, op: str, name: str) -> int:
    """A Tile-1 scalar input: an int, or an int64 array with one element."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not hasattr(value, "dtype"):
        msg = f"{op}: `{name}` must be an int or an int64 array; got {value!r}."
        raise TypeError(msg)
    values, _ = _front.host_ints(value, op=op, name=name, int64=True)
    if len(values) != 1:
        msg = f"{op}: `{name}` must have exactly one element; got {values}."
        raise ValueError(msg)
    return values[0]


def tile_shape(shape: object, repeats: Repeats, /) -> tuple[int | None, ...]:
    """
    ONNX shape inference for Tile-6 and Tile-13.

    Parameters
    ----------
    shape : sequence of int or None
        Shape of the input; `None` marks an unknown dimension.
    repeats : array or sequence of ints
        As for `tile`: one entry per dimension of `shape`.

    Returns
    -------
    tuple of int or None
        ``shape[i] * repeats[i]``; an unknown dimension stays unknown, except
        that an unknown dimension times 0 is 0.

    Raises
    ------
    TypeError
        If `shape` or `repeats` holds a non-integer, or a `repeats` array is
        not int64.
    ValueError
        If the ranks differ, a dimension or repeat is negative, or the output
        would have more elements than int64 can count.

    See Also
    --------
    tile : The operator itself.

    Examples
    --------
    >>> import xtile
    >>> xtile.onnx.tile_shape((None, 3), [2, 2])
    (None, 6)
    """
    op = "ONNX Tile"
    dims = _front.check_shape(shape, op=op)
    return _front.tiled_shape(dims, _onnx_repeats(repeats, len(dims), op=op), op=op)
