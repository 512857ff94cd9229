#!/usr/bin/env bash
# `stratasim calibrate --fabric --backend host` (docs/validate.md, "Fabric calibration"): the
# host transport measured quickly, the file written with the intra class and loaded by
# `stratasim run --calibration`, merged into an existing file, and a bad --out file refused
# with its line. One process with 2 host ranks (threads) always; under `mpirun -np 2` as well
# when mpirun is installed and stratasim has an MPI process group.
#
#   tests/calibrate_fabric_test.sh STRATASIM SCENARIO HAVE_MPI(ON|OFF)
set -euo pipefail
bin=$1
scenario=$2
have_mpi=${3:-OFF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# One process, two ranks (threads over shared memory): intra only.
"$bin" calibrate --fabric --backend host --ranks 2 --quick --out "$tmp/c.yaml" >"$tmp/log" 2>&1 ||
  { cat "$tmp/log"; fail "calibrate --fabric exited $?"; }
cat "$tmp/log"
grep -q "^  - {class: intra, protocol: simple, latency: \"" "$tmp/c.yaml" ||
  { cat "$tmp/c.yaml"; fail "no intra entry written"; }
grep -q "class: inter" "$tmp/c.yaml" && fail "an inter entry from one machine"
grep -q "^not measured: inter: " "$tmp/log" || fail "the unmeasured inter class is not named"
grep -q "^fit intra (simple): latency .* per hop, bandwidth " "$tmp/log" || fail "no fit printed"
# The simulator loads it.
"$bin" run "$scenario" --calibration "$tmp/c.yaml" >"$tmp/run.log" 2>&1 ||
  { cat "$tmp/run.log"; fail "run --calibration refused the written file"; }

# Merged into an existing file: its other sections stay, the intra entry is replaced.
cat >"$tmp/m.yaml" <<'YAML'
format: stratasim-calibration
version: 1
source: "kept"
collectives:
  - {kind: all_reduce, group_size: 2, latency: "20us", bandwidth: "1GB/s"}
links: {nic: 0.9}
fabric:
  - {class: intra, protocol: simple, latency: "999us", bandwidth: "1kB/s"}
  - {class: inter, protocol: simple, latency: "9us", bandwidth: "11GB/s"}
YAML
"$bin" calibrate --fabric --backend host --ranks 2 --quick --out "$tmp/m.yaml" >"$tmp/log" 2>&1 ||
  { cat "$tmp/log"; fail "merge run exited $?"; }
grep -q 'source: "kept"' "$tmp/m.yaml" || fail "merge lost the source"
grep -q "kind: all_reduce, group_size: 2" "$tmp/m.yaml" || fail "merge lost the collectives"
grep -q "links: {nic: 0.9}" "$tmp/m.yaml" || fail "merge lost the links"
grep -q "class: inter, protocol: simple, latency: \"9us\"" "$tmp/m.yaml" ||
  fail "merge lost the inter entry it did not measure"
grep -q "999us" "$tmp/m.yaml" && fail "merge kept the old intra entry"
[ "$(grep -c 'class: intra' "$tmp/m.yaml")" -eq 1 ] || fail "more than one intra entry"

# A bad file to merge into is refused before anything is measured, with its line.
printf 'format: stratasim-calibration\nversion: 1\nfabric:\n  - {class: intro}\n' >"$tmp/bad.yaml"
if "$bin" calibrate --fabric --backend host --ranks 2 --quick --out "$tmp/bad.yaml" \
  >"$tmp/log" 2>&1; then
  fail "a bad --out file was accepted"
fi
grep -q "bad.yaml:4:.*fabric\[0\].class.*unknown link class (known: intra, inter)" "$tmp/log" ||
  { cat "$tmp/log"; fail "the bad file's error does not name line 4 and the rule"; }

# Under mpirun: two processes on this machine, one rank each.
if [ "$have_mpi" = ON ] && command -v mpirun >/dev/null 2>&1; then
  flags=(--oversubscribe)
  if [ "$(id -u)" -eq 0 ]; then flags+=(--allow-run-as-root); fi
  if timeout 120 mpirun -np 2 "${flags[@]}" "$bin" calibrate --fabric --backend host --quick \
    --out "$tmp/mpi.yaml" >"$tmp/mpi.log" 2>&1; then
    cat "$tmp/mpi.log"
    grep -q "class: intra" "$tmp/mpi.yaml" || fail "mpirun run wrote no intra entry"
  elif grep -q "has no MPI process group" "$tmp/mpi.log"; then
    echo "note: mpirun part skipped: $(grep 'has no MPI process group' "$tmp/mpi.log")"
  else
    cat "$tmp/mpi.log"
    fail "mpirun -np 2 calibrate --fabric failed"
  fi
fi
echo "PASS"
