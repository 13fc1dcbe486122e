"""
The differential fuzzer behind ``python -m xtile``: random tiles against `numpy.tile`.

Each case draws an input (shape of rank 0 to 64, mostly small; every dtype of the
backend; a layout: contiguous, transposed, strided, flipped, offset, broadcast; on
``dask.array:chunked`` several uneven chunks per axis), repeats in every form
`xtile.tile` takes (an int, a tuple, a list, NumPy integers, a 0-D or 1-D integer
array of NumPy or of the backend), with outputs up to tens of MiB, and compares the
tile bit for bit with `numpy.tile` and, where it has one, the backend's own tile. A
failing case is shrunk (smaller dimensions and repeats while it still fails) and
reported with the seed that reproduces it.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import xtile

from ._backends import Backend, dtypes, same_bits, to_numpy

__all__ = ["Case", "check", "draw", "shrink"]

TEXT_DTYPES = frozenset({"str", "bytes", "object", "StringDType"})
LAYOUTS = ("C", "transposed", "strided", "flipped", "offset", "broadcast")
REPEATS_FORMS = ("int", "tuple", "list", "numpy-ints", "numpy-array", "backend-array")
_MAX_OUT_BYTES = 32 << 20


@dataclass(frozen=True)
class Case:
    """One fuzz case: what to build and how to pass the repeats."""

    shape: tuple[int, ...]
    reps: tuple[int, ...]
    dtype: str
    layout: str
    form: str

    def __str__(self) -> str:
        """A line that reproduces the case."""
        return f"{self.shape} x {self.reps} {self.dtype} {self.layout}, repeats as {self.form}"


def draw(rng: Any, names: list[str], max_rank: int = 64) -> Case:
    """
    Draw a random case.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of randomness.
    names : list of str
        The dtype names to draw from.
    max_rank : int, optional
        The highest rank of the output (`Backend.max_rank`).

    Returns
    -------
    Case
        A case whose output has at most 32 MiB.
    """
    u = rng.random()
    if u < 0.05:  # a high rank, mostly length-1 axes
        ndim = int(rng.integers(33, max_rank + 1))
        shape = [1] * ndim
        for axis in rng.choice(ndim, size=int(rng.integers(0, 5)), replace=False):
            shape[int(axis)] = int(rng.integers(0, 4))
        reps = [1] * int(rng.integers(0, min(ndim + 2, max_rank + 1)))
        for axis in rng.choice(
            len(reps), size=min(len(reps), int(rng.integers(0, 5))), replace=False
        ):
            reps[int(axis)] = int(rng.integers(0, 4))
    elif u < 0.25:  # a large output: few axes, long or short runs
        ndim = int(rng.integers(1, 5))
        shape = [int(d) for d in rng.integers(1, 60, size=ndim)]
        reps = [int(r) for r in rng.integers(1, 40, size=int(rng.integers(1, ndim + 2)))]
    else:  # small, with zeros and promotion both ways
        shape = [int(d) for d in rng.integers(0, 5, size=int(rng.integers(0, 6)))]
        reps = [int(r) for r in rng.integers(0, 4, size=int(rng.integers(0, 7)))]
    dtype = str(rng.choice(names))
    # keep the output within _MAX_OUT_BYTES for items of up to 8 bytes
    while math.prod(xtile.tile_shape(shape, reps)) * 8 > _MAX_OUT_BYTES:  # type: ignore[arg-type]
        big = reps if max(reps) > 1 else shape
        i = big.index(max(big))
        big[i] //= 2
    form = str(rng.choice(REPEATS_FORMS))
    if form == "int" and len(reps) != 1:
        form = "tuple"
    return Case(tuple(shape), tuple(reps), dtype, str(rng.choice(LAYOUTS)), form)


def _build(case: Case, backend: Backend, dtype: Any, rng_seed: int) -> Any:
    """The input array of `case`, in the backend's namespace and on its device."""
    import numpy as np

    xp, device = backend.load()
    rng = np.random.default_rng(rng_seed)
    shape = case.shape
    if case.layout == "transposed":
        shape = shape[::-1]
    elif case.layout in {"strided", "offset"} and shape:
        shape = (shape[0] * 2 + 1, *shape[1:])
    elif case.layout == "broadcast" and shape:
        shape = (1, *shape[1:])
    data = rng.integers(0, 120, size=shape)
    if case.dtype in TEXT_DTYPES or backend.modname == "dask.array":
        x = backend.asarray(data.astype(dtype), xp, device, rng)
    else:
        x = xp.astype(backend.asarray(data, xp, device, rng), dtype)
    if case.layout == "transposed":
        x = xp.permute_dims(x, tuple(reversed(range(x.ndim))))
    elif case.layout == "strided" and x.ndim:
        x = x[::2, ...]
    elif case.layout == "offset" and x.ndim:
        x = x[1::2, ...]
    elif case.layout == "flipped" and x.ndim:
        x = xp.flip(x, axis=0)
    elif case.layout == "broadcast" and x.ndim:
        x = xp.broadcast_to(x, case.shape)
    return x


def _repeats(case: Case, xp: Any, device: Any) -> Any:
    """`case.reps` in the form the case asks for."""
    import numpy as np

    reps = case.reps
    if case.form == "int":
        return reps[0]
    if case.form == "list":
        return list(reps)
    if case.form == "numpy-ints":
        return tuple(np.int32(r) if i % 2 else np.uint8(r) for i, r in enumerate(reps))
    if case.form == "numpy-array":
        return np.asarray(reps, dtype=np.int16)
    if case.form == "backend-array":
        return xp.asarray(reps, dtype=xp.int64, device=device)
    return reps


def check(backend: Backend, case: Case, seed: int) -> str | None:
    """
    Run one case on a backend.

    Parameters
    ----------
    backend : Backend
        The backend and device.
    case : Case
        The case.
    seed : int
        The seed of the input's values.

    Returns
    -------
    str or None
        None where xtile matches `numpy.tile` (and the native tile), else what differed.
    """
    import numpy as np

    xp, device = backend.load()
    names = dtypes(xp, backend)
    try:
        x = _build(case, backend, names[case.dtype], seed)
    except (NotImplementedError, RuntimeError):  # a layout the backend cannot make (flip uint64)
        case = replace(case, layout="C")
        x = _build(case, backend, names[case.dtype], seed)
    try:
        y = xtile.tile(x, _repeats(case, xp, device))
        got = to_numpy(y)
    except Exception as e:  # noqa: BLE001  # a crash is a finding: report it
        return f"{type(e).__name__}: {e}"
    expected = np.tile(to_numpy(x), case.reps)
    if not same_bits(got, expected):
        return f"differs from numpy.tile: {got.shape} {got.dtype}, expected {expected.shape}"
    # sparse.tile of a 0-D input by () has the shape (1,), where numpy.tile keeps ()
    native_ok = not (backend is Backend.SPARSE and not case.shape and not case.reps)
    if case.dtype not in TEXT_DTYPES and hasattr(xp, "tile") and native_ok:
        try:
            native = to_numpy(xp.tile(x, case.reps))
        except Exception:  # noqa: BLE001  # the native tile's own bug (dask.array.tile on some empty outputs)
            return None
        if not same_bits(got, native):
            return "differs from the backend's own tile"
    return None


def shrink(case: Case, failed: Callable[[Case], bool]) -> Case:
    """
    Shrink a failing case: smaller dimensions and repeats while it still fails.

    Parameters
    ----------
    case : Case
        A failing case.
    failed : callable
        Whether a case still fails.

    Returns
    -------
    Case
        A locally minimal failing case.
    """
    changed = True
    while changed:
        changed = False
        for field, values in (("shape", case.shape), ("reps", case.reps)):
            for i, v in enumerate(values):
                for smaller in (0, 1, v // 2):
                    if smaller >= v:
                        continue
                    new = (*values[:i], smaller, *values[i + 1 :])
                    candidate = (
                        replace(case, shape=new) if field == "shape" else replace(case, reps=new)
                    )
                    if failed(candidate):
                        case, changed = candidate, True
                        break
                if changed:
                    break
            if changed:
                break
    return case
