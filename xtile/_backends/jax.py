"""JAX: the broadcast copy compiled by XLA as one computation, sharded as its input."""

import operator
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

from .._program import promote
from . import Backend

Shape = tuple[int, ...]


@partial(jax.jit, static_argnums=(1, 2))
def _jitted(x: jax.Array, reps: Shape, sharding: NamedSharding | None) -> jax.Array:
    """The tile of `x` by `reps`, every axis paired as by `jax.numpy.tile`: XLA's own program."""
    shape, reps = promote(tuple(x.shape), reps)
    spread = tuple(v for d in shape for v in (1, d))
    pairs = tuple(v for r_d in zip(reps, shape, strict=True) for v in r_d)
    view = jnp.broadcast_to(jnp.reshape(x, spread), pairs)
    out_shape = tuple(map(operator.mul, shape, reps))
    explicit = _out_sharding(jax.typeof(x).sharding, x.ndim, len(out_shape))
    if explicit is not None:  # sharding in types: the merging reshape must be told
        return jax.lax.reshape(view, out_shape, out_sharding=explicit)
    out = jnp.reshape(view, out_shape)
    return out if sharding is None else jax.lax.with_sharding_constraint(out, sharding)  # type: ignore[no-untyped-call]


def _out_sharding(sharding: object, ndim: int, out_ndim: int, /) -> NamedSharding | None:
    """The output's sharding: each input axis's mesh axes, on its output axis; None if unsharded."""
    if not isinstance(sharding, NamedSharding) or all(s is None for s in sharding.spec):
        return None
    spec = (*(None,) * (out_ndim - ndim), *sharding.spec, *(None,) * (ndim - len(sharding.spec)))
    return NamedSharding(sharding.mesh, PartitionSpec(*spec))  # type: ignore[no-untyped-call]


def _whole(x: Any, reps: Shape, _xp: Any, _tile: Any) -> Any:
    """The whole tile, as one XLA computation, sharded as `x` where `x` is."""
    # a tracer's sharding is the outer jit's to choose (or in its type, read in _jitted)
    eager = isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer)
    sharding = _out_sharding(x.sharding, x.ndim, max(x.ndim, len(reps))) if eager else None
    return _jitted(x, reps, sharding)


def _raw_key(x: Any, /) -> tuple[Any, ...] | None:
    """An eager array's shape and dtype (its output and checks follow); None for a tracer."""
    if isinstance(x, jax.core.Tracer) or not all(type(d) is int for d in x.shape):
        return None
    return (x.shape, x.dtype)


BACKEND = Backend("jax", whole=_whole, raw_key=_raw_key)
