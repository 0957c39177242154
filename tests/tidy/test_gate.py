#!/usr/bin/env python3
"""The clang-tidy gate's judgement (tools/clang_tidy_gate.py --log): which reports fail `make tidy` and which
the baseline accepts. Runs on saved clang-tidy output, so it needs neither clang-tidy nor a build.

usage: test_gate.py REPO_ROOT TMPDIR
"""
import os
import subprocess
import sys

ROOT, TMP = sys.argv[1], sys.argv[2]
os.makedirs(TMP, exist_ok=True)
GATE = os.path.join(ROOT, "tools", "clang_tidy_gate.py")
CC = "readability-function-cognitive-complexity"
failures = []


def gate(log_lines, baseline_lines):
    log = os.path.join(TMP, "tidy.log")
    base = os.path.join(TMP, "baseline.txt")
    with open(log, "w") as f:
        f.write("\n".join(log_lines) + "\n")
    with open(base, "w") as f:
        f.write("# file | check | subject | limit | reason\n" + "\n".join(baseline_lines) + "\n")
    r = subprocess.run([sys.executable, GATE, "--log", log, "--baseline", base], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def case(name, log_lines, baseline_lines, want_rc, want_text=""):
    rc, out = gate(log_lines, baseline_lines)
    if rc != want_rc or want_text not in out:
        failures.append(f"{name}: exit {rc} (want {want_rc}), want {want_text!r} in:\n{out}")


def warn(file, line, msg, check):
    return f"{ROOT}/{file}:{line}:3: warning: {msg} [{check}]"


def complexity(file, line, func, n):
    return warn(file, line, f"function '{func}' has cognitive complexity of {n} (threshold 40)", CC)


ISO = "readability-isolate-declaration"
iso = warn("core/src/a.cpp", 10, "multiple declarations in a single statement reduces readability", ISO)
iso2 = warn("core/src/a.cpp", 20, "multiple declarations in a single statement reduces readability", ISO)
hdr = warn("core/include/ftcost/x.hpp", 5, "performing an implicit widening conversion", "bugprone-implicit-widening")

case("nothing reported", [], [], 0, "tidy: OK")
case("a warning the baseline does not list fails", [iso], [], 1, "core/src/a.cpp:10:3: multiple declarations")
case("a warning the baseline counts passes", [iso, iso2], [f"core/src/a.cpp | {ISO} | * | 2 | pending"], 0, "tidy: OK")
case("one warning more than counted fails", [iso, iso2], [f"core/src/a.cpp | {ISO} | * | 1 | pending"], 1,
     "the baseline accepts 1")
case("fewer warnings than counted: lower the count", [iso], [f"core/src/a.cpp | {ISO} | * | 2 | pending"], 1,
     "lower the baseline's 2 to 1")
case("a header's warning seen from two files counts once", [hdr, hdr],
     ["core/include/ftcost/x.hpp | bugprone-implicit-widening | * | 1 | pending"], 0, "tidy: OK")
big = complexity("core/src/a.cpp", 30, "plan", 120)
case("a complex function not listed fails", [big], [], 1, "function 'plan' has cognitive complexity 120")
case("a listed complex function passes", [big], [f"core/src/a.cpp | {CC} | plan | 120 | a search loop"], 0,
     "tidy: OK")
case("a listed function that grew fails", [big], [f"core/src/a.cpp | {CC} | plan | 119 | a search loop"], 1,
     "it grew")
rc, out = gate([big], [f"core/src/a.cpp | {CC} | plan | 119 | a search loop"])
if "no longer reports it" in out:
    failures.append(f"a listed function that grew is not also called gone from the baseline:\n{out}")
case("a listed function that shrank: lower the figure", [big],
     [f"core/src/a.cpp | {CC} | plan | 130 | a search loop"], 1, "lower the baseline's 130 to 120")
case("a baseline line with nothing left to accept fails", [iso],
     [f"core/src/a.cpp | {ISO} | * | 1 | pending", f"core/src/a.cpp | {CC} | gone | 50 | split since"], 1,
     "no longer reports it")
case("a baseline line needs a reason", [iso], [f"core/src/a.cpp | {ISO} | * | 1 |"], 1, "want `file | check")
case("an error (a file clang-tidy cannot compile) fails", [f"{ROOT}/core/src/a.cpp:1:10: error: 'x.hpp' file not found [clang-diagnostic-error]"], [], 1, "error:")

for f in failures:
    print("FAIL:", f)
print(f"{13 - len(failures)} of 13 gate cases as expected")
sys.exit(1 if failures else 0)
