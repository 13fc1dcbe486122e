"""``python -m xtile``: the self-check, ``bench`` and ``explain`` (`xtile._cli`)."""

import os
import sys

if __name__ == "__main__":
    from ._cli import main

    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader left (``| head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
