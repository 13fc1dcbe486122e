"""`xtile.openvino.tile`: OpenVINO Tile-1, NumPy promotion, negatives clamped to 0."""

import re
from typing import Any

import numpy as np
import pytest
from array_api_extra.testing import lazy_xp_function

import xtile
from xtile._testing import Backend, arange, assert_tile, same_bits, to_numpy

# Every test here runs the fast paths and the standard-only tile; `xtile.openvino.tile` runs
# under `jax.jit` on JAX and may not compute on Dask where its repeats are static.
pytestmark = pytest.mark.usefixtures("impl")
lazy_xp_modules = [xtile.openvino]
lazy_xp_function(xtile.openvino.tile)


class eager:
    """`xtile.openvino.tile` outside the lazy patches, for repeats given as arrays."""

    tile = xtile.openvino.tile


# promotion both ways, zeros, negatives (counted as 0)
CASES = [
    ((2, 3, 4), (1, 2, 3)),
    ((2, 3, 4), (5, 1, 2, 3)),
    ((5, 2, 3, 4), (1, 2, 3)),
    ((2, 3), (2, 2, 2)),
    ((4, 2, 3), (2, 2)),
    ((), (3,)),
    ((3,), ()),
    ((2, 3), (-1, 2)),
    ((2, 3), (2, -5)),
    ((0, 3), (-1, 2, 1)),
]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def clamped(reps: tuple[int, ...]) -> tuple[int, ...]:
    """What OpenVINO's shape inference makes of negative repeats."""
    return tuple(max(r, 0) for r in reps)


class TestTile:
    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=[f"{s}x{r}" for s, r in CASES])
    def test_matches_numpy(self, xp: Any, make: Any, shape: Any, reps: Any) -> None:
        x = make(arange(shape))
        assert_tile(xtile.openvino.tile(x, reps), x, clamped(reps), xp)

    @pytest.mark.parametrize("dtype", INT_DTYPES)
    def test_repeats_of_any_integer_dtype(
        self, xp: Any, device: Any, make: Any, dtype: str
    ) -> None:
        if not hasattr(xp, dtype):
            pytest.skip(f"no {dtype} on this backend")
        x = make(arange((2, 3)))
        signed = dtype.startswith("int")
        for reps in [(2, 1, 3), (3,), ((-2, 3) if signed else (0, 3))]:
            r = xp.asarray(reps, dtype=getattr(xp, dtype), device=device)
            assert_tile(eager.tile(x, r, xp=xp), x, clamped(reps), xp)

    def test_every_dtype(self, xp: Any, make: Any, all_dtypes: Any) -> None:
        for dtype in all_dtypes.values():
            x = make(arange((2, 3)) % 3, dtype)
            assert_tile(xtile.openvino.tile(x, (2, 1, 2)), x, (2, 1, 2), xp)

    def test_fresh(self, library: Backend, make: Any) -> None:
        if not library.mutable:
            pytest.skip("immutable or lazy arrays cannot alias")
        x = make(arange((2, 3)))
        y = xtile.openvino.tile(x, (1,))
        y[...] = 0
        assert same_bits(to_numpy(x), arange((2, 3)))

    @pytest.mark.parametrize(
        ("reps", "exc", "match"),
        [
            (np.array([2.0]), TypeError, "integer dtype; got array([2.]) of dtype float64"),
            (np.array([True]), TypeError, "integer dtype; got array([ True]) of dtype bool"),
            (np.array([[2]]), ValueError, "0-D or 1-D; got a 2-D array"),
            ([2, 1.5], TypeError, "1.5"),
            ("2", TypeError, "'2'"),
            ((2**40, 2**40), ValueError, "int64"),
        ],
    )
    def test_errors(self, make: Any, reps: Any, exc: type[Exception], match: str) -> None:
        with pytest.raises(exc, match=rf"^OpenVINO Tile-1: .*{re.escape(match)}"):
            xtile.openvino.tile(make(arange((2, 3))), reps)

    def test_non_array_input(self) -> None:
        with pytest.raises(TypeError, match="OpenVINO Tile-1: `data` must be an array"):
            xtile.openvino.tile(3, 2)
