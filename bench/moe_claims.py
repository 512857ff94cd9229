#!/usr/bin/env python3
"""Prints the figures behind the seed abstracts' Prophet and Pro-Prophet claims (docs/moe.md,
"The papers' claims"): speed-ups over DeepSpeed-MoE and FasterMoE, and load-balance ratios
(RB, Pro-Prophet §6) over FasterMoE's, per scenario and gate top-k.

    bench/moe_claims.py [--binary build/cli/stratasim] [--measured 100]
                        [--skews 1.2] [scenarios/moe-commodity-s.yaml ...]

Each scenario is run as written except for its measured iterations, and, with --skews, each
strategy's Zipf `skew` option (one run per value). A scenario without a `fastermoe-released-*`
strategy gets one per FasterMoE strategy (the same options with shadowing off: FasterMoE as
released, docs/moe.md). Figures, not a test: tests/moe_claims_test.cpp holds the directions.
"""
import argparse
import copy
import json
import os
import subprocess
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CLAIMS = {  # the abstracts' "up to" figures (shared/seeds/000)
    "prophet": {"speedup": 2.3, "balance": 12.06},
    "pro-prophet": {"speedup": 2.66, "balance": 11.22},
}


def with_released(strategies):
    names = {s["name"] for s in strategies}
    out = list(strategies)
    for s in strategies:
        if s["kind"] != "fastermoe" or s.get("options", {}).get("shadowing") is False:
            continue
        name = s["name"].replace("fastermoe", "fastermoe-released")
        if name in names:
            continue
        r = copy.deepcopy(s)
        r["name"] = name
        r.setdefault("options", {})["shadowing"] = False
        out.append(r)
    return out


def run(binary, scenario, measured, skew, tmp):
    with open(scenario) as f:
        doc = yaml.safe_load(f)
    doc["training"]["iterations"]["measured"] = measured
    doc["strategies"] = with_released(doc["strategies"])
    if skew is not None:
        for s in doc["strategies"]:
            s.setdefault("options", {})["skew"] = skew
    path = os.path.join(tmp, "scenario.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    out = os.path.join(tmp, "out")
    subprocess.run([binary, "run", path, "--no-traces", "--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.json")) as f:
        return {s["name"]: s for s in json.load(f)["strategies"] if s.get("moe")}


def table(results):
    by_k = {}
    for name, s in results.items():
        # The first of each kind per top-k, as the report picks its baseline (a later
        # deepspeed-moe with other options, like ep-routed, is not the baseline).
        key = s["kind"] + ("-released" if "released" in name else "")
        by_k.setdefault(s["moe"]["top_k"], {}).setdefault(key, s["moe"])
    rows = []
    for k, m in sorted(by_k.items()):
        for kind in ("prophet", "pro-prophet"):
            if kind not in m:
                continue
            me = m[kind]
            row = {"top_k": k, "strategy": kind, "rb": me["load_balance_ratio"]}
            for base in ("deepspeed-moe", "fastermoe", "fastermoe-released"):
                if base in m:
                    row["speedup_vs_" + base] = m[base]["iteration_time_s"]["mean"] / \
                        me["iteration_time_s"]["mean"]
            for base in ("fastermoe", "fastermoe-released"):
                if base in m and m[base]["load_balance_ratio"]:
                    row["rb_" + base] = m[base]["load_balance_ratio"]
                    row["balance_vs_" + base] = me["load_balance_ratio"] / \
                        m[base]["load_balance_ratio"]
            rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(HERE, "..", "build", "cli", "stratasim"))
    ap.add_argument("--measured", type=int, default=100)
    ap.add_argument("--skews", default="", help="comma-separated Zipf skews (default: as written)")
    ap.add_argument("scenarios", nargs="*",
                    default=[os.path.join(HERE, "..", "scenarios", "moe-commodity-s.yaml")])
    args = ap.parse_args()
    skews = [float(x) for x in args.skews.split(",")] if args.skews else [None]
    cols = ["speedup_vs_deepspeed-moe", "speedup_vs_fastermoe", "speedup_vs_fastermoe-released",
            "rb", "rb_fastermoe", "rb_fastermoe-released", "balance_vs_fastermoe",
            "balance_vs_fastermoe-released"]
    print("scenario\tskew\ttop_k\tstrategy\t" + "\t".join(cols) + "\tclaim (speed-up, balance)")
    for scenario in args.scenarios:
        for skew in skews:
            with tempfile.TemporaryDirectory() as tmp:
                rows = table(run(args.binary, scenario, args.measured, skew, tmp))
            for r in rows:
                figs = ["%.2f" % r[c] if r.get(c) is not None else "-" for c in cols]
                claim = CLAIMS[r["strategy"]]
                print("%s\t%s\t%d\t%s\t%s\tup to %.2fx, up to %.2fx" % (
                    os.path.basename(scenario), "as written" if skew is None else skew,
                    r["top_k"], r["strategy"], "\t".join(figs), claim["speedup"],
                    claim["balance"]))


if __name__ == "__main__":
    main()
