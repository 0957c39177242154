#!/usr/bin/env bash
# `make test`'s driver (issue 35): runs each make target given, in order, stops at the first that fails, and
# prints each phase's wall time, the compiler cache's hit rate over the whole run, and a last line naming
# every gate that ran (or the one that failed).
#
#   tools/ci_phases.sh PHASE...        e.g. tools/ci_phases.sh setup format-check tidy test-native
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# What each phase checks, for the last line.
describe() {
  case "$1" in
    setup) echo "setup" ;;
    format-check) echo "format (clang-format)" ;;
    tidy) echo "clang-tidy gate (core/)" ;;
    test-native)
      if grep -q '^FTCOST_CUDA:BOOL=ON' build/native/CMakeCache.txt 2>/dev/null; then
        echo "native g++ build + every native test (unit, cli, validate, db, python suites, robust, ui smoke, calibrator with nvcc)"
      else
        echo "native g++ build + every native test (unit, cli, validate, db, python suites, robust, ui smoke; no nvcc: no CUDA calibrator)"
      fi
      ;;
    test-wasm) echo "wasm em++ build + core tests under node" ;;
    test-web) echo "browser end-to-end (Chromium)" ;;
    test-asan) echo "clang ASan+UBSan (unit, cli, robust sample)" ;;
    test-fuzz) echo "libFuzzer (seed replay + 60 s)" ;;
    test-cuda) echo "cuda calibrator tree" ;;
    *) echo "$1" ;;
  esac
}

# ccache's counters (hits, misses) as two numbers; nothing when ccache is absent.
ccache_counts() {
  command -v ccache >/dev/null 2>&1 || return 0
  ccache --print-stats 2>/dev/null | awk -F'\t' '
    $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { h += $2 }
    $1 == "cache_miss" { m += $2 }
    END { print h + 0, m + 0 }'
}

before=$(ccache_counts)
start_all=$(date +%s)
names=() times=() failed=""
for phase in "$@"; do
  echo "==> $phase"
  t0=$(date +%s)
  make --no-print-directory "$phase" </dev/null
  rc=$?
  t1=$(date +%s)
  names+=("$phase")
  times+=($((t1 - t0)))
  if [ $rc -ne 0 ]; then
    failed=$phase
    break
  fi
done
total=$(($(date +%s) - start_all))

echo
echo "==> phase times"
for i in "${!names[@]}"; do
  printf '  %-14s %4d s  (%d:%02d)\n' "${names[$i]}" "${times[$i]}" $((times[i] / 60)) $((times[i] % 60))
done
printf '  %-14s %4d s  (%d:%02d)\n' "total" "$total" $((total / 60)) $((total % 60))
after=$(ccache_counts)
if [ -n "$before" ] && [ -n "$after" ]; then
  read -r h0 m0 <<<"$before"
  read -r h1 m1 <<<"$after"
  hits=$((h1 - h0)) misses=$((m1 - m0))
  if [ $((hits + misses)) -gt 0 ]; then
    echo "  ccache: $hits hits, $misses misses ($((100 * hits / (hits + misses)))% hit rate; $(ccache --get-config cache_dir))"
  else
    echo "  ccache: no compilations"
  fi
fi
gates=""
for n in "${names[@]}"; do
  [ "$n" = "$failed" ] && continue
  gates+="${gates:+; }$(describe "$n")"
done
if [ -n "$failed" ]; then
  echo "gates FAILED at $(describe "$failed") after: ${gates:-nothing}"
  exit 1
fi
echo "gates passed: $gates"
