#!/usr/bin/env python3
"""The memory parameters a stack profile says are fitted (memory.fit_parameters) are what
`ftcost fit-stack --stack ID` computes from the training rows: a value edited by hand, or a model change that moves
the fit without the profile being refitted, fails here. Every stack in gpu-db/stacks/ that declares
memory.fit_parameters is refitted into a copy of its file and compared with the checked-in values.

usage: check_fit_reproduces.py FTCOST SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys


def main() -> int:
    ftcost, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    stacks_dir = os.path.join(source, "gpu-db", "stacks")
    checked = 0
    failures = []
    for name in sorted(os.listdir(stacks_dir)):
        path = os.path.join(stacks_dir, name)
        with open(path, encoding="utf-8") as f:
            profile = json.load(f)
        params = profile.get("memory", {}).get("fit_parameters", [])
        if not params:
            continue
        copy = os.path.join(work, name)
        shutil.copyfile(path, copy)
        cmd = [ftcost, "fit-stack", "--stack", profile["id"], "--dir", os.path.join(source, "tests", "data", "reference"),
               "--write", copy]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
            continue
        with open(copy, encoding="utf-8") as f:
            refit = json.load(f)
        for p in params:
            have = profile["memory"].get(p)
            want = refit["memory"]["fit"]["parameters"][p]
            if have is None or abs(have - want) > 1e-12 * max(1.0, abs(want)):
                failures.append(f"{name}: memory.{p} is {have}, fit-stack computes {want} "
                                f"(run: ftcost fit-stack --stack {profile['id']} and update the profile)")
        checked += 1
    for msg in failures:
        print("FAIL", msg)
    print(f"{checked} stack profile(s) with fitted memory parameters checked, {len(failures)} failure(s)")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
