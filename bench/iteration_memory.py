#!/usr/bin/env python3
"""Peak memory of a run against its iterations (issue 17): one strategy of the quickstart,
simulated for 2, 20, 100 ... measured iterations, --no-traces, one job.

    bench/iteration_memory.py [--binary build/cli/stratasim] [--iterations 2 20 100]

Prints, per row, the plan's tasks, the run's peak RSS (the largest of the parent and its
simulation child, from getrusage), and the bytes per task and per iteration. The run plans the
strategy while it simulates it and holds a few iterations at a time (docs/scale.md,
"Iterations"), so the peak should not grow with iterations: MB/iteration near 0.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_once(binary, iterations, strategy, workdir):
    with open(os.path.join(ROOT, "scenarios", "quickstart.yaml")) as f:
        text = f.read()
    text = text.replace("iterations: {warmup: 1, measured: 2}",
                        "iterations: {warmup: 1, measured: %d}" % iterations)
    path = os.path.join(workdir, "it%d.yaml" % iterations)
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(workdir, "out%d" % iterations)
    # A fresh child per row, so getrusage's RUSAGE_CHILDREN maximum is this row's alone: run
    # the program under a small Python wrapper that reports it.
    probe = ("import resource,subprocess,sys;"
             "r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);"
             "sys.exit(r.returncode)")
    done = subprocess.run([sys.executable, "-c", probe, binary, "run", path, "-s", strategy,
                           "--no-traces", "-j", "1", "--out", out],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("run failed: " + done.stderr)
    peak_kib = int(done.stdout.strip().splitlines()[-1])
    with open(os.path.join(out, "results.json")) as f:
        tasks = json.load(f)["strategies"][0]["simulation"]["tasks"]
    return tasks, peak_kib * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "cli", "stratasim"))
    ap.add_argument("--iterations", type=int, nargs="+", default=[2, 20, 100])
    ap.add_argument("--strategy", default="ddp-no-overlap")
    a = ap.parse_args()
    print("%10s %10s %12s %12s %14s" % ("measured", "tasks", "peak (MB)", "B/task", "MB/iteration"))
    with tempfile.TemporaryDirectory() as workdir:
        first = None
        for it in a.iterations:
            tasks, peak = run_once(a.binary, it, a.strategy, workdir)
            per_iteration = (peak - first[1]) / (it - first[0]) / 1e6 if first else float("nan")
            if first is None:
                first = (it, peak)
            print("%10d %10d %12.1f %12.0f %14.2f" % (it, tasks, peak / 1e6, peak / tasks,
                                                      per_iteration))


if __name__ == "__main__":
    main()
