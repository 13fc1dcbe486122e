"""
Dask: exact on every chunking, chunks kept, a handful of tasks, lazy, and on a real cluster.

The parity matrix runs on ``dask.array:chunked`` in test_tile.py; these tests pin what only
Dask has: the output's chunks, the number of tasks, when anything is computed.
"""

import itertools
import math
import resource
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xtile
from xtile._testing import arange, same_bits

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from dask.callbacks import Callback  # noqa: E402


def _tasks(y: Any) -> int:
    return len(y.__dask_graph__())


def _check(x: Any, reps: Any) -> Any:
    """Tile `x` with no compute, check it bit for bit against numpy.tile; return the tile."""
    computes: list[object] = []
    with Callback(start=computes.append):
        y = xtile.tile(x, reps)
    assert not computes, "xtile.tile computed at call time"
    expected = np.tile(x.compute(), reps)
    assert y.shape == expected.shape
    assert same_bits(np.asarray(y.compute()), expected)
    return y


@pytest.mark.parametrize(
    ("shape", "chunks", "reps"),
    [  # the issue's failing cases: multi-chunk inputs with an empty output
        ((3, 2), (2, 1), (0, 2)),
        ((2,), (1,), (0,)),
        ((3, 0), (2, 1), (2, 3)),
        ((0, 4), (1, 3), (3, 4)),
        ((3, 4), (2, 3), (1, 0, 2)),
        # one element per chunk; repeats longer and shorter than the rank
        ((3, 4), (1, 1), (2, 3)),
        ((2, 3, 4), (1, 2, 3), (2,)),
        ((), (), (3, 2)),
        ((5,), (5,), ()),
    ],
)
def test_issue_chunkings(shape: tuple[int, ...], chunks: Any, reps: Any) -> None:
    """Each of these failed in Dask's reshape before Dask had a path of its own."""
    _check(da.from_array(arange(shape), chunks=chunks), reps)


def test_chunks_are_the_inputs_repeated() -> None:
    """(4000, 4000) in (1000, 1000) chunks by (2, 3): 1000-chunks out, not 2000."""
    x = da.ones((4000, 4000), chunks=1000, dtype=np.uint8)
    y = xtile.tile(x, (2, 3))
    assert y.chunks == ((1000,) * 8, (1000,) * 12)
    assert y.npartitions == x.npartitions * 6
    z = xtile.tile(da.from_array(np.arange(7), chunks=3), 5)
    assert z.chunks == ((3, 3, 1) * 5,)
    assert same_bits(np.asarray(z), np.tile(np.arange(7), 5))


def test_one_chunk_axis_shares_output_chunks() -> None:
    """(3,) by 400,000: a handful of tasks (dask.array.tile: 400,001), chunks under the limit."""
    x = da.from_array(np.arange(3, dtype=np.int64), chunks=-1)
    y = _check(x, 400_000)
    limit = dask.utils.parse_bytes(dask.config.get("array.chunk-size"))
    assert max(y.chunks[0]) * 8 <= limit
    assert _tasks(y) <= 4
    with dask.config.set({"array.chunk-size": "1KiB"}):
        y = _check(x, 1000)
    assert max(y.chunks[0]) * 8 <= 1024
    assert y.npartitions == math.ceil(3000 * 8 / 1024)


def test_largest_input_chunk_bounds_output_chunks() -> None:
    """An input chunk past array.chunk-size is not split, and repeats never grow it."""
    x = da.from_array(arange((64, 64)), chunks=(64, 64))
    with dask.config.set({"array.chunk-size": "1KiB"}):
        y = _check(x, (3, 5))
    assert y.chunks == ((64,) * 3, (64,) * 5)


def test_repeats_as_dask_array_computed_once() -> None:
    """Repeats given lazily are computed once (they set the shape), the tile stays lazy."""
    x = da.from_array(arange((3, 4)), chunks=(2, 3))
    reps = da.from_array(np.array([2, 3]), chunks=1)
    computes: list[object] = []
    with Callback(start=computes.append):
        y = xtile.tile(x, reps)
    assert len(computes) == 1
    assert same_bits(np.asarray(y.compute()), np.tile(arange((3, 4)), (2, 3)))


def test_unknown_chunks() -> None:
    """Unknown (nan) chunk sizes: the output's shape cannot be known, a clear TypeError."""
    x = da.from_array(np.arange(6), chunks=3)
    with pytest.raises(TypeError, match=r"unsupported lazy shape \(nan,\)"):
        xtile.tile(x[x > 2], 2)


def test_blocks_keep_their_namespace() -> None:
    """Each block is tiled in its own namespace: a Dask array of CuPy blocks stays on the GPU."""
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001  # CUDARuntimeError without a driver
        pytest.skip("no CUDA device for cupy")
    x = da.from_array(cupy.arange(12).reshape(3, 4), chunks=(2, 3))
    y = xtile.tile(x, (2, 3))
    block = y.blocks[0, 0].compute()
    assert isinstance(block, cupy.ndarray)
    assert same_bits(cupy.asnumpy(y.compute()), np.tile(np.arange(12).reshape(3, 4), (2, 3)))


@st.composite
def _chunked(draw: st.DrawFn) -> tuple[Any, tuple[int, ...]]:
    shape = draw(st.lists(st.integers(0, 6), max_size=4))
    chunks = []
    for d in shape:
        cuts = draw(st.sets(st.integers(1, d - 1), max_size=3)) if d > 1 else set()
        edges = [0, *sorted(cuts), d]
        chunks.append(tuple(b - a for a, b in itertools.pairwise(edges)))
    reps = tuple(draw(st.lists(st.integers(0, 4), max_size=5)))
    return da.from_array(arange(tuple(shape)), chunks=tuple(chunks)), reps


@given(case=_chunked())
def test_property_every_chunking(case: tuple[Any, tuple[int, ...]]) -> None:
    """Any chunking, any repeats: exact, lazy, and every output chunk one input chunk repeated."""
    x, reps = case
    y = _check(x, reps)
    lead = len(y.shape) - x.ndim
    for axis, out_chunks in enumerate(y.chunks[lead:]):
        in_chunks = x.chunks[axis]
        if 0 in y.shape:
            continue
        if len(in_chunks) > 1:
            r = reps[axis + len(reps) - x.ndim] if axis + len(reps) - x.ndim >= 0 else 1
            assert out_chunks == in_chunks * r
        else:
            assert all(c % in_chunks[0] == 0 for c in out_chunks)


@pytest.mark.cluster
def test_local_cluster_output_past_worker_memory() -> None:
    """
    A 4 GB output summed on workers limited to 1 GB each: finishes, no worker killed.

    The output is never whole anywhere: each of its 1000 tasks copies one 4 MB output
    chunk, which the sum reduces at once.
    """
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit="1GB",
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        before = set(client.scheduler_info()["workers"])
        x = da.from_array(np.arange(1000 * 100, dtype=np.float64).reshape(1000, 100) % 7)
        y = xtile.tile(x, (1, 5000))  # 1000 x 500,000 float64: 4 GB, in copies of 4 MB
        assert y.nbytes == 4 * 10**9
        assert max(math.prod(b) for b in itertools.product(*y.chunks)) * 8 <= 4 << 20
        assert y.sum().compute() == float((np.arange(10**5) % 7).sum() * 5000)
        assert set(client.scheduler_info()["workers"]) == before, "a worker was restarted"
        spilled = client.run(lambda dask_worker: dask_worker.data.spilled_total.disk)
        assert not any(spilled.values()), f"the workers spilled {spilled}"
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10)
        peak_mb = max(peaks.values()) / 1e6
        print(f"4 GB output summed; peak worker memory {peak_mb:.0f} MB")  # noqa: T201  # -s
        assert peak_mb < 1000, peaks
        small = xtile.tile(da.from_array(arange((3, 4)), chunks=(2, 3)), (2, 3))
        assert same_bits(np.asarray(small.compute()), np.tile(arange((3, 4)), (2, 3)))
