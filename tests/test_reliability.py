"""Errors in the user's terms, subclasses kept or refused, NaN payloads: what a user meets."""

import importlib.metadata
import re
from typing import Any

import numpy as np
import pytest

import xtile
from xtile._testing import Backend, arange, same_bits, to_numpy

EAGER = {Backend.NUMPY, Backend.ARRAY_API_STRICT, Backend.TORCH, Backend.JAX}


class TestOutOfMemory:
    @pytest.mark.parametrize("reps", [(10**6, 1), (1, 10**6), (10**6, 10**6)])
    def test_names_the_output(self, library: Backend, make: Any, reps: Any) -> None:
        """An output that fits int64 but not memory: `MemoryError` with its shape and bytes."""
        if library not in EAGER:
            pytest.skip("lazy or not run here")
        x = make(np.ones((1000, 1000), dtype=np.float32))
        if library is Backend.JAX:  # an input still in transfer defers the tile's allocation
            x.block_until_ready()  # (and its failure) to the first wait: docs/errors.md
        shape = (1000 * reps[0], 1000 * reps[1])
        nbytes = f"{shape[0] * shape[1] * 4:_}".replace("_", ",")
        with pytest.raises(MemoryError, match=re.escape(f"{shape} and dtype")) as info:
            xtile.tile(x, reps)
        assert f"({nbytes} bytes)" in str(info.value)
        # no other shape: not the internal view's that NumPy's allocator names
        assert re.findall(r"\(\d+(?:, \d+)+\)", str(info.value)) == [str(shape)]

    def test_allocator_error_without_text(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Python's bare `MemoryError()`: the message ends at the bytes, no empty quote."""
        from xtile import _run

        compiled = _run.compiled

        def failing(*args: Any) -> Any:
            def run(*_: Any) -> Any:
                raise MemoryError

            return compiled(*args)[0], run

        monkeypatch.setattr(_run, "KEPT", {})  # no call kept by an earlier test
        monkeypatch.setattr(_run, "compiled", failing)
        with pytest.raises(MemoryError) as info:
            xtile.tile(np.ones((2, 3), dtype=np.float32), (5, 7))
        assert str(info.value) == (
            "xtile.tile: cannot allocate the output of shape (10, 21) and dtype float32 "
            "(840 bytes)."
        )


class TestMessages:
    @pytest.mark.parametrize(
        ("reps", "value"),
        [([np.float64(2.0)], "2.0"), ([2, np.bool_(True)], "True"), (np.float32(2.5), "2.5")],
    )
    def test_numpy_scalars_name_their_value(self, reps: Any, value: str) -> None:
        with pytest.raises(TypeError, match=re.escape(value)):
            xtile.tile(np.ones(3), reps)

    def test_meta_repeats(self) -> None:
        torch = pytest.importorskip("torch")
        reps = torch.ones(2, dtype=torch.int64, device="meta")
        with pytest.raises(TypeError, match="meta device"):
            xtile.tile(np.ones(3), reps)

    def test_vmap_traced_repeats(self) -> None:
        jax = pytest.importorskip("jax")
        x = jax.numpy.ones(3)
        reps = jax.numpy.asarray([[2], [3]])
        with pytest.raises(TypeError, match=r"must be static \(concrete\).*jax\.vmap"):
            jax.vmap(lambda r: xtile.tile(x, r))(reps)

    @pytest.mark.parametrize("x", [[1, 2], 3, 2.5, (1, 2)], ids=repr)
    def test_python_input_suggests_asarray(self, x: Any) -> None:
        with pytest.raises(TypeError, match=r"xp\.asarray"):
            xtile.tile(x, 2)

    def test_tile_shape_takes_numpy_ints(self) -> None:
        assert xtile.tile_shape((np.int64(2), np.uint8(3)), np.int32(2)) == (2, 6)
        with pytest.raises(TypeError, match="True"):
            xtile.tile_shape((2, np.bool_(True)), 2)


class TestNumpySubclasses:
    @pytest.mark.parametrize("reps", [(2, 3), 1, (2, 1, 1)])
    def test_masked_array_keeps_its_mask(self, reps: Any) -> None:
        x = np.ma.masked_array(arange((2, 3)), mask=arange((2, 3)) % 3 == 0, fill_value=-7)
        y = xtile.tile(x, reps)
        expected = np.tile(x, reps)
        assert isinstance(y, np.ma.MaskedArray)
        assert same_bits(np.ma.getmaskarray(y), np.ma.getmaskarray(expected))
        assert same_bits(np.ma.getdata(y), np.ma.getdata(expected))
        assert y.fill_value == -7
        assert not np.shares_memory(np.ma.getdata(y), np.ma.getdata(x))

    @pytest.mark.parametrize("dtype", ["float16", "int8", "float64", "i4,f8", "M8[s]", "U3"])
    def test_masked_array_keeps_the_default_fill_value(self, dtype: str) -> None:
        # numpy's defaults (1e20, 999999) do not fit float16 or int8: numpy.tile keeps
        # them as they are, without a cast or its overflow warning (warnings are errors)
        x = np.ma.masked_array(np.zeros(3, dtype=dtype), mask=[True, False, False])
        y, expected = xtile.tile(x, 2), np.tile(x, 2)
        assert repr(y.fill_value) == repr(expected.fill_value)
        with np.errstate(over="ignore"):  # filling float16 with 1e20 overflows, alike
            assert same_bits(y.filled(), expected.filled())

    def test_memmap_gives_a_plain_array(self, tmp_path: Any) -> None:
        x = np.memmap(tmp_path / "x.dat", dtype=np.int16, mode="w+", shape=(2, 3))
        x[...] = arange((2, 3))
        y = xtile.tile(x, (2, 2))
        assert type(y) is np.ndarray
        assert same_bits(y, np.tile(np.asarray(x), (2, 2)))

    def test_other_subclasses_refused(self) -> None:
        class Quantity(np.ndarray):  # a subclass whose meaning xtile cannot know
            pass

        with pytest.raises(TypeError, match=r"Quantity, a numpy\.ndarray subclass"):
            xtile.tile(arange((3,)).view(Quantity), 2)

    @pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
    def test_matrix_refused(self) -> None:
        m = np.asmatrix(arange((2, 2)))
        with pytest.raises(
            TypeError, match=r"`x` is a numpy\.matrix; .* masked arrays .* `np\.asarray\(x\)`"
        ):
            xtile.tile(m, 2)


def test_jax_bfloat16_nan_payloads() -> None:
    """
    Bit for bit with `jax.numpy.tile`, NaN payloads too; XLA on the CPU quiets a
    signaling bfloat16 NaN in some fused copies (both tiles), keeps quiet ones.
    """
    jnp = pytest.importorskip("jax.numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bits = np.array([0x7FC1, 0x7F81, 0xFFC3, 0x3F80], dtype=np.uint16)
    x = jnp.asarray(bits.view(ml_dtypes.bfloat16))
    nan = ((bits & 0x7F80) == 0x7F80) & ((bits & 0x007F) != 0)
    quieted = np.where(nan, bits | 0x0040, bits).astype(np.uint16)  # the quiet bit set
    for reps in [(2,), (1000,), (3, 2)]:
        got = to_numpy(xtile.tile(x, reps)).view(np.uint16)
        native = to_numpy(jnp.tile(x, reps)).view(np.uint16)
        assert same_bits(got, native)
        kept = np.tile(bits, reps), np.tile(quieted, reps)
        if not any(same_bits(native, k) for k in kept):
            pytest.xfail(  # xtile is jnp.tile's program: it cannot keep what XLA drops
                f"jax {importlib.metadata.version('jax')}'s own tile canonicalizes bfloat16 "
                f"NaN payloads (by {reps}); xtile matches it bit for bit"
            )
        assert any(same_bits(got, k) for k in kept)
