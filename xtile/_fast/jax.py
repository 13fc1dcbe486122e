"""
JAX: the broadcast copy compiled by XLA as one computation, `repeats` static.

Eager JAX dispatches (and at a new shape compiles) each of the three operations of
the standard-only copy on its own; as one jitted function the forward and its VJP
are one call each, as fast as `jax.numpy.tile` (``benchmarks/bench_backward.py``).
Inside an outer ``jax.jit``, ``vmap`` or ``grad`` it is inlined like any other
function. XLA plans its own copy, so JAX never stages, and since JAX arrays are
immutable nothing can alias: the final copy is left to XLA.
"""

import operator
from functools import partial

import jax
import jax.numpy as jnp

from .._lib._helpers import promote
from .._lib._typing import Array, ArrayNamespace, FastPath, Plan, Shape

__all__ = ["FAST_PATH"]


@partial(jax.jit, static_argnums=1)
def _jitted(x: jax.Array, reps: Shape) -> jax.Array:
    """
    The tile of `x` by `reps`, traced once per shape, dtype and `reps`.

    Every axis gets its ``(r, d)`` pair, as in `jax.numpy.tile`: XLA has no rank
    limit to spare, and so compiles the very program it compiles for `jax.numpy.tile`
    (``tests/test_transforms.py``).
    """
    shape, reps = promote(tuple(x.shape), reps)
    spread = tuple(v for d in shape for v in (1, d))
    pairs = tuple(v for r_d in zip(reps, shape, strict=True) for v in r_d)
    view = jnp.broadcast_to(jnp.reshape(x, spread), pairs)
    return jnp.reshape(view, tuple(map(operator.mul, shape, reps)))


def _tile(x: Array, plan: Plan, _xp: ArrayNamespace, /) -> Array:
    """The whole tile, as one XLA computation."""
    out: Array = _jitted(x, plan.reps)
    return out


FAST_PATH = FastPath(tile=_tile)
