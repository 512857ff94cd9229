#!/usr/bin/env bash
# `mpirun -np 2 stratasim sweep` gives the same sweep.csv and sweep.json as the sweep run by one
# process, rank 0's journal holds every point, and OpenMPI says nothing about the fork()s of the
# simulation processes (docs/sweep.md, "MPI").
#
#   tests/sweep_mpi_test.sh STRATASIM TESTS_SWEEP_DIR HAVE_MPI(ON|OFF)
# Exit 77 (skipped) when mpirun is missing or stratasim was built without MPI.
set -euo pipefail
bin=$1
data=$2
have_mpi=${3:-ON}
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: mpirun not found (Debian: apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
if [ "$have_mpi" != ON ]; then
  echo "SKIP: stratasim was built without MPI (CMake found none)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep=(sweep "$data/tiny.yaml" --grid "$data/tiny.grid.yaml")

"$bin" "${sweep[@]}" --out "$tmp/local" -j 1 >"$tmp/local.log" 2>&1 ||
  { cat "$tmp/local.log"; exit 1; }

# Two ranks on however many cores the machine has (--oversubscribe), as root in CI containers.
flags=(--oversubscribe)
if [ "$(id -u)" -eq 0 ]; then flags+=(--allow-run-as-root); fi
mpirun -np 2 "${flags[@]}" "$bin" "${sweep[@]}" --out "$tmp/mpi" -j 1 >"$tmp/mpi.log" 2>&1 ||
  { echo "mpirun failed:"; cat "$tmp/mpi.log"; exit 1; }
cat "$tmp/mpi.log"

grep -q "over 2 MPI ranks" "$tmp/mpi.log" || { echo "FAIL: not run over 2 ranks"; exit 1; }
cmp "$tmp/local/sweep.csv" "$tmp/mpi/sweep.csv" || { echo "FAIL: sweep.csv differs"; exit 1; }
cmp "$tmp/local/sweep.json" "$tmp/mpi/sweep.json" || { echo "FAIL: sweep.json differs"; exit 1; }
lines=$(wc -l <"$tmp/mpi/sweep.jsonl")
[ "$lines" -eq 5 ] || { echo "FAIL: rank 0's journal has $lines lines, not 1 + 4"; exit 1; }
if grep -qi "fork" "$tmp/mpi.log"; then
  echo "FAIL: OpenMPI warned about fork()"
  exit 1
fi

# Rank 0 killed (SIGKILL) after 2 points: mpirun ends every rank; a new mpirun resumes from
# rank 0's journal to the same outputs.
STRATASIM_SWEEP_TEST_KILL_AFTER=2 mpirun -np 2 "${flags[@]}" -x STRATASIM_SWEEP_TEST_KILL_AFTER \
  "$bin" "${sweep[@]}" --out "$tmp/killed" >"$tmp/killed.log" 2>&1 && {
  echo "FAIL: the sweep was not killed"; cat "$tmp/killed.log"; exit 1; }
lines=$(wc -l <"$tmp/killed/sweep.jsonl")
[ "$lines" -eq 3 ] || { echo "FAIL: killed journal has $lines lines, not 1 + 2"; exit 1; }
mpirun -np 2 "${flags[@]}" "$bin" "${sweep[@]}" --out "$tmp/killed" >"$tmp/resumed.log" 2>&1 ||
  { echo "resume failed:"; cat "$tmp/resumed.log"; exit 1; }
grep -q "2 done" "$tmp/resumed.log" || { echo "FAIL: did not resume"; cat "$tmp/resumed.log"; exit 1; }
cmp "$tmp/local/sweep.csv" "$tmp/killed/sweep.csv" || { echo "FAIL: resumed sweep.csv differs"; exit 1; }
cmp "$tmp/local/sweep.json" "$tmp/killed/sweep.json" || { echo "FAIL: resumed sweep.json differs"; exit 1; }
echo "PASS: mpirun -np 2 sweep == local sweep, also killed and resumed"
