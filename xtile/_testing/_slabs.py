"""The big-output mechanisms at every size, for tests: slabs on two threads, huge pages."""

import contextlib
from collections.abc import Iterator

from .. import _threads

__all__ = ["slabs_at_every_size"]


@contextlib.contextmanager
def slabs_at_every_size() -> Iterator[None]:
    """
    Run the big-output paths at every size inside the block: slabs on 2 threads, huge pages.

    Whatever their size (`xtile._threads.PARALLEL_BYTES`, `xtile._backends.torch.HUGE_BYTES`
    at 0), so that small test cases run the paths of big outputs.

    Yields
    ------
    None
        Inside the block.
    """
    knobs: list[tuple[object, str]] = [(_threads, "PARALLEL_BYTES")]
    with contextlib.suppress(ImportError):
        from .._backends import torch as fast_torch

        knobs.append((fast_torch, "HUGE_BYTES"))
    saved = [getattr(module, name) for module, name in knobs]
    for module, name in knobs:
        setattr(module, name, 0)
    try:
        with _threads.threads(2):
            yield
    finally:
        for (module, name), value in zip(knobs, saved, strict=True):
            setattr(module, name, value)
