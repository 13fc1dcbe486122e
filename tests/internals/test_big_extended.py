"""Big outputs of extended programs, on any count of threads: the tile's bytes."""

import math
import threading
from typing import Any

import numpy as np
import pytest

import xtile
from xtile import _backends, _threads
from xtile._program import Replicate

NUMPY = _backends.load("numpy")
# outputs of 23-48 MB whose cheapest whole program is extended, some in slabs
SLABBED = [
    ((4000, 3), (1, 1000), "float32"),
    ((2000, 5), (1, 800), "float32"),
    ((51, 1, 21, 1), (1, 15, 45, 50), "uint8"),
    ((756, 6, 1), (1, 317, 4), "float32"),
    ((4000, 3), (1000,), "float32"),  # `repeats` shorter than the input: its first is 1
]


@pytest.mark.parametrize(("shape", "reps", "dtype"), SLABBED, ids=str)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_slabs_write_the_tile(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, threads: int
) -> None:
    """Fresh, into `out` and into a `out` that is a view: the bytes of `numpy.tile`."""
    x = (np.arange(math.prod(shape)) % 251).astype(dtype).reshape(shape)
    expected = np.tile(x, reps)
    with xtile.threads(threads):
        assert xtile.tile(x, reps).tobytes() == expected.tobytes()
        out = np.full(expected.shape, 7, dtype)
        assert xtile.tile(x, reps, out=out) is out
        assert out.tobytes() == expected.tobytes()
        wider = np.full((2 * expected.shape[0], *expected.shape[1:]), 7, dtype)
        xtile.tile(x, reps, out=wider[1::2])  # not C-ordered: no slabs, the same tile
        assert wider[1::2].tobytes() == expected.tobytes()
        assert np.array_equal(wider[::2], np.full_like(wider[::2], 7))  # untouched


def _layouts(x: np.ndarray[Any, Any]) -> dict[str, Any]:
    """`x`'s values in the layouts users pass: every one is planned by its own strides."""
    return {
        "reversed": np.ascontiguousarray(x[::-1])[::-1],
        "fortran": np.asfortranarray(x),
        "strided": np.repeat(x, 2, axis=-1)[..., ::2],
        "broadcast": np.broadcast_to(x[:1], x.shape),  # zero strides along the first axis
        "masked": np.ma.masked_greater(x, 90),
        "padded": x.astype([("a", "u1"), ("b", x.dtype)]) if x.dtype != bool else x,
    }


@pytest.mark.parametrize(("shape", "reps", "dtype"), SLABBED[:2], ids=str)
@pytest.mark.parametrize("kind", list(_layouts(np.zeros((2, 2)))))
def test_slabs_of_any_layout(
    shape: tuple[int, ...], reps: tuple[int, ...], dtype: str, kind: str
) -> None:
    """Non-contiguous, zero-stride, masked and padded inputs: the tile's bytes."""
    x = _layouts((np.arange(math.prod(shape)) % 100).astype(dtype).reshape(shape))[kind]
    if kind == "padded":
        x = np.array(x, dtype=np.dtype(x.dtype, align=True))  # padding bytes between fields
    got, expected = xtile.tile(x, reps), np.tile(x, reps)
    assert got.tobytes() == expected.tobytes()
    if kind == "masked":
        assert (np.ma.getmaskarray(got) == np.ma.getmaskarray(expected)).all()
    out = np.empty_like(np.asarray(expected))
    if kind != "masked":  # `out` takes plain arrays
        assert xtile.tile(x, reps, out=out).tobytes() == expected.tobytes()


def test_threads_take_the_slabs_in_turns() -> None:
    """More calls than threads: at most `count()` at once, every call once."""
    lock, running, most, done = threading.Lock(), [0], [0], []

    def call(i: int) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.01)
        with lock:
            running[0] -= 1
            done.append(i)

    with xtile.threads(2):
        _threads.run([lambda i=i: call(i) for i in range(7)])  # type: ignore[misc]
    assert sorted(done) == list(range(7))
    assert most[0] <= 2


def test_replicate_in_slabs_of_one_place_copies_the_rest() -> None:
    """A replication spread over a whole axis (one place): the bytes NumPy's tile writes."""
    out = np.zeros((1, 9, 4), np.int16)
    out[0, :2] = [[1, 2, 3, 4], [5, 6, 7, 8]]
    NUMPY.replicate(out, Replicate((1,), 1, 2, 9))  # type: ignore[misc]
    assert out.tobytes() == np.tile(out[:, :2], (1, 5, 1))[:, :9].tobytes()
