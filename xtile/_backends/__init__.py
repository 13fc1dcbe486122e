"""The array libraries xtile knows (`of`: an array's namespace and `Backend`), their primitives."""

import functools
import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

import array_api_compat

from .._program import MAX_DIMS, Copy, Layout, Model, Price, Repeat, Replicate

Array = Any
Call = Callable[[Array, Array | None], Array]


class Backend(NamedTuple):
    """A library's primitives: what runs a program's steps, and what they take."""

    name: str
    model: Model = Model()  # the price of its steps on a `Layout` it tunes
    device: Model = Model()  # on any other (a GPU's)
    # what the planner reads of `x`, the plan cache's key; None for an array that gets
    # one copy, unplanned (a subclass, a traced tensor); no function: never planned
    layout: Callable[[Array], Layout | None] | None = None
    copy: Callable[[Copy], Call] | None = None  # a `Copy` as a call (x, dest or None)
    repeat: Callable[[Repeat], Call] | None = None
    replicate: Callable[[Array, Replicate], None] | None = None  # (out, step), in place
    whole: Callable[..., Array] | None = None  # (x, reps, xp, tile): the library's own tile
    unwrap: Callable[[Array], Any] | None = None  # a subclass's plain arrays, and rebuild
    # its own `out` checks (x, out, op, seen): `seen`, of a layout that passed them before
    check_out: Callable[[Array, Array, str, bool], None] | None = None
    empty: Callable[[tuple[int, ...], Array], Array] | None = None  # a new C-ordered array
    max_dims: int = MAX_DIMS  # the most axes of its broadcast view
    xp: ModuleType | None = None  # its namespace, for the programs kept of it
    # what of a plain array (not a subclass's) its `layout` and checks follow from (shape,
    # strides, dtype, ...), so that a repeated call is looked up by it at once; None for
    # an array it cannot say that of
    raw_key: Callable[[Array], tuple[Any, ...] | None] | None = None


STANDARD = Backend("standard")
# a GPU's prices: benchmarks/fit_cost.py --backend torch-cuda, an H200 (big bytes: --cases big)
DEVICE = Model(
    copy=Price(2.03e4, 0.001027, 0.001483, 8.467e-05, 0.0001691),
    item=Price(2.926e4, 0.0, 0.0007712, 5.234e-05, 5.234e-05),
    replicate=Price(2.985e4, 0.001027, 0.0, 0.0004003, 0.0007995),
    native=Price(2.661e4, 0.0, 0.0009559, 1.993e-05, 0.0003992),
    words=frozenset({2, 4, 8, 16}),  # 16: as complex128
    stage=1 << 22,  # a staged array of up to 4 MiB beside a device's output
    interleaved=True,
)


class Library(NamedTuple):
    """An array library: its name, namespaces, array modules, and whether it is writable."""

    name: str
    namespaces: tuple[str, ...]
    array_modules: tuple[str, ...] = ()
    mutable: bool = False


LIBRARIES = (
    Library("numpy", ("numpy", "array_api_compat.numpy"), ("numpy",), True),
    Library("torch", ("torch", "array_api_compat.torch"), ("torch",), True),
    Library("jax", ("jax.numpy", "jax.experimental.array_api"), ("jax", "jaxlib")),
    Library("cupy", ("cupy", "array_api_compat.cupy"), ("cupy",), True),
    Library("dask", ("dask.array", "array_api_compat.dask.array")),
    Library("array_api_strict", ("array_api_strict",), mutable=True),
    Library("sparse", ("sparse",)),
    Library("ndonnx", ("ndonnx",)),
)
_NAMES = {ns: lib.name for lib in LIBRARIES for ns in lib.namespaces}
MUTABLE = frozenset(lib.name for lib in LIBRARIES if lib.mutable)  # eager, writable arrays
_TYPE_CACHED = frozenset(m for lib in LIBRARIES for m in lib.array_modules)
# array type -> (namespace, backend), for the libraries whose namespace is the type's alone
_BY_TYPE: dict[type, tuple[ModuleType, Backend]] = {}
_NOT_ARRAYS = (int, bool, float, tuple, list, str, bytes, type(None))  # at once


def compiling() -> bool:
    """Whether ``torch.compile`` traces now; never imports torch."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def symbolic(v: object, /) -> bool:
    """Whether `v` is a symbolic size: a PyTorch ``SymInt``, a JAX symbolic dimension."""
    t = type(v)
    return t.__name__ in {"SymInt", "_DimExpr"} and t.__module__.split(".")[0] in {"torch", "jax"}


def library(xp: ModuleType, /) -> str:
    """The name of the library behind namespace `xp` (its module name if unknown)."""
    return _NAMES.get(xp.__name__, xp.__name__)


def load(name: str, /) -> Backend:
    """The backend of library `name`: its module here (one per library), else the standard one."""
    if name not in _NAMES.values():
        return STANDARD
    return importlib.import_module(f"{__name__}.{name}").BACKEND  # type: ignore[no-any-return]


def of(x: object, /) -> tuple[ModuleType, Backend] | None:
    """The namespace and backend of array `x`; None for a non-array."""
    if compiling():  # read no cache: dynamo would guard on it
        if not isinstance(x, sys.modules["torch"].Tensor):
            return None
        from array_api_compat import torch as xp

        from . import torch as module  # an import statement: Dynamo traces it, not importlib

        return xp, module.BACKEND._replace(layout=None)  # the library's own tile
    if (found := _BY_TYPE.get(type(x))) is not None:
        return found
    if type(x) in _NOT_ARRAYS or not array_api_compat.is_array_api_obj(x):
        return None
    xp = array_api_compat.array_namespace(x)
    found = xp, load(library(xp))
    if type(x).__module__.partition(".")[0] in _TYPE_CACHED:
        _BY_TYPE[type(x)] = found
    return found


@functools.lru_cache(maxsize=256)
def overlaps_itself(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int, /) -> bool:
    """Whether two elements of an array of `shape` and `strides` may share memory."""
    if 0 in shape:
        return False
    extent = itemsize
    for st, d in sorted((abs(st), d) for d, st in zip(shape, strides, strict=True) if d > 1):
        if st < extent:
            return True
        extent = st * d
    return False


def check_apart(
    x: Array, out: Array, op: str, strides: Any, size: int, apart: Any, seen: bool, /
) -> None:
    """`out` apart from `x` (not ``apart(x, out)``); unless `seen` before, of distinct elements."""
    if not seen and overlaps_itself(tuple(out.shape), tuple(strides), size):
        msg = f"{op}: `out` has elements that share memory (strides {strides}); pass a copy."
        raise ValueError(msg)
    if apart(x, out):
        msg = f"{op}: `out` shares memory with the input; pass a separate array."
        raise ValueError(msg)
