#!/usr/bin/env bash
# Everything a developer with one GPU for a few minutes should run, in one go, most valuable first:
#   1. scripts/calibrate-first-run.sh: the calibrator's device tests, --smoke, a time-limited --quick run,
#      `ftcost db check` of the result and the five numbers a reviewer reads first;
#   2. short Hugging Face Trainer jobs on random weights (tools/hf_trainer_run.py), recorded by
#      tools/ftcost_probe.py as ftcost.run/1 files (skipped where torch/transformers/peft are missing);
#   3. the op classes between the GEMMs (issue 38: norm, cast, pointwise, cross_entropy, lora, attention), with
#      bandwidth and gemm for the LoRA roofline, in their own --quick run (the first run's time limit stops
#      before them: they run last); SIGINT at the limit writes what finished;
#   4. ftcost-calibrate --collectives (NCCL on the visible GPUs; with one GPU only the one-rank path runs).
# Each step has its own time limit; a failing step does not stop the next. Everything lands in OUT_DIR,
# and OUT_DIR.tgz holds it all.
#
#   scripts/gpu-session.sh BIN_DIR OUT_DIR [GPU_ID]
#   FTCOST_QUICK_LIMIT_S (default 120), FTCOST_OPS_LIMIT_S (default 240), FTCOST_HF_RUNS (default: the two Llama-3.1-8B LoRA shapes below)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:?BIN_DIR}
out=${2:?OUT_DIR}
gpu_id=${3:-}
mkdir -p "$out"
log() { printf 'gpu-session: %s\n' "$*" | tee -a "$out/session.log" >&2; }

# The CUDA libraries the calibrator dlopens: the toolkit's lib64 and the pip wheels' lib folders, where
# the host has them.
libs=""
for f in $(find /usr/local/cuda*/ /usr/lib/python3*/ /usr/local/lib/python3*/ /opt/ \( -name 'libcublas.so.*' \
    -o -name 'libnccl.so.2' \) 2>/dev/null); do
  d=$(dirname "$f")
  case ":$libs:" in *":$d:"*) ;; *) libs="$libs:$d" ;; esac
done
export LD_LIBRARY_PATH="${libs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv >"$out/nvidia-smi.csv" 2>&1

t=$(date +%s)
FTCOST_QUICK_LIMIT_S=${FTCOST_QUICK_LIMIT_S:-120} FTCOST_GPU_ID=$gpu_id \
  timeout 300 bash "$here/scripts/calibrate-first-run.sh" "$bin" "$out/calibrate" >"$out/first-run.log" 2>&1
log "calibrate-first-run: exit $? in $(( $(date +%s) - t )) s"

t=$(date +%s)
timeout -s INT ${FTCOST_OPS_LIMIT_S:-240} "$bin/ftcost-calibrate" --quick \
  --only bandwidth,gemm,norm,cast,pointwise,cross_entropy,lora,attention \
  --out "$out/op-classes.json" >"$out/op-classes.log" 2>&1
log "op classes (norm, cast, pointwise, cross_entropy, lora, attention): exit $? in $(( $(date +%s) - t )) s"

if python3 -c 'import torch, transformers, peft' 2>/dev/null; then
  runs=${FTCOST_HF_RUNS:-"llama-3.1-8b:4:1024 llama-3.1-8b:1:8192"}
  for r in $runs; do
    IFS=: read -r preset batch seq <<<"$r"
    t=$(date +%s)
    PYTHONUNBUFFERED=1 timeout 100 python3 "$here/tools/hf_trainer_run.py" --preset "$preset" --method lora \
      --batch "$batch" --seq "$seq" --steps 8 ${gpu_id:+--gpu-id "$gpu_id"} \
      -o "$out/hf-$preset-lora-b$batch-s$seq.json" >"$out/hf-$preset-b$batch-s$seq.log" 2>&1
    log "hf run $preset b$batch s$seq: exit $? in $(( $(date +%s) - t )) s"
  done
else
  log "hf runs: skipped (no torch/transformers/peft)"
fi
t=$(date +%s)
timeout 45 "$bin/ftcost-calibrate" --collectives --out "$out/collectives.json" >"$out/collectives.log" 2>&1
log "collectives: exit $? in $(( $(date +%s) - t )) s"

tar -czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
log "done: $out.tgz"
