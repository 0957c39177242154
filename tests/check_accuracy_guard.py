#!/usr/bin/env python3
"""ctest validate.guard: the accuracy the README states is the accuracy ftcost has.

Runs `ftcost validate --json` on the repository's reference rows and fails when
  * the MAPE of the paper's A40 training rows (tests/data/reference/paper-a40.json, ids "a40-..."), or
  * the MAPE of the Table IV throughputs on the A100/H100 (development rows, group "Table IV throughput ...")
rises above the figure README.md quotes ("X% MAPE on the A40 training rows, Y% on the Table IV throughputs")
by more than MARGIN percentage points. A model change that makes either worse must update the README's figure
(and docs/validation.md) in the same commit, so the published number never flatters the model.

    check_accuracy_guard.py FTCOST_BINARY REFERENCE_DIR README
"""
import json
import re
import subprocess
import sys

MARGIN = 0.5  # percentage points: the README rounds to one decimal


def main() -> int:
    binary, ref_dir, readme = sys.argv[1:4]
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"([0-9.]+)% MAPE on the A40 training rows, ([0-9.]+)% on the Table IV throughputs", text)
    if not m:
        print(f"{readme}: the sentence quoting the training and Table IV MAPE was not found; "
              "keep it (the guard reads its figures)")
        return 1
    quoted_train, quoted_dev = float(m.group(1)), float(m.group(2))
    out = subprocess.run([binary, "validate", "--dir", ref_dir, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"ftcost validate failed (exit {out.returncode}): {out.stderr}")
        return 1
    rows = json.loads(out.stdout)["rows"]

    def mape(sel):
        chosen = [r for r in rows if sel(r)]
        if not chosen:
            return None, 0
        return 100.0 * sum(abs(r["rel_error"]) for r in chosen) / len(chosen), len(chosen)

    train, n_train = mape(lambda r: r["role"] == "training" and r["id"].startswith("a40-"))
    dev, n_dev = mape(lambda r: r["role"] == "development" and r["group"].startswith("Table IV throughput"))
    ok = True
    for name, got, n, quoted in (("A40 training rows", train, n_train, quoted_train),
                                 ("Table IV throughputs (development)", dev, n_dev, quoted_dev)):
        if got is None:
            print(f"{name}: no rows found")
            ok = False
            continue
        verdict = "ok" if got <= quoted + MARGIN else "WORSE than the README states"
        print(f"{name}: MAPE {got:.2f}% over {n} rows; README quotes {quoted}% (+{MARGIN} allowed): {verdict}")
        ok = ok and got <= quoted + MARGIN
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
