"""
The backends and devices that the test suite and ``python -m xtile`` run on.

Harness code, not library code: it imports the backends it is asked for, turns on
JAX's 64-bit mode so that every dtype exists, and brings results to NumPy for the
comparison with `numpy.tile`.
"""

import importlib
from enum import Enum
from types import ModuleType
from typing import Any

from . import _compat
from ._typing import Array, ArrayNamespace

__all__ = ["Backend", "BackendUnavailableError", "dtypes", "same_bits", "to_numpy"]


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
    CUPY = "cupy"

    @property
    def modname(self) -> str:  # numpydoc ignore=RT01
        """The module to import."""
        return self.value.split(":")[0]

    @property
    def is_gpu(self) -> bool:  # numpydoc ignore=RT01
        """Whether this backend runs on a CUDA device."""
        return self in {Backend.TORCH_CUDA, Backend.JAX_GPU, Backend.CUPY}

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
        xp = _compat.array_namespace(mod.asarray(0) if self is not Backend.CUPY else mod.empty(0))
        return xp, self._device(mod, xp)

    def _device(self, mod: ModuleType, xp: ArrayNamespace) -> Any:  # numpydoc ignore=PR01,RT01
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
        return _compat.device(xp.empty(0))


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
    out: dict[str, Any] = dict(xp.__array_namespace_info__().dtypes())
    mod = importlib.import_module(backend.modname)
    if backend.modname.startswith("array_api_strict"):
        return out
    for name in ("float16", "bfloat16", "uint16", "uint32", "uint64"):
        if name not in out and hasattr(mod, name):
            out[name] = getattr(mod, name)
    if backend in {Backend.NUMPY, Backend.DASK}:
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


def to_numpy(a: Array) -> Any:
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

    xp = _compat.array_namespace(a)
    if _compat.backend(xp) == "torch":
        import torch

        a = a.detach().cpu().resolve_conj().contiguous()
        widths = {torch.bfloat16: torch.int16, torch.uint16: torch.int16}
        widths |= {torch.uint32: torch.int32, torch.uint64: torch.int64}
        if a.dtype in widths:
            a = a.view(widths[a.dtype])
        return a.numpy().copy()
    if _compat.backend(xp) == "dask":
        return np.asarray(a.compute())
    if type(a).__module__.startswith("cupy"):
        return a.get()
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
