"""
The one importer of `array_api_compat`: every backend check goes through here.

While ``torch.compile`` traces, array-api-compat's name-based checks are replaced by
``isinstance(x, torch.Tensor)``: their ``functools.lru_cache`` makes dynamo warn (and
fail under ``fullgraph=True`` with warnings as errors), and inside a traced function
every array is a tensor anyway.
"""

import sys
from types import ModuleType
from typing import Any

import array_api_compat
from array_api_compat import is_dask_namespace, is_jax_array, is_lazy_array

__all__ = [
    "array_namespace",
    "device",
    "is_array_api_obj",
    "is_dask_namespace",
    "is_jax_array",
    "is_jax_namespace",
    "is_lazy_array",
    "is_numpy_namespace",
    "is_torch_namespace",
]


def _compiling_torch(x: object) -> Any:  # numpydoc ignore=PR01,RT01
    """The `torch` module while dynamo traces a tensor `x`, else None; never imports torch."""
    if not type(x).__module__.startswith("torch"):
        return None
    torch = sys.modules.get("torch")
    return torch if torch is not None and torch.compiler.is_compiling() else None


# Never arrays; `float` is not listed since NumPy's float64 scalar subclasses it
_NOT_ARRAYS = frozenset({int, bool, tuple, list, str, bytes, type(None)})


def is_array_api_obj(x: object) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether `x` is an array of a namespace array-api-compat supports."""
    if type(x) in _NOT_ARRAYS:
        return False
    if (torch := _compiling_torch(x)) is not None:
        return isinstance(x, torch.Tensor)
    return array_api_compat.is_array_api_obj(x)


# For these libraries the namespace depends on the array's type alone; the lookup costs
# ~1-2 us, a third of `numpy.tile` on a small array, so it is done once per type.
_BY_TYPE: dict[type, ModuleType] = {}
_TYPE_CACHED = ("numpy", "torch", "cupy", "jax", "jaxlib")


def array_namespace(x: object) -> ModuleType:  # numpydoc ignore=PR01,RT01
    """The array-api-compat namespace of `x`."""
    if _compiling_torch(x) is not None:
        from array_api_compat import torch as torch_namespace

        return torch_namespace
    xp = _BY_TYPE.get(type(x))
    if xp is None:
        xp = array_api_compat.array_namespace(x)
        if type(x).__module__.partition(".")[0] in _TYPE_CACHED:
            _BY_TYPE[type(x)] = xp
    return xp


def is_numpy_namespace(xp: ModuleType) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether `xp` is NumPy's namespace, by name: the hot path runs under dynamo too."""
    return xp.__name__ in {"numpy", "array_api_compat.numpy"}


def is_jax_namespace(xp: ModuleType) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether `xp` is JAX's namespace, by name: the hot path runs under dynamo too."""
    return xp.__name__ in {"jax.numpy", "jax.experimental.array_api"}


def is_torch_namespace(xp: ModuleType) -> bool:  # numpydoc ignore=PR01,RT01
    """Whether `xp` is PyTorch's namespace, by name: the hot path runs under dynamo too."""
    return xp.__name__ in {"torch", "array_api_compat.torch"}


def device(x: Any) -> Any:  # numpydoc ignore=PR01,RT01
    """The device of `x` (NumPy and Dask arrays lack a ``.device`` before NumPy 2)."""
    return array_api_compat.device(x)
