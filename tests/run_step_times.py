#!/usr/bin/env python3
"""Step time of the H200 Trainer runs (gpu-db/runs/h200-sxm-141gb) from `ftcost estimate`, with or without a
calibration (argument 1): the request `ftcost validate` builds from each run (core/app/src/run.cpp parse_run).
Usage: python3 tests/run_step_times.py [gpu-db/calibrations/h200-sxm-141gb/<file>.json]"""
import glob, json, os, statistics, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ftcost = os.path.join(root, "build/native/bin/ftcost")
cal = sys.argv[1] if len(sys.argv) > 1 else ""
errs = []
for f in sorted(glob.glob(os.path.join(root, "gpu-db/runs/h200-sxm-141gb/*.json"))):
    d = json.load(open(f))
    t = d["training"]
    walls = [s["wall_s"] for s in d["steps"] if not s["warmup"]]
    mb = d["steps"][-1]["micro_batches"][0]
    args = [ftcost, "estimate", "--json", "--gpu", "h200-sxm-141gb", "--model", d["model"]["preset"],
            "--method", t["method"], "--batch", str(mb["batch_size"]), "--seq", str(mb["seq_len"]),
            "--stack", "hf-trainer-2026", "--optimizer", t.get("optimizer", "adamw")]
    raw = d.get("training_raw", {})
    if raw.get("optim") == "adamw_torch": args += ["--adamw-impl", "foreach"]
    if raw.get("optim") == "adamw_torch_fused": args += ["--adamw-impl", "fused"]
    if "precision" in t: args += ["--precision", t["precision"]]
    if "attention" in t: args += ["--attention", t["attention"]]
    if "checkpointing" in t: args += ["--checkpointing", "on" if t["checkpointing"] else "off"]
    if t["method"] != "full":
        if "lora_rank" in t: args += ["--lora-rank", str(t["lora_rank"])]
        if "lora_targets" in t: args += ["--lora-targets", ",".join(t["lora_targets"])]
        if t.get("lora_dropout", 0) > 0: args += ["--lora-dropout", str(t["lora_dropout"])]
    if cal: args += ["--calibration", cal]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        print(os.path.basename(f), out.stderr.strip()); continue
    e = json.loads(out.stdout)
    step = e.get("step_time_s")
    if step is None:
        print(json.dumps(e)[:2000]); sys.exit(1)
    meas = statistics.median(walls)
    err = step / meas - 1
    errs.append(abs(err))
    print(f"{os.path.basename(f)[:-5]:60s} measured {meas:7.3f} predicted {step:7.3f} {100*err:+6.1f}%")
print(f"step-time MAPE {100*sum(errs)/len(errs):.1f}% over {len(errs)} runs")
