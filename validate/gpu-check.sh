#!/usr/bin/env bash
# GPU check of validate mode (issue 6), for a machine with NVIDIA GPUs (budget: 8 minutes on one
# H200). It
#   1. builds the GPU parts: kernels/, the cuda backend (validate/cuda/) and their tests, plus
#      the `stratasim` program when the whole project configures on this machine;
#   2. runs the GPU tests (every CUDA kernel against its CPU reference, the cuda backend);
#   3. calibrates the simulator with the cuda backend (`stratasim calibrate --backend cuda`);
#   4. validates the quickstart scenario at the size the GPUs allow (one server of all visible
#      GPUs: on one H200, a one-GPU plan whose collectives still run through a single-rank NCCL
#      communicator), uncalibrated and calibrated, and prints both error tables;
#   5. validates it on one GPU under `mpirun -np 1` (the multi-process path; skipped without
#      mpirun).
# Machines without the simulator's dependencies (SimGrid, yaml-cpp, Boost, nlohmann-json,
# Eigen) build the standalone GPU project instead (validate/cuda/standalone/), which runs
# steps 1-2 only; the output says so. Nothing needs the network.
#
#   validate/gpu-check.sh [OUT_DIR]        OUT_DIR defaults to $OUT, else ./gpu-check-out
#
# Environment: BUILD_DIR (default build-gpu-check; the standalone build goes to
# STANDALONE_BUILD_DIR, default BUILD_DIR-standalone), JOBS (default: all cores), CUDA_ARCH
# (default: the first GPU's compute capability, e.g. 90), GTEST_SOURCE_DIR (a GoogleTest source
# tree for machines without an installed GTest; third_party/googletest is used if present),
# EIGEN_DIR (Eigen 3 headers for the compression kernels' tests in the standalone build;
# third_party/eigen3 is used if present),
# GPU_CHECK_STANDALONE=1 (build the standalone GPU project even where the whole one configures).
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT_DIR=${1:-${OUT:-$PWD/gpu-check-out}}
BUILD=${BUILD_DIR:-$ROOT/build-gpu-check}
JOBS=${JOBS:-$(nproc)}
START=$(date +%s)
FAILURES=()
mkdir -p "$OUT_DIR"

step() { echo; echo "=== [$(($(date +%s) - START)) s] $*"; }
fail() { echo "FAILED: $*"; FAILURES+=("$*"); }
# Seconds left of the 8-minute budget, at least 30 (a step that starts late still gets a try).
left() { local l=$((480 - ($(date +%s) - START))); echo $((l < 30 ? 30 : l)); }

step "machine"
nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap --format=csv 2>&1 ||
  echo "nvidia-smi failed: no usable GPU? The GPU tests will skip."
/usr/local/cuda/bin/nvcc --version 2>&1 | tail -1
cmake --version | head -1
ARCH=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
  head -1 | tr -d '. ')}
ARCH=${ARCH:-90}
GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
echo "building for sm_$ARCH with $JOBS jobs; $GPUS GPU(s) visible"

GTEST_DIR=${GTEST_SOURCE_DIR:-}
if [[ -z "$GTEST_DIR" && -d "$ROOT/third_party/googletest" ]]; then
  GTEST_DIR=$ROOT/third_party/googletest
fi

EIGEN_DIR=${EIGEN_DIR:-}
if [[ -z "$EIGEN_DIR" && -d "$ROOT/third_party/eigen3" ]]; then
  EIGEN_DIR=$ROOT/third_party/eigen3
fi

step "configure the whole project"
MODE=full
if [[ "${GPU_CHECK_STANDALONE:-0}" == 1 ]]; then
  echo "GPU_CHECK_STANDALONE=1: not trying"
  MODE=standalone
elif ! timeout 180 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >"$OUT_DIR/configure.log" 2>&1; then
  grep -E "Could NOT find|not found|No package|Error" "$OUT_DIR/configure.log" | head -5
  echo "the whole project does not configure here (above)"
  MODE=standalone
fi
if [[ $MODE == standalone ]]; then
  echo "building the standalone GPU project (validate/cuda/standalone/); calibrate and" \
       "validate need the stratasim program and are skipped"
  BUILD=${STANDALONE_BUILD_DIR:-$BUILD-standalone}
  ARGS=(-DCMAKE_CUDA_ARCHITECTURES="$ARCH")
  [[ -n "$GTEST_DIR" ]] && ARGS+=(-DSTRATASIM_GTEST_SOURCE_DIR="$GTEST_DIR")
  [[ -n "$EIGEN_DIR" ]] && ARGS+=(-DSTRATASIM_EIGEN_DIR="$EIGEN_DIR")
  if ! timeout 120 cmake -S "$ROOT/validate/cuda/standalone" -B "$BUILD" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo "${ARGS[@]}" >"$OUT_DIR/configure-standalone.log" 2>&1; then
    tail -20 "$OUT_DIR/configure-standalone.log"
    fail "configure (standalone); set GTEST_SOURCE_DIR if GoogleTest is missing"
    echo; echo "gpu-check: ${#FAILURES[@]} failure(s): ${FAILURES[*]}"; exit 1
  fi
elif ! grep -q "CUDA and NCCL backends: ON" "$OUT_DIR/configure.log"; then
  grep "CUDA and NCCL backends" "$OUT_DIR/configure.log"
  fail "configure: nvcc or NCCL not found, the GPU parts are not built"
fi

step "build ($MODE)"
if [[ $MODE == full ]]; then
  TESTS=("$BUILD/kernels/kernels_reference_test" "$BUILD/kernels/kernels_test"
         "$BUILD/validate/validate_cuda_test")
  # One ninja run for the tests and the program (better parallelism); -k 0 keeps building the
  # tests when something else fails.
  timeout 360 cmake --build "$BUILD" -j "$JOBS" --target kernels_reference_test kernels_test \
    validate_cuda_test stratasim -- -k 0 >"$OUT_DIR/build.log" 2>&1 ||
    { grep -E "FAILED|error" "$OUT_DIR/build.log" | head -20; fail "build (see build.log)"; }
else
  TESTS=("$BUILD/kernels_reference_test" "$BUILD/kernels_test" "$BUILD/validate_cuda_test")
  timeout 300 cmake --build "$BUILD" -j "$JOBS" >"$OUT_DIR/build-tests.log" 2>&1 ||
    { tail -30 "$OUT_DIR/build-tests.log"; fail "build of the GPU tests"; }
fi

step "GPU tests (every CUDA kernel against its CPU reference; the cuda backend)"
for t in "${TESTS[@]}"; do
  name=$(basename "$t")
  if [[ ! -x "$t" ]]; then fail "$name was not built"; continue; fi
  timeout 240 "$t" --gtest_output="xml:$OUT_DIR/$name.xml" >"$OUT_DIR/$name.log" 2>&1
  rc=$?
  echo "$name:"
  grep -E "^\[  (PASSED|SKIPPED|FAILED) +\] [0-9]+ tests?|tests? from .* ran" "$OUT_DIR/$name.log"
  # Why tests skipped (no GPU, fewer than 2 GPUs, no FP8 units), once per reason.
  grep -A1 ": Skipped$" "$OUT_DIR/$name.log" | grep -vE ": Skipped$|^--$" | sort | uniq -c
  if [[ $GPUS -gt 0 ]] && grep -q "no CUDA device" "$OUT_DIR/$name.log"; then
    fail "$name: nvidia-smi lists $GPUS GPU(s) but CUDA sees none (tests skipped)"
  fi
  [[ $rc -eq 0 ]] || { grep -B5 "^\[  FAILED  \] [A-Za-z]" "$OUT_DIR/$name.log" | head -60;
                       fail "$name (exit $rc)"; }
done

CLI=$BUILD/cli/stratasim
if [[ $MODE == full && -x "$CLI" ]]; then
  step "calibrate --backend cuda"
  CAL=$OUT_DIR/calibration-cuda.yaml
  if "$CLI" calibrate --help 2>&1 | grep -q cuda; then
    timeout 150 "$CLI" calibrate --backend cuda --dtype bf16 -o "$CAL" 2>&1 |
      tee "$OUT_DIR/calibrate.log" | tail -25
    [[ ${PIPESTATUS[0]} -eq 0 ]] || fail "calibrate --backend cuda"
  else
    echo "this stratasim has no 'calibrate --backend cuda': skipped"
  fi

  step "validate quickstart at the size the GPUs allow ($GPUS GPU(s), one server)"
  N=$((GPUS > 0 ? GPUS : 1))  # with none, let the backend say why
  SCEN=$OUT_DIR/quickstart-${N}gpu.yaml
  # The quickstart's plans, on one server of the visible GPUs instead of 2 x 8 A100s.
  sed -e "s/^name: quickstart$/name: quickstart-${N}gpu/" -e 's/^      count: 2$/      count: 1/' \
      -e "s/^      gpus_per_server: 8$/      gpus_per_server: $N/" \
      -e 's/nics: {count: 8,/nics: {count: 1,/' \
      "$ROOT/scenarios/quickstart.yaml" >"$SCEN"
  if "$CLI" validate --help 2>&1 | grep -q cuda; then
    timeout $(( $(left) / 2 > 30 ? $(left) / 2 : 30 )) "$CLI" validate "$SCEN" --backend cuda \
      -o "$OUT_DIR/validate-cuda" >"$OUT_DIR/validate.log" 2>&1 ||
      { tail -20 "$OUT_DIR/validate.log"; fail "validate --backend cuda"; }
    [[ -f "$OUT_DIR/validate-cuda/validation.txt" ]] && cat "$OUT_DIR/validate-cuda/validation.txt"
    if [[ -f "$CAL" ]]; then
      step "validate again with the calibration"
      timeout "$(left)" "$CLI" validate "$SCEN" --backend cuda \
        --calibration "$CAL" -o "$OUT_DIR/validate-cuda-calibrated" \
        >"$OUT_DIR/validate-calibrated.log" 2>&1 ||
        { tail -20 "$OUT_DIR/validate-calibrated.log"; fail "validate --calibration"; }
      [[ -f "$OUT_DIR/validate-cuda-calibrated/validation.txt" ]] &&
        cat "$OUT_DIR/validate-cuda-calibrated/validation.txt"
    fi

    # The multi-process path (issue 26): one process per GPU under mpirun, the NCCL unique id
    # broadcast over MPI (validate/cuda/nccl_bootstrap.h); here one process on one GPU.
    step "validate under mpirun -np 1 (the multi-process cuda path, one GPU)"
    if ! command -v mpirun >/dev/null 2>&1; then
      echo "mpirun not found (Debian: apt-get install openmpi-bin): skipped"
    else
      SCEN1=$OUT_DIR/quickstart-1gpu.yaml
      sed -e "s/^name: quickstart$/name: quickstart-1gpu/" -e 's/^      count: 2$/      count: 1/' \
          -e "s/^      gpus_per_server: 8$/      gpus_per_server: 1/" \
          -e 's/nics: {count: 8,/nics: {count: 1,/' "$ROOT/scenarios/quickstart.yaml" >"$SCEN1"
      MPI_FLAGS=(-np 1)
      [[ $(id -u) -eq 0 ]] && MPI_FLAGS+=(--allow-run-as-root)
      timeout $(( $(left) / 2 > 30 ? $(left) / 2 : 30 )) mpirun "${MPI_FLAGS[@]}" "$CLI" validate \
        "$SCEN1" --backend cuda -o "$OUT_DIR/validate-cuda-mpi" >"$OUT_DIR/validate-mpi.log" 2>&1 ||
        { tail -20 "$OUT_DIR/validate-mpi.log"; fail "mpirun -np 1 validate --backend cuda"; }
      [[ -f "$OUT_DIR/validate-cuda-mpi/validation.txt" ]] &&
        cat "$OUT_DIR/validate-cuda-mpi/validation.txt"
    fi
  else
    echo "this stratasim has no 'validate --backend cuda': skipped"
  fi
else
  step "calibrate and validate skipped: no stratasim program in a $MODE build"
fi

step "done"
if [[ ${#FAILURES[@]} -eq 0 ]]; then
  echo "gpu-check: all steps passed (outputs in $OUT_DIR)"
else
  echo "gpu-check: ${#FAILURES[@]} failure(s):"
  printf '  - %s\n' "${FAILURES[@]}"
  exit 1
fi
