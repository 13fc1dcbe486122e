"""Switching the planner's strategies off, for ablations (`benchmarks/ablation.py`) and tests."""

import contextlib
from collections.abc import Iterator

from .._program import OFF

__all__ = ["STRATEGIES", "switched_off"]

# the candidates `plan` may take besides the one copy; slabs: how a big extended one runs;
# gather: its copies in any candidate; measured: the cheapest's rivals timed (`ranked`)
STRATEGIES = ("bytes", "gather", "native", "staged", "extended", "slabs", "measured", "host")


@contextlib.contextmanager
def switched_off(*names: str) -> Iterator[None]:
    """
    Plan without the strategies `names` (of `STRATEGIES`) in this block (thread or task).

    Parameters
    ----------
    *names : str
        Names of `STRATEGIES`.

    Yields
    ------
    None
        Inside the block, `xtile.tile` plans without them (and keeps those plans apart).

    Raises
    ------
    ValueError
        If a name is not one of `STRATEGIES`.
    """
    if unknown := set(names) - set(STRATEGIES):
        msg = f"unknown strategies {sorted(unknown)}; they are {STRATEGIES}."
        raise ValueError(msg)
    token = OFF.set(OFF.get() | frozenset(names))
    try:
        yield
    finally:
        OFF.reset(token)
