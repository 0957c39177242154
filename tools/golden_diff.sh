#!/usr/bin/env bash
# Golden outputs of the estimator: proof that a change (a speed-up, a refactor) leaves every result as it was.
#
#   tools/golden_diff.sh record DIR [FTCOST]     run the job set with FTCOST (default build/native/bin/ftcost),
#                                                one JSON file per job in DIR
#   tools/golden_diff.sh diff DIR_A DIR_B [TOL]  compare two recordings number by number: equal, or within TOL
#                                                relative (default 1e-12); strings, keys and shapes exactly.
#                                                Two numbers both within 1e-12 of zero (a difference of nearly
#                                                equal sums, such as host_wait_s = step - device time) that differ
#                                                are listed as rounding residue, not as a difference
#   tools/golden_diff.sh OLD_FTCOST NEW_FTCOST   both of the above (in a temporary directory)
#
# The job set: every model preset once (the stack, method and GPU rotating over the presets), then the paths a
# model preset alone does not take: expert loops and grouped experts under skewed and measured routing, dense
# MoE, --seq max, a fixed batch, QLoRA variants, full fine-tuning with each optimizer, paged optimizers,
# checkpointing off, gradient accumulation, a calibration file, the paper's Eq. (2), multi-GPU (--gpus 8
# --parallel auto, FSDP/ZeRO with offload, two nodes), and `sweep`, `scale` and `compare` over one MoE job.
# Price ages depend on the day: record both sides on the same day. Exit status 1 when anything differs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

jobs() {
  # name|command and flags (split on spaces; no value here has one)
  local models stacks methods gpus i=0
  models=$("$1" models | awk 'NR > 2 && NF > 1 && $1 !~ /^-/ {print $1}')
  stacks=(hf-trl-2026 unsloth-2024q4 hf-transformers-2024 axolotl-2025 llamafactory-2025 torchtune-2024
          grouped-gemm-2025 hf-trl-2024q4 unsloth-2024q2)
  methods=(lora qlora lora full qlora lora)
  gpus=(h100-sxm5-80gb a100-sxm4-80gb h200-sxm-141gb a40 rtx-4090 mi300x l40s b200)
  for m in $models; do
    local s=${stacks[$((i % ${#stacks[@]}))]} me=${methods[$((i % ${#methods[@]}))]} g=${gpus[$((i % ${#gpus[@]}))]}
    echo "model-$m|estimate --model $m --gpu $g --method $me --stack $s --dataset math14k"
    i=$((i + 1))
  done
  local q="--model qwen3-30b-a3b --gpu h100-sxm5-80gb --method lora --stack unsloth-2024q4 --dataset math14k"
  cat <<EOF
qwen3-unsloth|estimate $q
qwen3-unsloth-skew|estimate $q --routing skew:1.2
qwen3-unsloth-rank128|estimate $q --lora-rank 128
qwen3-grouped|estimate --model qwen3-30b-a3b --gpu h100-sxm5-80gb --method lora --stack grouped-gemm-2025 --dataset math14k
qwen3-dense-moe|estimate --model qwen3-30b-a3b --gpu h200-sxm-141gb --method qlora --moe dense --dataset cs15k
mixtral-paper-routing|estimate --model mixtral-8x7b --gpu a40 --method qlora --routing paper-mixtral --dataset math14k
mixtral-paper-eq2|estimate --model mixtral-8x7b --gpu a40 --method qlora --model-kind paper --dataset math14k
blackmamba-paper-routing|estimate --model blackmamba-2.8b --gpu a40 --method full --routing paper-blackmamba --dataset cs15k
gpt-oss-120b-skew|estimate --model gpt-oss-120b --gpu h200-sxm-141gb --method qlora --routing skew:0.8 --dataset math14k
llama8b-seq-max|estimate --model llama-3.1-8b --gpu a100-sxm4-80gb --method lora --seq max
llama8b-batch8|estimate --model llama-3.1-8b --gpu h100-sxm5-80gb --method lora --dataset math14k --batch 8 --grad-accum 4
llama8b-full-adamw|estimate --model llama-3.1-8b --gpu h200-sxm-141gb --method full --optimizer adamw --seq 2048
llama8b-full-mixed|estimate --model llama-3.1-8b --gpu h200-sxm-141gb --method full --optimizer adamw-mixed --seq 1024
llama8b-full-paged8|estimate --model llama-3.1-8b --gpu a100-sxm4-80gb --method full --optimizer paged-adamw-8bit --seq 1024
llama8b-qlora-nf4|estimate --model llama-3.1-8b --gpu rtx-4090 --method qlora --quant nf4 --optimizer paged-adamw --dataset cs15k
llama8b-qlora-int8|estimate --model llama-3.1-8b --gpu l4 --method qlora --quant int8 --dataset alpaca-llama2
llama8b-nockpt|estimate --model llama-3.1-8b --gpu h100-sxm5-80gb --method lora --checkpointing off --lora-dropout 0.1 --dataset math14k
llama8b-eager|estimate --model llama-3.1-8b --gpu a40 --method lora --attention eager --seq 512
llama70b-too-big|estimate --model llama-3.1-70b --gpu t4 --method full --seq 4096
llama8b-calibrated|estimate --model llama-3.1-8b --gpu h200-sxm-141gb --method lora --dataset math14k --calibration gpu-db/calibrations/h200-sxm-141gb/firecracker-h200-2026-12-04-full.json
multi-qwen3-auto|estimate $q --gpus 8 --parallel auto
multi-mixtral-auto|estimate --model mixtral-8x7b --gpu h100-sxm5-80gb --method qlora --dataset math14k --gpus 8 --parallel auto
multi-llama70b-fsdp|estimate --model llama-3.1-70b --gpu h100-sxm5-80gb --method full --dataset math14k --gpus 8 --parallel fsdp
multi-llama70b-zero3-offload|estimate --model llama-3.1-70b --gpu a100-sxm4-80gb --method full --seq 2048 --gpus 8 --parallel zero3 --offload optimizer
multi-llama405b-2nodes|estimate --model llama-3.1-405b --gpu h100-sxm5-80gb --method lora --dataset math14k --node dgx-h100 --nodes 2 --parallel auto
multi-deepseek-ddp|estimate --model deepseek-moe-16b --gpu a100-sxm4-80gb --method lora --dataset cs15k --gpus 4 --parallel ddp
sweep-qwen3|sweep $q
scale-qwen3|scale $q
compare-qwen3|compare --model qwen3-30b-a3b --method lora --stack unsloth-2024q4 --dataset math14k
compare-mixtral|compare --model mixtral-8x7b --method qlora --dataset math14k
EOF
}

record() {
  local dir=$1 bin=${2:-$ROOT/build/native/bin/ftcost} n=0 name cmd
  mkdir -p "$dir"
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  while IFS='|' read -r name cmd; do
    # shellcheck disable=SC2086  # the flags split on spaces on purpose
    (cd "$ROOT" && "$bin" $cmd --json >"$dir/$name.json" 2>"$dir/$name.err") || echo "exit $?" >>"$dir/$name.err"
    n=$((n + 1))
  done < <(jobs "$bin")
  echo "golden_diff: $n jobs recorded in $dir"
}

diff_dirs() {
  python3 - "$1" "$2" "${3:-1e-12}" <<'EOF'
import json, math, os, sys
a_dir, b_dir, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
diffs, residue, worst, n_numbers = [], [], 0.0, 0
ZERO = 1e-12  # absolute: a rounding residue of a cancellation, not a result

def walk(a, b, path):
    global worst, n_numbers
    num = (int, float)
    if isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, num) and isinstance(b, num)):
        if type(a) != type(b):
            diffs.append(f"{path}: {a!r} vs {b!r}")
        elif isinstance(a, dict):
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b:
                    diffs.append(f"{path}.{k}: only in {'after' if k not in a else 'before'}")
                else:
                    walk(a[k], b[k], f"{path}.{k}")
        elif isinstance(a, list):
            if len(a) != len(b):
                diffs.append(f"{path}: {len(a)} vs {len(b)} items")
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{path}[{i}]")
        elif a != b:
            diffs.append(f"{path}: {a!r} vs {b!r}")
        return
    n_numbers += 1
    if a == b:
        return
    rel = abs(a - b) / max(abs(a), abs(b))
    if abs(a) <= ZERO and abs(b) <= ZERO:
        residue.append(f"{path}: {a!r} vs {b!r}")
        return
    worst = max(worst, rel)
    if not rel <= tol:
        diffs.append(f"{path}: {a!r} vs {b!r} (relative {rel:.3g})")

names = sorted(set(os.listdir(a_dir)) | set(os.listdir(b_dir)))
files = 0
for name in names:
    pa, pb = os.path.join(a_dir, name), os.path.join(b_dir, name)
    if not (os.path.exists(pa) and os.path.exists(pb)):
        diffs.append(f"{name}: only in {'before' if os.path.exists(pa) else 'after'}")
        continue
    files += 1
    ta, tb = open(pa).read(), open(pb).read()
    if not name.endswith(".json"):
        if ta != tb:
            diffs.append(f"{name}: differs")
        continue
    try:
        ja, jb = json.loads(ta), json.loads(tb)
    except ValueError:
        if ta != tb:
            diffs.append(f"{name}: differs (not JSON)")
        continue
    walk(ja, jb, name[:-5])
for d in diffs[:200]:
    print("DIFF", d)
for r in residue[:50]:
    print("RESIDUE (both within 1e-12 of zero)", r)
print(f"golden_diff: {files} files, {n_numbers} numbers; {len(diffs)} differences beyond {tol:g} relative "
      f"(largest relative difference {worst:.3g}); {len(residue)} rounding residues within {ZERO:g} of zero")
sys.exit(1 if diffs else 0)
EOF
}

case "${1:-}" in
  record) record "$2" "${3:-}" ;;
  diff) diff_dirs "$2" "$3" "${4:-}" ;;
  "" | -h | --help) sed -n '2,16p' "$0" ;;
  *)
    tmp=$(mktemp -d)
    record "$tmp/before" "$1"
    record "$tmp/after" "$2"
    diff_dirs "$tmp/before" "$tmp/after"
    ;;
esac
