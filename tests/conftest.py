"""Fixtures: every installed backend on every available device, both implementations."""

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from array_api_extra.testing import patch_lazy_xp_functions
from hypothesis import HealthCheck, settings

import xtile._agnostic
import xtile._dispatch
import xtile._fast
from xtile._testing import Backend, dtypes, slabs_at_every_size

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
    """The backend under test: one library on one device."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def xp(library: Backend, request: pytest.FixtureRequest) -> Iterator[Any]:
    """
    The array-api-compat namespace of the backend under test; skipped where absent.

    Functions a test module tags with `lazy_xp_function` run under `jax.jit` on
    JAX, and fail on Dask if they compute.
    """
    xp = library.load_or_skip()[0]
    with patch_lazy_xp_functions(request, xp=xp):
        yield xp


@pytest.fixture
def device(library: Backend) -> Any:
    """The device arrays are created on (a non-default one where the backend has it)."""
    return library.load_or_skip()[1]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that uses `impl` on each implementation; "cached" in test_tile."""
    if "impl" in metafunc.fixturenames:
        names = ["fast", "standard"]
        if metafunc.module.__name__.endswith("test_tile"):
            names.insert(1, "cached")
        metafunc.parametrize("impl", names, indirect=True)


@pytest.fixture
def impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """
    The implementation under test: the primitives, their cached programs, or the standard tile.

    Each test starts with an empty plan cache. "cached" calls `xtile.tile` twice per
    call and checks the second, which runs the program the first cached. "standard"
    keeps of each backend's primitives only its checks and limits (what it refuses,
    its subclasses, its rank), so every backend runs the standard-only tile.
    """
    xtile._dispatch.PLANS.clear()
    if request.param == "cached":
        tile = xtile.tile

        @functools.wraps(tile)
        def twice(x: Any, repeats: Any, /, **kwargs: Any) -> Any:
            with contextlib.suppress(Exception):
                tile(x, repeats, **kwargs)
            return tile(x, repeats, **kwargs)

        monkeypatch.setattr(xtile, "tile", twice)
    elif request.param == "standard":
        lookup = xtile._fast.lookup

        def limits_only(library: str) -> Any:
            """The backend's checks and limits, none of its primitives: the standard copy."""
            prims = lookup(library)
            if prims is None:
                return None
            return xtile._agnostic.Primitives(
                unwrap=prims.unwrap, check_out=prims.check_out, max_view_dims=prims.max_view_dims
            )

        monkeypatch.setattr(xtile._fast, "lookup", limits_only)
        monkeypatch.setattr(xtile._dispatch, "_SEEN", {})  # no program of the primitives
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(autouse=bool(os.environ.get("XTILE_TEST_SLABS")))
def slabs_everywhere() -> Iterator[None]:
    """
    With ``XTILE_TEST_SLABS=1``, every test runs with slabs at every size (see `slabs`).

    ``XTILE_TEST_SLABS=1 python -m pytest tests/test_tile.py`` runs the parity suite so.
    """
    with slabs_at_every_size():
        yield


@pytest.fixture(params=["one", "slabs"])
def slabs(request: pytest.FixtureRequest) -> Iterator[str]:
    """Big-output copies as they are ("one"), or at every size ("slabs")."""
    with slabs_at_every_size() if request.param == "slabs" else contextlib.nullcontext():
        yield request.param


@pytest.fixture
def all_dtypes(xp: Any, library: Backend) -> dict[str, Any]:
    """Every dtype of the backend under test."""
    return dtypes(xp, library)


@pytest.fixture
def make(xp: Any, device: Any, library: Backend) -> Callable[..., Any]:
    """
    Build an array of the backend under test from a NumPy array.

    On ``dask.array:chunked`` it comes in several uneven chunks per axis.
    """

    def make(a: Any, dtype: Any = None) -> Any:
        a = np.asarray(a)
        if isinstance(dtype, np.dtype) and dtype.kind in "OUST":
            return library.asarray(a.astype(dtype), xp, device)
        x = library.asarray(a, xp, device)
        return x if dtype is None else xp.astype(x, dtype)

    return make
