"""
Draw the figures of the documentation from xtile itself: ``python docs/make_figures.py``.

The build runs it (``docs/conf.py``), so no figure is drawn by hand or goes stale.
"""

import csv
import sys
from pathlib import Path

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import xtile
from xtile._program import view_shapes

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


def _performance(rows: list[dict[str, str]], path: Path) -> None:
    """Draw `performance`'s two panels from its rows."""
    fig, (big, ratio) = plt.subplots(
        2, 1, figsize=(7.4, 7.8), height_ratios=[1, 1.15], layout="constrained"
    )

    measured = [r for r in rows if r["xtile_gbps"]]
    ys = np.arange(len(measured))[::-1]
    height = 0.27
    for k, (label, key, color) in enumerate(
        [
            ("machine's bound", "bound_gbps", "0.7"),
            ("xtile", "xtile_gbps", "tab:blue"),
            ("native tile", "native_gbps", "tab:orange"),
        ]
    ):
        values = [float(r[key]) for r in measured]
        bars = big.barh(ys + (1 - k) * height, values, height, color=color, label=label)
        big.bar_label(bars, fmt="%.1f", padding=3)
    big.set_yticks(ys, [r["backend"] for r in measured])
    big.set_xlim(0, 14.5)
    big.set_xlabel("GB/s of output, median (higher is faster)")
    big.set_title("Outputs of 32 MB or more (2-core CPU)", pad=30)
    big.legend(
        loc="lower center", bbox_to_anchor=(0.5, 1), ncols=3, frameon=False, borderaxespad=0.2
    )

    ys = np.arange(len(rows))[::-1]
    values = [float(r["vs_native"]) for r in rows]
    gpu = [r["machine"] != "CPU" for r in rows]
    ratio.barh(
        ys,
        [v - 1 for v in values],  # from 1: right of it xtile is faster, left slower
        0.6,
        left=1,
        color=["tab:green" if g else "tab:blue" for g in gpu],
    )
    for y, v in zip(ys, values, strict=True):
        ratio.text(
            v * 1.04 if v >= 1 else v / 1.04,
            y,
            f"{v:.2f}",
            ha="left" if v >= 1 else "right",
            va="center",
        )
    ratio.axvline(1, color="k", linewidth=1)
    ratio.set_xscale("log")
    ratio.set_xlim(0.45, 12)
    ticks = [0.5, 1, 2, 4, 8]
    ratio.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ratio.minorticks_off()
    ratio.set_yticks(
        ys, [f"{r['backend']}{' (GPU)' if g else ''}" for r, g in zip(rows, gpu, strict=True)]
    )
    ratio.set_xlabel("xtile / native tile, log scale (above 1: xtile is faster)")
    ratio.set_title("The 14 benchmark cases, geometric mean", pad=12)
    for ax in (big, ratio):
        ax.spines[["top", "right"]].set_visible(False)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def performance(data: Path, path: Path) -> None:
    """
    The performance page's figure, from measured numbers (``_static/performance.csv``).

    Top: median GB/s on outputs of 32 MB or more: the machine's bound, xtile and the
    native tile. Bottom: xtile / native tile, geometric mean over the 14 cases of
    ``python -m xtile bench``, on a log axis (0.5x and 2x lie equally far from 1).
    The CSV holds the numbers of the page's table (the CPU rows from the 2-core CI VM,
    the GPU rows from one NVIDIA H200), so the build runs no benchmark: measure again,
    then update both.
    """
    with data.open(newline="") as f:
        rows = list(csv.DictReader(f))
    with mpl.rc_context({"font.size": 12, "axes.titlesize": 13}):  # 12 pt at 1:1 on the page
        _performance(rows, path)


def favicon(path: Path) -> None:
    """The site's icon: a 2 x 2 block tiled 2 x 2, as the tile draws it."""
    tiled = xtile.tile(np.array([[0, 1], [2, 3]]), (2, 2))
    plt.imsave(path, np.kron(tiled, np.ones((8, 8))), cmap="tab10", vmin=0, vmax=9)


def main() -> int:
    """Draw every figure into ``docs/_static``."""
    STATIC.mkdir(exist_ok=True)
    view_chain(STATIC / "view_chain.png")
    performance(STATIC / "performance.csv", STATIC / "performance.png")
    favicon(STATIC / "favicon.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
