"""
The one registry of the array libraries xtile knows by name.

What else names libraries derives from it: which namespace belongs to which library
(`xtile._lib._compat.library`), whose namespaces are cached per array type, which
libraries have primitives in `xtile._fast`, and, in the test harness, which can be
written into (``out=``). A library not listed here still tiles, by the standard
path, where array-api-compat knows it.
"""

from typing import NamedTuple

__all__ = ["LIBRARIES", "NAMESPACES", "Library"]


class Library(NamedTuple):
    """
    One array library.

    Attributes
    ----------
    name : str
        Its name in xtile ("jax"): what `xtile._lib._compat.library` returns, and
        the name of its module in `xtile._fast`.
    namespaces : tuple of str
        The module names of its namespaces: its own, and array-api-compat's.
    array_modules : tuple of str
        The top-level modules of its array types where the namespace depends on the
        type alone, so it is cached per type; empty where it may not.
    primitives : bool
        Whether `xtile._fast` has a module for it.
    mutable : bool
        Whether its arrays can be written in place, so ``out=`` can take them.
    """

    name: str
    namespaces: tuple[str, ...]
    array_modules: tuple[str, ...] = ()
    primitives: bool = False
    mutable: bool = False


LIBRARIES = (
    Library("numpy", ("numpy", "array_api_compat.numpy"), ("numpy",), True, True),
    Library("torch", ("torch", "array_api_compat.torch"), ("torch",), True, True),
    Library("jax", ("jax.numpy", "jax.experimental.array_api"), ("jax", "jaxlib"), True),
    Library("cupy", ("cupy", "array_api_compat.cupy"), ("cupy",), mutable=True),
    Library("dask", ("dask.array", "array_api_compat.dask.array"), primitives=True),
    Library("array_api_strict", ("array_api_strict",), primitives=True, mutable=True),
    Library("sparse", ("sparse",), primitives=True),
    Library("ndonnx", ("ndonnx",)),
)

# each namespace's module name -> its library
NAMESPACES = {ns: lib for lib in LIBRARIES for ns in lib.namespaces}
