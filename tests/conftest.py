"""Fixtures: every installed backend on every available device, both implementations."""

import collections
import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from array_api_extra.testing import patch_lazy_xp_functions
from hypothesis import HealthCheck, settings

import xtile._backends
import xtile._run
from xtile._testing import Backend, BackendUnavailableError, dtypes, slabs_at_every_size

# every run replays the same examples, CI's and a user's alike: a red run is reproducible,
# never a chance draw; `pytest --hypothesis-profile=explore` draws new ones
settings.register_profile(
    "xtile",
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        # a test method parametrized over the backends runs on one instance per backend
        HealthCheck.differing_executors,
    ],
)
settings.register_profile(
    "explore",
    parent=settings.get_profile("xtile"),
    derandomize=False,
    database=settings.get_profile("default").database,
)
settings.load_profile("xtile")


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


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The skipped tests, one line per reason (``-rs`` gives one per line of code)."""
    reasons = collections.Counter(
        report.longrepr[2].removeprefix("Skipped: ")
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple)
    )
    for reason, n in reasons.most_common():
        terminalreporter.write_line(f"skipped {n}: {reason}")


@functools.cache
def absent() -> dict[Backend, str]:
    """The backends not installed or without their device here, each with why."""
    why = {}
    for backend in Backend:
        try:
            backend.load()
        except BackendUnavailableError as e:
            why[backend] = str(e)
    return why


def impls(backend: Backend | None, module: str) -> list[str]:
    """
    The implementations of `backend` that run different code (all three for None).

    "standard" differs from "fast" only where the backend has primitives beyond its
    checks and limits; "cached" (test_tile only) only where it keeps programs.
    """
    prims = None if backend is None else xtile._backends.load(backend.library)
    names = ["fast"]
    if module.endswith("test_tile") and (backend is None or (prims and prims.layout)):
        names.append("cached")
    if backend is None or (prims and prims != _limits_only(prims)):
        names.append("standard")
    return names


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """
    Run every test that uses `library` on each backend and device present here.

    With `impl`, on each of the backend's implementations that runs different code
    (`impls`); ``@pytest.mark.backends(predicate)`` keeps the backends it is true of.
    An absent backend has one skipped test, with why (``test_backends.py``), not one
    per test.
    """
    names = metafunc.fixturenames
    given = {
        name.strip()
        for mark in metafunc.definition.iter_markers("parametrize")
        for name in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
    }
    module = metafunc.module.__name__
    if "library" in names and "library" not in given:
        mark = metafunc.definition.get_closest_marker("backends")
        wanted = mark.args[0] if mark else lambda b: True  # noqa: ARG005
        present = [b for b in Backend if b not in absent() and wanted(b)]
        if "impl" in names:
            pairs = [(b, i) for b in present for i in impls(b, module)]
            ids = [f"{b.value}-{i}" for b, i in pairs]
            metafunc.parametrize(("library", "impl"), pairs, ids=ids, indirect=["impl"])
        else:
            metafunc.parametrize("library", present, ids=[b.value for b in present])
    elif "impl" in names:
        metafunc.parametrize("impl", impls(None, module), indirect=True)


def _limits_only(prims: Any) -> Any:
    """A backend's checks and limits, none of its primitives: the standard copy."""
    return xtile._backends.Backend(
        prims.name,
        unwrap=prims.unwrap,
        check_out=prims.check_out,
        max_dims=prims.max_dims,
        xp=prims.xp,
    )


@pytest.fixture
def impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """
    The implementation under test: the primitives, their cached programs, or the standard tile.

    Each test starts with an empty plan cache. "cached" calls `xtile.tile` twice per
    call and checks the second, which runs the program the first cached. "standard"
    keeps of each backend's primitives only its checks and limits (what it refuses,
    its subclasses, its rank), so every backend runs the standard-only tile.
    """
    xtile._run.compiled.cache_clear()
    monkeypatch.setattr(xtile._run, "KEPT", {})  # no call kept: each plans anew
    monkeypatch.setattr(xtile._run, "RAW_KEYS", {})
    if request.param == "cached":
        tile = xtile.tile

        @functools.wraps(tile)
        def twice(x: Any, repeats: Any, /, **kwargs: Any) -> Any:
            with contextlib.suppress(Exception):
                tile(x, repeats, **kwargs)
            return tile(x, repeats, **kwargs)

        monkeypatch.setattr(xtile, "tile", twice)
    elif request.param == "standard":
        load = xtile._backends.load

        def limits_only(library: str) -> Any:
            """The backend's checks and limits, none of its primitives: the standard copy."""
            return _limits_only(load(library))

        monkeypatch.setattr(xtile._backends, "load", limits_only)
        monkeypatch.setattr(xtile._backends, "_BY_TYPE", {})  # no backend kept per type
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
