"""Types shared by the package: the array protocol, the tile's plan, the subclass hook."""

import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NamedTuple, Protocol, TypeAlias

__all__ = [
    "Array",
    "ArrayNamespace",
    "Plan",
    "Repeats",
    "Shape",
    "ShapeLike",
    "Unwrap",
    "WholeTile",
]


class Array(Protocol):
    """
    What xtile reads of an array of any namespace.

    Attributes
    ----------
    shape : tuple
        The shape; lazy namespaces may hold `None` (or Dask's ``nan``).
    ndim : int
        The number of dimensions.
    dtype : object
        The namespace's dtype object.
    """

    @property
    def shape(self) -> tuple[Any, ...]:
        """The shape."""

    @property
    def ndim(self) -> int:
        """The number of dimensions."""

    @property
    def dtype(self) -> Any:
        """The namespace's dtype object."""

    def __getitem__(self, key: Any, /) -> Any: ...

    def __setitem__(self, key: Any, value: Any, /) -> None: ...

    def __int__(self) -> int: ...


ArrayNamespace: TypeAlias = ModuleType
Shape: TypeAlias = tuple[int, ...]
Repeats: TypeAlias = "int | Sequence[int] | Array"
ShapeLike: TypeAlias = Sequence[int | None]


class Plan(NamedTuple):
    """
    The host-side arithmetic of one tile, done once per call.

    Attributes
    ----------
    shape : tuple of int
        The input's shape, with leading 1s up to the output's rank.
    reps : tuple of int
        The repeats, with leading 1s up to the output's rank.
    out_shape : tuple of int
        ``shape[i] * reps[i]``.
    size : int
        The output's number of elements.
    """

    shape: Shape
    reps: Shape
    out_shape: Shape
    size: int

    @property
    def last(self) -> int:  # numpydoc ignore=RT01
        """The last axis whose repeat is not 1; -1 when there is none."""
        reps = self.reps
        for i in range(len(reps) - 1, -1, -1):  # on every call: faster than max()
            if reps[i] != 1:
                return i
        return -1

    @property
    def run(self) -> int:  # numpydoc ignore=RT01
        """
        The elements in the broadcast copy's contiguous run; 0 when nothing repeats.

        The copy of the view ``(r0, d0, r1, d1, ...)`` writes the block of the input
        from the last repeated axis on in one go, once per index of the outer axes.
        """
        last = self.last
        return math.prod(self.shape[last:]) if last >= 0 else 0


class Unwrap(Protocol):
    """The plain arrays inside `x` and a function of their tiles, or None for a plain `x`."""

    def __call__(self, x: Array, /) -> tuple[tuple[Array, ...], Callable[..., Array]] | None: ...


class WholeTile(Protocol):
    """A backend's whole tile, for a backend that plans its own computation."""

    def __call__(self, x: Array, plan: Plan, xp: ArrayNamespace, /) -> Array: ...
