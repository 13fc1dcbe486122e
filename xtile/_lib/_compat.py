"""The one importer of `array_api_compat`: every backend check goes through here."""

from array_api_compat import (
    array_namespace,
    device,
    is_array_api_obj,
    is_dask_namespace,
    is_jax_array,
    is_lazy_array,
    is_torch_namespace,
)

__all__ = [
    "array_namespace",
    "device",
    "is_array_api_obj",
    "is_dask_namespace",
    "is_jax_array",
    "is_lazy_array",
    "is_torch_namespace",
]
