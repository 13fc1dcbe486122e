"""
NumPy's copy of one item repeated along a row, by item size: what the ``void`` price is.

A run of bytes moved as one item is copied from a stride-0 source (the item repeated
along the row). NumPy has loops for items of 1, 2, 4, 8 and 16 bytes; any other size
goes through a generic loop that costs per item. This prints, per size, the time of
``numpy.copyto`` of 4,000 items broadcast over rows of 48 MiB in all (one thread), in
ns per item and GB/s. Usage::

    python benchmarks/void_items.py
"""

import time

import numpy as np

TOTAL = 48 << 20
ROWS = 4000


def per_item(size: int, repeat: int = 5) -> tuple[float, float]:
    """Best ns per item and GB/s of the broadcast copy of `size`-byte items."""
    dtype = np.dtype(f"u{size}") if size in (1, 2, 4, 8) else np.dtype((np.void, size))
    src = np.zeros((ROWS, 1), dtype)
    dst = np.empty((ROWS, TOTAL // size // ROWS), dtype)
    best = float("inf")
    for _ in range(repeat + 1):  # the first call faults the pages in
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return best / dst.size * 1e9, dst.nbytes / best / 1e9


def main() -> None:
    """Print the table."""
    print(f"{'bytes':>5} {'ns/item':>8} {'GB/s':>6}")
    for size in (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64, 128):
        ns, rate = per_item(size)
        print(f"{size:>5} {ns:>8.2f} {rate:>6.1f}")


if __name__ == "__main__":
    main()
