"""``python -m xtile``: the self-check, ``bench`` and ``explain`` (`xtile._cli`)."""

import importlib.util
import os
import sys

if __name__ == "__main__":
    if importlib.util.find_spec("numpy") is None:  # every command checks against NumPy's tile
        sys.exit("python -m xtile needs NumPy: pip install numpy (xtile.tile itself does not).")
    from ._cli import main

    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader left (``| head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
