"""
What NumPy's copies cost by item size and address: the measurements behind four prices.

1. ``void``: a run of bytes moved as one item, copied from a stride-0 source (the item
   repeated along a row). NumPy has loops for items of 1, 2, 4, 8 and 16 bytes; any
   other size goes through a generic loop that costs per item. Per size: the time of
   ``numpy.copyto`` of 4,000 items broadcast over rows of 48 MiB in all (one thread).
2. ``repeat``: ``numpy.repeat`` (the steps of ``numpy.tile``'s chain) moves blocks of 1,
   2, 4, 8, 16 and 32 bytes as items, and calls ``memcpy`` once for a block of any
   other size. Per size: ns per block of 32,768 blocks. Those blocks also cost
   a loop per source block, which a few repeats each do not hide (the price of a
   ``repeat`` step's "elements"): per size, the ns per source block of ``numpy.repeat``
   of 32,768 blocks by 2, over the two blocks it writes.
3. 4K aliasing: the copy of a 32 KiB source repeated over a 9.5 MB destination, by where
   the destination lies from the source modulo 4 KiB. A few bytes above it (16 here),
   loads wait on stores; xtile places a big new output 2 KiB from such a source
   (``_placed`` in ``xtile/_backends/numpy.py``).
4. ``replicate``'s aliased bytes: a replication inside the output copies each place's
   block a fixed distance up. Where that distance is a few bytes above a multiple of
   4 KiB, every load waits on the store before it. Per distance: the 1-D copy of 114
   items of 8 KiB, as ``_replicate`` makes it, and the ns per byte it costs over the copy
   at a distance of a whole 4 KiB: the price of a replicated byte that is aliased.

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


def repeat_source(size: int) -> float:
    """Best ns per source block of ``numpy.repeat`` by 2, over the blocks it writes."""
    a = np.zeros((1 << 15, size), np.uint8)
    return best(lambda: a.repeat(2, 0)) / (1 << 15) * 1e9 - 2 * repeat_block(size)


def aliased(delta: int, n: int = 1 << 15, rows: int = 290) -> float:
    """Best µs of a 32 KiB source copied over `rows` rows, `delta` bytes above it mod 4 KiB."""
    dst = np.empty(n * rows + 4096, np.uint8)
    src_buf = np.zeros(n + 4096, np.uint8)
    at = (src_buf.ctypes.data - dst.ctypes.data + delta) % 4096
    rows_view, src = dst[: n * rows].reshape(rows, n), src_buf[4096 - at :][:n]
    assert (rows_view.ctypes.data - src.ctypes.data) % 4096 == delta
    return best(lambda: np.copyto(rows_view, src[None])) * 1e6


def replicated(delta: int, count: int = 114, size: int = 8192) -> float:
    """Best ns per byte of `count` items of `size` bytes copied `size + delta` bytes up."""
    buf = np.zeros(count * 3 * size + 2 * size, np.uint8)
    item = np.dtype((np.void, size))
    to = np.ndarray((count,), item, buf, size + delta, (3 * size,))
    of = np.ndarray((count,), item, buf, 0, (3 * size,))
    return best(lambda: np.copyto(to, of)) / (count * size) * 1e9


def main() -> None:
    """Print the four tables."""
    print(f"{'bytes':>5} {'void ns/item':>12} {'GB/s':>6} {'repeat ns/block':>15} {'/source':>8}")
    for size in (1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64, 128):
        ns, rate = void_item(size)
        source = f"{repeat_source(size):>8.2f}" if size in (1, 2, 4, 8, 16, 32) else ""
        print(f"{size:>5} {ns:>12.2f} {rate:>6.1f} {repeat_block(size):>15.2f} {source}")
    print(f"\n{'destination - source mod 4 KiB':>30} {'copy µs':>8}")
    for delta in (0, 16, 32, 48, 64, 512, 2048):
        print(f"{delta:>30} {aliased(delta):>8.0f}")
    print(f"\n{'replicated distance mod 4 KiB':>30} {'ns/byte':>8} {'extra':>8}")
    plain = replicated(0)
    for delta in (0, 8, 16, 24, 32, 64, 2048, 4064):
        ns = replicated(delta)
        print(f"{delta:>30} {ns:>8.3f} {ns - plain:>8.3f}")


if __name__ == "__main__":
    main()
