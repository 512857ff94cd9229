#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang into build-fuzz/ and fuzzes each for MINUTES
# minutes (default 1); exits 1 when a run found a crash, timeout or OOM, or when a reproducer in
# fuzz/regressions/ still fails (docs/fuzzing.md).
#
#   scripts/fuzz.sh                       # fuzz_scenario, fuzz_graph_json, fuzz_calibration
#   scripts/fuzz.sh 12 fuzz_graph_json    # one target for 12 minutes
#   BUILD_DIR=out JOBS=2 scripts/fuzz.sh  # defaults: build-fuzz, 1 compile job
#
# In $BUILD_DIR: corpus/<target>/ (the working corpus, kept between runs), seeds/<target>/
# (copied from the repository on every run), artifacts/<target>/ (crash-*, timeout-*, oom-*,
# leak-*), logs/<target>.log. libFuzzer runs in fork mode, ignoring crashes, so one shallow bug
# does not end the run: every failing input is kept. Builds and runs are niced.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=${1:-1}
shift || true
[[ $minutes =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: MINUTES must be a whole number >= 1" >&2; exit 2; }
targets=("$@")
((${#targets[@]})) || targets=(fuzz_scenario fuzz_graph_json fuzz_calibration)
build_dir=${BUILD_DIR:-build-fuzz}
stratasim=${STRATASIM:-build/cli/stratasim}  # writes graph seeds when it exists
flags=(-rss_limit_mb=2048 -timeout=20 -max_len=65536)
# libFuzzer's (clang 14) out-of-memory report profiles the whole heap and can outlast the run;
# ASan's hard limit, a little lower, aborts first, and the input is kept as a crash-* file
# ("hard rss limit exhausted" in the log). `timeout` below is the last resort for a wedged run.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=2000

mkdir -p "$build_dir"
CC=clang CXX=clang++ nice -n 10 cmake -S . -B "$build_dir" -DSTRATASIM_FUZZ=ON \
  -DSTRATASIM_TESTS=OFF -DSTRATASIM_CUDA=OFF -DSTRATASIM_ALLOCATOR=system \
  -DSTRATASIM_SIMGRID_LIST_TRIM=OFF >"$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log" >&2; exit 2; }
nice -n 10 cmake --build "$build_dir" -j "${JOBS:-1}" --target "${targets[@]}"

failed=0
summary=()
for t in "${targets[@]}"; do
  bin=$build_dir/fuzz/$t
  seeds=$build_dir/seeds/$t corpus=$build_dir/corpus/$t art=$build_dir/artifacts/$t
  log=$build_dir/logs/$t.log
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$art" "$build_dir/logs"
  extra=()
  dict=fuzz/${t#fuzz_}.dict  # fuzz/scenario.dict, graph_json.dict, calibration.dict
  [ ! -f "$dict" ] || extra=(-dict="$dict")
  case $t in
    fuzz_scenario)
      cp scenarios/*.yaml fuzz/seeds/*.yaml "$seeds/" ;;
    fuzz_graph_json)
      cp fuzz/corpus/graph_json/* "$seeds/"
      # Real plans from a tiny scenario (the bundled ones write graphs of megabytes, which
      # libFuzzer would cut at -max_len); kept only when they fit.
      if [ -x "$stratasim" ] &&
         nice -n 10 "$stratasim" run fuzz/seeds/graphs.yaml --write-graphs --no-traces \
           --out "$build_dir/seeds/stratasim-out" >/dev/null 2>&1; then
        find "$build_dir/seeds/stratasim-out" -name '*.graph.json' -size -65537c \
          -exec cp {} "$seeds/" \;
      fi ;;
    fuzz_calibration)
      cp fuzz/corpus/calibration/* "$seeds/" ;;
  esac

  # Reproducers of earlier findings: each must now be rejected cleanly.
  for r in fuzz/regressions/"$t"-*; do
    [ -f "$r" ] || continue
    if ! nice -n 10 "$bin" "${flags[@]}" "$r" >"$build_dir/logs/$(basename "$r").log" 2>&1; then
      echo "fuzz.sh: $r still fails (log: $build_dir/logs/$(basename "$r").log)"
      failed=1
    fi
  done

  touch "$build_dir/logs/$t.start"
  echo "fuzz.sh: $t for $minutes minute(s), log $log"
  rc=0
  timeout -k 30 $((minutes * 60 + 300)) nice -n 10 "$bin" "${flags[@]}" "${extra[@]}" -fork=1 \
    -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=$((minutes * 60)) \
    -artifact_prefix="$art/" "$corpus" "$seeds" </dev/null >"$log" 2>&1 || rc=$?
  if ((rc == 124 || rc == 137)); then
    summary+=("$t: cut by timeout, a job never returned (see $log)")
    failed=1
  fi
  # Fork mode's status lines: "#RUNS: cov: C ft: F corp: N exec/s E oom/timeout/crash: ...".
  last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1 || true)
  found=$(find "$art" -type f -newer "$build_dir/logs/$t.start" | wc -l)
  ((found == 0)) || failed=1
  summary+=("$(printf '%-17s %ss runs %s cov %s ft %s corpus %s files (%s) new artifacts %s' \
    "$t" "$(sed -E 's/.* time: ([0-9]+)s.*/\1/' <<<"$last")" \
    "$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")" \
    "$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$last")" \
    "$(sed -E 's/.* ft: ([0-9]+).*/\1/' <<<"$last")" \
    "$(find "$corpus" -type f | wc -l)" "$(du -sh "$corpus" | cut -f1)" "$found")")
  if ((found)); then
    summary+=("    new: $(find "$art" -type f -newer "$build_dir/logs/$t.start" |
                           sed -E 's@.*/([a-z]+)-[^/]*$@\1@' | sort | uniq -c | xargs)")
  fi
done

echo "fuzz.sh: summary"
printf '  %s\n' "${summary[@]}"
exit "$failed"
