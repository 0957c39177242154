#!/usr/bin/env python3
"""`ftcost plan --config STACK --out FILE`: every generated file parses (YAML with PyYAML, JSON with the
standard library, Unsloth's train_unsloth.py with Python's ast) and its fields round-trip to the plan's
request, as `ftcost estimate --json` resolves it (batch, grad-accum, epochs, method, quantization, LoRA rank,
checkpointing, length, GPUs, strategy). The header's expected numbers equal `ftcost estimate` of its
reproduce line (the trainer's own stack profile). Plans a stack cannot run are refused with exit 2 naming
--config.

usage: check_configs.py FTCOST WORKDIR   (exit 77 = skipped: python3-yaml is missing)
"""
import ast
import json
import os
import shlex
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


UNSLOTH_CALLS = {"from_pretrained": "from_pretrained", "get_peft_model": "get_peft_model", "SFTConfig": "sft_config"}


def load_python(text):
    """The keyword arguments of train_unsloth.py's calls (literals; anything else as its source text)."""
    out = {}
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in UNSLOTH_CALLS:
            kw = {}
            for k in node.keywords:
                try:
                    kw[k.arg] = ast.literal_eval(k.value)
                except ValueError:
                    kw[k.arg] = ast.unparse(k.value)
            out[UNSLOTH_CALLS[name]] = kw
    return out


def load(path):
    with open(path) as f:
        text = f.read()
    if path.endswith(".py"):
        return load_python(text)
    return json.loads(text) if path.endswith(".json") else yaml.safe_load(text)


def header_estimate(path, ctx):
    """The estimate of the file's `# reproduce:` line, after checking that the `# expected:` line is its."""
    with open(path) as f:
        lines = [l[2:].strip() for l in f if l.startswith("# ")]
    want = [l for l in lines if l.startswith("expected: ")]
    repro = [l for l in lines if l.startswith("reproduce: ftcost estimate ")]
    if len(want) != 1 or len(repro) != 1:
        failures.append(f"{ctx}: no expected / reproduce line in the header")
        return None
    r = run(shlex.split(repro[0][len("reproduce: ftcost "):]) + ["--json"])
    if r.returncode != 0:
        failures.append(f"{ctx}: the reproduce line fails: {r.stderr.strip()}")
        return None
    e = json.loads(r.stdout)
    got = (f"expected: peak {e['memory_gib']['total']:.1f} GiB per GPU of {e['memory_model']['usable_gib']:.1f} "
           f"GiB usable; step {e['step_time_s']:.3f} s; {e['time_hours']:.2f} h")
    if isinstance(e.get("cost_usd"), (int, float)):
        got += f"; ${e['cost_usd']:.2f}"
    check(want[0] == got, f"{ctx}: header '{want[0]}' but ftcost estimate of its reproduce line gives '{got}'")
    profile = [l for l in lines if "numbers for " in l and "differs" in l]
    stack = repro[0].split("--stack ")[1].split()[0] if "--stack " in repro[0] else "hf-trl-2026"
    own = {"trl": "hf-", "axolotl": "axolotl-", "llamafactory": "llamafactory-", "unsloth": "unsloth-",
           "torchtune": "torchtune-"}[ctx.split("/")[0]]
    # the trainer's own profile, or a line saying how it differs from the plan's
    check(stack.startswith(own) or len(profile) == 1, f"{ctx}: numbers of {stack} with no word on the trainer's")
    return e


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
        ckpt_call = main["get_peft_model"] if lora else main["from_pretrained"]
        check((ckpt_call["use_gradient_checkpointing"] is not False) == ckpt, ctx + ": use_gradient_checkpointing")
        check(main["sft_config"]["max_length"] == length, ctx + ": SFTConfig max_length")
    for f in files[1:]:
        if isinstance(f, dict) and "zero_optimization" in f:
            check(f["train_micro_batch_size_per_gpu"] == micro, ctx + ": deepspeed micro batch")
            check(f["gradient_accumulation_steps"] == accum, ctx + ": deepspeed grad accum")
            check(f["train_batch_size"] == micro * accum * ranks, ctx + ": deepspeed train_batch_size")
            check(f["zero_optimization"]["stage"] == int(plan["parallel"][-1]), ctx + ": zero stage")
            check(f["zero_optimization"].get("stage3_gather_16bit_weights_on_model_save", False) ==
                  (plan["parallel"] == "zero3"), ctx + ": ZeRO-3 saves 16-bit weights")


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
            out = os.path.join(d, "main" + (".py" if stack == "unsloth" else ".yaml"))
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
            # the main file first, then accelerate.yaml, then deepspeed.json (sorted names); the fields that
            # follow the stack profile (the AdamW implementation) against the file's own reproduce line
            own = header_estimate(out, f"{stack}/{tag}-{plan['id']}")
            check_files(stack, f"{tag}-{plan['id']}", plan, own or est, files)
            written += 1
        if plan["gpus_per_node"] > 1:
            r = run(["plan"] + job + ["--config", "unsloth", "--out", os.path.join(WORK, "u.py"),
                                      "--pick", str(plan["id"])])
            check(r.returncode == 2 and "one GPU" in r.stderr, "unsloth must refuse a multi-GPU plan")

check(written >= 10, f"only {written} configs written")
for f in failures:
    print("FAIL:", f)
print(f"{written} configs parsed and checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
