"""OpenVINO Tile-1: NumPy-style promotion, any integer repeats, negatives count as 0."""

from typing import Any

from . import _front
from ._tile import Array, ArrayNamespace, Repeats

__all__ = ["tile"]


def tile(
    data: Array, repeats: Repeats, /, *, xp: ArrayNamespace | None = None, out: Array | None = None
) -> Array:
    """
    OpenVINO Tile-1: repeat `data` the number of times given by `repeats` per axis.

    The semantics are those of `xtile.tile` (NumPy promotion both ways), except
    that a negative repeat counts as 0, as it does in the OpenVINO runtime,
    whose shape inference clamps negative repeats to zero.

    Parameters
    ----------
    data : array
        Input tensor of any type.
    repeats : int or sequence of ints or array
        Per-axis replication factors: an int, a sequence of ints, or a 0-D or
        1-D array of any integer dtype (signed or unsigned), namespace and
        device. Shorter than ``data.ndim``: ones are prepended; longer: `data`
        gains leading length-1 axes.
    xp : array_namespace, optional
        The standard-compatible namespace for `data`. Default: infer.
    out : array, optional
        An array to write the result into and return, instead of a fresh one:
        as for `xtile.tile`.

    Returns
    -------
    array
        Same namespace, dtype and device as `data`, with
        ``max(data.ndim, len(repeats))`` dimensions, never sharing memory with
        `data`; `out` itself where given.

    Raises
    ------
    TypeError
        If `data` is not an array or `repeats` is not integers; `out` as for
        `xtile.tile`.
    ValueError
        If `repeats` has more than one dimension or the output would have more
        elements than int64 can count; `out` as for `xtile.tile`.
    MemoryError
        If the output cannot be allocated, as `xtile.tile`.

    See Also
    --------
    xtile.tile : The same, with negative repeats rejected.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import xtile
    >>> xtile.openvino.tile(xp.asarray([1, 2]), xp.asarray([2, 2], dtype=xp.uint8))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=array_api_strict.int64)
    >>> xtile.openvino.tile(xp.asarray([1, 2]), [-1, 2]).shape
    (0, 4)
    """
    return _front.tile(data, repeats, xp, out, _LAYER)


def _clamped(repeats: object, _x: Any, _xp: Any, op: str) -> tuple[int, ...]:
    """Any integer repeats; the runtime's shape inference clamps negatives at 0."""
    return tuple(max(r, 0) if type(r) is int else r for r in _front.host_ints(repeats, op=op)[0])


_LAYER = _front.Layer("OpenVINO Tile-1", "data", _clamped)
