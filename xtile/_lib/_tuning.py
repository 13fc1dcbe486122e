"""
Every tuning threshold of the tile, with the benchmark case that set it.

The cases are those of ``python -m xtile bench``; their timings, before and after
each threshold, are in ``docs/performance.md`` ("The thresholds"). A threshold
changes only with a new measurement there.
"""

__all__ = [
    "DOUBLING_RUN_BYTES",
    "DOUBLING_STEP_BYTES",
    "LEVEL_GROWTH",
    "LONG_RUN_BYTES",
    "MAX_DIMS",
    "NUMPY_REPEAT_BLOCKS",
    "NUMPY_WORD_RUNS",
    "OUTER_MAX_BLOCK_BYTES",
    "OUTER_MAX_RUN_BYTES",
    "OUTER_MIN_BYTES",
    "PARTS_BYTES",
    "PART_MAX_RUN_BYTES",
    "PART_RUN_BYTES",
    "PLAN_CACHE_SIZE",
    "SMALL_BYTES",
    "SMALL_ELEMENTS",
    "STAGE_MAX_BYTES",
    "TORCH_FILL_BYTES",
    "TORCH_PART_RUN_BYTES",
]

# The largest rank the tile's broadcast view may have: NumPy's limit, and so Dask's,
# CuPy's and array-api-strict's (PyTorch and JAX have none this low). A tile whose
# view would have more first tiles some axes by concatenation (`_agnostic.fit_rank`).
MAX_DIMS = 64

# Outputs smaller than this are one direct copy: a call's fixed cost (planning,
# one more copy call) outweighs any gain. Set by (8, 8) x (2, 2).
SMALL_BYTES = 1 << 16

# Outputs of fewer elements are one direct copy whatever their dtype: checked before
# the element size is looked up, which costs a tenth of an (8, 8) x (2, 2) tile. Even
# for complex128 (16 bytes) they are under SMALL_BYTES; items larger than that (NumPy
# text) make runs that are long already.
SMALL_ELEMENTS = SMALL_BYTES // 16

# A broadcast copy whose contiguous runs are this long writes at memory speed, so
# it is neither staged nor doubled. Set by (1000, 1000) x (4, 4) float32 (4000-byte
# runs) against (2, 3, 4, 5) x (10, 10, 10, 10) (20-byte runs).
LONG_RUN_BYTES = 512

# A staging array stays in the L1/L2 cache, and the peak memory of a tile stays the
# output plus a small constant (tests/test_memory.py allows 64 KiB). A design bound.
STAGE_MAX_BYTES = 1 << 15

# Where a staging level stages part of an axis's repeats (a vector tiled 10^5 times),
# it stages the fewest that make the final copy's runs this long. Set by (3,) x
# (39639,) float64: 167 us by `numpy.repeat` (`numpy.tile` 133), 35 us staged 543 long
# (4 KiB runs); 512 B to 4 KiB runs alike, 16-32 KiB slower on the smallest outputs.
PART_RUN_BYTES = 1 << 12

# Part of a repeat is staged only for runs shorter than this (and not of 2, 4, 8, 16
# bytes, `NUMPY_WORD_RUNS`): longer runs and words copy well as they are, and on
# outputs under 1 MB the extra level costs more. Set by a 500-case sweep (seed 23):
# gains at 24-84 byte runs ((3,) x (39639,) float64, (1, 21) x (1, 12825) float32:
# 1.14 -> 1.56 of `numpy.tile`), losses at 144-272 ((17, 2) x (377, 1) int64 and
# (23,) x (711,) float64: 1.05 -> 0.7 of `torch.tile`) and at words ((2,) x (7192,)
# int64: 1.22 -> 0.90 of `numpy.tile`).
PART_MAX_RUN_BYTES = 128
# PyTorch copies runs of 64 bytes and more fast enough that part staging's extra copy (a
# few microseconds of calls) costs more below 1 MB: (1, 4) x (1, 11357) complex128, 0.7
# MB, 1.39 -> 1.06 of `torch.tile`; (2, 1, 5, 1) x (3344, 1, 1, 1) float64 1.71 -> 1.36;
# NumPy gained on the same cases (1.12 -> 1.80, 1.29 -> 1.36). Seed 23's 39 cases with a
# part staged, on and off.
TORCH_PART_RUN_BYTES = 64

# Where no divisor of the repeat fits, the output is written in two parts
# (`_agnostic.in_parts`) only from this size on: the second part and its planning
# cost 10-50 us a call. Set by (11,) x (1163,) float64, 0.1 MB: 2.5x `torch.tile`'s
# time in parts; (3,) x (39631,) float64, 0.95 MB: 107 -> 39 us in parts. Only for runs
# under 32 bytes that are not machine words: (4,) x (11338,) complex128 (64-byte
# runs) and (20, 3, 4) x (2319, 1, 1) int8 copy as fast or faster in one piece.
PARTS_BYTES = 1 << 19

# Where `x` is too large to stage and its runs are short, the output is written as
# its first block (`x` tiled by the repeats inside its outermost axis of length above
# 1), then that block copied to its other places (`_agnostic.outer_block`): the short
# runs are written once, not once per outer repeat, as in `numpy.tile`'s passes. Only
# for outputs of OUTER_MIN_BYTES or more (two copies and a reshape cost 5-10 us a
# call: PyTorch lost on 0.4-0.8 MB outputs); for runs under OUTER_MAX_RUN_BYTES (longer
# ones copy near memory speed as they are: (4, 4, 4) x (7, 1779, 1) complex128,
# 256-byte runs, 1.6 -> 1.0 of `numpy.tile`; runs of 80-128 bytes gained and lost
# alike), and fills of single elements under LONG_RUN_BYTES, or TORCH_FILL_BYTES in
# PyTorch (`FastPath.fill_bytes`); and for blocks of at most OUTER_MAX_BLOCK_BYTES (the
# largest measured). Set by the cases of two sweeps (seed 23, 500 cases; seed 101,
# 3000 cases) it could apply to, with no thresholds, and checked on a third (seed 202):
# every case where NumPy was below 0.8 of `numpy.tile` had runs of 32 bytes or less,
# e.g. (66679, 1, 1, 1) x (9, 1, 1, 2) int8 0.26 -> 2.02, (1, 418, 1, 1, 2) x (1, 52,
# 6, 1, 1) complex128 0.48 -> 1.33 (PyTorch 1.10 -> 3.49 of `torch.tile`), (3, 46, 1, 2)
# x (11, 1, 37, 1) complex128 0.40 -> 0.99 (PyTorch 1.12 -> 2.45):
# benchmarks/outer_block.py.
OUTER_MIN_BYTES = 1 << 20
OUTER_MAX_RUN_BYTES = 64
OUTER_MAX_BLOCK_BYTES = 1 << 22
# PyTorch writes a fill of single elements this long near memory speed: (8424, 1) x
# (3, 8) int64, 64-byte fills, in 45 us, from the first block in 68 (`torch.tile` 54),
# where NumPy gained from the block on fills of 64-408 bytes ((3, 32, 1) x (15, 6, 51)
# complex64: 0.70 -> 1.44 of `numpy.tile`).
TORCH_FILL_BYTES = 64
# Each staging level multiplies the size by at least this much, or its extra copy
# costs more than it saves. Set by (2, 2, 2, 2, 2, 2) x (4, 4, 4, 4, 4, 4).
LEVEL_GROWTH = 8

# Runs shorter than this copy faster by block doubling inside the output than by
# the broadcast copy. Set by (4000, 3) x (1, 1000) (12-byte runs: doubling wins) and
# (4000, 8) x (1, 100) float32 (32-byte runs: the broadcast copy wins, PyTorch).
DOUBLING_RUN_BYTES = 32

# Each doubling step is one call, a few microseconds: doubling pays only where the
# output has this many bytes per step (a step costs about the broadcast copy of as
# many). Set by (3,) float32 tiled to 128 KiB (14 steps: the copy 32 us, doubling 94)
# and to 512 KiB (16 steps: the copy 105 us, doubling 83), PyTorch and NumPy alike.
DOUBLING_STEP_BYTES = 1 << 15

# NumPy copies runs of these sizes as one machine word, faster than doubling. Set
# by (4000, 2) x (1, 1500) and (4000, 4) x (1, 750) float32 against (4000, 3) x
# (1, 1000).
NUMPY_WORD_RUNS = frozenset({2, 4, 8, 16})

# The block sizes whose `numpy.repeat` loops NumPy specialises (faster than memcpy):
# where the other axes of a tile fit the stage, NumPy tiles them first and repeats
# these blocks in one pass (`_fast.numpy._copier`), as `numpy.tile`'s last pass does.
NUMPY_REPEAT_BLOCKS = frozenset({1, 2, 4, 8, 16, 32})
# Dask: repeats of a one-chunk axis share an output chunk up to this many bytes (or
# array.chunk-size, if smaller). Fewer, larger chunks save a task each; an output
# block that is an input block as it is costs no copy at all (an alias), so large
# chunks are not grouped. Set by (3,) x 400,000 (3 tasks, not 400,001) against
# (2000, 2000) x (2, 3) float64 (six aliases of the 32 MB block sum in a third of
# the time of two copied 96 MB blocks): benchmarks/dask_tile.py.
DASK_GROUP_BYTES = 4 << 20

# Plans cached for repeated calls (`xtile._core.recall`): keyed by layout and repeats,
# a few hundred bytes each. A design bound: more distinct layouts than this in a loop
# would miss anyway.
PLAN_CACHE_SIZE = 256
