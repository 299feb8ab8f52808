#!/usr/bin/env bash
# The one-shot GPU check: first contact with silicon, most valuable evidence first.
#
#   OUT=DIR scripts/gpu-check.sh [--stand-in]
#
# Writes exactly two files under $OUT (default out/gpu-check-STAMP):
#   summary.tsv    one line a step: step, status (ok/fail/skipped), seconds, key figure
#   gpu-check.tgz  every report, JSON and log the steps wrote, and env.txt (versions)
# A lent GPU machine returns at most 8 files, 2 folders deep: nothing else is written there.
#
# Before the steps ("install"): the project is installed with what the machine
# has (pip install --no-deps --no-index --no-build-isolation --target, no
# network), or run from the tree. Every step runs from the work folder with
# PYTHONSAFEPATH=1, so the checkout's tcprobe/ can never shadow the install.
# nvdisasm is looked for on PATH, in the nvidia-cuda-nvdisasm wheel and in the
# CUDA toolkits ($CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda*/bin); without
# it sass-check is skipped with a note and every other step runs. Anything else
# missing stops the check with one line naming it (exit 2; summary.tsv still
# says so). The "machine" line records the GPU (nvidia-smi: name, compute
# capability, driver, persistence mode), the tool paths and package versions.
#
# Steps, in order of value; each is time-boxed (timeout), a failed step is
# recorded and the next one runs, and all of them stop at TOTAL_S:
#   devices            the GPU, driver and CUDA version (tcprobe devices)
#   sass-check         the harness SASS for the GPU's arch
#   replay-h200        the published H200 captures (40,000 recorded cases) through
#                      the real mma.sync and wgmma instructions
#   ladder-{mma,wgmma}-bf16, then ladder-{mma,wgmma}-{f16,tf32,e4m3}
#   validate-{mma,wgmma}-bf16   100,000 generated cases per family, --model auto
#   smoke              tcprobe smoke
#   library-{bf16,f16,tf32,e4m3}  torch's GEMMs (cuBLAS) on gemm-probe operands,
#                      64x64x512, and the schedules fit-gemm finds for them (last
#                      of the silicon steps: the D words come back whether or not
#                      the fits finish, and fit anywhere later)
#   gpu-tests          the test suite's GPU-marked tests (pytest -m gpu), where
#                      pytest is installed; their log goes into the tgz
#
# Status: ok; fail (the step ran and reported a failure: a silicon result);
# timeout (it ran out of time: no verdict); skipped (with the reason). Where the
# devices step finds no GPU (and --stand-in is not given) the check stops after
# sass-check: one "silicon skipped" line, one error line on stderr, exit 2.
# Each step says on stderr that it is running (and its limit) when it starts.
#
# Sizing: measured on an H200 machine (16 cores, 2026-12-04, cold caches;
# reports/silicon/2026-12-04-h200/summary.tsv): install 5 s, devices 1 s,
# sass-check 4 s, replay of the 40,000 H200 cases 7 s, each ladder 4-14 s,
# validate 100,000 cases 7 s, smoke 8 s, gpu-tests 6 s: about 110 s for those.
# The library steps fit 11-15 torch calls each; a fit of 64x64x512 took 1.3-6
# s there (tf32 searches three operand roundings: about 3x that), so each has
# 75 s, and the total limit is 480 s (TOTAL_S).
# Both caches (NUMBA_CACHE_DIR, TCPROBE_CACHE) live in the work folder, so only
# the first step that needs a kernel compiles it.
#
# --stand-in: no GPU. Every step runs through the CUDA device code with the
# project's stand-in driver (TCPROBE_CUDA_DRIVER=standin: tcprobe.devices.
# standin_driver, an H200 whose kernels are restated on the host), so CI and any
# developer can run the script end to end. The stand-in computes on the host,
# about 1 ms a case here, so its case counts are smaller (replay 250 a capture,
# validate 2,000, ladder validation 1,000, smoke 1,000) and its limits 4x.
#
# On a lent machine, where only the checkout travels: first copy the published
# H200 captures into the checkout's (git-ignored) shared/ folder, which travels:
#   mkdir -p shared/hwdata/khattak-mikaitis-2025
#   cp -r ../shared/hwdata/khattak-mikaitis-2025/{H200,LICENCE} shared/hwdata/khattak-mikaitis-2025/
# then run `bash scripts/gpu-check.sh` there with a timeout of about 560 s (the run of 2026-12-04 took 318 s with the library steps cut at 45 s).
#
# Environment: OUT, PYTHON (python3), HWDATA (the khattak-mikaitis-2025 folder),
# CASES, INSTALL (auto: pip, then the tree; pip; tree), and the time limits:
#   TOTAL_S      all steps together (default 480; on a GPU at most 570, under the
#                600 s a lent machine's command may run)
#   LIMIT_SCALE  a factor on every step's limit (default 1; 4 with --stand-in)
#   <STEP>_S     one step's limit in seconds, the step's name in capitals with
#                - as _: DEVICES_S, SASS_CHECK_S, REPLAY_H200_S, LADDER_MMA_BF16_S,
#                VALIDATE_WGMMA_BF16_S, SMOKE_S, GPU_TESTS_S, ... (not scaled)

set -u
export COLUMNS=${COLUMNS:-160} PYTHONUNBUFFERED=1

STAND_IN=0
for arg in "$@"; do
  case $arg in
    --stand-in) STAND_IN=1 ;;
    -h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $arg (usage: OUT=DIR $0 [--stand-in])" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
PY=${PYTHON:-python3}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$ROOT/out/gpu-check-$STAMP}
mkdir -p "$OUT" || { echo "error: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || { echo "error: no temporary folder" >&2; exit 2; }
REP=$WORK/gpu-check  # what goes into the tgz
mkdir -p "$REP"
export NUMBA_CACHE_DIR=$WORK/numba-cache TCPROBE_CACHE=$WORK/tcprobe-cache
SUMMARY=$OUT/summary.tsv
: > "$SUMMARY"
FIG="$ROOT/scripts/gpu_check_figures.py"

if [ "$STAND_IN" = 1 ]; then
  export TCPROBE_CUDA_DRIVER=standin
  SCALE=${LIMIT_SCALE:-4}; CASES=${CASES:-2000}; REPLAY_LIMIT=(--limit 250); LADDER_CASES=(--validate 1000)
  SMOKE_CASES=(--cases 1000)
else
  SCALE=${LIMIT_SCALE:-1}; CASES=${CASES:-100000}; REPLAY_LIMIT=(); LADDER_CASES=(); SMOKE_CASES=()
fi
case $SCALE in ''|*[!0-9]*) echo "error: LIMIT_SCALE must be a whole number, not '$SCALE'" >&2; rm -rf "$WORK"; exit 2 ;; esac
TOTAL_S=${TOTAL_S:-$((480 * SCALE))}
case $TOTAL_S in ''|*[!0-9]*) echo "error: TOTAL_S must be a number of seconds, not '$TOTAL_S'" >&2; rm -rf "$WORK"; exit 2 ;; esac
if [ "$STAND_IN" = 0 ] && [ "$TOTAL_S" -gt 570 ]; then
  echo "note: TOTAL_S=$TOTAL_S is past the 600 s a lent machine's command may run; using 570" >&2
  TOTAL_S=570
fi
DEVICE=cuda:0

record() {  # record NAME STATUS SECONDS FIGURE
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$SUMMARY"
  printf '%-20s %-8s %5ss  %s\n' "$1" "$2" "$3" "$4"
}

finish() {  # pack every report into the tgz (under 16 MiB: captures go first if it is not)
  local rc=$1 limit=$((15 * 1024 * 1024))
  tar -czf "$OUT/gpu-check.tgz" -C "$WORK" gpu-check 2>/dev/null
  if [ "$(stat -c %s "$OUT/gpu-check.tgz")" -gt "$limit" ]; then
    echo "the captures (*.tcap) were left out: with them the archive passed 15 MiB" >> "$REP/env.txt"
    tar -czf "$OUT/gpu-check.tgz" -C "$WORK" --exclude='*.tcap' gpu-check 2>/dev/null
  fi
  rm -rf "$WORK"
  echo "summary: $SUMMARY; reports: $OUT/gpu-check.tgz"
  exit "$rc"
}

# --- install and preflight ---------------------------------------------------
T0=$(date +%s)
if ! command -v "$PY" > /dev/null; then
  record install fail 0 "no $PY on PATH"; echo "error: missing: $PY" >&2; finish 2
fi
INSTALL=${INSTALL:-auto}
MODE=""
# The first line at once (stderr; stdout keeps one line a step): the install and
# the preflight's imports take seconds before the first step is recorded.
echo "gpu-check: installing and checking the tools ($([ "$STAND_IN" = 1 ] && echo 'stand-in driver' || echo GPU)); then each step, one line as it ends" >&2
if [ "$INSTALL" != tree ]; then
  # No network there: the machine's own packages satisfy the dependencies.
  if timeout $((120 * SCALE)) "$PY" -m pip install --no-deps --no-index --no-build-isolation \
      --no-compile --disable-pip-version-check -q --target "$WORK/site" "$ROOT" \
      > "$REP/install.log" 2>&1; then
    MODE=pip; export PYTHONPATH=$WORK/site
  elif [ "$INSTALL" = pip ]; then
    record install fail $(( $(date +%s) - T0 )) "pip install failed: $(tail -n 1 "$REP/install.log")"
    echo "error: pip install --no-deps --no-index failed (see install.log)" >&2; finish 2
  fi
fi
if [ -z "$MODE" ]; then
  # From the tree: tcprobe/__init__.py takes the checkout's top-level models/,
  # probes/, reports/ and kernels/ into the package, so the root is enough.
  MODE=tree; export PYTHONPATH=$ROOT
fi
# The steps run from the work folder, with the script's folder kept off
# sys.path too: a checkout's tcprobe/ can never shadow the installed package.
export PYTHONSAFEPATH=1
cd "$WORK" || exit 2

# nvdisasm: PATH, the wheel (tcprobe.devices.cuda.sass finds it), then the CUDA toolkits.
for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr/local/cuda-*; do
  if ! command -v nvdisasm > /dev/null && [ -n "$dir" ] && [ -x "$dir/bin/nvdisasm" ]; then
    export PATH="$dir/bin:$PATH"
  fi
done

PREFLIGHT=$("$PY" - "$MODE" <<'EOF' 2> "$REP/preflight.log"
import importlib, importlib.metadata as md, platform, sys
missing = []
for mod, dist in (("numpy", "numpy"), ("numba", "numba"), ("click", "click"), ("rich", "rich"),
                  ("cuda.bindings.driver", "cuda-bindings"), ("tcprobe.cli", "tcprobe")):
    try:
        importlib.import_module(mod)
    except Exception as e:
        missing.append(f"{dist} ({type(e).__name__}: {e})")
ver = {}
for dist in ("cuda-bindings", "nvidia-cuda-nvrtc", "nvidia-cuda-nvdisasm", "numpy", "numba", "torch"):
    try:
        ver[dist] = md.version(dist)
    except md.PackageNotFoundError:
        ver[dist] = "-"
nvrtc = nvdisasm = "-"
if not any(m.startswith("tcprobe") or m.startswith("cuda-bindings") for m in missing):
    from tcprobe.devices.cuda import nvrtc as _n, sass as _s
    try:
        nvrtc = ".".join(map(str, _n.version()))
    except Exception as e:
        missing.append(f"NVRTC ({e})")
    try:
        nvdisasm = f"{_s.nvdisasm_version()} at {_s.nvdisasm_path()}"
    except Exception:
        nvdisasm = "none"  # sass-check is skipped; nothing else needs it
if missing:
    print("missing: " + "; ".join(missing))
else:
    import tcprobe
    print(f"tcprobe {tcprobe.__version__} ({sys.argv[1]}); Python {platform.python_version()}; "
          f"cuda-bindings {ver['cuda-bindings']}; NVRTC {nvrtc} (nvidia-cuda-nvrtc {ver['nvidia-cuda-nvrtc']}); "
          f"nvdisasm {nvdisasm}; numpy {ver['numpy']}; numba {ver['numba']}; torch {ver['torch']}")
EOF
)
[ -n "$PREFLIGHT" ] || PREFLIGHT="missing: $PY could not run the preflight ($(tail -n 1 "$REP/preflight.log"))"
{
  echo "date: $STAMP"
  echo "host: $(hostname) $(uname -srm)"
  echo "tree: $ROOT ($(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo 'no git'))"
  echo "mode: $([ "$STAND_IN" = 1 ] && echo 'STAND-IN driver (no GPU ran)' || echo GPU); install: $MODE"
  echo "preflight: $PREFLIGHT"
  echo "cases: $CASES; total limit: ${TOTAL_S}s"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,compute_cap,driver_version,persistence_mode,memory.total \
    --format=csv,noheader 2>&1 | sed 's/^/nvidia-smi: /'
  command -v nvcc > /dev/null && nvcc --version 2>&1 | tail -n 2 | sed 's/^/nvcc: /'
  echo "tools: python $(command -v "$PY"); nvidia-smi $(command -v nvidia-smi || echo none); nvdisasm $(command -v nvdisasm || echo 'wheel or none'); nvcc $(command -v nvcc || echo none)"
  "$PY" -m pip list 2>/dev/null | grep -Ei '^(cuda[-a-z0-9]*|nvidia-[-a-z0-9]*|numpy|numba|llvmlite|torch|click|rich|ml[-_]dtypes|pytest|hypothesis) ' | sed 's/^/pip: /'
} > "$REP/env.txt"
case $PREFLIGHT in
  missing:*)
    record install fail $(( $(date +%s) - T0 )) "$PREFLIGHT"
    echo "error: $PREFLIGHT" >&2
    finish 2 ;;
esac
record install ok $(( $(date +%s) - T0 )) "$([ "$STAND_IN" = 1 ] && echo 'STAND-IN driver, no GPU; ')$PREFLIGHT"
if command -v nvidia-smi > /dev/null; then
  GPU_FACTS=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,persistence_mode --format=csv,noheader 2>&1 \
    | head -n 1 | awk -F', ' '{printf "%s cc %s driver %s persistence %s", $1, $2, $3, $4}')
else
  GPU_FACTS="no nvidia-smi"
fi
record machine ok 0 "$GPU_FACTS; $(uname -srm); $(nproc) cores; $(sed -n 's/^tools: //p' "$REP/env.txt"); $(sed -n 's/^pip: \([^ ]*\) *\([^ ]*\).*/\1 \2/p' "$REP/env.txt" | paste -sd, - | sed 's/,/, /g')"

# --- steps -------------------------------------------------------------------
TP=("$PY" -m tcprobe)
START=$(date +%s)
DEADLINE=$((START + TOTAL_S))
FAILED=0

# The limit of step NAME: $<NAME>_S when set (NAME in capitals, - as _), else DEFAULT x SCALE.
limit_of() {  # limit_of NAME DEFAULT
  local var value
  var=$(printf '%s_S' "$1" | tr 'a-z-' 'A-Z_')
  value=${!var:-}
  case $value in
    '') echo $(( $2 * SCALE )) ;;
    *[!0-9]*) echo "note: $var='$value' is not a number of seconds; using the default" >&2; echo $(( $2 * SCALE )) ;;
    *) echo "$value" ;;
  esac
}

# step NAME LIMIT_S KIND JSON COMMAND...: run with a time limit, record the outcome
# (a step that ran out of time is "timeout": no verdict, never "fail").
step() {
  local name=$1 limit kind=$3 json=$4
  limit=$(limit_of "$name" "$2")
  shift 4
  local left=$((DEADLINE - $(date +%s))) t0 rc secs fig
  if [ "$left" -lt 3 ]; then
    record "$name" skipped 0 "the ${TOTAL_S}s budget is spent"; FAILED=1; return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  t0=$(date +%s)
  echo "$name: running (up to ${limit}s)" >&2
  timeout --kill-after=5 "$limit" "$@" > "$REP/$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  fig=$("$PY" "$FIG" "$kind" "$json" "$REP/$name.log")
  LAST_FIG=$fig
  case $rc in
    0) record "$name" ok "$secs" "$fig" ;;
    124|137) record "$name" timeout "$secs" "ran past its ${limit}s limit (no verdict); $fig"; FAILED=1 ;;
    *) record "$name" fail "$secs" "exit $rc: $fig"; FAILED=1 ;;
  esac
}

skip() { record "$1" skipped 0 "$2"; }

LAST_FIG=""
step devices 10 devices "$REP/devices.json" "${TP[@]}" devices --json "$REP/devices.json"
DEVICES_FIG=$LAST_FIG
ARCH=$("$PY" "$FIG" arch "$REP/devices.json")
ARCH=${ARCH:-sm_90a}
echo "harness arch: $ARCH" >> "$REP/env.txt"
case $PREFLIGHT in
  *"nvdisasm none"*) skip sass-check "no nvdisasm (PATH, the nvidia-cuda-nvdisasm wheel, \$CUDA_HOME/bin, /usr/local/cuda*/bin): the SASS is unread; every other step runs" ;;
  *) step sass-check 15 sass "$REP/sass-check.json" "${TP[@]}" sass-check --arch "$ARCH" --json "$REP/sass-check.json" ;;
esac

# No GPU here (and no stand-in asked for): every later step needs one and would
# fail with the devices step's reason, so the check stops in one line, exit 2.
if [ "$STAND_IN" = 0 ] && [[ $DEVICES_FIG == "no GPU:"* ]]; then
  record silicon skipped 0 "$DEVICES_FIG: the replay, ladders, validation, smoke, library and gpu-tests steps need a GPU"
  echo "error: ${DEVICES_FIG}: the GPU steps are skipped (--stand-in runs them on a stand-in driver, no GPU)" >&2
  finish 2
fi

# The published captures: a shared/ folder inside the checkout travels to a
# lent machine; ../shared sits beside a developer's checkout (or its main one).
COMMON=$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
for h in "${HWDATA:-}" "$ROOT/shared/hwdata/khattak-mikaitis-2025" "$ROOT/../shared/hwdata/khattak-mikaitis-2025" \
         "${COMMON:+$(dirname "$COMMON")/../shared/hwdata/khattak-mikaitis-2025}"; do
  if [ -n "$h" ] && [ -d "$h/H200" ]; then HW=$h; break; fi
done
if [ -z "${HW:-}" ]; then
  HW=$ROOT/tests/data/khattak-mikaitis-2025
  echo "note: no published H200 captures found (HWDATA); replaying the 250-case subset in tests/data" \
    >> "$REP/env.txt"
fi
echo "captures: $HW" >> "$REP/env.txt"
step replay-h200 45 replay "$REP/replay-h200.json" "${TP[@]}" replay --capture "$HW/H200" \
  --device "$DEVICE" "${REPLAY_LIMIT[@]}" --json "$REP/replay-h200.json"

families=(mma)
case $ARCH in sm_90a) families+=(wgmma) ;; esac
ladder() {  # ladder FAMILY FORMAT LIMIT
  if [[ " ${families[*]} " == *" $1 "* ]]; then
    step "ladder-$1-$2" "$3" ladder "$REP/ladder-$1-$2.json" "${TP[@]}" ladder --instr "$1" --format "$2" \
      --device "$DEVICE" "${LADDER_CASES[@]}" --json "$REP/ladder-$1-$2.json"
  else
    skip "ladder-$1-$2" "$ARCH has no $1 harness"
  fi
}
ladder mma bf16 30
ladder wgmma bf16 30
for fmt in f16 tf32 e4m3; do
  ladder mma "$fmt" 15
  ladder wgmma "$fmt" 15
done

for fam in mma wgmma; do
  if [[ " ${families[*]} " == *" $fam "* ]]; then
    step "validate-$fam-bf16" 25 validate "$REP/validate-$fam-bf16/report.json" "${TP[@]}" validate \
      --instr "$fam" --format bf16 --device "$DEVICE" --cases "$CASES" --seed 1 --model auto \
      --out "$REP/validate-$fam-bf16"
  else
    skip "validate-$fam-bf16" "$ARCH has no $fam harness"
  fi
done

step smoke 30 smoke "$REP/smoke.json" "${TP[@]}" smoke --device "$DEVICE" "${SMOKE_CASES[@]}" \
  --json "$REP/smoke.json"

# Library GEMMs: gemm-probe's operands through this GPU's torch.matmul, addmm,
# F.linear and _scaled_mm (cuBLAS), and fit-gemm's schedules for each (issue 27).
# The operands, D words and fits stay in the tgz (lib-FORMAT/) for a refit.
library() {  # library FORMAT LIMIT
  local dir=$REP/lib-$1
  step "library-$1" "$2" library "$dir/fits.json" bash -c \
    '"$1" -m tcprobe gemm-probe --gpu H200 --format "$2" --out "$3" --m 64 --n 64 --k 512 &&
     "$1" -m tcprobe.capture.torch_gemm "$3" --fit' _ "$PY" "$1" "$dir"
}
if [ "$STAND_IN" = 1 ]; then
  for fmt in bf16 f16 tf32 e4m3; do skip "library-$fmt" "the stand-in driver runs no torch GEMM"; done
elif ! "$PY" -c "import torch; assert torch.cuda.is_available()" > /dev/null 2>&1; then
  for fmt in bf16 f16 tf32 e4m3; do skip "library-$fmt" "torch with CUDA is not importable for $PY"; done
else
  for fmt in bf16 f16 tf32 e4m3; do library "$fmt" 75; done
fi

# The suite's GPU-marked tests, from the checkout's tests/ against the installed package.
if "$PY" -c "import pytest" > /dev/null 2>&1; then
  step gpu-tests 60 pytest "" "$PY" -m pytest -q -m gpu -p no:cacheprovider --rootdir "$ROOT" \
    "$ROOT/tests/test_cuda_device.py"
else
  skip gpu-tests "pytest is not installed for $PY"
fi

echo "steps: $(( $(date +%s) - START ))s of ${TOTAL_S}s" | tee -a "$REP/env.txt"
finish "$FAILED"
