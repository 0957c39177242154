#!/usr/bin/env bash
# The second device call of a GPU session (issue 38), after scripts/gpu-session.sh: Hugging Face Trainer runs
# on random weights (tools/hf_trainer_run.py), recorded as ftcost.run/1 files, two of them with one step
# profiled by torch.profiler (tools/step_profile.py: device busy and idle time, kernels by class, the longest
# idle gaps and what the host ran in them). Most valuable first:
#   1. llama-3.2-3b LoRA b4 s1024 without checkpointing, profiled: the recorded H200 run the step model misses
#      most among the dense ones (-25%);
#   2. qwen3-30b-a3b LoRA on attention b2 s1024, profiled: the MoE run it misses by half;
#   3. three shapes the recorded runs lack: another family (gemma-2-9b), a small host-bound model
#      (tinyllama-1.1b b4 s512) and a long context (llama-3.2-3b b1 s16384, checkpointing).
# Each run has its own time limit; a failing run does not stop the next. Everything lands in OUT_DIR, and
# OUT_DIR.tgz holds it all. Needs torch, transformers and peft on the device (skipped without them).
#
#   scripts/gpu-profile.sh OUT_DIR [GPU_ID]        FTCOST_RUN_LIMIT_S (default 110) per run
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?OUT_DIR}
gpu_id=${2:-}
mkdir -p "$out"
log() { printf 'gpu-profile: %s\n' "$*" | tee -a "$out/profile.log" >&2; }
if ! python3 -c 'import torch, transformers, peft' 2>/dev/null; then
  log "skipped: no torch/transformers/peft for $(command -v python3)"
  exit 0
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >"$out/nvidia-smi.csv" 2>&1
# preset:method:batch:seq:extra flags (comma-separated, commas become spaces)
runs=(
  "llama-3.2-3b:lora:4:1024:--no-checkpointing,--profile-step,6"
  "qwen3-30b-a3b:lora:2:1024:--lora-targets,q_proj;k_proj;v_proj;o_proj,--profile-step,6"
  "gemma-2-9b:lora:2:2048:"
  "tinyllama-1.1b:lora:4:512:"
  "llama-3.2-3b:lora:1:16384:"
)
for r in "${runs[@]}"; do
  IFS=: read -r preset method batch seq extra <<<"$r"
  flags=${extra//,/ }
  flags=${flags//;/,}
  name="hf-$preset-$method-b$batch-s$seq"
  t=$(date +%s)
  # shellcheck disable=SC2086 # flags are words on purpose
  PYTHONUNBUFFERED=1 timeout "${FTCOST_RUN_LIMIT_S:-110}" python3 "$here/tools/hf_trainer_run.py" \
    --preset "$preset" --method "$method" --batch "$batch" --seq "$seq" --steps 8 $flags \
    ${gpu_id:+--gpu-id "$gpu_id"} -o "$out/$name.json" >"$out/$name.log" 2>&1
  log "$name ($flags): exit $? in $(( $(date +%s) - t )) s"
done
tar -czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
log "done: $out.tgz"
