"""Autodiff, vmap and compilation of `xtile.tile` through PyTorch and JAX."""

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import xtile
from xtile._testing import Backend

# (shape, repeats): promotion both ways, zero repeats, size-1 and pure-broadcast axes
CASES = [
    ((2, 3), (2, 3)),
    ((2, 3), (2, 1, 2)),
    ((3,), (2, 2)),
    ((2, 3, 2), (2,)),
    ((2, 3), (0, 2)),
    ((1, 4), (3, 1)),
    ((), (3,)),
]
IDS = [f"{s}x{r}" for s, r in CASES]


@pytest.fixture(params=[Backend.TORCH, Backend.TORCH_CUDA], ids=lambda b: b.value)
def torch_device(request: pytest.FixtureRequest) -> Any:
    """A PyTorch device: the CPU, and CUDA where present."""
    return request.param.load_or_skip()[1]


@pytest.fixture(params=[Backend.JAX, Backend.JAX_GPU], ids=lambda b: b.value)
def jax_device(request: pytest.FixtureRequest) -> Any:
    """A JAX device: the CPU, and a GPU where present."""
    return request.param.load_or_skip()[1]


# a compiled frame whose module's dict loses Dynamo's globals first, as at exit
_DYNAMO_EXIT = """
import types, torch
import conftest
m = types.ModuleType("m")
exec("def f(x):\\n    return x * max(1, 2)", m.__dict__)
torch.compile(m.f, fullgraph=True)(torch.ones(2))
for name in [k for k in m.__dict__ if k.startswith("__builtins_dict__")]:
    del m.__dict__[name]
print("done")
"""


def test_suite_exits_without_dynamos_teardown_noise() -> None:
    """The test processes end on pytest's summary: no Dynamo cleanup hook runs at exit."""
    pytest.importorskip("torch")
    run = subprocess.run(
        [sys.executable, "-c", _DYNAMO_EXIT], capture_output=True, text=True, check=True
    )
    assert run.stdout == "done\n"
    assert run.stderr == "", run.stderr


def test_a_compiled_frame_of_cleared_globals_dies_quietly() -> None:
    """
    A frame compiled in a doctest, whose globals are cleared as it ends, dies at a later
    ``torch._dynamo.reset()`` without an error pytest would charge to that test.

    Found by running the suite in random orders (`pytest-randomly`): docs/transforms.md
    compiles, and `test_compile_as_trained` failed after it in the same process.
    """
    pytest.importorskip("torch")
    import torch._dynamo

    import conftest

    conftest._dynamo_cleanups_tolerate_cleared_scopes()  # as before every test, Dynamo imported
    scope: dict[str, Any] = {}
    exec("def f(x):\n    return x * max(1, 2)", scope)  # noqa: S102
    torch.compile(scope["f"], fullgraph=True)(torch.ones(2))
    scope.clear()  # what doctest does to a test's globals as it ends
    torch._dynamo.reset()


class TestTorch:
    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=IDS)
    @pytest.mark.parametrize("dtype", ["float64", "complex128"])
    def test_gradcheck(self, torch_device: Any, shape: Any, reps: Any, dtype: str) -> None:
        import torch

        x = torch.randn(shape, dtype=getattr(torch, dtype), device=torch_device)
        x.requires_grad_(True)
        fn = lambda a: xtile.tile(a, reps)  # noqa: E731
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))
        assert torch.autograd.gradcheck(fn, (x,), check_forward_ad=True, check_backward_ad=False)

    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=IDS)
    def test_gradients_equal_torch_tile(self, torch_device: Any, shape: Any, reps: Any) -> None:
        import torch
        from torch.func import grad, jacfwd, jacrev, jvp, vjp

        # integer values: every sum is exact, so any reduction order gives the same bits
        def ints(*size: int) -> Any:
            return torch.randint(-9, 9, size, device=torch_device).double()

        x, t = ints(*shape), ints(*shape)

        def ours(a: Any) -> Any:
            return xtile.tile(a, reps)

        def native(a: Any) -> Any:
            return torch.tile(a, reps)

        w = ints(*native(x).shape)
        for transform in (
            lambda f: grad(lambda a: (f(a) * w).sum())(x),
            lambda f: jvp(f, (x,), (t,))[1],
            lambda f: vjp(f, x)[1](w)[0],
            lambda f: jacrev(f)(x),
            lambda f: jacfwd(f)(x),
        ):
            assert torch.equal(transform(ours), transform(native))

    def test_forward_ad(self, torch_device: Any) -> None:
        import torch
        import torch.autograd.forward_ad as fwad

        x = torch.randn(2, 3, dtype=torch.float64, device=torch_device)
        t = torch.randn(2, 3, dtype=torch.float64, device=torch_device)
        with fwad.dual_level():
            y = xtile.tile(fwad.make_dual(x, t), (2, 1, 2))
            assert torch.equal(fwad.unpack_dual(y).tangent, torch.tile(t, (2, 1, 2)))

    def test_backward_through_module(self, torch_device: Any) -> None:
        import torch

        # integer values: the gradient sums 10 copies exactly, in any order (on other values
        # it equals torch.tile's within rounding: the orders differ)
        x = torch.randint(-9, 9, (3, 4), device=torch_device).float().requires_grad_()
        xtile.tile(x, (2, 5)).pow(2).sum().backward()
        expected = torch.randn(3, 4, device=torch_device, requires_grad=True)
        with torch.no_grad():
            expected.copy_(x)
        torch.tile(expected, (2, 5)).pow(2).sum().backward()
        assert torch.equal(x.grad, expected.grad)  # type: ignore[arg-type]

    @pytest.mark.parametrize("in_dims", [0, 1, 2])
    def test_vmap(self, torch_device: Any, in_dims: int) -> None:
        """Per-sample tiling of the inner axes, with the batch on any axis."""
        import torch
        from torch.func import vmap

        batch = torch.randn(5, 2, 3, device=torch_device)
        batch = batch.movedim(0, in_dims)
        got = vmap(lambda a: xtile.tile(a, (2, 1, 3)), in_dims=in_dims)(batch)
        samples = batch.unbind(in_dims)
        assert torch.equal(got, torch.stack([torch.tile(s, (2, 1, 3)) for s in samples]))

    def test_nested_vmap_and_grad(self, torch_device: Any) -> None:
        import torch
        from torch.func import grad, vmap

        x = torch.randint(-9, 9, (4, 5, 2, 3), device=torch_device).double()
        ours = vmap(vmap(grad(lambda a: xtile.tile(a, (3, 2)).square().sum())))(x)
        native = vmap(vmap(grad(lambda a: torch.tile(a, (3, 2)).square().sum())))(x)
        assert torch.equal(ours, native)

    @pytest.mark.parametrize(
        ("shape", "reps"),
        [
            ((100, 3), (10, 200)),
            ((2, 3, 4, 5), (4, 4, 4, 4)),
            ((2,) * 6, (3,) * 6),
            ((7, 5000, 1), (12, 1, 3)),
        ],
        ids=["doubling", "staged", "staged-twice", "from-block"],
    )
    def test_large_outputs_stay_differentiable(
        self, torch_device: Any, shape: Any, reps: Any
    ) -> None:
        """Outputs large enough for the CPU staging and doubling paths keep every transform."""
        import torch
        import torch.autograd.forward_ad as fwad
        from torch.func import vmap

        x = torch.randint(-9, 9, shape, device=torch_device).double().requires_grad_()
        (g,) = torch.autograd.grad(xtile.tile(x, reps).square().sum(), x)
        (expected,) = torch.autograd.grad(torch.tile(x, reps).square().sum(), x)
        assert torch.equal(g, expected)
        t = torch.ones(shape, dtype=torch.float64, device=torch_device)
        with fwad.dual_level():
            y = xtile.tile(fwad.make_dual(x.detach(), t), reps)
            assert torch.equal(fwad.unpack_dual(y).tangent, torch.tile(t, reps))
        batch = x.detach().expand(4, *shape)
        got = vmap(lambda a: xtile.tile(a, reps))(batch)
        assert torch.equal(got, torch.tile(batch, (1, *reps)))
        with torch.inference_mode():
            assert torch.equal(xtile.tile(x, reps), torch.tile(x, reps))

    @pytest.mark.parametrize("dynamic", [False, True])
    def test_compile_fullgraph(self, torch_device: Any, dynamic: bool) -> None:
        """No graph break (`fullgraph`), no warning (pytest turns them into errors)."""
        import torch
        from torch._dynamo.utils import counters

        torch._dynamo.reset()
        counters.clear()
        fn = torch.compile(lambda a: xtile.tile(a, (2, 1, 3)) * 2, fullgraph=True, dynamic=dynamic)
        for shape in [(2, 3), (4, 5), (3, 7)]:
            x = torch.randn(shape, device=torch_device)
            assert torch.equal(fn(x), torch.tile(x, (2, 1, 3)) * 2)
        assert not counters["graph_break"]

    @pytest.mark.parametrize("fullgraph", [True, False])
    @pytest.mark.parametrize("dynamic", [False, True])
    @pytest.mark.parametrize("kind", ["parameter", "subclass", "module"])
    def test_compile_as_trained(
        self, torch_device: Any, kind: str, fullgraph: bool, dynamic: bool
    ) -> None:
        """A parameter, a tensor subclass, a module's weight: no graph break, no warning."""
        import torch
        from torch._dynamo.utils import counters

        class Tagged(torch.Tensor):
            pass

        class Model(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.weight = torch.nn.Parameter(torch.randn(2, 3, device=torch_device))

            def forward(self, a: Any) -> Any:
                return a * xtile.tile(self.weight, (2, 1))

        torch._dynamo.reset()
        counters.clear()
        weight = torch.randn(2, 3, device=torch_device)
        x = torch.randn(4, 3, device=torch_device)
        if kind == "module":
            model = Model()
            fn: Any = torch.compile(model, fullgraph=fullgraph, dynamic=dynamic)
            expected = x * torch.tile(model.weight, (2, 1))
        else:
            tagged = weight.as_subclass(Tagged).requires_grad_()
            arg = torch.nn.Parameter(weight) if kind == "parameter" else tagged
            compiled = torch.compile(
                lambda a: xtile.tile(a, (2, 1, 3)) * 2, fullgraph=fullgraph, dynamic=dynamic
            )
            x, expected = arg, torch.tile(arg, (2, 1, 3)) * 2

            def fn(a: Any) -> Any:
                return compiled(a)

        got = fn(x)
        assert torch.equal(got, expected)
        assert not counters["graph_break"]
        got.sum().backward()

    def test_export_module(self) -> None:
        """`torch.export` of a module whose forward tiles its weight."""
        torch = pytest.importorskip("torch")

        class Model(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.weight = torch.nn.Parameter(torch.randn(2, 3))

            def forward(self, a: Any) -> Any:
                return a * xtile.tile(self.weight, (2, 1))

        model = Model()
        x = torch.randn(4, 3)
        exported = torch.export.export(model, (x,))
        assert torch.equal(exported.module()(x), x * torch.tile(model.weight, (2, 1)))

    def test_compile_first_call(self) -> None:
        """Compiled before any eager tile: the fast path's first import is traced too."""
        pytest.importorskip("torch")
        code = (
            "import warnings; warnings.simplefilter('error'); "
            "warnings.filterwarnings('ignore', '`torch.jit.script', DeprecationWarning); "
            "import torch, xtile; from torch._dynamo.utils import counters; "
            "f = torch.compile(lambda a: xtile.tile(a, (2, 3)), fullgraph=True); "
            "x = torch.ones(2, 2); assert torch.equal(f(x), torch.tile(x, (2, 3))); "
            "assert not counters['graph_break'], counters['graph_break']"
        )
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)

    def test_compile_first_call_then_eager_calls_no_recompile(self) -> None:
        """
        The first tile of a process, compiled: eager calls after it fill no state dynamo guards.

        In a fresh process (no earlier xtile call has filled a cache), a function compiled
        with the eager backend tiles first; NumPy's and PyTorch's eager tiles then keep
        their programs; the compiled function, called again, runs its one graph.
        """
        pytest.importorskip("torch")
        code = (
            "import numpy as np, torch, xtile\n"
            "from torch._dynamo.utils import counters\n"
            "f = torch.compile(lambda t: xtile.tile(t, (2, 3)), backend='eager')\n"
            "x = torch.arange(4.0).reshape(2, 2)\n"
            "assert torch.equal(f(x), torch.tile(x, (2, 3)))\n"
            "graphs = counters['stats']['unique_graphs']\n"
            "assert graphs == 1, dict(counters['stats'])  # compiled once\n"
            "assert np.array_equal(xtile.tile(np.ones(3), 2), np.ones(6))\n"
            "assert torch.equal(xtile.tile(torch.ones(3), 2), torch.ones(6))\n"
            "assert torch.equal(f(x), torch.tile(x, (2, 3)))\n"
            "assert counters['stats']['unique_graphs'] == graphs, dict(counters['stats'])\n"
            "print(graphs)\n"
        )
        env = {**os.environ, "TORCH_LOGS": "recompiles"}
        done = subprocess.run(
            [sys.executable, "-c", code],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Recompiling" not in done.stderr, done.stderr[-3000:]

    def test_compile_backward(self, torch_device: Any) -> None:
        import torch

        torch._dynamo.reset()
        x = torch.randn(3, 4, dtype=torch.float64, device=torch_device, requires_grad=True)
        loss = torch.compile(lambda a: xtile.tile(a, (2, 2)).square().sum(), fullgraph=True)
        (g,) = torch.autograd.grad(loss(x), x)
        (expected,) = torch.autograd.grad(torch.tile(x, (2, 2)).square().sum(), x)
        assert torch.allclose(g, expected)


@pytest.fixture(params=[True, False], ids=["x64", "x32"])
def x64(request: pytest.FixtureRequest) -> Iterator[bool]:
    """JAX with and without 64-bit types; the test harness runs with them on."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", request.param)
    try:
        yield request.param
    finally:
        jax.config.update("jax_enable_x64", True)


class TestJax:
    @pytest.mark.parametrize(("shape", "reps"), CASES, ids=IDS)
    @pytest.mark.usefixtures("x64")
    def test_gradients_equal_jnp_tile(self, jax_device: Any, shape: Any, reps: Any) -> None:
        import jax
        import jax.numpy as jnp

        # integer values: every sum is exact, so any reduction order gives the same bits
        def ints(seed: int, size: Any) -> Any:
            values = jax.random.randint(jax.random.key(seed), size, -9, 9).astype(float)
            return jax.device_put(values, jax_device)

        x, t = ints(0, shape), ints(1, shape)
        w = ints(2, jnp.tile(x, reps).shape)

        def ours(a: Any) -> Any:
            return xtile.tile(a, reps)

        def native(a: Any) -> Any:
            return jnp.tile(a, reps)

        for transform in (
            lambda f: jax.grad(lambda a: (f(a) * w).sum())(x),
            lambda f: jax.jvp(f, (x,), (t,))[1],
            lambda f: jax.vjp(f, x)[1](w)[0],
            lambda f: jax.jacfwd(f)(x),
            lambda f: jax.jacrev(f)(x),
            lambda f: jax.jit(jax.grad(lambda a: (f(a) * w).sum()))(x),
        ):
            got, expected = transform(ours), transform(native)
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(expected), strict=True)

    @pytest.mark.usefixtures("x64")
    def test_vmap_nested(self, jax_device: Any) -> None:
        import jax
        import jax.numpy as jnp

        x = jax.device_put(jnp.arange(2 * 4 * 2 * 3.0).reshape(2, 4, 2, 3), jax_device)
        ours = jax.vmap(jax.vmap(lambda a: xtile.tile(a, (2, 1, 3))))(x)
        native = jax.vmap(jax.vmap(lambda a: jnp.tile(a, (2, 1, 3))))(x)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(native))
        moved = jax.vmap(lambda a: xtile.tile(a, (3,)), in_axes=2)(x)
        assert moved.shape == (2, 2, 4, 9)

    @pytest.mark.usefixtures("x64")
    def test_jit_static_repeats(self, jax_device: Any) -> None:
        import jax
        import jax.numpy as jnp

        x = jax.device_put(jnp.arange(6.0).reshape(2, 3), jax_device)
        expected = np.tile(np.asarray(x), (2, 2))
        np_reps, jax_reps = np.array([2, 2]), jnp.array([2, 2])  # concrete, in closures
        for fn in (
            jax.jit(lambda a: xtile.tile(a, (2, 2))),
            jax.jit(lambda a: xtile.tile(a, np_reps)),
            jax.jit(lambda a: xtile.tile(a, jax_reps)),
        ):
            np.testing.assert_array_equal(np.asarray(fn(x)), expected)
        static = jax.jit(xtile.tile, static_argnums=1)
        np.testing.assert_array_equal(np.asarray(static(x, (2, 2))), expected)

    @pytest.mark.usefixtures("x64")
    def test_traced_repeats_must_be_static(self, jax_device: Any) -> None:
        import jax
        import jax.numpy as jnp

        x = jax.device_put(jnp.ones((2, 3)), jax_device)
        with pytest.raises(TypeError, match=r"`repeats` must be static \(concrete\)"):
            jax.jit(xtile.tile)(x, jnp.array([2, 2]))
        with pytest.raises(TypeError, match=r"must be static \(concrete\)"):
            jax.jit(lambda a, n: xtile.tile(a, [n, 2]))(x, 3)
        with pytest.raises(TypeError, match=r"must be static \(concrete\)"):
            jax.jit(xtile.onnx.tile)(x, jnp.array([2, 2], dtype=jnp.int64))

    @pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
    def test_low_precision(self, jax_device: Any, dtype: str) -> None:
        import jax
        import jax.numpy as jnp

        x = jax.device_put(jnp.arange(6.0, dtype=dtype).reshape(2, 3), jax_device)

        def loss(f: Any) -> Any:
            return jax.grad(lambda a: f(a, (3, 2)).astype(jnp.float32).sum())(x)

        got, expected = loss(xtile.tile), loss(jnp.tile)
        assert got.dtype == jnp.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
        assert xtile.tile(x, (2, 1)).dtype == jnp.dtype(dtype)

    @pytest.mark.parametrize(
        ("shape", "reps"), [*CASES, ((2,) * 6, (4,) * 6), ((100, 100, 3), (10, 10, 10))]
    )
    def test_jit_compiles_as_jnp_tile(self, jax_device: Any, shape: Any, reps: Any) -> None:
        """Under `jax.jit` XLA gets the same program as for `jax.numpy.tile`, names aside."""
        import re

        import jax
        import jax.numpy as jnp

        x = jax.device_put(jnp.ones(shape, dtype=jnp.float32), jax_device)

        def ops(tile: Any) -> list[str]:
            hlo = jax.jit(lambda a: tile(a, reps)).lower(x).compile().as_text()
            pattern = r"^\s*(?:ROOT )?%\S+ = (.*?)(?:, metadata=.*)?$"
            instructions = re.findall(pattern, hlo, re.MULTILINE)
            assert instructions
            return [re.sub(r"%[\w.-]+", "%", i) for i in instructions]

        assert ops(xtile.tile) == ops(jnp.tile)
