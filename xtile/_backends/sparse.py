"""The pydata sparse backend: other formats tiled as COO (which has `broadcast_to`)."""

from collections.abc import Callable
from typing import Any

from . import Backend


def _unwrap(x: Any, /) -> tuple[tuple[Any, ...], Callable[..., Any]] | None:
    """A non-COO array as COO, and how to bring its tile back to `x`'s format."""
    fmt = x.format
    if fmt == "coo":
        return None
    axes = getattr(x, "compressed_axes", None)  # GCXS: CSR is (0,), CSC (1,)

    def rebuild(tiled: Any) -> Any:
        if axes is None:
            return tiled.asformat(fmt)
        lead = tiled.ndim - x.ndim  # the axes `repeats` prepended
        return tiled.asformat(fmt, compressed_axes=tuple(int(a) + lead for a in axes))

    return (x.asformat("coo"),), rebuild


# numpy.ravel_multi_index, which sorts COO coordinates, takes at most 63 axes
BACKEND = Backend("sparse", unwrap=_unwrap, max_dims=63)
