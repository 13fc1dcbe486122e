"""The plan cache: programs of repeated calls, by everything they depend on."""

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from ._lib._typing import Array
from ._plan import Program

__all__ = ["PlanCache", "Planned"]


class Planned(NamedTuple):
    """
    A program and the call that runs it, made once (`xtile._agnostic.runner`).

    Attributes
    ----------
    program : Program
        The steps.
    run : callable
        ``run(x, out)``: the tile of `x` into a fresh array (`out` None) or `out`.
    """

    program: Program
    run: Callable[[Array, Array | None], Array]


class PlanCache:
    """
    A planning function's results, by its arguments; least recently used dropped first.

    The arguments are the key: everything a program depends on (the input's type,
    its `xtile._plan.Layout`, the repeats, whether the output is fresh, the
    strategies switched off), so that a program never runs on an input it was not
    planned for. `functools.lru_cache` keeps them: a hit is one C call, and it is
    safe to share between threads (a key two threads miss at once is planned
    twice, the same program). An exception is never kept.

    Parameters
    ----------
    plan : callable
        The planning function, called on a miss.
    maxsize : int
        The most programs kept (a few hundred bytes each).
    """

    def __init__(self, plan: Callable[..., Planned], maxsize: int = 256) -> None:
        self.lookup: Callable[..., Planned] = functools.lru_cache(maxsize=maxsize)(plan)

    def clear(self) -> None:
        """Drop every program and zero the counters."""
        self.lookup.cache_clear()  # type: ignore[attr-defined]

    def info(self) -> Any:
        """
        The counters: hits, misses, maxsize and current size.

        Returns
        -------
        functools._CacheInfo
            The counters, as `functools.lru_cache` reports them.
        """
        return self.lookup.cache_info()  # type: ignore[attr-defined]
