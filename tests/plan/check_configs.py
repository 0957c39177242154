#!/usr/bin/env python3
"""`ftcost plan --config STACK --out FILE`: every generated file parses (YAML with PyYAML, JSON with the
standard library) and its fields round-trip to the plan's request, as `ftcost estimate --json` resolves it
(batch, grad-accum, epochs, method, quantization, LoRA rank, checkpointing, length, GPUs, strategy). Plans a
stack cannot run are refused with exit 2 naming --config.

usage: check_configs.py FTCOST WORKDIR   (exit 77 = skipped: python3-yaml is missing)
"""
import json
import os
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (scripts/setup.sh --native installs it)")
    sys.exit(77)

FTCOST, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(args):
    return subprocess.run([FTCOST] + args, capture_output=True, text=True, timeout=120)


def estimate_inputs(request):
    args = ["estimate", "--json"]
    for k, v in request.items():
        args += ["--" + k, v]
    r = run(args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def load(path):
    with open(path) as f:
        text = f.read()
    return json.loads(text) if path.endswith(".json") else yaml.safe_load(text)


REQUIRED = object()


def value_at(c, path, default=REQUIRED):
    """c["a"]["b"] for "a.b"; a missing key is an error unless a default is given."""
    for k in path.split("."):
        if default is not REQUIRED and (not isinstance(c, dict) or k not in c):
            return default
        c = c[k]
    return c


def expect(c, ctx, fields):
    """Each (path, want[, default]) of `fields`: the config's value at path is want. want None without a
    default: not checked (e.g. the LoRA rank of a full fine-tuning config)."""
    for path, want, *default in fields:
        if want is None and not default:
            continue
        check(value_at(c, path, *default) == want, f"{ctx}: {path}")


def check_files(stack, tag, plan, est, files):
    inp = est["inputs"]
    method = inp["method"]
    micro, accum = plan["micro_batch"], plan["grad_accum"]
    ranks = plan["gpus_per_node"] * plan["nodes"]
    length = int(round(inp.get("seq", inp.get("max_length", 0))))
    lora = method != "full"
    q4 = method == "qlora" and inp.get("quant") != "int8"
    ckpt = bool(inp["checkpointing"])
    ctx = f"{stack}/{tag}"
    main = files[0]
    lora_rank = inp["lora_rank"] if lora else None  # checked only where the config is a LoRA one
    # torch AdamW's implementation: the estimate counted foreach's step temporary or none (fused); the config
    # must ask for the same one (HF optim adamw_torch / adamw_torch_fused, torchtune fused: True/False)
    adamw_fused = est["memory_gib"]["optimizer_step_temp"] == 0
    hf_optim_key = {"trl": "optim", "axolotl": "optimizer", "llamafactory": "optim", "unsloth": "sft_config.optim"}
    if stack in hf_optim_key and inp["optimizer"] in ("adamw", "adamw-mixed"):
        expect(main, ctx, [(hf_optim_key[stack], "adamw_torch_fused" if adamw_fused else "adamw_torch")])
    if stack == "trl":
        expect(main, ctx, [("per_device_train_batch_size", micro), ("gradient_accumulation_steps", accum),
                           ("num_train_epochs", inp["epochs"]), ("gradient_checkpointing", ckpt),
                           ("max_length", length), ("use_peft", lora, False), ("load_in_4bit", q4, False),
                           ("lora_r", lora_rank)])
        acc = files[1]
        check(acc["num_processes"] == ranks, ctx + ": accelerate num_processes")
        want = {"single": "NO", "ddp": "MULTI_GPU"}.get(plan["parallel"],
                                                         "DEEPSPEED" if plan["parallel"].startswith("zero") else "FSDP")
        check(acc["distributed_type"] == want, ctx + f": accelerate distributed_type {acc['distributed_type']} != {want}")
        if want == "FSDP":
            want_reshard = "HYBRID_SHARD" if plan["parallel"] == "hsdp" else plan["parallel"] == "fsdp"
            check(acc["fsdp_config"]["fsdp_reshard_after_forward"] == want_reshard,
                  ctx + ": fsdp_reshard_after_forward")
            check(acc["num_machines"] == plan["nodes"], ctx + ": num_machines")
    elif stack == "axolotl":
        expect(main, ctx, [("micro_batch_size", micro), ("gradient_accumulation_steps", accum),
                           ("num_epochs", inp["epochs"]), ("gradient_checkpointing", ckpt), ("sequence_len", length),
                           ("adapter", {"qlora": "qlora", "lora": "lora"}.get(method), None),
                           ("load_in_4bit", q4, False), ("lora_r", lora_rank)])
    elif stack == "llamafactory":
        expect(main, ctx, [("per_device_train_batch_size", micro), ("gradient_accumulation_steps", accum),
                           ("num_train_epochs", inp["epochs"]), ("disable_gradient_checkpointing", not ckpt),
                           ("cutoff_len", length), ("finetuning_type", "lora" if lora else "full"),
                           ("quantization_bit", 4 if q4 else None, None), ("lora_rank", lora_rank)])
    elif stack == "torchtune":
        expect(main, ctx, [("batch_size", micro), ("gradient_accumulation_steps", accum), ("epochs", inp["epochs"]),
                           ("enable_activation_checkpointing", ckpt), ("tokenizer.max_seq_len", length),
                           ("model.lora_rank", lora_rank)])
        comp = main["model"]["_component_"]
        check(comp.split(".")[-1].startswith({"qlora": "qlora_", "lora": "lora_"}.get(method, "")) and
              (lora or not comp.split(".")[-1].startswith(("lora_", "qlora_"))), ctx + ": model builder " + comp)
        opt = main.get("optimizer") or {}
        if opt.get("_component_") == "torch.optim.AdamW":
            check(opt.get("fused") is adamw_fused, ctx + ": torch.optim.AdamW fused as the estimate assumed")
    elif stack == "unsloth":
        expect(main, ctx, [("from_pretrained.load_in_4bit", q4), ("from_pretrained.max_seq_length", length),
                           ("from_pretrained.full_finetuning", not lora),
                           ("sft_config.per_device_train_batch_size", micro),
                           ("sft_config.gradient_accumulation_steps", accum),
                           ("sft_config.num_train_epochs", inp["epochs"]), ("get_peft_model.r", lora_rank)])
        if lora:
            check((main["get_peft_model"]["use_gradient_checkpointing"] is not False) == ckpt,
                  ctx + ": use_gradient_checkpointing")
        check(abs(main["expected"]["hours"] - plan["hours"]) <= 1e-9 * plan["hours"], ctx + ": expected hours")
    for f in files[1:]:
        if isinstance(f, dict) and "zero_optimization" in f:
            check(f["train_micro_batch_size_per_gpu"] == micro, ctx + ": deepspeed micro batch")
            check(f["gradient_accumulation_steps"] == accum, ctx + ": deepspeed grad accum")
            check(f["train_batch_size"] == micro * accum * ranks, ctx + ": deepspeed train_batch_size")
            check(f["zero_optimization"]["stage"] == int(plan["parallel"][-1]), ctx + ": zero stage")


JOBS = {
    "llama8b-qlora": ["--model", "llama-3.1-8b", "--method", "qlora", "--dataset", "math14k", "--queries", "15000",
                      "--epochs", "3", "--effective-batch", "64"],
    "llama8b-full-multi": ["--model", "llama-3.1-8b", "--method", "full", "--dataset", "math14k", "--queries",
                           "15000", "--epochs", "2", "--stack", "hf-trl-2026", "--checkpointing", "on"],
    "llama8b-lora-packed": ["--model", "llama-3.1-8b", "--method", "lora", "--dataset", "math14k", "--padding",
                            "packing", "--max-length", "2048", "--epochs", "1", "--lora-rank", "32"],
}
written = 0
for tag, job in JOBS.items():
    r = run(["plan"] + job + ["--json"])
    assert r.returncode == 0, r.stderr
    front = json.loads(r.stdout)["front"]
    check(len(front) > 0, tag + ": empty front")
    for plan in front:
        est = estimate_inputs(plan["request"])
        for stack in ["trl", "torchtune", "axolotl", "llamafactory", "unsloth"]:
            d = os.path.join(WORK, f"{tag}-{plan['id']}-{stack}")
            shutil.rmtree(d, ignore_errors=True)  # files of an earlier run must not pass for this plan's
            os.makedirs(d)
            out = os.path.join(d, "main" + (".json" if stack == "unsloth" else ".yaml"))
            r = run(["plan"] + job + ["--config", stack, "--out", out, "--pick", str(plan["id"])])
            if r.returncode != 0:
                # a refusal: exit 2 naming --config, and a reason
                check(r.returncode == 2 and "--config" in r.stderr and "cannot run this plan" in r.stderr,
                      f"{stack}/{tag}-{plan['id']}: exit {r.returncode}: {r.stderr.strip()}")
                if stack == "unsloth":
                    check(plan["gpus_per_node"] * plan["nodes"] > 1, f"unsloth refused a 1-GPU plan: {r.stderr}")
                continue
            names = [out] + sorted(os.path.join(d, n) for n in os.listdir(d) if os.path.join(d, n) != out)
            try:
                files = [load(p) for p in names]
            except Exception as e:  # noqa: BLE001 — a parse error is the failure being tested
                failures.append(f"{stack}/{tag}: does not parse: {e}")
                continue
            # the main file first, then accelerate.yaml, then deepspeed.json (sorted names)
            check_files(stack, f"{tag}-{plan['id']}", plan, est, files)
            written += 1
        if plan["gpus_per_node"] > 1:
            r = run(["plan"] + job + ["--config", "unsloth", "--out", os.path.join(WORK, "u.json"),
                                      "--pick", str(plan["id"])])
            check(r.returncode == 2 and "one GPU" in r.stderr, "unsloth must refuse a multi-GPU plan")

check(written >= 10, f"only {written} configs written")
for f in failures:
    print("FAIL:", f)
print(f"{written} configs parsed and checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
