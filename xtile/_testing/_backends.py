"""
The backends and devices that the test suite and ``python -m xtile`` run on.

Harness code, not library code: it imports the backends it is asked for, turns on
JAX's 64-bit mode so that every dtype exists, and brings results to NumPy for the
comparison with `numpy.tile`.
"""

import importlib
import math
from enum import Enum
from types import ModuleType
from typing import Any

import array_api_compat

from .._backends import LIBRARIES, library

Array = Any
ArrayNamespace = ModuleType
_LIBRARY = {ns: lib for lib in LIBRARIES for ns in lib.namespaces}

__all__ = [
    "Backend",
    "BackendUnavailableError",
    "arange",
    "assert_tile",
    "dtypes",
    "reps_tuple",
    "same_bits",
    "to_numpy",
    "uneven_chunks",
]


class BackendUnavailableError(Exception):
    """A backend or device that is not installed or not present here."""


class Backend(Enum):
    """One member per (library, device); ``":tag"`` keeps the values unique."""

    NUMPY = "numpy"
    ARRAY_API_STRICT = "array_api_strict"
    ARRAY_API_STRICT_DEVICE1 = "array_api_strict:device1"
    TORCH = "torch"
    TORCH_CUDA = "torch:cuda"
    JAX = "jax.numpy"
    JAX_GPU = "jax.numpy:gpu"
    DASK = "dask.array"
    DASK_CHUNKED = "dask.array:chunked"
    CUPY = "cupy"
    NDONNX = "ndonnx"
    SPARSE = "sparse"

    @property
    def modname(self) -> str:
        """The module to import."""
        return self.value.split(":")[0]

    @property
    def is_gpu(self) -> bool:
        """Whether this backend runs on a CUDA device."""
        return self in {Backend.TORCH_CUDA, Backend.JAX_GPU, Backend.CUPY}

    @property
    def mutable(self) -> bool:
        """Whether its arrays can be written in place, and so could alias `x`."""
        return _LIBRARY[self.modname].mutable

    @property
    def library(self) -> str:
        """Name its library as xtile does ("jax")."""
        return _LIBRARY[self.modname].name

    @property
    def max_rank(self) -> int:
        """
        The highest rank its arrays take through tiling and back to NumPy.

        pydata sparse indexes by one NumPy index array per axis, at most 63.
        """
        return 63 if self is Backend.SPARSE else 64

    def load(self) -> tuple[ArrayNamespace, Any]:
        """
        Import the backend and pick its device.

        Returns
        -------
        array_namespace
            The array-api-compat namespace.
        object
            The device to create arrays on.

        Raises
        ------
        BackendUnavailableError
            If the library is not installed or the device is absent.
        """
        try:
            mod = importlib.import_module(self.modname)
        except ImportError as e:
            msg = f"{self.modname} is not installed"
            raise BackendUnavailableError(msg) from e
        if self.modname == "jax.numpy":
            import jax

            jax.config.update("jax_enable_x64", True)  # type: ignore[no-untyped-call]
        xp = array_api_compat.array_namespace(
            mod.asarray(0) if self is not Backend.CUPY else mod.empty(0)
        )
        return xp, self._device(mod, xp)

    def asarray(self, a: Any, xp: ArrayNamespace, device: Any, rng: Any = None) -> Array:
        """
        Build an array of this backend from a NumPy array, keeping its dtype.

        Parameters
        ----------
        a : numpy.ndarray
            The values.
        xp : array_namespace
            This backend's namespace.
        device : object
            The device to create it on.
        rng : numpy.random.Generator, optional
            Where chunks are drawn from on ``dask.array:chunked``; default: fixed cuts.

        Returns
        -------
        array
            On ``dask.array``, one chunk; on ``dask.array:chunked``, several uneven
            chunks per axis (see `uneven_chunks`); elsewhere as ``xp.asarray`` makes it.
        """
        if self.modname == "dask.array":
            import dask.array as da

            chunks: Any = -1  # one chunk (Dask's "auto" chunking fails on some empty shapes)
            if self is Backend.DASK_CHUNKED:
                chunks = tuple(tuple(uneven_chunks(d, rng)) for d in a.shape)
            out: Array = da.from_array(a, chunks=chunks)  # type: ignore[no-untyped-call]
        else:
            out = xp.asarray(a, device=device)
        return out

    def load_or_skip(self) -> tuple[ArrayNamespace, Any]:
        """
        Import the backend and pick its device, or skip the calling test.

        Returns
        -------
        array_namespace
            The array-api-compat namespace.
        object
            The device to create arrays on.
        """
        import pytest

        try:
            return self.load()
        except BackendUnavailableError as e:
            pytest.skip(str(e))

    def _device(self, mod: ModuleType, xp: ArrayNamespace) -> Any:
        """The device of this member, or `BackendUnavailableError`."""
        if self is Backend.ARRAY_API_STRICT_DEVICE1:
            return mod.Device("device1")
        if self is Backend.TORCH_CUDA:
            if not mod.cuda.is_available():
                msg = "no CUDA device for torch"
                raise BackendUnavailableError(msg)
            return mod.device("cuda")
        if self is Backend.JAX_GPU:
            import jax

            try:
                return jax.devices("gpu")[0]
            except RuntimeError as e:
                msg = "no GPU device for jax"
                raise BackendUnavailableError(msg) from e
        if self is Backend.CUPY:
            try:
                mod.cuda.runtime.getDeviceCount()
            except Exception as e:  # CUDARuntimeError without a driver
                msg = "no CUDA device for cupy"
                raise BackendUnavailableError(msg) from e
        return array_api_compat.device(xp.empty(0))


def uneven_chunks(d: int, rng: Any = None) -> list[int]:
    """
    Cut an axis into several chunks of unequal lengths.

    Parameters
    ----------
    d : int
        The axis' length.
    rng : numpy.random.Generator, optional
        Where to draw up to 3 cuts (any axis longer than 1 is cut); default: fixed cuts
        after 1 and after ``d // 2``, axes of 2 or less kept whole (the tests' many
        length-2 axes would otherwise make one task per element).

    Returns
    -------
    list of int
        Chunk lengths summing to `d`, never 0: ``[d]`` for ``d <= 1``; by default
        ``[1, 2]``, ``[1, 1, 2]``, ``[1, 1, 3]``, ``[1, 2, 3]``, ... for ``d >= 3``.
    """
    if d <= 1 or (rng is None and d == 2):
        return [d]
    if rng is None:
        cuts = sorted({1, d // 2})
    else:
        cuts = sorted({int(c) for c in rng.integers(1, d, size=min(d - 1, 3))})
    return [b - a for a, b in zip([0, *cuts], [*cuts, d], strict=True)]


def dtypes(xp: ArrayNamespace, backend: Backend) -> dict[str, Any]:
    """
    Every dtype of a backend that a Tile must handle.

    Parameters
    ----------
    xp : array_namespace
        The backend's namespace.
    backend : Backend
        The backend, for the dtypes outside the standard.

    Returns
    -------
    dict
        Dtype name to dtype: the standard's dtypes, plus float16 and bfloat16
        where the backend has them, and NumPy's text and object dtypes.
    """
    # `kind=None` given: ndonnx has no default for it
    out: dict[str, Any] = dict(xp.__array_namespace_info__().dtypes(kind=None))
    mod = importlib.import_module(backend.modname)
    if backend.modname.startswith("array_api_strict"):
        return out
    for name in ("float16", "bfloat16", "uint16", "uint32", "uint64"):
        if name not in out and hasattr(mod, name):
            out[name] = getattr(mod, name)
    if backend.modname in {"numpy", "dask.array"}:
        import numpy as np

        out["float16"] = np.dtype(np.float16)
        try:
            import ml_dtypes

            out["bfloat16"] = ml_dtypes.bfloat16
        except ImportError:
            pass
    if backend is Backend.NUMPY:
        out |= {"str": np.dtype("U5"), "bytes": np.dtype("S5"), "object": np.dtype(object)}
        if hasattr(np.dtypes, "StringDType"):
            out["StringDType"] = np.dtypes.StringDType()
    return out


def to_numpy(a: Any) -> Any:
    """
    Copy an array of any backend and device to NumPy, bit for bit.

    Parameters
    ----------
    a : array
        The array.

    Returns
    -------
    numpy.ndarray
        A new NumPy array (never a view of `a`) with the same bits; PyTorch dtypes that NumPy lacks
        (bfloat16, wide unsigned ints) come back as same-width signed ints.
    """
    import numpy as np

    xp = array_api_compat.array_namespace(a)
    if library(xp) == "torch":
        import torch

        a = a.detach().cpu().resolve_conj().contiguous()
        widths = {torch.bfloat16: torch.int16, torch.uint16: torch.int16}
        widths |= {torch.uint32: torch.int32, torch.uint64: torch.int64}
        if a.dtype in widths:
            a = a.view(widths[a.dtype])
        return a.numpy().copy()
    if library(xp) == "dask":
        return np.asarray(a.compute())
    if type(a).__module__.startswith("cupy"):
        return a.get()
    if library(xp) == "ndonnx":
        return a.unwrap_numpy().copy()
    if library(xp) == "sparse":
        return a.todense()
    if type(a).__module__.startswith("array_api_strict"):
        a = xp.asarray(a, device=xp.__array_namespace_info__().default_device())
        return np.from_dlpack(a).copy()
    return np.array(a, copy=True)


def same_bits(a: Any, b: Any) -> bool:
    """
    Whether two NumPy arrays have the same shape, dtype and bits.

    Parameters
    ----------
    a, b : numpy.ndarray
        The arrays.

    Returns
    -------
    bool
        True when equal bit for bit (NaNs and signed zeros included); text and
        object arrays compare by value.
    """
    import numpy as np

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "OUST":
        return bool(np.array_equal(a, b))
    return bool(np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)))


def arange(shape: tuple[int, ...]) -> Any:
    """
    Distinct values of a shape, for a NumPy reference.

    Parameters
    ----------
    shape : tuple of int
        The shape.

    Returns
    -------
    numpy.ndarray
        ``1, 2, ...`` in C order, of `shape`.
    """
    import numpy as np

    return np.arange(1, math.prod(shape) + 1).reshape(shape)


def reps_tuple(reps: int | tuple[int, ...]) -> tuple[int, ...]:
    """
    Give repeats as the tuple that every native tile takes.

    Parameters
    ----------
    reps : int or tuple of int
        Repeats as `xtile.tile` takes them.

    Returns
    -------
    tuple of int
        `reps`, a 1-tuple for an int.
    """
    return (reps,) if isinstance(reps, int) else reps


def assert_tile(y: Array, x: Array, reps: Any, xp: ArrayNamespace) -> None:
    """
    Check that `y` is ``numpy.tile(x, reps)`` bit for bit, in `x`'s namespace and device.

    Parameters
    ----------
    y : array
        The tile to check.
    x : array
        Its input.
    reps : int or tuple of int
        Its repeats.
    xp : array_namespace
        The namespace `y` must have.
    """
    import numpy as np

    assert array_api_compat.array_namespace(y) is xp
    assert y.dtype == x.dtype
    assert array_api_compat.device(y) == array_api_compat.device(x)
    expected = np.tile(to_numpy(x), reps)
    actual = to_numpy(y)
    assert actual.shape == expected.shape
    assert same_bits(actual, expected), (actual, expected)


def missing_imports(code: str) -> list[str]:
    """
    The top-level modules that example `code` imports and that are not installed.

    Parameters
    ----------
    code : str
        Python source, or doctest text (``>>>`` lines; those marked ``+SKIP`` never
        run).

    Returns
    -------
    list of str
        Their names, sorted; empty if every one is installed.
    """
    import importlib.util
    import re

    code = "\n".join(line for line in code.splitlines() if "doctest: +SKIP" not in line)
    lines = r"^\s*(?:>>> )?"
    names = re.findall(lines + r"(?:import|from) (\w+)", code, re.MULTILINE)
    names += re.findall(lines + r"import [\w.]+(?: as \w+)?, (\w+)", code, re.MULTILINE)
    return sorted({n for n in names if importlib.util.find_spec(n) is None})
