"""Switching the planner's strategies off, for ablations (`benchmarks/ablation.py`) and tests."""

import contextlib
from collections.abc import Iterator
from typing import Any

from .. import _program, _run

__all__ = ["STRATEGIES", "switched_off"]

# the candidates `plan` may take besides the one copy
STRATEGIES = ("bytes", "native", "staged", "extended")


@contextlib.contextmanager
def switched_off(*names: str) -> Iterator[None]:
    """
    Plan without the strategies `names` (of `STRATEGIES`) inside this block.

    The planner's own functions are patched for the block, and every kept program is
    dropped on entry and exit, so that calls inside plan anew; not for use from
    several threads at once.

    Parameters
    ----------
    *names : str
        Names of `STRATEGIES`.

    Yields
    ------
    None
        Inside the block, `xtile.tile` plans without them.

    Raises
    ------
    ValueError
        If a name is not one of `STRATEGIES`.
    """
    if unknown := set(names) - set(STRATEGIES):
        msg = f"unknown strategies {sorted(unknown)}; they are {STRATEGIES}."
        raise ValueError(msg)
    candidates = _program.candidates

    def without(layout: Any, reps: Any, m: Any, fresh: bool) -> list[_program.Program]:
        return [p for p in candidates(layout, reps, m, fresh) if p.name not in names]

    def _forget() -> None:
        _run.KEPT.clear()
        _run.compiled.cache_clear()

    _forget()
    _program.candidates = without
    try:
        yield
    finally:
        _program.candidates = candidates
        _forget()
