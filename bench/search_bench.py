#!/usr/bin/env python3
"""Prints the search benchmark of docs/search.md: `stratasim search` on a scenario, timed.

    bench/search_bench.py [--binary build/cli/stratasim] [--scenario scenarios/search-gpt175b.yaml]
                          [--jobs 2] [--top-k 20]

Runs the search once under /usr/bin/time and prints its wall and CPU seconds (user + system,
children included), peak RSS of the largest process, the ranking time and the space figures
the search reports, and whether the analytic and simulated bests agree. Figures, not a test.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(HERE, "..", "build", "cli", "stratasim"))
    ap.add_argument("--scenario", default=os.path.join(HERE, "..", "scenarios",
                                                       "search-gpt175b.yaml"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--top-k", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as out:
        cmd = ["/usr/bin/time", "-f", "%e %U %S %M", args.binary, "search", args.scenario,
               "-j", str(args.jobs), "--top-k", str(args.top_k), "--out", out]
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            raise SystemExit(p.returncode)
        _, user, system, rss_kb = p.stderr.strip().splitlines()[-1].split()
        ranking = [l for l in p.stderr.splitlines() if "ranked analytically" in l]
        with open(os.path.join(out, "search.json")) as f:
            result = json.load(f)
    space = result["space"]
    print(f"scenario: {args.scenario}")
    print(f"plans enumerated: {space['enumerated']}, pruned: {space['pruned']}, "
          f"ranked: {space['ranked']}, simulated: {args.top_k}")
    if ranking:
        print(ranking[0])
    print(f"wall s: {wall:.1f}  CPU s (user+sys, children included): "
          f"{float(user) + float(system):.1f}  peak RSS of one process: "
          f"{int(rss_kb) / 1e6:.2f} GB  (-j {args.jobs})")
    print(f"best analytic: {result['best']['analytic']}  best simulated: "
          f"{result['best']['simulated']}")
    print(p.stdout)


if __name__ == "__main__":
    main()
