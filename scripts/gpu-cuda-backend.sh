#!/usr/bin/env bash
# The CUDA backend's GPU check (issue 38), for a lent H100/H200: <= 10 minutes.
#
#   OUT=DIR scripts/gpu-cuda-backend.sh [--size 4096]
#
# UNRUN: prepared without a GPU (docs/cuda-backend.md). What it does
# (scripts/gpu_cuda_backend.py): compiles kernels/tc_gemm.cu with NVRTC for
# the GPU's arch; computes the CPU engine's words for every covered row (float
# profiles incl. fp6/fp4, the integer kinds, the block-scaled kinds, sparse) on
# small special-heavy and raw operands in worker processes, and compares the
# kernel's words and the host build's with them; a 4096^3 bf16 product under
# the B200 tcgen05 and H100 wgmma models: the kernel's time and rate, torch's
# native bf16 matmul (cuBLAS) on the same operands, and two 64 x 64
# sub-blocks of D against the CPU engine; a small transformer (torch modules)
# forward and backward under emulate(gpu="B200", backend="cuda"), every
# product redone by the CPU engine, the time per step against native CPU and
# GPU; then the same model with its tensors on the GPU under emulate. The same script runs without a GPU as --host (the tests do).
#
# Writes under $OUT (default out/gpu-cuda-backend-STAMP): results.json,
# summary.tsv (one line a step: step, status, seconds, figure), env.txt, log.txt.
# Copy them to reports/silicon/<date>-<gpu>-cuda-backend/ afterwards.
#
# Needs: python3 with numpy, numba, torch (a CUDA build), cuda-bindings and
# nvidia-cuda-nvrtc (tcprobe's core dependencies), g++ (the host build).
# The project is installed with what the machine has (no network), as
# scripts/gpu-check.sh does.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/out/gpu-cuda-backend-$(date -u +%Y%m%dT%H%M%SZ)}
PY=${PY:-python3}
TOTAL_S=${TOTAL_S:-540}
mkdir -p "$OUT"
# The first line at once (the versions and the install below take seconds).
echo "gpu-cuda-backend: installing the checkout into a work folder, then the steps (a line each as it ends)" >&2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NUMBA_CACHE_DIR=$WORK/numba TCPROBE_CACHE=$WORK/cache
{
  date -u
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1
  "$PY" --version 2>&1
  g++ --version 2>&1 | head -n 1
  "$PY" -c "import torch, numba, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numba', numba.__version__, 'numpy', numpy.__version__)" 2>&1
} > "$OUT/env.txt"
case " $* " in
  *" --host "*) ;;
  *) if ! "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" > /dev/null 2>&1; then
       echo "error: no CUDA GPU visible to $PY's torch (or no torch; versions: $OUT/env.txt): this check needs one; --host runs it on the host build, no GPU (plumbing only)" >&2
       exit 2
     fi ;;
esac
if ! "$PY" -m pip install --no-deps --no-index --no-build-isolation --no-compile \
    --disable-pip-version-check -q --target "$WORK/site" "$ROOT" > "$OUT/log.txt" 2>&1; then
  echo "error: pip install --no-deps --no-index of the checkout failed (see $OUT/log.txt)" >&2
  exit 2
fi
export PYTHONPATH=$WORK/site PYTHONSAFEPATH=1
cd "$WORK"
timeout "$TOTAL_S" "$PY" "$ROOT/scripts/gpu_cuda_backend.py" --out "$OUT" --budget $((TOTAL_S - 120)) "$@" \
  2>&1 | tee -a "$OUT/log.txt"
exit "${PIPESTATUS[0]}"
