#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the self-check, the test suite's CUDA variants and the
# GPU benchmarks, each logged to $LOGS (default: gpu-logs/). Usage, from the repo's root:
#     bash benchmarks/gpu.sh [tests|bench|all]
# It needs PyTorch (CUDA), JAX (CUDA), CuPy and xtile's test dependencies installed.
set -uo pipefail
what=${1:-all}
logs=${LOGS:-gpu-logs}
mkdir -p "$logs"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
step() {  # name, command...: run, log, and report the exit status
    local name=$1
    shift
    echo "== $name: $*"
    local t0=$SECONDS
    "$@" >"$logs/$name.log" 2>&1
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
    step selfcheck python -m xtile --full --seed 0
    step pytest-gpu python -m pytest -q -p no:cacheprovider -p no:benchmark -n 8 -k "cuda or gpu or cupy" tests
fi
if [[ $what == bench || $what == all ]]; then
    step per-call python benchmarks/per_call.py --devices cpu,cuda
    step bench-matrix python -m xtile bench --backends torch-cuda,jax-gpu,cupy --repeat 5
    step bench-sweep python -m xtile bench --backends torch-cuda,jax-gpu,cupy --sweep 200 \
        --seed 23 --repeat 3
    step bench-out python benchmarks/out_tile.py --backends torch-cuda,cupy --sweep 200 \
        --seed 0 --min-mb 16 --repeat 5
fi
