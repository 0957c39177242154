#!/usr/bin/env python3
"""Can any memory model that is linear in the batch explain the published maximum batch sizes?

For each (model, method, moe, dataset) group of `max_batch_size` rows in tests/data/reference/, a model of the
form  memory(b) = F + b * p  (F: everything that does not grow with the batch, the same on every GPU;
p: memory per sample, the same on every GPU for one dataset) reproduces a measured maximum B on a GPU with
usable memory U exactly when  B <= (U - F) / p < B + 1.  This script scans F and prints, per dataset, the
range of F for which some p meets every row of that dataset, and whether one F serves all datasets of the
model at once (the per-sample p may differ per dataset: padded lengths differ). It also reports, for each row,
whether dropping that one row makes the rest consistent.

Usable memory is nvidia-smi's total (gpu-db `usable_memory_mib_nvidia_smi`, else `memory_gib`). The result
does not depend on any ftcost parameter: it is a property of the measurements. docs/validation.md quotes it.

    scripts/maxbatch_feasibility.py [--model mixtral-8x7b] [--moe sparse]
"""
import argparse
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def usable_gib(gpu_id):
    with open(os.path.join(ROOT, "gpu-db", "gpus", gpu_id + ".json")) as f:
        g = json.load(f)
    mib = g.get("usable_memory_mib_nvidia_smi")
    return mib / 1024.0 if mib else float(g["memory_gib"])


def rows(model, moe):
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "reference", "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for r in doc["rows"]:
            q = r["request"]
            if r["metric"] != "max_batch_size" or q.get("model") != model or q.get("moe") != moe:
                continue
            # the dataset, or the fixed sequence length of a synthetic (profiling) run
            key = q.get("dataset") or ("seq" + q["seq"])
            out.append((key, q["gpu"], usable_gib(q["gpu"]), int(r["measured"]), r["role"], r["id"]))
    return out


def p_interval(F, pts):
    """Per-sample memory p (GiB) that meets every (U, B) in pts for this F, or None."""
    lo, hi = 0.0, float("inf")
    for U, B in pts:
        free = U - F
        if free <= 0:
            return None
        lo, hi = max(lo, free / (B + 1)), min(hi, free / B)
    return (lo, hi) if lo < hi else None


def f_ranges(groups, step=0.01, f_max=100.0):
    """Ranges of F (GiB) for which every group has a per-sample p."""
    ranges, start, F = [], None, 0.0
    while F <= f_max:
        ok = all(p_interval(F, pts) for pts in groups.values())
        if ok and start is None:
            start = F
        if not ok and start is not None:
            ranges.append((start, F - step))
            start = None
        F += step
    if start is not None:
        ranges.append((start, f_max))
    return ranges


def fmt(ranges):
    return ", ".join(f"{a:.2f}-{b:.2f} GiB" for a, b in ranges) if ranges else "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="mixtral-8x7b")
    ap.add_argument("--moe", default="sparse")
    a = ap.parse_args()
    rs = rows(a.model, a.moe)
    if not rs:
        print(f"no max_batch_size rows for model {a.model}, moe {a.moe}", file=sys.stderr)
        return 2
    groups = {}
    for key, gpu, U, B, role, rid in rs:
        groups.setdefault(key, []).append((U, B))
    print(f"{a.model}, {a.moe}: measured maxima")
    for key, gpu, U, B, role, rid in rs:
        print(f"  {key:10s} {gpu:16s} {U:6.2f} GiB  max batch {B:3d}  ({role})")
    print("fixed memory F for which one per-sample memory meets every maximum of a data set:")
    for key, pts in groups.items():
        print(f"  {key:10s} {fmt(f_ranges({key: pts}))}")
    common = f_ranges(groups)
    print(f"one F for all data sets: {fmt(common)}")
    if not common:
        print("dropping one row:")
        for i, (_, _, _, _, _, rid) in enumerate(rs):
            g2 = {}
            for j, (k2, _, U2, B2, _, _) in enumerate(rs):
                if j != i:
                    g2.setdefault(k2, []).append((U2, B2))
            print(f"  without {rid:50s} {fmt(f_ranges(g2))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
