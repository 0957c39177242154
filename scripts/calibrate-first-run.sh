#!/usr/bin/env bash
# The calibrator's first real run, for whoever has a GPU (issue 17): the device tests (every kernel against
# its CPU reference), a --smoke run, a time-limited --quick run, `ftcost db check` of its output, and the
# five numbers a reviewer looks at first. Under 8 minutes on an H100/H200.
#
#   scripts/calibrate-first-run.sh [BIN_DIR] [OUT_DIR]
#   scripts/calibrate-first-run.sh --summary FILE     only the five numbers of an existing calibration
#     BIN_DIR  folder with ftcost-calibrate, ftcost-calibrate-device-tests and ftcost (default build/cuda/bin,
#              ftcost is also looked for in build/cuda and build/native)
#     OUT_DIR  where the JSON files and logs go (default ./calibrate-first-run-<UTC time>)
#   FTCOST_QUICK_LIMIT_S (default 360): the --quick run is stopped (SIGINT: it writes what finished,
#   marked partial) after this many seconds.
#
# Exit: 0 all steps passed; 3 the calibrator cannot measure on this host (its one-line reason is printed:
# no driver, driver too old, no GPU, GPU unusable, CUDA libraries missing); 1 a step failed (the step and
# its log are named).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/cuda/bin}
out=${2:-./calibrate-first-run-$(date -u +%Y%m%dT%H%M%SZ)}
limit=${FTCOST_QUICK_LIMIT_S:-360}
cal=$bin/ftcost-calibrate
dev=$bin/ftcost-calibrate-device-tests
ftcost=""
for c in "$bin/ftcost" "$here/build/cuda/bin/ftcost" "$here/build/native/bin/ftcost"; do
  if [ -x "$c" ]; then ftcost=$c; break; fi
done

say() { printf 'first-run: %s\n' "$*" >&2; }
die() { say "FAILED: $*"; exit 1; }

# the five numbers a reviewer looks at first, from a calibration file
five_numbers() {
  python3 - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
m = c["measurements"]
def first(rows, pred, key):
    for r in rows:
        if pred(r): return r.get(key)
    return None
sq = first(m["gemm"], lambda r: r["dtype"] == "bf16" and r["shape"] == "square" and r["m"] == 8192 and r["n"] == 8192 and r["k"] == 8192, "tflops_median")
copy = max([r["gbps_median"] for r in m["bandwidth"] if r["kernel"] == "copy"], default=None)
loop = sum(r["time_us_median"] for r in m["expert_gemm"] if r["impl"] == "loop" and r["distribution"] == "uniform" and r["routing"] == "sparse")
grp = sum(r["time_us_median"] for r in m["expert_gemm"] if r["impl"] == "grouped" and r["distribution"] == "uniform" and r["routing"] == "sparse")
nf4 = max([r["gbps_median"] for r in m["nf4_dequant"] if r["variant"] == "fused"], default=None)
launch = first(m["launch"], lambda r: r["kind"] == "async", "us_median")
def f(v, unit, fmt="%.1f"):
    return (fmt % v + " " + unit) if v else "not measured"
print("device:                       %s (partial: %s)" % (c["device"]["name"], c["meta"]["partial"]))
print("bf16 GEMM 8192^3:             " + f(sq, "TFLOP/s"))
print("copy bandwidth:               " + f(copy, "GB/s"))
print("expert GEMMs loop vs grouped: " + (("%.0f us vs %.0f us (%.2fx)" % (loop, grp, loop / grp)) if loop and grp else "not measured"))
print("NF4 dequant (fused):          " + f(nf4, "GB/s"))
print("launch overhead:              " + f(launch, "us", "%.2f"))
PY
}

if [ "${1:-}" = "--summary" ]; then  # only print the five numbers of an existing calibration file
  [ -f "${2:-}" ] || die "--summary FILE: no such file: ${2:-}"
  five_numbers "$2" || die "cannot read $2"
  exit 0
fi

[ -x "$cal" ] || die "no ftcost-calibrate in $bin (build: cmake --preset cuda && cmake --build build/cuda --target ftcost-calibrate ftcost-calibrate-device-tests ftcost)"
mkdir -p "$out" || die "cannot create $out"
t0=$(date +%s)

# 1. can this host measure at all? (--smoke stops at the host check with exit 3 and one line)
"$cal" --smoke --out "$out/smoke.json" >"$out/smoke.out" 2>"$out/smoke.err"
rc=$?
if [ $rc -eq 3 ]; then
  say "cannot measure here: $(head -n1 "$out/smoke.err")"
  exit 3
fi
[ $rc -eq 0 ] || die "--smoke exited $rc (log: $out/smoke.err)"
say "smoke run: ok ($out/smoke.json)"

# 2. device tests: every kernel against its CPU reference
if [ -x "$dev" ]; then
  "$dev" --require-gpu >"$out/device-tests.log" 2>&1 || die "device tests (log: $out/device-tests.log): $(grep -m3 FAILED "$out/device-tests.log" | tr '\n' ' ')"
  say "device tests: $(tail -n1 "$out/device-tests.log")"
else
  die "no ftcost-calibrate-device-tests in $bin"
fi

# 3. --quick, stopped after $limit s if it runs longer (what finished is written, exit 130, marked partial)
"$cal" --quick --out "$out/quick.json" >"$out/quick.out" 2>"$out/quick.err" &
pid=$!
( sleep "$limit"; kill -INT "$pid" 2>/dev/null ) &
watchdog=$!
wait "$pid"
rc=$?
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null
case $rc in
  0) say "quick run: ok" ;;
  130) say "quick run: stopped after ${limit}s; what finished is in $out/quick.json (partial)" ;;
  4) say "quick run: written without rows the loader rejected (see meta.notes)" ;;
  *) die "--quick exited $rc (log: $out/quick.err)" ;;
esac
[ -f "$out/quick.json" ] || die "--quick wrote no $out/quick.json"

# 4. the core's checks, as for a contribution to gpu-db/calibrations/<gpu>/
if [ -n "$ftcost" ]; then
  # the GPU file it belongs to: FTCOST_GPU_ID, else the one with this SM count, memory (+-10%) and model
  # name (first word of the file's name, e.g. "H100", in the CUDA device name)
  gpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["name"])' "$out/quick.json" 2>/dev/null)
  id=${FTCOST_GPU_ID:-$("$ftcost" gpus --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["device"]
name, sm, gib = d["name"].lower(), d["sm_count"], d["memory_bytes"] / 2**30
for g in json.load(sys.stdin):
    if g.get("sm_count") == sm and abs(g.get("memory_gib", 0) - gib) <= 0.1 * g.get("memory_gib", 1) \
            and g["name"].split()[0].lower() in name:
        print(g["id"]); break' "$out/quick.json" 2>/dev/null)}
  if [ -n "$id" ]; then
    mkdir -p "$out/db/calibrations/$id"
    cp "$out/quick.json" "$out/db/calibrations/$id/"
    "$ftcost" db check "$out/db/calibrations/$id/quick.json" >"$out/db-check.log" 2>&1 || die "ftcost db check (log: $out/db-check.log): $(head -n3 "$out/db-check.log" | tr '\n' ' ')"
    say "db check as calibrations/$id/: ok$(grep -q '^review:' "$out/db-check.log" && echo ', with values to review:' && grep '^review:' "$out/db-check.log")"
  else
    say "db check: no GPU file matches \"$gpu\": checking the loader only"
    "$ftcost" db check "$out/quick.json" >"$out/db-check.log" 2>&1 || die "ftcost db check (log: $out/db-check.log)"
  fi
else
  say "db check: skipped (no ftcost binary next to the calibrator or in build/)"
fi

# 5. the five numbers
five_numbers "$out/quick.json" || die "cannot read $out/quick.json"
say "done in $(( $(date +%s) - t0 )) s; files in $out"
