#!/usr/bin/env bash
# The HTML report in a real browser (issue 25): `stratasim run --html` on a 3D-parallel scenario
# and on a MoE scenario, each report opened in headless Chromium (Debian's `chromium`). Checks
# that the page loads with no script error (the page records window errors and console.error
# on <body data-errors>, which --dump-dom shows) and that every chart's element holds data (the
# page writes data-points="N" on each chart after drawing it). Saves the screenshots under the
# build folder; with STRATASIM_UPDATE_DOCS=1 also writes docs/report.png (the README's).
#
# Usage: html_report_browser_test.sh STRATASIM_BINARY SOURCE_DIR ARTIFACT_DIR
# Exit 77 (ctest SKIP_RETURN_CODE) when chromium is missing, unless CI is set: then it fails.
set -euo pipefail
stratasim=$1
source_dir=$2
artifacts=$3

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  if [ -n "${CI:-}" ]; then
    echo "FAIL: chromium is not installed (apt-get install chromium; scripts/build.sh does)"
    exit 1
  fi
  echo "SKIP: chromium is not installed (apt-get install chromium) - the report is not opened"
  exit 77
fi

mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*"
  exit 1
}

# One headless run; the profile folder is private so that runs never share state.
open_page() {
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/profile" --hide-scrollbars --virtual-time-budget=10000 "$@" \
    2>>"$work/chromium.log"
}

# check NAME "RUN ARGS" CHART...: `stratasim run RUN ARGS --html`, open its report, assert that
# each named chart holds data.
check() {
  local name=$1 run_args=$2
  shift 2
  local out="$work/$name"
  # shellcheck disable=SC2086 # the run's arguments are words
  (cd "$source_dir" && "$stratasim" run $run_args --html --out "$out") >"$work/$name.log" ||
    { cat "$work/$name.log"; fail "stratasim run $run_args --html"; }
  [ -s "$out/report.html" ] || fail "$out/report.html was not written"
  if grep -q 'https\?://[^"]*\.js' "$out/report.html"; then
    fail "$name: report.html loads a script from the network"
  fi
  open_page --dump-dom "file://$out/report.html" >"$work/$name.dom.html" ||
    fail "$name: chromium --dump-dom"
  cp "$work/$name.dom.html" "$artifacts/$name.dom.html"
  grep -q 'data-ready="1"' "$work/$name.dom.html" || fail "$name: the page's scripts did not finish"
  if ! grep -q 'data-errors="0"' "$work/$name.dom.html"; then
    grep -o 'data-error-text="[^"]*"' "$work/$name.dom.html" || true
    fail "$name: the page recorded script errors"
  fi
  if grep -q 'Uncaught' "$work/chromium.log"; then
    grep 'Uncaught' "$work/chromium.log"
    fail "$name: uncaught script error in chromium's log"
  fi
  local chart
  for chart in "$@"; do
    local points
    points=$(grep -o "id=\"$chart\"[^>]*data-points=\"[0-9]*\"" "$work/$name.dom.html" |
      sed 's/.*data-points="\([0-9]*\)"/\1/' || true)
    [ -n "$points" ] || fail "$name: $chart has no data-points (not drawn)"
    [ "$points" -gt 0 ] || fail "$name: $chart drew $points points"
    echo "$name: $chart holds $points points"
  done
  # The link chart needs links.json (written by `stratasim run` once link usage is recorded).
  if [ -f "$out/links.json" ]; then
    grep -q 'id="chart-links"[^>]*data-points="[1-9]' "$work/$name.dom.html" ||
      fail "$name: links.json is there but chart-links holds no data"
    echo "$name: chart-links holds data"
  else
    echo "$name: no links.json: the link section says so"
  fi
}

# Three of gpt-3d's eight strategies (one per family) keep the test short; the README's
# screenshot (STRATASIM_UPDATE_DOCS=1) shows all eight.
gpt3d="scenarios/gpt-3d.yaml --strategy zero3 --strategy pp4-1f1b --strategy 3d-t2p4d4"
[ -n "${STRATASIM_UPDATE_DOCS:-}" ] && gpt3d="scenarios/gpt-3d.yaml"
check gpt-3d "$gpt3d" table chart-breakdown chart-memory chart-timeline
open_page --window-size=1200,3600 --screenshot="$artifacts/gpt-3d.report.png" \
  "file://$work/gpt-3d/report.html" >/dev/null || fail "chromium --screenshot"
[ -s "$artifacts/gpt-3d.report.png" ] || fail "no screenshot written"
echo "screenshot: $artifacts/gpt-3d.report.png"
if [ -n "${STRATASIM_UPDATE_DOCS:-}" ]; then
  cp "$artifacts/gpt-3d.report.png" "$source_dir/docs/report.png"
  echo "wrote $source_dir/docs/report.png"
fi
check moe "scenarios/moe-commodity-s.yaml --strategy deepspeed-top1 --strategy fastermoe-top1" table chart-breakdown chart-memory chart-moe
echo "PASS"
