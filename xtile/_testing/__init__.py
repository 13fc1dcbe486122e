"""
The harness shared by the tests and ``python -m xtile``: backends, devices, checks.

Not imported by ``import xtile``; it imports the backends it is asked for.
"""

from ._ablation import STRATEGIES, switched_off
from ._backends import (
    Backend,
    BackendUnavailableError,
    arange,
    assert_tile,
    dtypes,
    missing_imports,
    reps_tuple,
    same_bits,
    to_numpy,
    uneven_chunks,
)
from ._examples import SPEC_EXAMPLES, SpecExample
from ._slabs import slabs_at_every_size

__all__ = [
    "SPEC_EXAMPLES",
    "STRATEGIES",
    "Backend",
    "BackendUnavailableError",
    "SpecExample",
    "arange",
    "assert_tile",
    "dtypes",
    "missing_imports",
    "reps_tuple",
    "same_bits",
    "slabs_at_every_size",
    "switched_off",
    "to_numpy",
    "uneven_chunks",
]
