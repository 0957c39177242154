#!/usr/bin/env python3
"""The CLI's golden test (issue 40): every command of tests/golden/commands.txt gives byte for byte the output
kept in tests/golden/expected/NAME.out (exit code, stdout, stderr), so a refactor that should change nothing is
seen to change nothing, and a model change shows every number it moves.

  run_golden.py FTCOST             compare; exit 1 listing each command that differs, with the first lines of
                                   the difference
  run_golden.py FTCOST --update    rewrite the expected outputs (after a change that is meant to move them;
                                   review `git diff tests/golden/expected` before committing)

Commands run from the repository root with FTCOST_TODAY=2026-12-07, which fixes the day that price ages are
counted from."""
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "golden")
TODAY = "2026-12-07"
# What a run may print that is not a result: the plan search's own wall time.
MASKS = [(re.compile(rb"estimates, [0-9.]+ ms\)"), b"estimates, <wall time> ms)")]


def commands():
    out = []
    with open(os.path.join(HERE, "commands.txt"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, args = line.partition("|")
            name, args = name.strip(), args.strip()
            if not sep or not name or not args:
                sys.exit(f"commands.txt:{n}: expected NAME | ARGUMENTS")
            out.append((name, args.split()))
    names = [c[0] for c in out]
    dup = {x for x in names if names.count(x) > 1}
    if dup:
        sys.exit(f"commands.txt: duplicate names {sorted(dup)}")
    return out


def run(ftcost, args):
    env = dict(os.environ, FTCOST_TODAY=TODAY)
    p = subprocess.run([ftcost] + args, cwd=ROOT, env=env, capture_output=True, timeout=300)
    out = f"exit: {p.returncode}\n--- stdout\n".encode() + p.stdout + b"--- stderr\n" + p.stderr
    for pattern, text in MASKS:
        out = pattern.sub(text, out)
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ftcost = os.path.abspath(sys.argv[1])
    update = "--update" in sys.argv[2:]
    expected_dir = os.path.join(HERE, "expected")
    os.makedirs(expected_dir, exist_ok=True)
    cmds = commands()
    failed = []
    for name, args in cmds:
        got = run(ftcost, args)
        path = os.path.join(expected_dir, name + ".out")
        if update:
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(got)
            os.replace(tmp, path)  # atomically
            continue
        if not os.path.exists(path):
            failed.append((name, [f"no expected output {os.path.relpath(path, ROOT)}"]))
            continue
        with open(path, "rb") as f:
            want = f.read()
        if got != want:
            diff = list(difflib.unified_diff(want.decode(errors="replace").splitlines(),
                                             got.decode(errors="replace").splitlines(), "expected", "got",
                                             lineterm="", n=0))
            failed.append((name, diff[:24]))
    known = {n + ".out" for n, _ in cmds}
    stale = sorted(f for f in os.listdir(expected_dir) if f.endswith(".out") and f not in known)
    if update:
        for f in stale:
            os.remove(os.path.join(expected_dir, f))
        print(f"golden: wrote {len(cmds)} expected outputs to {os.path.relpath(expected_dir, ROOT)}")
        return 0
    for f in stale:
        failed.append((f, ["expected output with no command in commands.txt"]))
    for name, lines in failed:
        print(f"golden: {name} differs")
        for l in lines:
            print("    " + l)
    if failed:
        print(f"golden: {len(failed)} of {len(cmds)} commands differ; if the change is meant to move them, run "
              f"tests/golden/run_golden.py {sys.argv[1]} --update and review the diff")
        return 1
    print(f"golden: {len(cmds)} commands, byte-identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
