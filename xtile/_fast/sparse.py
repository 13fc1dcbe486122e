"""
The pydata sparse path: formats other than COO are tiled as COO, then converted back.

Not measurements but limits: only COO has `broadcast_to`, which the view chain
needs (GCXS, CSR, CSC and DOK raise), and a COO array sorts its coordinates with
`numpy.ravel_multi_index`, which takes at most 63 axes, so the view has at most 63.
The standard-only tile of a COO array keeps it sparse: the broadcast and the
reshape move coordinates, so the memory is the non-zeros times the repeats, never
the dense size.
"""

from collections.abc import Callable

from .._agnostic import Primitives
from .._lib._typing import Array

__all__ = ["PRIMITIVES"]


def _unwrap(x: Array, /) -> tuple[tuple[Array, ...], Callable[..., Array]] | None:
    """A non-COO array as COO, and how to bring its tile back to `x`'s format."""
    fmt = x.format  # type: ignore[attr-defined]
    if fmt == "coo":
        return None
    axes = getattr(x, "compressed_axes", None)  # GCXS: CSR is (0,), CSC (1,)

    def rebuild(tiled: Array) -> Array:  # numpydoc ignore=PR01,RT01
        """The COO tile in `x`'s format, its compressed axis counted from the end kept."""
        if axes is None:
            return tiled.asformat(fmt)  # type: ignore[attr-defined,no-any-return]
        lead = tiled.ndim - x.ndim  # the axes `repeats` prepended
        shifted = tuple(int(a) + lead for a in axes)
        gcxs: Array = tiled.asformat(fmt, compressed_axes=shifted)  # type: ignore[attr-defined]
        return gcxs

    return (x.asformat("coo"),), rebuild  # type: ignore[attr-defined]


# numpy.ravel_multi_index: "too many dimensions" from 64
PRIMITIVES = Primitives(unwrap=_unwrap, max_view_dims=63)
