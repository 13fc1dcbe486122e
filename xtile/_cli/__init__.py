"""The command line, apart from the tile: ``python -m xtile`` (check, bench, explain)."""

from ._main import main

__all__ = ["main"]
