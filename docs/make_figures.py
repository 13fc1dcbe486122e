"""
Draw the figures of the documentation from xtile itself: ``python docs/make_figures.py``.

The build runs it (``docs/conf.py``), so no figure is drawn by hand or goes stale.
"""

import sys
from pathlib import Path

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import xtile
from xtile._agnostic import view_shapes

STATIC = Path(__file__).parent / "_static"


def _grid(ax: plt.Axes, a: np.ndarray, title: str, cmap: str = "tab10") -> None:
    """A 2-D array as coloured cells, each cell labelled with its value."""
    ax.imshow(a % 10, cmap=cmap, vmin=0, vmax=9)
    for (i, j), v in np.ndenumerate(a):
        ax.text(j, i, str(v), ha="center", va="center", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)


def view_chain(path: Path) -> None:
    """x (2, 3) tiled by (2, 3): x, the broadcast view (r0, d0, r1, d1), the output."""
    x = np.arange(6).reshape(2, 3)
    reps = (2, 3)
    spread, view_shape = view_shapes(x.shape, reps)
    view = np.broadcast_to(x.reshape(spread), view_shape)
    out = xtile.tile(x, reps)
    assert np.array_equal(out, view.reshape(out.shape))
    fig, axes = plt.subplots(1, 3, figsize=(9, 2.6), width_ratios=[1, 1.6, 3])
    _grid(axes[0], x, f"x, shape {x.shape}")
    _grid(
        axes[1],
        x.reshape(spread)[0, :, 0, :],
        f"reshape to {spread}\nbroadcast to {view_shape}\nstrides {view.strides} (0: repeated)",
    )
    _grid(axes[2], out, f"one copy of the view: tile, shape {out.shape}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def favicon(path: Path) -> None:
    """The site's icon: a 2 x 2 block tiled 2 x 2, as the tile draws it."""
    tiled = xtile.tile(np.array([[0, 1], [2, 3]]), (2, 2))
    plt.imsave(path, np.kron(tiled, np.ones((8, 8))), cmap="tab10", vmin=0, vmax=9)


def main() -> int:
    """Draw every figure into ``docs/_static``."""
    STATIC.mkdir(exist_ok=True)
    view_chain(STATIC / "view_chain.png")
    favicon(STATIC / "favicon.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
