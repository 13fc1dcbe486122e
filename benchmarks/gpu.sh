#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the self-check, the test suite's CUDA variants and the
# GPU benchmarks, each logged to $LOGS (default: gpu-logs/) and each cut off at its time
# limit, so that `tests` and `bench` each fit a 15-minute device lease (about 3 and 5
# minutes on an H200). Usage, from the repo's root:
#     bash benchmarks/gpu.sh [tests|bench|all]
# It needs PyTorch (CUDA), JAX (CUDA), CuPy and xtile's test dependencies installed. Where
# the machine cannot reach an index, put the missing wheels in `.whl/` first (on a machine
# that can: `pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl
# array-api-compat array-api-extra array-api-strict dask partd locket pytest pluggy
# iniconfig pytest-xdist`, the versions pyproject.toml takes): they are installed into a
# temporary directory put first on PYTHONPATH.
set -uo pipefail
what=${1:-all}
logs=${LOGS:-gpu-logs}
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
if compgen -G ".whl/*.whl" >/dev/null; then
    site=$(mktemp -d)
    python -m pip install -q --no-index --no-deps --no-compile --target "$site" .whl/*.whl || exit
    export PYTHONPATH="$PWD:$site${PYTHONPATH:+:$PYTHONPATH}"
fi
step() {  # name, seconds, command...: run, log, and report the exit status (124: cut off)
    local name=$1 limit=$2
    shift 2
    echo "== $name: $*"
    local t0=$SECONDS
    timeout "$limit" "$@" >"$logs/$name.log" 2>&1
    echo "== $name: exit $? in $((SECONDS - t0)) s"
    tail -n "${TAIL:-15}" "$logs/$name.log"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python - <<'PY'
import cupy, jax, numpy, torch
print("torch", torch.__version__, torch.cuda.get_device_name(), "| jax", jax.__version__,
      jax.devices(), "| cupy", cupy.__version__, "| numpy", numpy.__version__)
PY
if [[ $what == tests || $what == all ]]; then
    step pytest-gpu 240 python -m pytest -q -p no:cacheprovider -p no:benchmark -n 16 \
        -k "cuda or gpu or cupy" tests
    step selfcheck 150 python -m xtile --cases 20 --seed 0
fi
if [[ $what == bench || $what == all ]]; then
    step per-call 60 python benchmarks/per_call.py --devices cpu,cuda --rounds 40
    step per-call-no-pair 60 python benchmarks/per_call.py --devices cpu,cuda --rounds 40 \
        --shape 1,64 --reps 8,1
    step bench-matrix 90 python -m xtile bench --backends torch-cuda,jax-gpu,cupy --repeat 3 \
        --rerun 2
    step bench-sweep 150 python -m xtile bench --backends torch-cuda,cupy --sweep 40 \
        --seed 23 --repeat 3
    step bench-out 90 python benchmarks/out_tile.py --backends torch-cuda,cupy --sweep 60 \
        --seed 0 --min-mb 16 --repeat 3
fi
