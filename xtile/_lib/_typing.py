"""Types shared by the package: the array protocol, the tile's plan, a backend's fast path."""

import math
from collections.abc import Callable, Hashable, Sequence
from types import ModuleType
from typing import Any, NamedTuple, Protocol, TypeAlias

__all__ = [
    "Array",
    "ArrayNamespace",
    "Copy",
    "Double",
    "FastPath",
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


class Copy(Protocol):
    """Materialize the tile of `x` (already of ``plan.shape``) with one copy, into `out`."""

    def __call__(
        self, x: Array, plan: Plan, xp: ArrayNamespace, /, out: Array | None = None
    ) -> Array: ...


class Double(Protocol):
    """Tile `x` by block doubling inside the output; None where it should not run."""

    def __call__(
        self, x: Array, plan: Plan, run_bytes: int, /, out: Array | None = None
    ) -> Array | None: ...


class Unwrap(Protocol):
    """The plain arrays inside `x` and a function of their tiles, or None for a plain `x`."""

    def __call__(self, x: Array, /) -> tuple[tuple[Array, ...], Callable[..., Array]] | None: ...


class WholeTile(Protocol):
    """A backend's whole tile, for a backend that plans its own computation."""

    def __call__(self, x: Array, plan: Plan, xp: ArrayNamespace, /) -> Array: ...


class FastPath(NamedTuple):
    """
    A backend's measured replacements for parts of the standard-only tile.

    Every field is optional: an empty entry is the standard-only tile.

    Attributes
    ----------
    tile : callable or None
        The whole tile, for backends that plan their own computation (JAX).
    copy : callable or None
        The one copy of the broadcast view, also used for each staging level.
    stage_itemsize : callable or None
        Bytes per element of `x` where staging in a cache-sized array pays (eager
        CPU arrays), 0 where it does not. None: never stage.
    double : callable or None
        Block doubling inside the output, for a large `x` with short runs.
    unwrap : callable or None
        For an array of a subclass of the backend's array type: the plain arrays to
        tile and how to rebuild the result from their tiles (NumPy's masked arrays).
    layout : callable or None
        What of `x` besides the repeats fixes how it is tiled (shape, strides,
        dtype), as a key of the plan cache; None for an array whose calls are not
        to be cached. None: never cache.
    compile : callable or None
        A cached call's tile, where it is cheaper than the tile above with the plan
        given (one `numpy.repeat`, say); None where it is not.
    check_out : callable or None
        Raises where the backend cannot write the tile of `x` into `out`, beyond
        the checks of every backend: memory shared with `x`, autograd.
    max_view_dims : int or None
        The most axes the backend's broadcast view may have, where it is fewer than
        `MAX_DIMS`; more are tiled by concatenation first (`fit_rank`).
    parts : callable or None
        Whether the tile of `x` may be written in two parts, each by `copy` into a
        strided view of one output, in place (no temporary, nothing recorded by
        autograd): staging then takes part of a repeat that no divisor splits
        (`xtile._agnostic.in_parts`), or from its first block (`from_block`). None:
        never.
    fill_bytes : int or None
        The length from which the backend's copy writes a fill of single elements (a
        broadcast last axis) near memory speed: a tile is written from its first block
        only for shorter fills. None: `LONG_RUN_BYTES`.
    part_run_bytes : int or None
        The run from which the backend's copy is fast enough that staging part of a
        repeat (`xtile._agnostic.stage_cuts`) costs more than it saves. None:
        `PART_MAX_RUN_BYTES`.
    word_runs : frozenset of int or None
        The run sizes, in bytes, that the backend's copy moves as one machine word,
        fast: never staged in part. None: `NUMPY_WORD_RUNS`.
    repeat_blocks : frozenset of int or None
        The block sizes, in bytes, whose tile the backend's copy writes by staging the
        other axes and repeating the blocks in one pass, faster than from the first
        block (`xtile._agnostic.outer_block`). None: none.
    """

    tile: WholeTile | None = None
    copy: Copy | None = None
    stage_itemsize: Callable[[Array], int] | None = None
    double: Double | None = None
    unwrap: Unwrap | None = None
    layout: Callable[[Array], Hashable | None] | None = None
    compile: Callable[[Array, Plan], Callable[[Array], Array] | None] | None = None
    check_out: Callable[[Array, Array, str], None] | None = None
    max_view_dims: int | None = None
    parts: Callable[[Array], bool] | None = None
    fill_bytes: int | None = None
    part_run_bytes: int | None = None
    word_runs: frozenset[int] | None = None
    repeat_blocks: frozenset[int] | None = None
