#!/usr/bin/env bash
# The notebooks under notebooks/ run, headless, on outputs the built stratasim writes (issue 25).
#
#   tests/notebooks_test.sh STRATASIM SOURCE_DIR
#
# 1. `stratasim run` of a bundled scenario and `stratasim sweep` of notebooks/scaling.grid.yaml
#    write the inputs into a temporary folder.
# 2. `jupyter nbconvert --execute` runs every notebook on them; any error fails the test.
# 3. The committed notebooks are valid nbformat 4 with their outputs cleared (small diffs), and
#    each executed notebook drew its plots (PNG outputs of the inline backend, which renders
#    with Agg: no display is needed), and 03 drew the link plot whenever links.json exists.
#
# Set NOTEBOOKS_TEST_ARTIFACTS=DIR to keep the executed notebooks (with their plots) in DIR.
#
# Without jupyter-nbconvert, ipykernel, pandas or matplotlib the test fails when CI is set, and is
# skipped (exit 77) otherwise.
set -euo pipefail
bin=$1
src=$2
scenario=$src/notebooks/example.yaml

# The kernel is Python 3 from the same installation as jupyter (Debian: /usr/bin/python3); the
# python3 first on PATH may be another one (pyenv, a venv) without these modules.
missing=()
if ! jupyter=$(command -v jupyter-nbconvert); then
  missing+=(jupyter-nbconvert)
  py=python3
else
  py=$(sed -n '1s/^#! *//p' "$jupyter")
  case "$py" in */env\ *) py=${py##* } ;; esac
  [ -n "$py" ] || py=python3
fi
# One interpreter for all the imports: each start costs seconds on a loaded machine.
# shellcheck disable=SC2207
missing+=($("$py" -c '
import importlib.util
for m in ["nbformat", "nbconvert", "ipykernel", "pandas", "matplotlib", "numpy"]:
    if importlib.util.find_spec(m) is None:
        print("python3-" + m)
' 2>/dev/null || echo python3))
if [ ${#missing[@]} -gt 0 ]; then
  msg="needs ${missing[*]} for $py (Debian: apt-get install jupyter-nbconvert python3-ipykernel python3-pandas python3-matplotlib; scripts/build.sh installs them)"
  if [ -n "${CI:-}" ]; then
    echo "FAIL: $msg"
    exit 1
  fi
  echo "SKIP: $msg"
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
notebooks=("$src"/notebooks/*.ipynb)
[ ${#notebooks[@]} -ge 3 ] || { echo "FAIL: expected 3 notebooks, found ${#notebooks[@]}"; exit 1; }

# 1. Inputs.
start=$SECONDS
"$bin" run "$scenario" --out "$tmp/run" >"$tmp/run.log" 2>&1 ||
  { echo "FAIL: stratasim run"; cat "$tmp/run.log"; exit 1; }
echo "stratasim run $(basename "$scenario"): $((SECONDS - start)) s"
start=$SECONDS
"$bin" sweep "$src/scenarios/quickstart.yaml" --grid "$src/notebooks/scaling.grid.yaml" \
  --out "$tmp/sweep" -j 2 >"$tmp/sweep.log" 2>&1 ||
  { echo "FAIL: stratasim sweep"; cat "$tmp/sweep.log"; exit 1; }
echo "stratasim sweep scaling.grid.yaml: $((SECONDS - start)) s"

# 2. Execute. A MPLBACKEND from the caller's environment (Agg, TkAgg) would replace the inline
# backend and the plots would not reach the notebook: unset it.
start=$SECONDS
env -u MPLBACKEND STRATASIM_RESULTS="$tmp/run" STRATASIM_SWEEP="$tmp/sweep" \
  STRATASIM_STRATEGY=3d-t2p4d2 \
  PYDEVD_DISABLE_FILE_VALIDATION=1 \
  "$jupyter" --to notebook --execute --ExecutePreprocessor.timeout=300 \
  --output-dir "$tmp/executed" "${notebooks[@]}" >"$tmp/nbconvert.log" 2>&1 ||
  { echo "FAIL: a notebook raised"; cat "$tmp/nbconvert.log"; exit 1; }
echo "jupyter nbconvert --execute, ${#notebooks[@]} notebooks: $((SECONDS - start)) s"

# 3. The committed notebooks, and what the executed ones drew, in one Python (importing
# nbformat takes seconds on a loaded machine).
links=no
[ -f "$tmp/run/links.json" ] && links=yes
"$py" - "$tmp/executed" "$links" "${notebooks[@]}" <<'EOF'
import pathlib
import sys
import nbformat
folder, links, committed = pathlib.Path(sys.argv[1]), sys.argv[2] == "yes", sys.argv[3:]
failed = []
for path in committed:
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    if nb.nbformat != 4:
        failed.append(f"{path}: nbformat {nb.nbformat}, not 4")
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            failed.append(f"{path}: cell {i} has outputs: clear them before committing")
print(f"{len(committed)} committed notebooks checked: nbformat 4, outputs cleared")
# Figures each notebook draws: 01 iteration time and breakdown; 02 throughput, efficiency and
# MFU (one figure); 03 busy heat map and per-rank communication, and the link plot with
# links.json.
expected = {"01-compare-strategies": 2, "02-scaling": 1, "03-trace-metric": 3 if links else 2}
for stem, want in expected.items():
    nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    pngs = sum("image/png" in o.get("data", {}) for o in outputs)
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    print(f"{stem}: {pngs} plots")
    if pngs != want:
        failed.append(f"{stem}: {pngs} plots, expected {want}")
    if stem == "03-trace-metric":
        if links and "Busiest link:" not in text:
            failed.append(f"{stem}: links.json exists but no busiest link was reported")
        if not links and "No links.json" not in text:
            failed.append(f"{stem}: no links.json, and no note saying so")
if failed:
    sys.exit("FAIL: " + "\n".join(failed))
EOF
if [ -n "${NOTEBOOKS_TEST_ARTIFACTS:-}" ]; then
  mkdir -p "$NOTEBOOKS_TEST_ARTIFACTS"
  cp "$tmp"/executed/*.ipynb "$NOTEBOOKS_TEST_ARTIFACTS"/
  echo "executed notebooks in $NOTEBOOKS_TEST_ARTIFACTS"
fi
echo "PASS: the notebooks ran on this stratasim's outputs (links.json: $links)"
