#!/usr/bin/env bash
# Installs what is missing (Debian packages), then configures and builds stratasim in build/.
# CUDA and NCCL are used from /usr/local/cuda when present (validate mode's backends).
#
#   scripts/build.sh            # Release-with-debug-info build in ./build
#   BUILD_DIR=out scripts/build.sh
#   scripts/build.sh -DOPTION=VALUE...   # extra arguments go to cmake's configure step
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config libsimgrid-dev libyaml-cpp-dev libeigen3-dev
          libboost-program-options-dev nlohmann-json3-dev libgtest-dev libgmock-dev
          libbenchmark-dev libjemalloc-dev libglpk-dev
          openmpi-bin libopenmpi-dev  # MPI: `mpirun -np N stratasim sweep` (docs/sweep.md)
          zlib1g-dev                  # gzip'd Chrome traces (--trace-format json.gz)
          protobuf-compiler libprotobuf-dev python3-protobuf  # Chakra traces (docs/chakra.md)
          libjs-chart.js chromium fonts-dejavu-core  # HTML report: bundled charts; its browser test
          python3-pandas python3-matplotlib jupyter-nbconvert python3-ipykernel)  # notebooks/
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build.sh: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "build.sh: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(( $(nproc) + 1 ))}
mkdir -p "$build_dir"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$build_dir/cmake.log" 2>&1 ||
  { cat "$build_dir/cmake.log" >&2; exit 1; }
grep -E "stratasim:" "$build_dir/cmake.log" || true
cmake --build "$build_dir" -j "$jobs"
