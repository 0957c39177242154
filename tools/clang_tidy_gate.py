#!/usr/bin/env python3
"""clang-tidy as a gate on core/ (`make tidy`).

Runs clang-tidy (the repository's .clang-tidy) on every C++ source under core/, in parallel, and fails when
it reports anything that tools/clang-tidy-baseline.txt does not accept:

  - a warning of a check, file and function not in the baseline, or more warnings of a (file, check) than
    the baseline's count;
  - a function whose cognitive complexity rose above the figure the baseline lists for it;
  - an error (a file clang-tidy cannot compile);
  - a baseline line no longer needed (the warning is gone, or the figure can come down): remove or lower
    it, so that the baseline only ever shrinks.

False positives are silenced where they are, with `// NOLINT(check): reason`, not in the baseline.

Baseline lines: `file | check | subject | limit | reason`, where subject is the function name and limit its
accepted cognitive complexity for readability-function-cognitive-complexity, and subject `*` with limit the
accepted number of warnings of that check in that file for any other check.

  tools/clang_tidy_gate.py -p build/native [-j 2] [--baseline FILE] [--print-baseline] [FILE ...]
  tools/clang_tidy_gate.py --log OUTPUT [--baseline FILE]   (judge a saved clang-tidy output; tests/tidy)

Needs build/native/compile_commands.json (`cmake --preset native`).

Results are cached per translation unit (issue 35) in $XDG_CACHE_HOME/ftcost/clang-tidy (~/.cache/...; --no-cache
or FTCOST_TIDY_CACHE=0 turns it off, FTCOST_TIDY_CACHE=DIR moves it). The key is everything clang-tidy's output
for the file depends on: clang-tidy's version, .clang-tidy, the file's compile command and its preprocessed text
(the compiler's -E -C output: the file and every header it includes, as the build's flags select them, with
comments, where NOLINT lives, and line markers, since warnings name lines), each with
this checkout's path replaced so that two clones share entries. A changed .clang-tidy therefore re-runs every
file. The baseline does not enter the key: it only judges the outputs, and the judgement always runs over every
file's output, cached or fresh, so the verdict is the same as a full run's.
"""
import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import shlex
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPLEXITY = "readability-function-cognitive-complexity"
WARNING = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<kind>warning|error): "
                     r"(?P<msg>.*?)(?: \[(?P<check>[^\]]+)\])?$")
FUNC = re.compile(r"^function '(?P<name>[^']+)' has cognitive complexity of (?P<n>\d+)")


def find_clang_tidy():
    for name in ("clang-tidy-14", "clang-tidy"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("tidy: clang-tidy not found (scripts/setup.sh installs Debian's clang-tidy)")


def core_sources():
    out = []
    for top in ("core",):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            out += [os.path.join(d, f) for f in files if f.endswith(".cpp")]
    return sorted(out)


def rel(path):
    return os.path.relpath(os.path.normpath(os.path.join(ROOT, path)), ROOT)


ROOT_MARK = "@FTCOST_ROOT@"


def cache_dir():
    setting = os.environ.get("FTCOST_TIDY_CACHE", "")
    if setting == "0":
        return None
    if setting:
        return setting
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ftcost", "clang-tidy")


class TidyCache:
    """clang-tidy outputs by translation-unit key (see the module's docstring)."""

    def __init__(self, directory, tidy, build):
        self.dir = directory
        self.hits = self.misses = 0
        with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
            self.commands = {os.path.normpath(os.path.join(e["directory"], e["file"])): e for e in json.load(f)}
        version = subprocess.run([tidy, "--version"], capture_output=True, text=True).stdout
        with open(os.path.join(ROOT, ".clang-tidy"), "rb") as f:
            config = f.read()
        self.common = hashlib.sha256(version.encode() + b"\0" + config).hexdigest()

    def key(self, path):
        entry = self.commands.get(os.path.normpath(path))
        if entry is None:
            return None
        args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        pre, skip = [], False
        for a in args:
            if skip:
                skip = False
            elif a == "-o":
                skip = True
            elif a != "-c":
                pre.append(a)
        # -C keeps comments (NOLINT lives in them) and the line markers stay (warnings name lines)
        cp = subprocess.run(pre + ["-E", "-C"], capture_output=True, cwd=entry["directory"])
        if cp.returncode != 0:
            return None  # clang-tidy will report why; never cache a file that does not preprocess
        h = hashlib.sha256(self.common.encode())
        # -O levels change no diagnostic, only __OPTIMIZE__, which the preprocessed text carries
        h.update(" ".join(a for a in pre if not a.startswith("-O")).replace(ROOT, ROOT_MARK).encode())
        h.update(cp.stdout.replace(ROOT.encode(), ROOT_MARK.encode()))
        return h.hexdigest()

    def get(self, key):
        try:
            with open(os.path.join(self.dir, key + ".json"), encoding="utf-8") as f:
                rc, out = json.load(f)
        except (OSError, ValueError):
            return None
        return rc, out.replace(ROOT_MARK, ROOT)

    def put(self, key, rc, out):
        os.makedirs(self.dir, exist_ok=True)
        tmp = os.path.join(self.dir, f"{key}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump([rc, out.replace(ROOT, ROOT_MARK)], f)
        os.replace(tmp, os.path.join(self.dir, key + ".json"))


def run_one(tidy, build, path, cache=None):
    start = time.monotonic()
    key = cache.key(path) if cache else None
    hit = cache.get(key) if key else None
    if hit is not None:
        cache.hits += 1
        return path, hit[0], hit[1], time.monotonic() - start
    cp = subprocess.run([tidy, "-p", build, "--quiet", path], capture_output=True, text=True, cwd=ROOT)
    out = cp.stdout + cp.stderr
    if cache:
        cache.misses += 1
        if key and "error:" not in out:  # errors are re-checked every time
            cache.put(key, cp.returncode, out)
    return path, cp.returncode, out, time.monotonic() - start


def parse(output):
    found = []
    for line in output.splitlines():
        m = WARNING.match(line)
        if not m:
            continue
        found.append((rel(m["file"]), int(m["line"]), int(m["col"]), m["kind"], m["check"] or "", m["msg"]))
    return found


def read_baseline(path):
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            cols = [c.strip() for c in line.split("|")]
            if len(cols) != 5 or not cols[3].isdigit() or not cols[4]:
                sys.exit(f"{path}:{n}: want `file | check | subject | limit | reason`, got: {line}")
            key = (cols[0], cols[1], cols[2])
            if key in entries:
                sys.exit(f"{path}:{n}: {cols[0]} {cols[1]} {cols[2]} is listed twice")
            entries[key] = (int(cols[3]), cols[4], n)
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-p", dest="build", default="build/native", help="build folder with compile_commands.json")
    ap.add_argument("-j", dest="jobs", type=int, default=2, help="files checked at once (default 2)")
    ap.add_argument("--baseline", default=os.path.join(ROOT, "tools", "clang-tidy-baseline.txt"))
    ap.add_argument("--print-baseline", action="store_true",
                    help="print the baseline lines that would accept what clang-tidy reports now")
    ap.add_argument("--log", help="judge this saved clang-tidy output instead of running clang-tidy")
    ap.add_argument("--no-cache", action="store_true", help="run clang-tidy on every file (no result cache)")
    ap.add_argument("files", nargs="*", help="sources to check (default: every .cpp under core/)")
    args = ap.parse_args()

    start = time.monotonic()
    outputs = []
    cache = None
    if args.log:
        with open(args.log, encoding="utf-8") as f:
            log = f.read()
        files = [os.path.join(ROOT, f) for f in args.files] or sorted({os.path.join(ROOT, w[0]) for w in parse(log)})
        outputs.append((args.log, 0, log, 0.0))
    else:
        build = os.path.join(ROOT, args.build)
        if not os.path.exists(os.path.join(build, "compile_commands.json")):
            sys.exit(f"tidy: {args.build}/compile_commands.json is missing: run `cmake --preset native` first")
        files = [os.path.abspath(f) for f in args.files] or core_sources()
        tidy = find_clang_tidy()
        where = None if args.no_cache else cache_dir()
        cache = TidyCache(where, tidy, build) if where else None
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for path, rc, out, secs in pool.map(lambda f: run_one(tidy, build, f, cache), files):
                outputs.append((path, rc, out, secs))
    wall = time.monotonic() - start

    seen = set()
    warnings = []
    errors = []
    for path, rc, out, _ in outputs:
        found = parse(out)
        for w in found:
            if w[3] == "error":
                errors.append(w)
            elif w[:3] + (w[4],) not in seen:  # a header's warning comes once per file that includes it
                seen.add(w[:3] + (w[4],))
                warnings.append(w)
        if rc != 0 and not any(w[3] == "error" for w in found):
            errors.append((rel(path), 0, 0, "error", "", f"clang-tidy exited with {rc}: {out.strip()[-400:]}"))

    # Group: complexity per function, other checks per (file, check).
    complexity = {}
    counts = collections.defaultdict(list)
    for w in warnings:
        file, line, _, _, check, msg = w
        m = FUNC.match(msg) if check == COMPLEXITY else None
        if m:
            complexity[(file, COMPLEXITY, m["name"])] = (int(m["n"]), line)
        else:
            counts[(file, check, "*")].append(w)

    if args.print_baseline:
        for (file, check, name), (n, _) in sorted(complexity.items()):
            print(f"{file} | {check} | {name} | {n} | REASON")
        for (file, check, star), ws in sorted(counts.items()):
            print(f"{file} | {check} | {star} | {len(ws)} | REASON")
        return 0

    baseline = read_baseline(args.baseline)
    checked = {rel(f) for f in files}
    problems = []
    used = set()
    for key, (n, line) in sorted(complexity.items()):
        file, _, name = key
        entry = baseline.get(key)
        if entry is None:
            problems.append(f"{file}:{line}: function '{name}' has cognitive complexity {n} (threshold 40): "
                            f"split it, or list it in the baseline with the reason")
        elif n > entry[0]:
            used.add(key)  # still needed: the baseline line is not stale, the function grew past it
            problems.append(f"{file}:{line}: function '{name}' has cognitive complexity {n}, the baseline "
                            f"accepts {entry[0]} (line {entry[2]}): it grew")
        else:
            used.add(key)
            if n < entry[0]:
                problems.append(f"{args.baseline}:{entry[2]}: '{name}' is down to {n}: lower the baseline's "
                                f"{entry[0]} to {n}")
    for key, ws in sorted(counts.items()):
        entry = baseline.get(key)
        limit = entry[0] if entry else 0
        if len(ws) > limit:
            for file, line, col, _, check, msg in ws:
                problems.append(f"{file}:{line}:{col}: {msg} [{check}]")
            if entry:
                problems.append(f"  ({len(ws)} {key[1]} warnings in {key[0]}; the baseline accepts {limit})")
        elif entry:
            used.add(key)
            if len(ws) < limit:
                problems.append(f"{args.baseline}:{entry[2]}: {key[0]} has {len(ws)} {key[1]} warnings now: "
                                f"lower the baseline's {limit} to {len(ws)}")
    for key, (limit, _, n) in sorted(baseline.items(), key=lambda kv: kv[1][2]):
        if key not in used and key[0] in checked and not any(p.startswith(f"{args.baseline}:{n}:") for p in problems):
            problems.append(f"{args.baseline}:{n}: {' '.join(key)}: clang-tidy no longer reports it: "
                            f"remove the line")
    for file, line, col, _, check, msg in errors:
        problems.append(f"{file}:{line}:{col}: error: {msg}" + (f" [{check}]" if check else ""))

    accepted = sum(1 for k in used if k[2] != "*") + sum(len(counts[k]) for k in used if k[2] == "*")
    slowest = sorted(outputs, key=lambda o: -o[3])[:3]
    cached = f"; {cache.hits} from the cache ({cache.dir}), {cache.misses} analysed" if cache else ""
    print(f"tidy: {len(files)} files{cached}, {len(warnings)} warnings ({accepted} accepted by "
          f"{os.path.relpath(args.baseline, ROOT)}), {len(errors)} errors; {wall:.0f} s with -j{args.jobs} "
          f"(slowest: " + ", ".join(f"{rel(p)} {s:.0f} s" for p, _, _, s in slowest) + ")")
    if problems:
        print("\n".join(problems))
        print(f"tidy: FAILED ({len(problems)} problems): fix them, NOLINT(check) a false positive with the "
              f"reason, or (complex functions, files under other work) list them in the baseline", file=sys.stderr)
        return 1
    print("tidy: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
