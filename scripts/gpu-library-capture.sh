#!/usr/bin/env bash
# Capture torch's GEMMs (cuBLAS) on this GPU at shapes too large to fit there,
# for fitting later with `tcprobe fit-gemm` on any machine.
#
#   OUT=DIR scripts/gpu-library-capture.sh [SHAPE ...]     SHAPE: FORMAT:MxNxK
#
# For each shape: `tcprobe gemm-probe --seed 0` writes the operands, the
# runner (python -m tcprobe.capture.torch_gemm, no --fit) saves every D.
# Only what cannot be made again comes back, in $OUT/library-capture.tgz:
# the D words, manifest.json, results.json (torch, CUDA, device), and
# sha256.txt of every operand file, so `gemm-probe` with the same arguments
# remakes A, B and C elsewhere and the hashes prove they are the same words.
# Runs from the tree (PYTHONPATH=the checkout, started from a work folder);
# each command has 60 s; a failed shape is logged and the next one runs; the
# archive is rewritten after every shape, so a run cut short keeps what it has.

set -u
export PYTHONUNBUFFERED=1 PYTHONSAFEPATH=1
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
PY=${PYTHON:-python3}
OUT=${OUT:-$ROOT/out/library-capture}
mkdir -p "$OUT" || { echo "error: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/library-capture.XXXXXX") || exit 2
export PYTHONPATH=$ROOT NUMBA_CACHE_DIR=$WORK/numba-cache TCPROBE_CACHE=$WORK/tcprobe-cache
SHAPES=("$@")
[ ${#SHAPES[@]} -gt 0 ] || SHAPES=(bf16:256x256x4096 f16:256x256x4096 tf32:256x256x4096
                                   e4m3:256x256x4096 bf16:128x128x16384 e4m3:128x128x16384)
KEEP=$WORK/library-capture
mkdir -p "$KEEP"
cd "$WORK" || exit 2
for shape in "${SHAPES[@]}"; do
  fmt=${shape%%:*}; dims=${shape#*:}
  IFS=x read -r m n k <<< "$dims"
  name=$fmt-${m}x${n}x${k}
  dir=$WORK/$name
  t0=$(date +%s)
  if timeout 60 "$PY" -m tcprobe gemm-probe --gpu H200 --format "$fmt" --m "$m" --n "$n" --k "$k" \
       --seed 0 --out "$dir" > "$KEEP/$name.log" 2>&1 &&
     timeout 60 "$PY" -m tcprobe.capture.torch_gemm "$dir" >> "$KEEP/$name.log" 2>&1; then
    mkdir -p "$KEEP/$name"
    cp "$dir"/manifest.json "$dir"/results.json "$dir"/*.d.npy "$KEEP/$name/"
    (cd "$dir" && sha256sum $(ls *.npy | grep -v '\.d\.npy$')) > "$KEEP/$name/sha256.txt"
    echo "$name ok $(( $(date +%s) - t0 ))s"
  else
    echo "$name failed $(( $(date +%s) - t0 ))s: $(tail -n 1 "$KEEP/$name.log")"
  fi
  # after every shape, so a run cut short keeps what it captured
  tar -czf "$OUT/library-capture.tgz" -C "$WORK" library-capture
done | tee "$KEEP/summary.txt"
tar -czf "$OUT/library-capture.tgz" -C "$WORK" library-capture
rm -rf "$WORK"
echo "library capture: $OUT/library-capture.tgz"
