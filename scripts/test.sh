#!/usr/bin/env bash
# Sets up and builds (scripts/build.sh), then runs the whole test suite with ctest.
#
#   scripts/test.sh                    # build/, as CI runs it
#   scripts/test.sh --sanitize         # AddressSanitizer + UBSan build in build-asan/
#                                      # (docs/sanitizers.md)
#   scripts/test.sh [--sanitize] -R Fold   # further arguments go to ctest
#
# BUILD_DIR overrides the build folder, JOBS the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=0
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=1
  shift
fi

if ((!sanitize)); then
  scripts/build.sh
  build_dir=${BUILD_DIR:-build}
  ctest --test-dir "$build_dir" -j "$(nproc)" --output-on-failure --timeout 600 "$@"
  exit
fi

# --sanitize: every target (library, program, test) built with g++'s AddressSanitizer and
# UndefinedBehaviorSanitizer; any report fails the run (docs/sanitizers.md). jemalloc would
# take malloc from ASan: system malloc. SANITIZE=address,undefined,float-cast-overflow adds checks.
build_dir=${BUILD_DIR:-build-asan}
cache="$build_dir/CMakeCache.txt"
if [ -f "$cache" ] && ! grep -q '^CMAKE_CXX_FLAGS:.*-fsanitize=' "$cache"; then
  echo "test.sh: $build_dir holds a build without sanitizers; give --sanitize its own" \
       "BUILD_DIR (default build-asan)" >&2
  exit 1
fi
san="-fsanitize=${SANITIZE:-address,undefined} -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
supp="$PWD/scripts/lsan.supp"

# Set before building too: gtest_discover_tests runs each test program at build time. Later
# entries win, so options already in the environment override these. exitcode=99: a report
# never passes for one of the program's own exit statuses (0-3) in a test that expects it.
export ASAN_OPTIONS="halt_on_error=1:exitcode=99:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=99:print_stacktrace=1:report_error_type=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ -f "$supp" ]; then
  export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fi

BUILD_DIR=$build_dir scripts/build.sh \
  -DCMAKE_CXX_COMPILER=g++ \
  "-DCMAKE_CXX_FLAGS=$san" "-DCMAKE_EXE_LINKER_FLAGS=$san" "-DCMAKE_SHARED_LINKER_FLAGS=$san" \
  -DSTRATASIM_ALLOCATOR=system -DSTRATASIM_CUDA=OFF -DSTRATASIM_FUZZ=OFF

# Tests run about 6x slower under the sanitizers (docs/sanitizers.md); the per-test limit set
# in CMakeLists.txt (300 s) still applies to the discovered tests, --timeout to any other.
status=0
ctest --test-dir "$build_dir" -j "$(nproc)" --output-on-failure --timeout 1500 "$@" || status=$?

# A test can pass with a report in its output: a forked simulation writes to the test's
# stderr, and the test may expect the failure it caused. LastTest.log holds every test's output.
log="$build_dir/Testing/Temporary/LastTest.log"
pattern='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer'
if [ -f "$log" ] && grep -Eq "$pattern" "$log"; then
  echo "test.sh: sanitizer reports in $log:" >&2
  grep -En "$pattern" "$log" | head -50 >&2
  ((status != 0)) || status=1
fi
exit "$status"
