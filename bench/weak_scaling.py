#!/usr/bin/env python3
"""Prints the scale benchmark of docs/scale.md: one iteration of Megatron-style 3D plans.

    bench/weak_scaling.py [--binary build/cli/stratasim] [--gpus 64 128 ...] [--fold auto|off]
                          [--network rail_optimized|leaf_spine] [--repeat 3]

Each row runs `stratasim run` on a scenario from bench/scale_scenario.py under /usr/bin/time
and prints its CPU seconds (user + system, median of --repeat runs), peak RSS, the plan's
task count, the SimGrid activities and instants (events) of the run, the tasks fused into
another's activity, the simulated iteration time and whether the run was folded. Figures,
not a test: these machines are noisy, so compare rows of one run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from scale_scenario import ROWS  # noqa: E402


def run_once(binary, scenario, out):
    cmd = ["/usr/bin/time", "-f", "%U %S %M", binary, "run", scenario, "--no-traces",
           "--out", out]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    try:
        user, system, rss_kb = last.split()
        return p.returncode, float(user) + float(system), int(rss_kb) * 1024, p.stderr
    except ValueError:
        return p.returncode, float("nan"), 0, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(HERE, "..", "build", "cli", "stratasim"))
    ap.add_argument("--gpus", type=int, nargs="+", default=[64, 128, 256, 512, 1024, 1536, 4096])
    ap.add_argument("--fold", default="auto", choices=["auto", "off"])
    ap.add_argument("--network", default="rail_optimized",
                    choices=["rail_optimized", "leaf_spine"])
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    print(f"{'GPUs':>5} {'GPUs x mb':>10} {'CPU s':>7} {'RSS GB':>7} {'tasks':>10} "
          f"{'us/task':>8} {'activities':>11} {'instants':>9} {'fused':>10} {'iter (s)':>9}  sim")
    with tempfile.TemporaryDirectory() as tmp:
        for gpus in a.gpus:
            scenario = os.path.join(tmp, f"gpt-{gpus}.yaml")
            with open(scenario, "w") as f:
                subprocess.run([sys.executable, os.path.join(HERE, "scale_scenario.py"),
                                str(gpus), "--network", a.network, "--fold", a.fold],
                               stdout=f, check=True)
            out = os.path.join(tmp, f"out-{gpus}")
            cpu, rss = [], []
            rc, err = 0, ""
            for _ in range(a.repeat):
                rc, c, m, err = run_once(a.binary, scenario, out)
                cpu.append(c)
                rss.append(m)
            if rc != 0:
                print(f"{gpus:>5} failed (exit {rc}): {err.strip().splitlines()[-2:]}")
                continue
            with open(os.path.join(out, "results.json")) as f:
                s = json.load(f)["strategies"][0]
            sim = s.get("simulation", {})
            _, _, _, _, _, d, batch, _ = ROWS[gpus]
            micro_batches = batch // d  # micro-batch 1
            tasks = sim.get("tasks", 0)
            cpu_s = statistics.median(cpu)
            print(f"{gpus:>5} {gpus * micro_batches:>10} {cpu_s:>7.2f} "
                  f"{statistics.median(rss) / 1e9:>7.2f} {tasks:>10} "
                  f"{cpu_s / max(tasks, 1) * 1e6:>8.2f} {sim.get('activities', 0):>11} "
                  f"{sim.get('instants', 0):>9} {sim.get('fused_tasks', 0):>10} "
                  f"{s['iteration_time_s']:>9.3f}  {s['fold']}", flush=True)


if __name__ == "__main__":
    main()
