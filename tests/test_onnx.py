"""`xtile.onnx`: Tile-1, Tile-6 and Tile-13, to the letter of the specification."""

import re
from typing import Any

import numpy as np
import pytest
from array_api_extra.testing import lazy_xp_function

import xtile
from xtile._testing import Backend, arange, assert_tile, same_bits, to_numpy

# Every test here runs the fast paths and the standard-only tile; `xtile.onnx.tile` runs
# under `jax.jit` on JAX and may not compute on Dask where its repeats are static.
pytestmark = pytest.mark.usefixtures("impl")
lazy_xp_modules = [xtile.onnx]
lazy_xp_function(xtile.onnx.tile)


class eager:
    """`xtile.onnx.tile` outside the lazy patches, for repeats given as arrays."""

    tile = xtile.onnx.tile


# rank-matching (shape, repeats): ONNX never broadcasts
CASES = [
    ((), ()),
    ((3,), (2,)),
    ((3,), (0,)),
    ((0,), (4,)),
    ((2, 3), (1, 2)),
    ((2, 3), (2, 1)),
    ((2, 0, 3), (1, 2, 1)),
    ((1, 500), (30, 1)),
    ((2, 3, 4, 5), (7, 6, 4, 2)),  # onnx test_tile's shape
    ((2, 1, 3, 1, 2, 1), (1, 2, 1, 2, 1, 3)),
]
OPSETS = [6, 12, 13, 21]


def int64_array(xp: Any, device: Any, values: Any) -> Any:
    """A 1-D int64 repeats array on the backend under test."""
    return xp.asarray(values, dtype=xp.int64, device=device)


class TestTile:
    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=[f"{s}x{r}" for s, r in CASES])
    @pytest.mark.parametrize("opset", OPSETS)
    def test_matches_numpy(
        self, xp: Any, device: Any, make: Any, shape: Any, reps: Any, opset: int
    ) -> None:
        x = make(arange(shape))
        assert_tile(xtile.onnx.tile(x, list(reps), opset=opset), x, reps, xp)
        assert_tile(eager.tile(x, int64_array(xp, device, reps), opset=opset), x, reps, xp)

    def test_default_opset_and_xp(self, xp: Any, make: Any) -> None:
        x = make(arange((2, 3)))
        assert_tile(xtile.onnx.tile(x, (2, 2), xp=xp), x, (2, 2), xp)

    def test_repeats_from_numpy_on_any_backend(self, xp: Any, make: Any) -> None:
        x = make(arange((2, 3)))
        assert_tile(xtile.onnx.tile(x, np.array([3, 1], dtype=np.int64)), x, (3, 1), xp)

    @pytest.mark.parametrize("opset", [6, 13])
    def test_every_dtype_in_the_constraint(
        self, xp: Any, make: Any, all_dtypes: Any, opset: int
    ) -> None:
        for name, dtype in all_dtypes.items():
            data = arange((2, 3)) % 5
            # tensor(string) as an object array holds str
            x = make(data.astype(str), dtype) if name == "object" else make(data, dtype)
            if name == "bfloat16" and opset < 13:
                with pytest.raises(TypeError, match="bfloat16 needs opset 13"):
                    xtile.onnx.tile(x, (2, 1), opset=opset)
                continue
            assert_tile(xtile.onnx.tile(x, (2, 1), opset=opset), x, (2, 1), xp)

    @pytest.mark.parametrize("rank", [33, 64])
    def test_high_rank(self, xp: Any, make: Any, library: Backend, rank: int) -> None:
        if rank > library.max_rank:
            pytest.skip(f"{library.value} takes at most {library.max_rank} axes")
        x = make(arange((2, 3) + (1,) * (rank - 2)))
        reps = (2,) + (1,) * (rank - 2) + (3,)
        assert_tile(xtile.onnx.tile(x, reps), x, reps, xp)

    def test_fresh(self, library: Backend, make: Any) -> None:
        if not library.mutable:
            pytest.skip("immutable or lazy arrays cannot alias")
        x = make(arange((2, 3)))
        y = xtile.onnx.tile(x, (1, 1))
        y[...] = 0
        assert same_bits(to_numpy(x), arange((2, 3)))

    @pytest.mark.parametrize(
        ("reps", "exc", "match"),
        [
            ((2, 2), ValueError, "ONNX Tile-13: repeats has 2 elements but input has 3 dimensions"),
            ((2, 2, 2, 2), ValueError, "repeats has 4 elements but input has 3"),
            ((), ValueError, "repeats has 0 elements"),
            (2, ValueError, "1-D tensor or a sequence of ints; got the scalar 2"),
            (np.int64(2), ValueError, "got the scalar 2"),
            (np.array(2, dtype=np.int64), ValueError, "got the scalar 2"),
            (
                np.array([2, 2, 2], dtype=np.int32),
                TypeError,
                "got array([2, 2, 2], dtype=int32)",
            ),
            (np.array([[2, 2, 2]], dtype=np.int64), ValueError, "must be 1-D; got a 2-D array"),
            (np.array([[2.0]]), TypeError, "float64"),  # dtype before dimensionality
            ((1, -1, 1), ValueError, "got -1 at position 1"),
            ((1, 2.0, 1), TypeError, "2.0"),
            ((1, True, 1), TypeError, "True"),
            ((2**62, 2**62, 1), ValueError, "int64"),
        ],
    )
    def test_errors(self, make: Any, reps: Any, exc: type[Exception], match: str) -> None:
        with pytest.raises(exc, match=re.escape(match)):
            xtile.onnx.tile(make(arange((2, 3, 4))), reps)

    def test_backend_repeats_errors(self, xp: Any, device: Any, make: Any) -> None:
        x = make(arange((2, 3)))
        with pytest.raises(TypeError, match="ONNX Tile-13: `repeats` must be an int64 array"):
            eager.tile(x, xp.asarray([2, 2], dtype=xp.int32, device=device))
        with pytest.raises(ValueError, match="`repeats` must be 1-D; got a 2-D array"):
            eager.tile(x, xp.asarray([[2, 2]], dtype=xp.int64, device=device))

    def test_error_names_the_version(self, make: Any) -> None:
        with pytest.raises(ValueError, match=r"^ONNX Tile-6: repeats has 1 elements"):
            xtile.onnx.tile(make(arange((2, 3))), (2,), opset=11)

    @pytest.mark.parametrize("opset", [1, 5, 0, -3])
    def test_old_opset_points_to_tile_v1(self, make: Any, opset: int) -> None:
        with pytest.raises(ValueError, match=rf"opset {opset} has Tile-1.*xtile\.onnx\.tile_v1"):
            xtile.onnx.tile(make(arange((2,))), (2,), opset=opset)

    @pytest.mark.parametrize("opset", [13.0, "13", None, True])
    def test_opset_type(self, make: Any, opset: Any) -> None:
        with pytest.raises(TypeError, match="`opset` must be an int"):
            xtile.onnx.tile(make(arange((2,))), (2,), opset=opset)

    def test_object_array_of_non_strings(self) -> None:
        with pytest.raises(TypeError, match=r"tensor\(object\)"):
            xtile.onnx.tile(np.array([1, "a"], dtype=object), (2,))

    @pytest.mark.parametrize("kind", ["U", "S", "object", "StringDType"])
    def test_string_tensors(self, kind: str) -> None:
        words = np.array([["a", "bc"], ["", "def"]])
        x = words.astype(np.dtypes.StringDType() if kind == "StringDType" else kind)
        assert_tile(xtile.onnx.tile(x, (2, 3)), x, (2, 3), xtile._backends.of(x)[0])

    def test_non_array_input(self) -> None:
        with pytest.raises(TypeError, match="ONNX Tile-13: `input` must be an array"):
            xtile.onnx.tile([[1, 2]], (1, 2))


class TestTileV1:
    @pytest.mark.parametrize(
        ("shape", "tiles", "axis"),
        [((2, 3), 3, 0), ((2, 3), 3, 1), ((2, 3), 2, -1), ((2, 3), 0, -2), ((4,), 1, 0)],
    )
    def test_matches_numpy(
        self, xp: Any, device: Any, make: Any, all_dtypes: Any, shape: Any, tiles: int, axis: int
    ) -> None:
        reps = [1] * len(shape)
        reps[axis] = tiles
        for name in ("float16", "float32", "float64"):
            if name not in all_dtypes:
                continue
            x = make(arange(shape), all_dtypes[name])
            assert_tile(xtile.onnx.tile_v1(x, tiles, axis), x, reps, xp)
            t = int64_array(xp, device, [tiles])
            a = xp.asarray(axis, dtype=xp.int64, device=device)  # 0-D: one element too
            assert_tile(xtile.onnx.tile_v1(x, t, a, xp=xp), x, reps, xp)

    @pytest.mark.parametrize("name", ["bool", "int64", "int8", "uint8", "complex64", "bfloat16"])
    def test_only_floats(self, make: Any, all_dtypes: Any, name: str) -> None:
        if name not in all_dtypes:
            pytest.skip(f"no {name} on this backend")
        with pytest.raises(TypeError, match=r"ONNX Tile-1: input type tensor\(.*not in the type"):
            xtile.onnx.tile_v1(make(arange((2,)), all_dtypes[name]), 2, 0)

    @pytest.mark.parametrize(
        ("tiles", "axis", "exc", "match"),
        [
            (2, 2, ValueError, "`axis` 2 is out of range for an input of 2 dimensions"),
            (2, -3, ValueError, "`axis` -3 is out of range"),
            (-1, 0, ValueError, "`tiles` must be non-negative; got -1"),
            (np.array([2, 3]), 0, ValueError, "exactly one element; got (2, 3)"),
            (
                np.array([2], dtype=np.int32),
                0,
                TypeError,
                "got array([2], dtype=int32)",
            ),
            (
                2,
                np.array([0.0]),
                TypeError,
                "`axis` must be an int64 array; got array([0.])",
            ),
            (2.0, 0, TypeError, "`tiles` must be an int or an int64 array; got 2.0"),
            (2, True, TypeError, "`axis` must be an int or an int64 array; got True"),
            (2, None, TypeError, "got None"),
        ],
    )
    def test_errors(
        self, make: Any, tiles: Any, axis: Any, exc: type[Exception], match: str
    ) -> None:
        with pytest.raises(exc, match=re.escape(match)):
            xtile.onnx.tile_v1(make(arange((2, 3)) * 1.0), tiles, axis)

    def test_scalar_input_has_no_axis(self) -> None:
        with pytest.raises(ValueError, match="out of range for an input of 0 dimensions"):
            xtile.onnx.tile_v1(np.float32(1), 2, 0)


class TestTileShape:
    @pytest.mark.parametrize(
        ("shape", "reps", "expected"),
        [
            ((2, 3), (2, 2), (4, 6)),
            ((None, 3), [2, 2], (None, 6)),
            ((None, 3), np.array([0, 2]), (0, 6)),
            ((), (), ()),
            ((2, None, 0), (1, 1, 5), (2, None, 0)),
        ],
    )
    def test_inference(self, shape: Any, reps: Any, expected: Any) -> None:
        assert xtile.onnx.tile_shape(shape, reps) == expected

    @pytest.mark.parametrize(("shape", "reps"), CASES)
    def test_matches_output(self, make: Any, shape: Any, reps: Any) -> None:
        y = xtile.onnx.tile(make(arange(shape)), reps)
        assert xtile.onnx.tile_shape(shape, reps) == tuple(y.shape)

    @pytest.mark.parametrize(
        ("shape", "reps", "exc", "match"),
        [
            ((2, 3), (2,), ValueError, "repeats has 1 elements but input has 2 dimensions"),
            ((2, 3), 2, ValueError, "got the scalar 2"),
            ((2, 3), np.array([2, 2], dtype=np.int32), TypeError, "int64"),
            ((2, 3), (2, -2), ValueError, "-2"),
            ((2, "3"), (2, 2), TypeError, "'3'"),
        ],
    )
    def test_errors(self, shape: Any, reps: Any, exc: type[Exception], match: str) -> None:
        with pytest.raises(exc, match=rf"^ONNX Tile: .*{re.escape(match)}"):
            xtile.onnx.tile_shape(shape, reps)
