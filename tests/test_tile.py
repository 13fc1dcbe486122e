"""`xtile.tile` and `xtile.tile_shape` against `numpy.tile` and each backend's own tile."""

import itertools
import math
from typing import Any

import numpy as np
import pytest
from array_api_extra.testing import lazy_xp_function
from hypothesis import assume, given
from hypothesis import strategies as st

import xtile
from xtile import _backends
from xtile._testing import (
    SPEC_EXAMPLES,
    Backend,
    SpecExample,
    arange,
    assert_tile,
    reps_tuple,
    same_bits,
    to_numpy,
)

from .conftest import absent, impls

# Every test here runs the fast paths and the standard-only tile; `xtile.tile` runs
# under `jax.jit` on JAX and may not compute on Dask (its repeats are static).
pytestmark = pytest.mark.usefixtures("impl")
lazy_xp_modules = [xtile]
lazy_xp_function(xtile.tile)


class eager:
    """`xtile.tile` outside the lazy patches, for repeats given as arrays (traced by jit)."""

    tile = xtile.tile


# (input shape, repeats): ranks 0 to 6, zeros, promotion both ways, pure broadcasts
CASES = [
    ((), ()),
    ((), 3),
    ((), (2, 3)),
    ((), (0,)),
    ((3,), ()),
    ((3,), 2),
    ((3,), (2,)),
    ((3,), (2, 2)),
    ((3,), (0,)),
    ((0,), (5,)),
    ((2, 3), 2),
    ((2, 3), (1, 2)),
    ((2, 3), (2, 1, 2)),
    ((2, 3), (0, 2)),
    ((2, 3), (1, 1)),
    ((2, 0, 3), (1, 2, 1)),
    ((1, 1000), (40, 1)),
    ((4, 1), (1, 300)),
    ((2, 1, 3, 1), (1, 2, 1, 2)),
    ((2, 3, 1, 2, 1, 2), (1, 2, 3, 1, 2, 1)),
    ((2,), (1, 1, 1, 1, 1, 3)),
    ((2, 2, 2, 2, 2, 2), 2),
    ((4, 2, 3), (2, 2)),
    ((5, 2, 3, 4), (1, 2, 3)),
    ((2, 3, 4), (5, 1, 2, 3)),
]
CASE_IDS = [f"{s}x{r}" for s, r in CASES]

DTYPE_NAMES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "str", "bytes", "object", "StringDType",
]  # fmt: skip


def test_lazy_patches_are_active(library: Backend, xp: Any, impl: str) -> None:
    """`xtile.tile` here is jitted on JAX and compute-guarded on Dask (`lazy_xp_function`)."""
    del xp  # the fixture applies the patches
    lazy = library.modname in {"jax.numpy", "dask.array"}
    assert (xtile.tile is not eager.tile) == (lazy or impl == "cached")


class TestTile:
    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=CASE_IDS)
    def test_matches_numpy(self, xp: Any, make: Any, shape: Any, reps: Any) -> None:
        x = make(arange(shape))
        assert_tile(xtile.tile(x, reps), x, reps, xp)

    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=CASE_IDS)
    def test_matches_native(
        self, xp: Any, make: Any, library: Backend, shape: Any, reps: Any
    ) -> None:
        if library is Backend.SPARSE and not shape and not reps_tuple(reps):
            pytest.skip("sparse.tile of a 0-D input by () has shape (1,), numpy.tile ()")
        x = make(arange(shape))
        native = xp.tile(x, reps_tuple(reps))
        assert same_bits(to_numpy(xtile.tile(x, reps)), to_numpy(native))

    def test_xp_argument(self, xp: Any, make: Any) -> None:
        x = make(arange((2, 3)))
        assert_tile(xtile.tile(x, (2, 1), xp=xp), x, (2, 1), xp)

    @pytest.mark.parametrize("name", DTYPE_NAMES)
    def test_dtype(self, xp: Any, make: Any, all_dtypes: Any, name: str) -> None:
        if name not in all_dtypes:
            pytest.skip(f"no {name} on this backend")
        x = make(arange((2, 3)) % 7, all_dtypes[name])
        y = xtile.tile(x, (2, 1, 2))
        assert_tile(y, x, (2, 1, 2), xp)
        if name not in {"str", "bytes", "object", "StringDType"}:  # no native tile of text
            assert same_bits(to_numpy(y), to_numpy(xp.tile(x, (2, 1, 2))))

    @pytest.mark.parametrize(
        "view",
        [
            lambda xp, x: xp.permute_dims(x, (1, 0)),
            lambda _, x: x[::2, 1::2],
            lambda xp, x: xp.flip(x, axis=1),
            lambda xp, x: xp.broadcast_to(x[:1, :], (3, 6)),
            lambda xp, x: xp.permute_dims(x, (1, 0))[1:, ::3],
        ],
        ids=["transposed", "strided", "flipped", "broadcast", "transposed-strided"],
    )
    @pytest.mark.parametrize("reps", [(2, 3), (1, 1), (3, 1, 1), (0, 2)])
    def test_non_contiguous(self, xp: Any, make: Any, view: Any, reps: Any) -> None:
        x = view(xp, make(arange((4, 6))))
        assert_tile(xtile.tile(x, reps), x, reps, xp)

    @pytest.mark.parametrize(
        ("shape", "reps"), [((2, 3), (1, 1)), ((2, 3), (2, 2)), ((1, 1000), (400, 1)), ((), ())]
    )
    def test_fresh_and_writable(self, library: Backend, make: Any, shape: Any, reps: Any) -> None:
        if not library.mutable:
            pytest.skip("immutable or lazy arrays cannot alias")
        x = make(arange(shape))
        before = to_numpy(x)
        y = xtile.tile(x, reps)
        y[...] = 0
        assert same_bits(to_numpy(x), before)
        assert not np.any(to_numpy(y))

    def test_readonly_numpy_input(self) -> None:
        x = arange((1, 5))
        x.flags.writeable = False
        for reps in [(1, 1), (3, 1)]:
            y = xtile.tile(x, reps)
            assert y.flags.writeable
            assert not np.shares_memory(x, y)

    def test_numpy_scalar_input(self) -> None:
        for reps in [(), (3,), (2, 2)]:
            y = xtile.tile(np.float32(1.5), reps)
            assert isinstance(y, np.ndarray)
            assert same_bits(y, np.tile(np.float32(1.5), reps))

    def test_torch_meta_device(self) -> None:
        torch = pytest.importorskip("torch")
        x = torch.empty((2, 3), device="meta", dtype=torch.bfloat16)
        y = xtile.tile(x, (2, 1, 2))
        assert y.device == x.device
        assert y.dtype == x.dtype
        assert tuple(y.shape) == (2, 2, 6)

    @given(
        shape=st.lists(st.integers(0, 4), max_size=4).map(tuple),
        reps=st.lists(st.integers(0, 3), max_size=5).map(tuple) | st.integers(0, 3),
        dtype=st.sampled_from(["bool", "int8", "uint16", "float32", "complex128"]),
        order=st.sampled_from(["C", "transposed", "strided"]),
    )
    def test_property(
        self, xp: Any, make: Any, all_dtypes: Any, shape: Any, reps: Any, dtype: str, order: str
    ) -> None:
        x = make(arange(shape), all_dtypes.get(dtype))
        if order == "transposed":
            x = xp.permute_dims(x, tuple(reversed(range(x.ndim))))
        elif order == "strided" and x.ndim:
            x = x[::2, ...]
        assert_tile(xtile.tile(x, reps), x, reps, xp)


PRESENT = [b for b in Backend if b not in absent()]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


class TestRepeats:
    @pytest.mark.parametrize(
        "reps",
        [3, (2, 3), [2, 3], np.int64(3), np.uint8(3), [np.int32(2), 3], (np.int8(2), np.uint64(3))],
        ids=repr,
    )
    def test_host_forms(self, xp: Any, make: Any, reps: Any) -> None:
        x = make(arange((2, 3)))
        assert_tile(xtile.tile(x, reps), x, reps, xp)

    @pytest.mark.parametrize("reps_library", PRESENT, ids=lambda b: b.value)
    def test_arrays_of_every_backend(
        self, library: Backend, impl: str, xp: Any, make: Any, reps_library: Backend, subtests: Any
    ) -> None:
        """
        Repeats arrays of any namespace, int dtype and device, 0-D and 1-D.

        Every int dtype with `x` on NumPy's primitives; with `x` elsewhere (the repeats
        then come from another library or device) or in another implementation (which
        runs after the repeats are read), two, turning with the pair of backends.
        """
        rxp, rdevice = reps_library.load_or_skip()
        x = make(arange((2, 3)))
        k = list(Backend).index(library) + list(Backend).index(reps_library)
        every = library is Backend.NUMPY and impl == "fast"
        names = INT_DTYPES if every else [INT_DTYPES[k % 8], "int64"]
        for dtype in [d for d in names if hasattr(rxp, d)]:
            with subtests.test(dtype=dtype):
                for reps in [(2, 3), (1, 2, 1), 2, ()]:
                    r = rxp.astype(rxp.asarray(reps, device=rdevice), getattr(rxp, dtype))
                    assert_tile(eager.tile(x, r), x, reps, xp)


BAD_TYPES = [
    (2.0, "2.0"),
    ([2, 2.5], "2.5"),
    (True, "True"),
    ([1, False], "False"),
    ("2", "'2'"),
    (None, "None"),
    ([1, None], "None"),
    ([1j], "1j"),
    ({2: 3}, "{2: 3}"),
    (np.array([2.0]), "float64"),
    (np.array([True]), "bool"),
    (np.float32(2), "float32"),
    (np.bool_(True), "bool"),
    (np.array(["a"]), "<U1"),
]
BAD_VALUES = [
    (-1, "-1"),
    ((2, -3), "-3"),
    (np.array([[1, 2]]), "2-D"),
    (np.int8(-2), "-2"),
    ((2**62, 2**62), "int64"),
    ((1, 2**63), "int64"),
]


class TestErrors:
    @pytest.mark.parametrize(("reps", "match"), BAD_TYPES, ids=[m for _, m in BAD_TYPES])
    def test_type_error(self, make: Any, reps: Any, match: str) -> None:
        with pytest.raises(TypeError, match=rf"xtile\.tile: `repeats`.*{_re(match)}"):
            xtile.tile(make(arange((2, 3))), reps)

    @pytest.mark.parametrize(("reps", "match"), BAD_VALUES, ids=[m for _, m in BAD_VALUES])
    def test_value_error(self, make: Any, reps: Any, match: str) -> None:
        with pytest.raises(ValueError, match=rf"xtile\.tile: .*{_re(match)}"):
            xtile.tile(make(arange((2, 3))), reps)

    def test_backend_repeats_arrays(self, xp: Any, device: Any, make: Any) -> None:
        x = make(arange((2, 3)))
        with pytest.raises(TypeError, match=r"integer dtype; got .* of dtype"):
            eager.tile(x, xp.asarray([2.0, 1.0], device=device))
        with pytest.raises(TypeError, match=r"integer dtype; got .* of dtype"):
            eager.tile(x, xp.asarray([True], device=device))
        with pytest.raises(ValueError, match=r"2-D array of shape \(1, 2\)"):
            eager.tile(x, xp.asarray([[2, 1]], device=device))
        with pytest.raises(ValueError, match="got -2 at position 1"):
            eager.tile(x, xp.asarray([1, -2], device=device))

    def test_dtype_is_checked_before_ndim(self) -> None:
        with pytest.raises(TypeError, match="float64"):
            xtile.tile(arange((2,)), np.ones((2, 2)))

    def test_negative_repeat_with_empty_input(self, make: Any) -> None:
        # numpy.tile lets this one through; xtile does not
        with pytest.raises(ValueError, match="got -1 at position 0"):
            xtile.tile(make(np.zeros((0, 2))), (-1, 1))

    def test_negative_int_subclass_repeat(self, make: Any) -> None:
        # an IntEnum is an int: refused by the same check, not by a library's own error
        import enum

        class Reps(enum.IntEnum):
            BACK = -2

        with pytest.raises(ValueError, match="must be non-negative; got -2 at position 1"):
            xtile.tile(make(arange((2, 3))), (1, Reps.BACK))

    def test_overflow_raises_before_allocating(self, make: Any) -> None:
        with pytest.raises(ValueError, match=r"\(2\*\*40|int64"):
            xtile.tile(make(arange((2, 3))), (2**40, 2**40))
        with pytest.raises(ValueError, match="int64"):
            xtile.tile(make(np.zeros((0,))), 2**63)
        # an empty output: one repeat is too large, not the element count
        with pytest.raises(ValueError, match=rf"holds {2**70}, past int64's maximum"):
            xtile.tile(make(arange((2, 3))), (0, 2**70))
        # an empty output whose other axes span more bytes than int64 counts, which no
        # library can make (NumPy: "array is too big")
        shape = r"^xtile\.tile: the output shape \(0, 3000000000000000000\) spans"
        with pytest.raises(ValueError, match=shape):
            xtile.tile(make(np.ones(3)), (0, 10**18))

    @pytest.mark.parametrize("other", PRESENT, ids=lambda b: b.value)
    def test_xp_must_be_the_arrays(self, xp: Any, make: Any, other: Backend) -> None:
        """`xp` of another library, or not a namespace, is a `TypeError` naming both."""
        x = make(arange((2, 3)))
        assert_tile(xtile.tile(x, 2, xp=xp), x, 2, xp)
        oxp = other.load_or_skip()[0]
        lib = _backends.library(xp)
        for bad in [oxp, "numpy"] if _backends.library(oxp) != lib else ["numpy"]:
            with pytest.raises(
                TypeError, match=rf"`xp` is .*, not the namespace of `x`, .*\(of {lib}\)"
            ):
                xtile.tile(x, 2, xp=bad)

    @pytest.mark.parametrize("x", [[1, 2], 3, 2.5, "ab", None, (1, 2)], ids=repr)
    def test_non_array_input(self, x: Any) -> None:
        with pytest.raises(
            TypeError, match=rf"xtile\.tile: `x` must be an array.*{type(x).__name__}"
        ):
            xtile.tile(x, 2)


def _re(text: str) -> str:
    """Escape `text` for `pytest.raises(match=...)`."""
    import re

    return re.escape(text)


class TestTileShape:
    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=CASE_IDS)
    def test_matches_output(self, make: Any, shape: Any, reps: Any) -> None:
        assert xtile.tile_shape(shape, reps) == tuple(xtile.tile(make(arange(shape)), reps).shape)

    @pytest.mark.parametrize(
        ("shape", "reps", "expected"),
        [
            ((None, 3), 2, (None, 6)),
            ((None, 3), (0, 1), (0, 3)),
            ((2, None, 3), (1, 0, 2), (2, 0, 6)),
            ((None,), (2, 3), (2, None)),
            ((None, None), (), (None, None)),
            ((), (2, 0), (2, 0)),
        ],
    )
    def test_unknown_dims(self, shape: Any, reps: Any, expected: Any) -> None:
        assert xtile.tile_shape(shape, reps) == expected

    def test_repeats_array(self) -> None:
        assert xtile.tile_shape((2, 3), np.array([2, 1], dtype=np.uint8)) == (4, 3)

    @pytest.mark.parametrize(
        ("shape", "reps", "exc", "match"),
        [
            ((2, 3), 2.0, TypeError, "2.0"),
            ((2, 3), [True], TypeError, "True"),
            ((2, 3), -1, ValueError, "-1"),
            ((2, 3), np.ones((1, 1), dtype=int), ValueError, "2-D"),
            ((2, 2.5), 2, TypeError, "2.5"),
            ((2, -1), 2, ValueError, "-1"),
            ("ab", 2, TypeError, "'ab'"),
            ((2**40, None), (2**40, 1), ValueError, "int64"),
            ((2**40, 2**40), 1, ValueError, "int64"),
        ],
    )
    def test_errors(self, shape: Any, reps: Any, exc: type[Exception], match: str) -> None:
        with pytest.raises(exc, match=rf"xtile\.tile_shape: .*{_re(match)}"):
            xtile.tile_shape(shape, reps)


class TestLazy:
    def test_dask_stays_lazy(self) -> None:
        da = pytest.importorskip("dask.array")
        from dask.callbacks import Callback

        x = da.from_array(arange((6, 4)), chunks=(2, 3))
        computes: list[object] = []
        with Callback(start=computes.append):
            y = xtile.tile(x, (2, 3))
        assert not computes
        assert isinstance(y, da.Array)
        assert same_bits(np.asarray(y.compute()), np.tile(arange((6, 4)), (2, 3)))

    def test_dask_unknown_shape(self) -> None:
        da = pytest.importorskip("dask.array")
        x = da.from_array(arange((6,)), chunks=3)
        x = x[x > 2]
        with pytest.raises(TypeError, match="lazy shape"):
            xtile.tile(x, 2)

    def test_jax_jit(self) -> None:
        jax = pytest.importorskip("jax")
        x = jax.numpy.arange(6.0).reshape(2, 3)
        y = jax.jit(lambda a: xtile.tile(a, (2, 1, 2)))(x)
        assert same_bits(np.asarray(y), np.tile(np.asarray(x), (2, 1, 2)))
        with pytest.raises(TypeError, match=r"must be static \(concrete\)"):
            jax.jit(xtile.tile)(x, jax.numpy.asarray([2, 2]))


def test_math_prod_of_cases_is_small() -> None:
    """The case matrix stays cheap enough for every backend."""
    assert all(math.prod(xtile.tile_shape(s, r)) < 10**6 for s, r in CASES)  # type: ignore[arg-type]


def test_threads(make: Any, library: Backend) -> None:
    """
    The parity cases from 8 threads at once: no shared state may break a tile.

    Each case 32 times where the backend keeps programs (shared, cached state), else
    once: the namespace caches are all such a backend shares between calls.
    """
    from concurrent.futures import ThreadPoolExecutor

    inputs = [(make(arange(shape)), reps) for shape, reps in CASES + HIGH_RANK[:2]]
    inputs += [(make(arange((2, 3, 4, 5))), (4, 4, 4, 4)), (make(arange((400, 3))), (1, 100))]
    expected = [np.tile(to_numpy(x), reps) for x, reps in inputs]

    def run(i: int) -> bool:
        x, reps = inputs[i % len(inputs)]
        return same_bits(to_numpy(eager.tile(x, reps)), expected[i % len(inputs)])

    calls = 32 if "cached" in impls(library, __name__) else 1
    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(run, range(calls * len(inputs))))


_R = (2,) * 6  # 64 elements in six axes
HIGH_RANK = [
    (_R + (1,) * 27, 1),
    (_R + (1,) * 27, (1,) * 32 + (3,)),
    (_R + (1,) * 34, (3,) * 6 + (2,) * 6 + (1,) * 28),
    (_R + (1,) * 58, _R + (1,) * 58),
    (_R + (1,) * 58, (1,) * 58 + _R),
    (_R + (1,) * 58, (3,) * 6 + (1,) * 58),  # 70 view axes: some tiled by concatenation
    ((2, 3) + (1,) * 62, (1,) * 63 + (2,)),
]


@pytest.mark.parametrize(
    ("shape", "reps"), HIGH_RANK, ids=[f"rank{len(s)}-{i}" for i, (s, _) in enumerate(HIGH_RANK)]
)
def test_high_rank(xp: Any, make: Any, library: Backend, shape: tuple[int, ...], reps: Any) -> None:
    """Every rank NumPy has (64): axes repeated once need no pair in the view."""
    if len(shape) > library.max_rank:
        pytest.skip(f"{library.value} takes at most {library.max_rank} axes")
    x = make(arange(shape))
    assert_tile(xtile.tile(x, reps), x, reps, xp)


@pytest.mark.parametrize("example", SPEC_EXAMPLES, ids=[e.name for e in SPEC_EXAMPLES])
def test_spec_examples(xp: Any, make: Any, example: SpecExample) -> None:
    """The specifications' own examples, values or shapes as written there."""
    data = arange(example.data) if isinstance(example.data, tuple) else np.asarray(example.data)
    x = make(data)
    y = xtile.tile(x, example.repeats)
    if isinstance(example.expected, tuple):
        assert tuple(y.shape) == example.expected
    else:
        assert same_bits(to_numpy(y), np.asarray(example.expected, dtype=data.dtype))
    assert_tile(y, x, example.repeats, xp)


LONG_OUTPUTS = [
    ((400, 3), (1, 100)),
    ((40, 30, 3), (2, 3, 10)),
    ((3, 5), (100, 2, 1, 30)),
    ((2, 3, 4, 5), (10, 10, 1, 1)),
    ((500,), (300,)),
    ((1, 1000), (400, 1)),
    ((100, 100), (2, 1)),
    ((2, 3, 4, 5), (4, 4, 4, 4)),  # staged: one level
    ((2, 2, 2, 2, 2, 2), (3, 3, 3, 3, 3, 3)),  # staged: two levels
    ((3, 1, 4, 2), (9, 7, 1, 16)),  # staged, across length-1 axes and a repeat of 1
    ((5, 2, 2), (3, 1, 300)),  # NumPy: the outer axes staged, then one numpy.repeat
    ((300, 20, 2), (3, 2, 2)),  # NumPy: the last view axis copied index by index
    ((30, 8, 2), (3, 2, 32)),  # NumPy: blocks of 2 to 32 bytes as integers or void
    ((7, 5000, 1), (12, 1, 3)),  # NumPy and PyTorch: the first block, copied 11 times
    ((1, 418, 1, 1, 2), (1, 52, 6, 1, 1)),  # the same inside length-1 axes (4-byte items up)
]


def variants(library: Backend, k: int, dtypes: list[str], layouts: list[str]) -> list[Any]:
    """
    The (dtype, layout) pairs case `k` runs on: all of them where they shape the program.

    That is on the backends that plan (they keep programs per layout: NumPy, PyTorch,
    array-api-strict). Elsewhere (a compiler's or a lazy graph's program, or the one
    copy) each layout runs once per case with a dtype that turns with `k`: over
    `len(dtypes)` cases every pair runs.
    """
    if "cached" in impls(library, __name__):
        return list(itertools.product(dtypes, layouts))
    return [(dtypes[(k + i) % len(dtypes)], layout) for i, layout in enumerate(layouts)]


@pytest.mark.parametrize(
    ("k", "shape", "reps"),
    [(k, *c) for k, c in enumerate(LONG_OUTPUTS)],
    ids=[f"{s}x{r}" for s, r in LONG_OUTPUTS],
)
def test_long_outputs(
    library: Backend, xp: Any, make: Any, all_dtypes: Any, k: int, shape: Any, reps: Any,
    subtests: Any,
) -> None:  # fmt: skip
    """Outputs of 64 KiB and more: staging, NumPy's long runs and PyTorch's doubling too."""
    dtypes = [d for d in ["bool", "int8", "float32", "complex128"] if d in all_dtypes]
    for dtype, layout in variants(library, k, dtypes, ["C", "transposed", "strided"]):
        with subtests.test(dtype=dtype, layout=layout):
            x = make(arange(shape), all_dtypes[dtype])
            if layout == "transposed":
                x = xp.permute_dims(x, tuple(reversed(range(x.ndim))))
            elif layout == "strided":
                x = x[..., ::2]
            before = to_numpy(x)
            y = xtile.tile(x, reps)
            assert_tile(y, x, reps, xp)
            if library.mutable:
                y[...] = xp.zeros_like(y)
                assert same_bits(to_numpy(x), before)


@pytest.mark.parametrize(
    ("shape", "reps"),
    [
        ((3,), (39639,)),  # staged: part of the one repeat (181 of 3 * 73 * 181)
        ((2, 1, 2), (4000, 3, 3)),  # staged: one level, then part of the outer repeat
        ((3,), (39631,)),  # a prime repeat: 171 staged, copied 231 times, then 130 more
        ((1, 5, 1), (1, 60013, 1)),  # the same inside length-1 and unrepeated axes
        ((1, 4), (20000, 1)),  # float32: 16-byte runs, a word to NumPy, staged by PyTorch
    ],
)
@pytest.mark.parametrize("dtype", ["bool", "int8", "float32", "complex128"])
@pytest.mark.parametrize("layout", ["C", "strided"])
@pytest.mark.backends(lambda b: b in {Backend.NUMPY, Backend.TORCH, Backend.ARRAY_API_STRICT})
def test_long_repeats(
    library: Backend, xp: Any, make: Any, all_dtypes: Any, shape: Any, reps: Any, dtype: str,
    layout: str,
) -> None:  # fmt: skip
    """
    Tens of thousands of repeats of a small input: part of a repeat staged, or in parts.

    On the backends that stage (eager CPU arrays, their default device); elsewhere
    such a repeat is one chunk or task per repeat in the standard-only tile (Dask),
    minutes per case.
    """
    if dtype not in all_dtypes:
        pytest.skip(f"{library.value} has no {dtype}")
    x = make(arange(shape), all_dtypes[dtype])
    if layout == "strided":
        x = x[..., ::2]
    assert_tile(xtile.tile(x, reps), x, reps, xp)
    assert_tile(xtile.tile(x, reps), x, reps, xp)  # the cached plan


@pytest.mark.parametrize("dtype", ["U3", "object", "StringDType"])
@pytest.mark.parametrize(
    ("shape", "reps"),
    [((400, 3), (1, 100)), ((2, 3, 4, 5), (4, 4, 4, 4)), ((100, 100, 3), (2, 3, 2))],
    ids=["short-runs", "staged", "large-x"],
)
def test_numpy_long_text(dtype: str, shape: tuple[int, ...], reps: tuple[int, ...]) -> None:
    """NumPy text and object arrays: staged too, never viewed as bytes (items are pointers)."""
    x = arange(shape).astype(np.dtypes.StringDType() if dtype == "StringDType" else dtype)
    y = xtile.tile(x, reps)
    assert y.flags.c_contiguous
    assert not np.shares_memory(x, y)
    assert same_bits(y, np.tile(x, reps))


# a NumPy struct with 7 bytes of padding after its first field
PADDED = np.dtype([("a", "u1"), ("b", "<f8")], align=True)
ITEMS = np.dtype((np.void, PADDED.itemsize))  # the same items, as raw bytes


def _padded(layout: str) -> tuple[Any, Any]:
    """
    A (2, 3) array of `PADDED` of `layout` whose padding bytes are garbage (0xAB).

    With the same array of its items as raw bytes (`ITEMS`).
    """
    n = 12 if layout == "stepped" else 6
    buffer = bytearray(b"\xab" * (n * PADDED.itemsize))
    views = []
    for dtype in (PADDED, ITEMS):
        a = np.frombuffer(buffer, dtype=dtype)
        views.append(
            a.reshape(2, 3)
            if layout == "C"
            else a.reshape(3, 2).T
            if layout == "F"
            else a.reshape(2, 6)[:, ::2]
        )
    x, raw = views
    x["a"] = np.arange(1, 7).reshape(2, 3)  # the fields' bytes only: the padding stays
    x["b"] = np.arange(6.0).reshape(2, 3) / 3
    return x, raw


def _padding(items: Any) -> Any:
    """The padding bytes of each element of an array of `ITEMS`."""
    return np.ascontiguousarray(items).view(np.uint8).reshape(-1, PADDED.itemsize)[:, 1:8]


@pytest.mark.parametrize("layout", ["C", "stepped", "F"])
@pytest.mark.parametrize("reps", [(2, 3), (1000, 5), (2,), (300, 400)], ids=str)
def test_numpy_struct_padding(impl: str, reps: tuple[int, ...], layout: str) -> None:
    """
    A structured dtype's padding moves with its items: the bytes of `numpy.tile`.

    The input's padding holds garbage (0xAB), not zeros, so a copy field by field
    would show. NumPy's own tile of a Fortran-ordered struct array drops the padding,
    so there the reference is the tile of the items as raw bytes.
    """
    if impl == "standard":
        pytest.skip("the standard-only copy is NumPy's own, which may copy fields alone")
    assert PADDED.itemsize == 16
    x, raw = _padded(layout)
    assert (_padding(raw) == 0xAB).all()
    y = xtile.tile(x, reps)
    assert y.dtype == PADDED
    assert y.flags.c_contiguous
    assert y.shape == np.tile(x, reps).shape
    whole = np.tile(raw, reps)
    assert y.tobytes() == whole.tobytes()
    if layout == "F":
        for field in PADDED.names:
            assert same_bits(np.ascontiguousarray(y[field]), np.tile(x[field], reps))
    else:
        assert y.tobytes() == np.tile(x, reps).tobytes()
    assert (_padding(y.view(ITEMS)) == 0xAB).all()
    assert xtile.tile(x, reps).tobytes() == y.tobytes()  # the kept program too
    out = np.zeros(y.shape, PADDED)  # a C-ordered `out` gets the fresh output's programs
    assert xtile.tile(x, reps, out=out).tobytes() == y.tobytes()


@pytest.mark.parametrize(
    "library", [Backend.NUMPY, Backend.TORCH, Backend.ARRAY_API_STRICT], ids=lambda b: b.value
)
@given(
    shape=st.lists(st.integers(1, 3), min_size=2, max_size=6),
    reps=st.lists(st.integers(1, 5), min_size=1, max_size=6),
    data=st.data(),
)
def test_staged_property(xp: Any, make: Any, shape: list[int], reps: list[int], data: Any) -> None:
    """Outputs of 64 KiB to 2 MiB (float32), where the staging backends stage."""
    # the first repeat brings the output to at least 64 KiB
    rest = math.prod(shape) * math.prod(reps[1:])
    reps = [max(reps[0], -(-(1 << 14) // rest)), *reps[1:]]
    assume(rest * reps[0] <= 1 << 19)
    x = make(arange(tuple(shape)), xp.float32)
    if data.draw(st.booleans(), label="transposed"):
        x = xp.permute_dims(x, tuple(reversed(range(x.ndim))))
    assert_tile(xtile.tile(x, reps), x, tuple(reps), xp)


WORD_RUNS = [
    ((2, 1), (700, 1)),
    ((3, 2), (1, 500)),
    ((4,), (300,)),
    ((5, 2, 2), (2, 3, 40)),
    ((1, 2), (3, 9)),
]


@pytest.mark.parametrize(
    ("k", "shape", "reps"),
    [(k, *c) for k, c in enumerate(WORD_RUNS)],
    ids=[f"{s}x{r}" for s, r in WORD_RUNS],
)
def test_word_runs(
    library: Backend, xp: Any, make: Any, all_dtypes: Any, k: int, shape: Any, reps: Any,
    subtests: Any,
) -> None:  # fmt: skip
    """Blocks of 2, 4 or 8 bytes (copied as one integer each on PyTorch), any alignment."""
    n = math.prod(shape)
    dtypes = ["bool", "int8", "int16", "uint16", "float32"]
    for dtype, layout in variants(library, k, dtypes, ["C", "offset", "strided"]):
        with subtests.test(dtype=dtype, layout=layout):
            if layout == "offset":  # contiguous, one element into its buffer: misaligned
                x = xp.reshape(make(arange((n + 1,)), all_dtypes[dtype])[1:], shape)
            elif layout == "strided":
                x = make(arange((*shape[:-1], 2 * shape[-1])), all_dtypes[dtype])[..., ::2]
            else:
                x = make(arange(shape), all_dtypes[dtype])
            assert_tile(xtile.tile(x, reps), x, reps, xp)
