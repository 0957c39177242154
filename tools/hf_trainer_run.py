#!/usr/bin/env python3
"""Record a short Hugging Face Trainer job as an ``ftcost.run/1`` file, on random weights.

For whoever has a GPU and no model weights (no network): the model is built from a preset's config of
``gpu-db/models/`` with random initialisation, so its memory and speed are those of the real model (dense
models: the same shapes, kernels and bytes; the values do not change what a dense step does); the data are
random token ids of one fixed length, so every micro-batch has the same padded shape and no padding.
The run is recorded by ``tools/ftcost_probe.py``'s Trainer callback, exactly as a user's run is.

    python3 tools/hf_trainer_run.py --preset llama-3.1-8b --method lora --batch 4 --seq 1024 \\
        --steps 8 --gpu-id h200-sxm-141gb -o run.json

Needs torch, transformers and (for --method lora) peft. Written for transformers 5.x and peft 0.18
(``AutoModelForCausalLM.from_config(config, dtype=...)``; ``peft.LoraConfig`` / ``get_peft_model``).
"""

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", required=True, help="model preset id of gpu-db/models/ (its config is used)")
    ap.add_argument("--method", choices=["lora", "full"], default="lora")
    ap.add_argument("--lora-rank", type=int, default=16)
    ap.add_argument("--lora-targets", default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    ap.add_argument("--lora-dropout", type=float, default=0.0)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--steps", type=int, default=8, help="optimizer steps (the first 2 are warm-up)")
    ap.add_argument("--attention", default="sdpa", help="attn_implementation (sdpa | eager | flash_attention_2)")
    ap.add_argument("--no-checkpointing", action="store_true")
    ap.add_argument("--gpu-id", default=None, help="ftcost GPU id (default: matched from the device name)")
    ap.add_argument("--profile-step", type=int, default=0,
                    help="profile this optimizer step with torch.profiler (tools/step_profile.py): OUT's stem "
                         "+ .profile.json (summary) and .profile.trace.json.gz; the step is then marked "
                         "warm-up in OUT (the profiler slows its host side). 0: off")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    if a.profile_step and not 2 < a.profile_step <= a.steps:
        ap.error("--profile-step: must be after the 2 warm-up steps and at most --steps (%d), got %d"
                 % (a.steps, a.profile_step))

    import torch
    import transformers
    from ftcost_probe import FtcostProbe

    root = os.path.dirname(HERE)
    with open(os.path.join(root, "gpu-db", "models", a.preset + ".json")) as f:
        cfg = dict(json.load(f)["config"])
    model_type = cfg.pop("model_type")
    for k in ("architectures", "transformers_version", "torch_dtype", "auto_map"):
        cfg.pop(k, None)
    try:
        config = transformers.AutoConfig.for_model(model_type, **cfg)
    except Exception as e:  # noqa: BLE001 - a rope_scaling form this version does not take: RoPE's
        # frequencies do not change a step's shapes, bytes or time
        print("config: %s; retrying without rope_scaling" % e, file=sys.stderr)
        cfg.pop("rope_scaling", None)
        config = transformers.AutoConfig.for_model(model_type, **cfg)
    config.use_cache = False
    torch.manual_seed(0)
    with torch.device("cuda"):
        try:
            model = transformers.AutoModelForCausalLM.from_config(
                config, dtype=torch.bfloat16, attn_implementation=a.attention)
        except TypeError:  # transformers < 4.56 names it torch_dtype
            model = transformers.AutoModelForCausalLM.from_config(
                config, torch_dtype=torch.bfloat16, attn_implementation=a.attention)
    if a.method == "lora":
        import peft

        lcfg = peft.LoraConfig(r=a.lora_rank, lora_alpha=2 * a.lora_rank, lora_dropout=a.lora_dropout,
                               target_modules=a.lora_targets.split(","), task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lcfg)
    vocab = config.vocab_size

    class Data(torch.utils.data.Dataset):
        def __len__(self):
            return a.batch * (a.steps + 2)

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            ids = torch.randint(0, vocab, (a.seq,), generator=g)
            return {"input_ids": ids, "labels": ids.clone(), "attention_mask": torch.ones_like(ids)}

    with tempfile.TemporaryDirectory() as tmp:
        args = transformers.TrainingArguments(
            output_dir=tmp, per_device_train_batch_size=a.batch, max_steps=a.steps, bf16=True,
            gradient_checkpointing=not a.no_checkpointing,
            gradient_checkpointing_kwargs={"use_reentrant": False}, optim="adamw_torch",
            learning_rate=1e-5, logging_steps=10**6, save_strategy="no", report_to="none",
            dataloader_num_workers=0, remove_unused_columns=False)
        trainer = transformers.Trainer(model=model, args=args, train_dataset=Data())
        trainer.add_callback(FtcostProbe(a.out, warmup_steps=2, model_preset=a.preset, gpu_id=a.gpu_id))
        if a.profile_step:
            from step_profile import StepProfiler

            stem = a.out[:-5] if a.out.endswith(".json") else a.out
            trainer.add_callback(StepProfiler(stem + ".profile", step=a.profile_step))
        trainer.train()
    with open(a.out) as f:
        doc = json.load(f)
    if a.profile_step:  # the profiled step's host side is slower: not a timed step of the run
        for st in doc["steps"]:
            if st["step"] == a.profile_step:
                st["warmup"] = True
                st["note"] = "profiled with torch.profiler (tools/step_profile.py): not a timed step"
        with open(a.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(a.out + ".tmp", a.out)
    for st in doc["steps"]:
        print("step %d: %.4f s, allocated %.2f GiB, reserved %.2f GiB%s" % (
            st["step"], st["wall_s"], (st.get("max_memory_allocated_bytes") or 0) / 2**30,
            (st.get("max_memory_reserved_bytes") or 0) / 2**30, " (warm-up)" if st.get("warmup") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
