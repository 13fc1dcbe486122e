"""
The one importer of `array_api_compat`: every backend check goes through here.

While ``torch.compile`` traces, array-api-compat's name-based checks are replaced by
``isinstance(x, torch.Tensor)``: their ``functools.lru_cache`` makes dynamo warn (and
fail under ``fullgraph=True`` with warnings as errors), and inside a traced function
every array is a tensor anyway.
"""

import sys
from types import ModuleType
from typing import Any, TypeGuard

import array_api_compat
from array_api_compat import is_jax_array, is_lazy_array, is_numpy_array

from ._registry import LIBRARIES, NAMESPACES
from ._typing import Array

__all__ = [
    "array_namespace",
    "cached_namespace",
    "compiling_torch",
    "device",
    "is_array_api_obj",
    "is_jax_array",
    "is_lazy_array",
    "is_numpy_array",
    "library",
    "runtime_shape",
]


def compiling_torch() -> Any:  # numpydoc ignore=RT01
    """
    The `torch` module while dynamo traces, else None; never imports torch.

    Nothing here reads `x`'s type by name: dynamo cannot trace string methods on the
    module name of a tensor subclass (`torch.nn.Parameter`).
    """
    torch = sys.modules.get("torch")
    return torch if torch is not None and torch.compiler.is_compiling() else None


# Never arrays; `float` is not listed since NumPy's float64 scalar subclasses it
_NOT_ARRAYS = frozenset({int, bool, tuple, list, str, bytes, type(None)})


def is_array_api_obj(x: object) -> TypeGuard[Array]:  # numpydoc ignore=PR01,RT01
    """Whether `x` is an array of a namespace array-api-compat supports."""
    if type(x) in _NOT_ARRAYS:
        return False
    if (torch := compiling_torch()) is not None:
        return isinstance(x, torch.Tensor)
    return array_api_compat.is_array_api_obj(x)


# For these libraries the namespace depends on the array's type alone; the lookup costs
# ~1-2 us, a third of `numpy.tile` on a small array, so it is done once per type.
_BY_TYPE: dict[type, ModuleType] = {}
_TYPE_CACHED = frozenset(m for lib in LIBRARIES for m in lib.array_modules)


def array_namespace(x: object) -> ModuleType:  # numpydoc ignore=PR01,RT01
    """The array-api-compat namespace of `x`."""
    if (xp := cached_namespace(x)) is not None:
        return xp
    if compiling_torch() is not None:
        from array_api_compat import torch as torch_namespace

        return torch_namespace
    xp = array_api_compat.array_namespace(x)
    if type(x).__module__.partition(".")[0] in _TYPE_CACHED:
        _BY_TYPE[type(x)] = xp
    return xp


def cached_namespace(x: object) -> ModuleType | None:  # numpydoc ignore=PR01,RT01
    """The namespace of an array of a type seen before, outside dynamo; else None."""
    xp = _BY_TYPE.get(type(x))
    if xp is None or (xp.__name__ == "array_api_compat.torch" and compiling_torch()):
        return None
    return xp


_LIBRARIES = {ns: lib.name for ns, lib in NAMESPACES.items()}


def library(xp: ModuleType) -> str:  # numpydoc ignore=PR01,RT01
    """
    The library behind namespace `xp`, by name.

    The name of its `xtile._lib._registry.Library` ("numpy", "torch", ...), or the
    namespace's module name. One lookup, by name: the hot path runs under dynamo too.
    """
    return _LIBRARIES.get(xp.__name__, xp.__name__)


def device(x: Any) -> Any:  # numpydoc ignore=PR01,RT01
    """The device of `x` (NumPy and Dask arrays lack a ``.device`` before NumPy 2)."""
    return array_api_compat.device(x)


def runtime_shape(x: Any) -> Array | None:  # numpydoc ignore=PR01,RT01
    """
    The shape of lazy `x` as a 1-D int64 array, where its library gives one; else None.

    ndonnx gives ``dynamic_shape``, and its `reshape` and `broadcast_to` take shapes
    as such arrays; Dask's unknown sizes (nan) have none.
    """
    shape: Array | None = getattr(x, "dynamic_shape", None)
    return shape
