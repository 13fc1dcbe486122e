"""Fixtures: every installed backend on every available device."""

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from xtile._lib import _compat
from xtile._lib._backends import Backend, BackendUnavailableError, dtypes, same_bits, to_numpy

settings.register_profile(
    "xtile",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# CI replays the same examples every run: a red CI is then reproducible
settings.register_profile(
    "ci", parent=settings.get_profile("xtile"), derandomize=True, database=None
)
settings.load_profile("ci" if os.environ.get("CI") else "xtile")


@pytest.fixture(params=list(Backend), ids=lambda b: b.value)
def library(request: pytest.FixtureRequest) -> Backend:
    """The backend under test."""
    return request.param  # type: ignore[no-any-return]


def load_or_skip(library: Backend) -> tuple[Any, Any]:
    """The namespace and device of `library`; the test is skipped where it is absent."""
    try:
        return library.load()
    except BackendUnavailableError as e:
        pytest.skip(str(e))


@pytest.fixture
def backend(library: Backend) -> tuple[Any, Any]:
    """The namespace and device of `library`; skipped where absent."""
    return load_or_skip(library)


@pytest.fixture
def xp(backend: tuple[Any, Any]) -> Any:
    """The array-api-compat namespace of the backend under test."""
    return backend[0]


@pytest.fixture
def device(backend: tuple[Any, Any]) -> Any:
    """The device arrays are created on (a non-default one where the backend has it)."""
    return backend[1]


@pytest.fixture
def all_dtypes(xp: Any, library: Backend) -> dict[str, Any]:
    """Every dtype of the backend under test."""
    return dtypes(xp, library)


@pytest.fixture
def make(xp: Any, device: Any) -> Callable[..., Any]:
    """Build an array of the backend under test from a NumPy array."""

    def make(a: Any, dtype: Any = None) -> Any:
        a = np.asarray(a)
        if isinstance(dtype, np.dtype) and dtype.kind in "OUST":
            return xp.asarray(a.astype(dtype), device=device)
        x = xp.asarray(a, device=device)
        return x if dtype is None else xp.astype(x, dtype)

    return make


def arange(shape: tuple[int, ...]) -> Any:
    """Distinct values of a shape, for a NumPy reference."""
    return np.arange(1, math.prod(shape) + 1).reshape(shape)


MUTABLE = {
    Backend.NUMPY,
    Backend.ARRAY_API_STRICT,
    Backend.ARRAY_API_STRICT_DEVICE1,
    Backend.TORCH,
    Backend.TORCH_CUDA,
    Backend.CUPY,
}


def reps_tuple(reps: int | tuple[int, ...]) -> tuple[int, ...]:
    """Repeats as the tuple that every native tile takes."""
    return (reps,) if isinstance(reps, int) else reps


def assert_tile(y: Any, x: Any, reps: Any, xp: Any) -> None:
    """`y` is ``numpy.tile(x, reps)`` bit for bit, in `x`'s namespace, dtype and device."""
    assert _compat.array_namespace(y) is xp
    assert y.dtype == x.dtype
    assert _compat.device(y) == _compat.device(x)
    expected = np.tile(to_numpy(x), reps)
    actual = to_numpy(y)
    assert actual.shape == expected.shape
    assert same_bits(actual, expected), (actual, expected)
