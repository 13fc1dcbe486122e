"""
Time `xtile.tile` against each backend's own tile and a plain copy of the output size.

The same suite as ``python -m xtile bench``; all three are timed side by side in one
run (the machine is noisy: compare the ratios). Usage::

    python benchmarks/bench_tile.py [--backends numpy,torch-1thread] [--csv FILE]
        [--plot FILE.png] [--repeat 5]
"""

import sys

from xtile._cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
