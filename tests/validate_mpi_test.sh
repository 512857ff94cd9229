#!/usr/bin/env bash
# `mpirun -np N stratasim validate` on the host backend (docs/validate.md, "On a cluster"):
#   - the MPI process group between real processes (mpi_process_group_check);
#   - -np 2 and -np 4: every rank's measured records present, the per-kind comparison produced;
#   - too few or too many processes, and processes that planned different graphs (MPMD): a clear
#     error on every rank, nothing run, no hang;
#   - a rank killed in the middle of a run: with plain mpirun (which SIGTERMs the others) the
#     report marks the strategy interrupted; with --enable-recovery and a short --comm-timeout
#     the report names the dead rank.
#
#   tests/validate_mpi_test.sh STRATASIM MPI_PROCESS_GROUP_CHECK HAVE_MPI(ON|OFF)
# Exit 77 (skipped) when mpirun is missing or stratasim was built without MPI, unless CI is set
# (CI must run it).
set -euo pipefail
bin=$1
check=$2
have_mpi=${3:-ON}
if ! command -v mpirun >/dev/null 2>&1; then
  if [ -n "${CI:-}" ]; then echo "FAIL: CI is set and mpirun is missing"; exit 1; fi
  echo "SKIP: mpirun not found (Debian: apt-get install openmpi-bin libopenmpi-dev)"
  exit 77
fi
if [ "$have_mpi" != ON ]; then
  if [ -n "${CI:-}" ]; then echo "FAIL: CI is set and stratasim was built without MPI"; exit 1; fi
  echo "SKIP: stratasim was built without MPI (CMake found none)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Processes on however many cores the machine has (--oversubscribe), as root in CI containers.
flags=(--oversubscribe)
if [ "$(id -u)" -eq 0 ]; then flags+=(--allow-run-as-root); fi
fail() { echo "FAIL: $*"; exit 1; }

# A GPT small enough to train for real on CPU threads in a fraction of a second (the cluster is
# a stand-in: validate replaces it by the machine it measures). scenario NAME GPUS BATCH
scenario() {
  cat >"$tmp/$1.yaml" <<YAML
name: $1
cluster:
  gpus:
    - {name: host-cpu, peak: {fp32: "30GFLOPS"}, memory: "4GiB", memory_bandwidth: "10GB/s"}
  servers:
    - {name: host, gpu: host-cpu, gpus_per_server: $2, nvswitch: {bandwidth: "5GB/s", latency: "20us"}}
model: {kind: gpt, layers: 1, hidden: 64, heads: 2, sequence: 32, vocabulary: 256, attention: unfused}
training:
  global_batch: $3
  micro_batch: 1
  precision: fp32
  iterations: {warmup: 1, measured: 2}
strategies:
  - {name: ddp, kind: ddp, options: {overlap: false}}
YAML
}
scenario two 2 2
scenario four 4 4
scenario two-batch4 2 4

# 0. A bad --comm-timeout is refused before anything starts.
"$bin" validate "$tmp/two.yaml" --comm-timeout 0 >"$tmp/bad.log" 2>&1 && fail "--comm-timeout 0 ran"
grep -q "stratasim validate: --comm-timeout must be > 0 seconds" "$tmp/bad.log" ||
  { cat "$tmp/bad.log"; fail "--comm-timeout 0: message"; }

# 1. The process group itself.
timeout 120 mpirun -np 3 "${flags[@]}" "$check" >"$tmp/check.log" 2>&1 ||
  { cat "$tmp/check.log"; fail "mpi_process_group_check"; }
grep -q "^PASS" "$tmp/check.log" || { cat "$tmp/check.log"; fail "no PASS from the check"; }
timeout 60 mpirun -np 2 "${flags[@]}" "$check" timeout >"$tmp/timeout.log" 2>&1 || true
grep -q "peer 1: rank 0: all_reduce 'grads' (task 12): rank 1 sent nothing on channel 3 (1 bytes expected) within 1 s: it died or hangs" \
  "$tmp/timeout.log" || { cat "$tmp/timeout.log"; fail "a silent peer's error"; }

# 2. -np 2 and -np 4: every rank measured, the comparison made.
for n in 2 4; do
  name=$([ "$n" = 2 ] && echo two || echo four)
  out="$tmp/np$n"
  timeout 300 mpirun -np "$n" "${flags[@]}" "$bin" validate "$tmp/$name.yaml" --backend host \
    --out "$out" >"$tmp/np$n.log" 2>&1 || { cat "$tmp/np$n.log"; fail "mpirun -np $n validate"; }
  grep -q "$n MPI processes on 1 server" "$out/validation.txt" ||
    { cat "$out/validation.txt"; fail "-np $n: the report does not say $n processes"; }
  for row in "ddp       iteration" "  gemm " "  all_reduce "; do
    grep -q -- "$row" "$tmp/np$n.log" || { cat "$tmp/np$n.log"; fail "-np $n: no row '$row'"; }
  done
  python3 - "$out" "$n" <<'PY' || fail "-np $n: measured records"
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
v = json.load(open(out + "/validation.json"))["strategies"][0]
assert v["measured"] and v["simulated"], v
assert v["tasks_measured"] == v["tasks_total"], v
t = json.load(open(out + "/ddp.measured.json"))
rec = t["records"]
ranks = set(r for r, s in zip(rec["rank"], rec["start_s"]) if s >= 0)
assert ranks == set(range(n)), ranks
assert all(s >= 0 for s in rec["start_s"]), "an unmeasured record"
assert len(v["kinds"]) >= 3, v["kinds"]
print("ok: -np %d, %d records from ranks %s" % (n, len(rec["task"]), sorted(ranks)))
PY
done

# 3. Too few and too many processes: an error on every rank, nothing run.
timeout 120 mpirun -np 1 "${flags[@]}" "$bin" validate "$tmp/two.yaml" --out "$tmp/few" \
  >"$tmp/few.log" 2>&1 && fail "-np 1 for 2 ranks ran"
grep -q "rank 0: .*two.yaml: mpirun started 1 process for a plan of 2 ranks (the scenario's GPUs): start one process per rank (mpirun -np 2, srun -n 2), or pass --fit to shrink the plan to 1 ranks: nothing was run" \
  "$tmp/few.log" || { cat "$tmp/few.log"; fail "too few processes: message"; }
[ ! -e "$tmp/few/validation.json" ] || fail "too few processes: a report was written"
timeout 120 mpirun -np 3 "${flags[@]}" "$bin" validate "$tmp/two.yaml" --out "$tmp/many" \
  >"$tmp/many.log" 2>&1 && fail "-np 3 for 2 ranks ran"
# Every rank finds it, but mpirun may end the others once the first has exited: rank 0's is
# checked.
grep -q "rank 0: .*mpirun started 3 processes for a plan of 2 ranks: processes 2..2 would have nothing to run; start one process per rank (mpirun -np 2): nothing was run" \
  "$tmp/many.log" || { cat "$tmp/many.log"; fail "too many processes: message"; }

# 4. Ranks that planned different graphs (MPMD: rank 1 gets a larger batch): named, no hang.
timeout 120 mpirun "${flags[@]}" -np 1 "$bin" validate "$tmp/two.yaml" --out "$tmp/mpmd" : \
  -np 1 "$bin" validate "$tmp/two-batch4.yaml" --out "$tmp/mpmd" >"$tmp/mpmd.log" 2>&1 &&
  fail "MPMD with different graphs ran"
[ "$?" -ne 124 ] || fail "MPMD with different graphs hung"
grep -q "rank 0: .*the processes did not plan the same graphs: rank 1 differs from rank 0 (rank 1's graph of ddp hashes to [0-9a-f]*, rank 0's to [0-9a-f]*)" \
  "$tmp/mpmd.log" || { cat "$tmp/mpmd.log"; fail "graph-hash mismatch: message"; }

# 5. Rank 1 SIGKILLs itself at its 20th send: after its plan's fingerprint (1) and the clock
# alignment's 16 pings (validate/clock_sync.h), in the middle of the run's all-reduces.
export STRATASIM_VALIDATE_TEST_KILL_AFTER=20
# Plain mpirun SIGTERMs rank 0: its report marks the strategy interrupted.
timeout 120 mpirun -np 2 "${flags[@]}" -x STRATASIM_VALIDATE_TEST_KILL_AFTER "$bin" validate \
  "$tmp/two.yaml" --out "$tmp/killed" >"$tmp/killed.log" 2>&1 && fail "a killed run succeeded"
python3 - "$tmp/killed" <<'PY' || { cat "$tmp/killed.log"; fail "killed: report"; }
import json, sys
v = json.load(open(sys.argv[1] + "/validation.json"))["strategies"][0]
assert v["error"].startswith("interrupted by SIGTERM while it ran"), v["error"]
print("ok: killed under plain mpirun:", v["error"][:60])
PY
# With --enable-recovery the others keep running: rank 0 waits --comm-timeout, then names rank 1.
# (mpirun --enable-recovery exits 0 even after rank 0's MPI_Abort: the report is what counts.)
status=0
timeout 120 mpirun -np 2 "${flags[@]}" --enable-recovery -x STRATASIM_VALIDATE_TEST_KILL_AFTER \
  "$bin" validate "$tmp/two.yaml" --out "$tmp/recovery" --comm-timeout 3 \
  >"$tmp/recovery.log" 2>&1 || status=$?
[ "$status" -ne 124 ] || { cat "$tmp/recovery.log"; fail "a killed rank hung the run (recovery)"; }
grep -q "a process was lost; ending every process (MPI_Abort)" "$tmp/recovery.log" ||
  { cat "$tmp/recovery.log"; fail "rank 0 did not end the job"; }
python3 - "$tmp/recovery" <<'PY' || { cat "$tmp/recovery.log"; fail "recovery: report"; }
import json, sys
v = json.load(open(sys.argv[1] + "/validation.json"))["strategies"][0]
assert not v["measured"], v
assert "rank 1 sent no trace within 3 s: it died or hangs" in v["error"], v["error"]
# Killed in the middle of the run: rank 0's own error names the collective it waited in.
assert "rank 1 sent nothing on channel" in v["error"], v["error"]
assert 0 < v["tasks_measured"] < v["tasks_total"], v
print("ok: killed with --enable-recovery:", v["error"][:120])
PY
unset STRATASIM_VALIDATE_TEST_KILL_AFTER
echo "PASS: mpirun validate -np 2 and -np 4, process counts, graph hashes, a killed rank"
