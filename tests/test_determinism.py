"""The program a call runs depends on its layout, repeats, backend and thread count alone."""

import json
import subprocess
import sys
import textwrap

# 70 draws (50 layouts or more) of every kind the planner reads (C-ordered, transposed,
# sliced, strided, broadcast, 0-d) on NumPy and, where installed, PyTorch; each called
# three times, so that the programs kept are those of the calls after the first
_PROGRAMS = textwrap.dedent(
    """
    import importlib.util, json, random
    import numpy as np
    import xtile
    from xtile import _run

    rng = random.Random(7)
    libraries = ["numpy"] + (["torch"] * (importlib.util.find_spec("torch") is not None))
    seen = {}
    for i in range(70):
        rank = rng.randint(0, 4)
        shape = tuple(rng.choice([1, 2, 3, 5, 16, 64]) for _ in range(rank))
        reps = tuple(rng.choice([1, 2, 3, 7, 40]) for _ in range(rng.randint(0, rank + 1)))
        dtype = rng.choice(["bool", "int8", "int64", "float16", "float32", "complex64"])
        how = rng.choice(["c", "t", "sliced", "strided", "broadcast"]) if rank else "c"
        a = np.arange(2 * max(1, np.prod(shape, dtype=int))).astype(dtype)
        x = a[: a.size // 2].reshape(shape)
        if how == "t":
            x = x.T
        elif how == "sliced":
            x = a.reshape(*shape[:-1], 2 * shape[-1])[..., : shape[-1]]
        elif how == "strided":
            x = a.reshape(2 * shape[0], *shape[1:])[::2]
        elif how == "broadcast":
            x = np.broadcast_to(x[:1], shape)
        library = libraries[i % len(libraries)]
        if library == "torch":
            import torch
            base = torch.from_numpy(a)
            x = torch.as_strided(base, x.shape, [s // a.itemsize for s in x.strides])
        for _ in range(3):
            xtile.tile(x, reps)
    for key, (program, _call) in _run.KEPT.items():
        seen[repr(key[:3])] = repr(program)  # the type, raw key, repeats (not the parser's address)
    print(json.dumps(seen, sort_keys=True))
    """
)


def _programs() -> dict[str, str]:
    """The programs one fresh process keeps, by their plan cache key."""
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAMS], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_three_processes_run_the_same_programs() -> None:
    """Three fresh processes (each with its own hash seed) keep the same program for each."""
    first = _programs()
    assert len(first) >= 50
    assert _programs() == first
    assert _programs() == first
