#!/usr/bin/env bash
# One-shot GPU check, sized to finish within 8 minutes on one H200.
#
#   scripts/gpu-check.sh [REPORT_DIR]
#
# Steps (each with its own time limit, all under one overall deadline; a step
# that fails or times out is recorded and the next one runs):
#   devices, sass-check for the GPU's arch, the GPU unit tests (pytest -m gpu),
#   a replay of the published H200 captures through the real instructions
#   (fp16/bf16/tf32 on mma.sync, fp8 on wgmma as the authors captured it, and
#   fp8 once more on the emulated mma.sync path), the ladder for mma and wgmma
#   in bf16, f16, tf32 and e4m3, and validate with 100,000 cases each against
#   the Hopper profiles.
# Everything lands in one report folder: a log and a JSON file per step,
# steps.tsv (step, exit status, seconds, verdict) and SUMMARY.md.
#
# Environment: TCPROBE (command, default .venv/bin/tcprobe or tcprobe),
# DEVICE (cuda:0), CASES (100000), HWDATA (published captures), TOTAL_S (470),
# and <STEP>_S per-step limits (see the table below).

set -u
export COLUMNS=${COLUMNS:-160}  # wide rich tables in the logs

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
if [ -n "${TCPROBE:-}" ]; then TP=$TCPROBE
elif [ -x "$ROOT/.venv/bin/tcprobe" ]; then TP="$ROOT/.venv/bin/tcprobe"
else TP=tcprobe; fi
PY=${PYTHON:-$( [ -x "$ROOT/.venv/bin/python" ] && echo "$ROOT/.venv/bin/python" || echo python3 )}
DEVICE=${DEVICE:-cuda:0}
CASES=${CASES:-100000}
HWDATA=${HWDATA:-$ROOT/../shared/hwdata/khattak-mikaitis-2025}
TOTAL_S=${TOTAL_S:-470}
DEVICES_S=${DEVICES_S:-15}; SASS_S=${SASS_S:-45}; PYTEST_S=${PYTEST_S:-45}
REPLAY_S=${REPLAY_S:-30}; LADDER_S=${LADDER_S:-15}; VALIDATE_S=${VALIDATE_S:-22}

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${1:-$ROOT/reports/gpu-check-$STAMP}
mkdir -p "$OUT" || { echo "cannot create $OUT" >&2; exit 2; }
START=$(date +%s)
DEADLINE=$((START + TOTAL_S))
printf 'step\texit\tseconds\tverdict\tlog\n' > "$OUT/steps.tsv"
FAILED=0

# step NAME LIMIT_S COMMAND...: run with a time limit, record the outcome.
step() {
  local name=$1 limit=$2; shift 2
  local now left t0 rc secs verdict
  now=$(date +%s); left=$((DEADLINE - now))
  if [ "$left" -lt 5 ]; then
    printf '%s\t-\t0\tskipped (out of time)\t-\n' "$name" >> "$OUT/steps.tsv"
    echo "[skip] $name: the ${TOTAL_S}s budget is spent"; FAILED=1; return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "[run ] $name (limit ${limit}s)"
  t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  case $rc in
    0) verdict=ok ;;
    124|137) verdict="timeout (${limit}s)"; FAILED=1 ;;
    1) verdict="exit 1 (findings: mismatches or a missing opcode)"; FAILED=1 ;;
    *) verdict="failed (exit $rc)"; FAILED=1 ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s.log\n' "$name" "$rc" "$secs" "$verdict" "$name" >> "$OUT/steps.tsv"
  echo "[done] $name: $verdict in ${secs}s"
}

# --- context ----------------------------------------------------------------
{
  echo "date: $STAMP"
  echo "host: $(hostname)"
  echo "git: $(git rev-parse HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | wc -l | tr -d ' ') uncommitted"
  echo "tcprobe: $($TP --version 2>&1)"
  echo "python: $($PY --version 2>&1)"
  echo "device: $DEVICE  cases: $CASES  hwdata: $HWDATA"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
    --format=csv,noheader 2>&1
} > "$OUT/env.txt"

step devices "$DEVICES_S" "$TP" devices --json "$OUT/devices.json"
ARCH=$("$PY" - "$OUT/devices.json" "$DEVICE" <<'EOF' 2>/dev/null
import json, sys
data = json.load(open(sys.argv[1]))
for d in data["devices"]:
    if d["device"] == sys.argv[2] and d.get("arch", "").startswith("sm_"):
        print(d["arch"])
EOF
)
ARCH=${ARCH:-sm_90a}
echo "arch: $ARCH" >> "$OUT/env.txt"

step sass-check "$SASS_S" "$TP" sass-check --arch "$ARCH" --json "$OUT/sass-check.json"
step pytest-gpu "$PYTEST_S" "$PY" -m pytest -q -m gpu tests/test_cuda_device.py

if [ ! -d "$HWDATA/H200" ]; then
  echo "note: $HWDATA/H200 not found; replaying the 250-case subset in tests/data" >> "$OUT/env.txt"
  HWDATA=$ROOT/tests/data/khattak-mikaitis-2025
fi
step replay-h200 "$REPLAY_S" "$TP" replay --capture "$HWDATA/H200" --device "$DEVICE" \
  --json "$OUT/replay-h200.json"
step replay-h200-fp8-on-mma "$REPLAY_S" "$TP" replay --capture "$HWDATA/H200/E4M3" \
  --capture "$HWDATA/H200/E5M2" --family mma --device "$DEVICE" --json "$OUT/replay-h200-fp8-on-mma.json"

KNOWN_MODELS=$("$PY" -c 'from tcprobe.models.registry import names; print(" ".join(names()))' 2>/dev/null)
has_model() { case " $KNOWN_MODELS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

for fam in mma wgmma; do
  for fmt in bf16 f16 tf32 e4m3; do
    step "ladder-$fam-$fmt" "$LADDER_S" "$TP" ladder --instr "$fam" --format "$fmt" --device "$DEVICE" \
      --json "$OUT/ladder-$fam-$fmt.json"
  done
done

for fam in mma wgmma; do
  for fmt in bf16 f16 tf32 e4m3; do
    models=(--model h100)
    if [ "$fam" = mma ] && [ "$fmt" = e4m3 ] && has_model hopper-fp8-emulated; then
      models+=(--model hopper-fp8-emulated)
    fi
    step "validate-$fam-$fmt" "$VALIDATE_S" "$TP" validate --instr "$fam" --format "$fmt" \
      --device "$DEVICE" --cases "$CASES" --seed 1 "${models[@]}" \
      --json "$OUT/validate-$fam-$fmt.json" --out "$OUT/captures/validate-$fam-$fmt"
  done
done

# --- summary ------------------------------------------------------------------
ELAPSED=$(( $(date +%s) - START ))
{
  echo "# GPU check, $STAMP"
  echo
  echo "Device $DEVICE, harness $ARCH."
  echo
  echo '```'
  cat "$OUT/env.txt"
  echo '```'
  echo
  echo "Total ${ELAPSED}s of a ${TOTAL_S}s budget."
  echo
  echo "| step | exit | seconds | verdict |"
  echo "| --- | --- | --- | --- |"
  tail -n +2 "$OUT/steps.tsv" | while IFS=$'\t' read -r name rc secs verdict _; do
    echo "| $name | $rc | $secs | $verdict |"
  done
  echo
  echo "## Last lines of each step"
  tail -n +2 "$OUT/steps.tsv" | while IFS=$'\t' read -r name _ _ _ log; do
    [ -f "$OUT/$log" ] || continue
    echo
    echo "### $name"
    echo '```'
    tail -n 4 "$OUT/$log"
    echo '```'
  done
} > "$OUT/SUMMARY.md"

echo
column -t -s $'\t' "$OUT/steps.tsv" 2>/dev/null || cat "$OUT/steps.tsv"
echo "report: $OUT (${ELAPSED}s)"
exit $FAILED
