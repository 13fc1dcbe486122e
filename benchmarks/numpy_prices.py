"""
What NumPy's copies cost by item size and address: the measurements behind three prices.

1. ``void``: a run of bytes moved as one item, copied from a stride-0 source (the item
   repeated along a row). NumPy has loops for items of 1, 2, 4, 8 and 16 bytes; any
   other size goes through a generic loop that costs per item. Per size: the time of
   ``numpy.copyto`` of 4,000 items broadcast over rows of 48 MiB in all (one thread).
2. ``repeat``: ``numpy.repeat`` (the steps of ``numpy.tile``'s chain) moves blocks of 1,
   2, 4, 8, 16 and 32 bytes as items, and calls ``memcpy`` once for a block of any
   other size. Per size: ns per block of 32,768 blocks.
3. 4K aliasing: the copy of a 32 KiB source repeated over a 9.5 MB destination, by where
   the destination lies from the source modulo 4 KiB. A few bytes above it (16 here),
   loads wait on stores; xtile places a big new output 2 KiB from such a source
   (``_placed`` in ``xtile/_backends/numpy.py``).

Usage::

    python benchmarks/numpy_prices.py
"""

import time
from collections.abc import Callable

import numpy as np

TOTAL = 48 << 20
ROWS = 4000


def best(call: Callable[[], object], repeat: int = 5) -> float:
    """The best of `repeat` timings of `call`, after one call that faults pages in."""
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def void_item(size: int) -> tuple[float, float]:
    """Best ns per item and GB/s of the broadcast copy of `size`-byte items."""
    dtype = np.dtype(f"u{size}") if size in (1, 2, 4, 8) else np.dtype((np.void, size))
    src = np.zeros((ROWS, 1), dtype)
    dst = np.empty((ROWS, TOTAL // size // ROWS), dtype)
    t = best(lambda: np.copyto(dst, src))
    return t / dst.size * 1e9, dst.nbytes / t / 1e9


def repeat_block(size: int) -> float:
    """Best ns per block of ``numpy.repeat`` of `size`-byte blocks."""
    a = np.zeros((64, size), np.uint8)
    return best(lambda: a.repeat(512, 0)) / (64 * 512) * 1e9


def aliased(delta: int, n: int = 1 << 15, rows: int = 290) -> float:
    """Best µs of a 32 KiB source copied over `rows` rows, `delta` bytes above it mod 4 KiB."""
    dst = np.empty(n * rows + 4096, np.uint8)
    src_buf = np.zeros(n + 4096, np.uint8)
    at = (src_buf.ctypes.data - dst.ctypes.data + delta) % 4096
    rows_view, src = dst[: n * rows].reshape(rows, n), src_buf[4096 - at :][:n]
    assert (rows_view.ctypes.data - src.ctypes.data) % 4096 == delta
    return best(lambda: np.copyto(rows_view, src[None])) * 1e6


def main() -> None:
    """Print the three tables."""
    print(f"{'bytes':>5} {'void ns/item':>12} {'GB/s':>6} {'repeat ns/block':>15}")
    for size in (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64, 128):
        ns, rate = void_item(size)
        print(f"{size:>5} {ns:>12.2f} {rate:>6.1f} {repeat_block(size):>15.2f}")
    print(f"\n{'destination - source mod 4 KiB':>30} {'copy µs':>8}")
    for delta in (0, 16, 32, 48, 64, 512, 2048):
        print(f"{delta:>30} {aliased(delta):>8.0f}")


if __name__ == "__main__":
    main()
