"""`xtile.tile` and `xtile.tile_shape`: NumPy / OpenVINO Tile-1 / array-API semantics."""

from collections.abc import Sequence
from types import ModuleType
from typing import Any, TypeAlias

from . import _front

Array: TypeAlias = Any
ArrayNamespace: TypeAlias = ModuleType
Repeats: TypeAlias = "int | Sequence[int] | Array"

__all__ = ["tile", "tile_shape"]


def tile(
    x: Array, repeats: Repeats, /, *, xp: ArrayNamespace | None = None, out: Array | None = None
) -> Array:
    """
    Construct an array by repeating `x` the number of times given by `repeats`.

    The semantics are those of `numpy.tile`, of OpenVINO Tile-1 and of the array
    API standard's ``tile``. The result is built from views of `x` and copied
    exactly once, into a fresh array (or into `out`).

    Parameters
    ----------
    x : array
        Input array of any namespace that array-api-compat supports. A NumPy
        scalar counts as a 0-D NumPy array.
    repeats : int or sequence of ints or array
        Repetitions per axis: an int, a sequence of ints, or a 0-D or 1-D
        integer array of any namespace, on any device. Shorter than ``x.ndim``:
        ones are prepended; longer: `x` gains leading length-1 axes.
    xp : array_namespace, optional
        The standard-compatible namespace for `x`. Default: infer.
    out : array, optional
        An array to write the tile into and return, instead of a fresh one: of
        the output's shape, the input's dtype and device, any strides, of a
        mutable library (NumPy, CuPy, PyTorch, array-api-strict) and not
        sharing memory with the input. Checked before anything is written.

    Returns
    -------
    array
        Same namespace, dtype and device as `x`, with
        ``max(x.ndim, len(repeats))`` dimensions. On backends with mutable
        arrays it is a new, writable array that never shares memory with `x`;
        `out` itself where given.

    Raises
    ------
    TypeError
        If `x` is not an array (or is a NumPy subclass but a masked array or a
        memory map), `repeats` is not integers or not static (traced under
        ``jax.jit``, a lazy array), `x` has unknown dimensions its library cannot
        give at run time (Dask's nan), `xp` is not `x`'s namespace, or `out` is
        not a writable array of `x`'s library and dtype (JAX and Dask have
        none), or autograd tracks it or `x`.
    ValueError
        If a repeat is negative, `repeats` has more than one dimension, the
        output's elements or bytes are more than int64 can count, or `out` has
        another shape or device than the tile, or shares memory with `x`.
    MemoryError
        If the output cannot be allocated (any eager backend's allocator); the
        message names the output's shape, dtype and size in bytes.

    See Also
    --------
    tile_shape : The output shape, without computing the tile.
    numpy.tile : The reference semantics.

    Notes
    -----
    ``output.shape[i] == promoted_shape[i] * promoted_repeats[i]``; unlike
    `numpy.tile`, a negative repeat is an error even where the input is empty.
    An ndonnx `x` with unknown (None) dimensions gives a lazy result of shape
    ``tile_shape(x.shape, repeats)``: one ONNX Tile node.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import xtile
    >>> xtile.tile(xp.asarray([1, 2]), (2, 2))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=array_api_strict.int64)
    """
    return _front.tile(x, repeats, xp, out)


def tile_shape(shape: object, repeats: Repeats, /) -> tuple[int | None, ...]:
    """
    Compute the shape of ``xtile.tile(x, repeats)`` for an `x` of shape `shape`.

    Parameters
    ----------
    shape : sequence of int or None
        Shape of the input; `None` marks an unknown dimension.
    repeats : int or sequence of ints or array
        As for `tile`.

    Returns
    -------
    tuple of int or None
        The output shape. An unknown dimension stays unknown, except that an
        unknown dimension times a repeat of 0 is 0.

    Raises
    ------
    TypeError
        If `shape` or `repeats` holds a non-integer, as for `tile`.
    ValueError
        If a dimension or a repeat is negative, or the output would have more
        elements than int64 can count, as for `tile`.

    See Also
    --------
    tile : Compute the tile itself.

    Examples
    --------
    >>> import xtile
    >>> xtile.tile_shape((None, 3), 2)
    (None, 6)
    >>> xtile.tile_shape((2, None, 3), (1, 0, 2))
    (2, 0, 6)
    """
    op = "xtile.tile_shape"
    dims = _front.check_shape(shape, op=op)
    reps = _front.non_negative(_front.host_ints(repeats, op=op)[0], op=op)
    return _front.tiled_shape(dims, reps, op=op)
