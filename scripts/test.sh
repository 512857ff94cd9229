#!/usr/bin/env bash
# Sets up and builds (scripts/build.sh), then runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build_dir=${BUILD_DIR:-build}
ctest --test-dir "$build_dir" -j "$(nproc)" --output-on-failure --timeout 600
