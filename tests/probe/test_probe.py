#!/usr/bin/env python3
"""ctest `probe`: tools/ftcost_probe.py on a CPU-only torch (Debian's python3-torch 1.13).

1. A tiny Llama-shaped model defined here trains a few steps through the plain-PyTorch hook
   (probe.step(batch)); the run file is checked (shapes, warm-up, memory null with its reason, atomic write).
2. A minimal stand-in for the Hugging Face Trainer drives the callback interface (on_train_begin /
   on_step_begin / on_step_end / on_log / on_train_end with args, state, control and model=...), with
   gradient accumulation and stop_after.
3. The importers: a trainer_state.json fixture and a torchtune log fixture.
4. The C++ side reads them: `ftcost fit-stack --run` refuses the CPU run (no GPU) with exit 2 naming `gpu`;
   fits a copy of it stamped as an A40 run (plumbing only: the recorded config.json, shapes and null memory
   go through the loader and the fit); fits the imported trainer_state run (A40, Llama-2-7B LoRA) and writes
   a user stack profile.

Unverified here (no transformers on these machines): that a real transformers.Trainer calls the events in
the order the stand-in does, and that its model's forward is reachable through the wrapper (a model wrapped
by accelerate/DeepSpeed/torch.compile may not be): the probe then records the configured batch size and
marks the shape "not observed", and ftcost skips those steps.

Usage: test_probe.py FTCOST_BINARY SOURCE_DIR WORK_DIR
"""

import json
import os
import subprocess
import sys
import types

ftcost_bin, src, work = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(src, "tools"))
import ftcost_probe as fp  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


os.makedirs(work, exist_ok=True)
fixtures = os.path.join(src, "tests", "probe", "fixtures")

# ------------------------------------------------------------------------------------ importers (no torch)
state = json.load(open(os.path.join(fixtures, "trainer_state.json")))
opts = {"method": "lora", "lora_rank": 16, "lora_targets": ["q_proj", "k_proj", "v_proj", "o_proj"],
        "precision": "bf16", "optimizer": "adamw", "checkpointing": True, "attention": "flash", "batch": 4,
        "seq": 512, "accumulation": 1, "gpu_name": "NVIDIA A40", "model_preset": "llama-2-7b"}
doc = fp.import_trainer_state(state, None, opts)
check(doc["schema"] == "ftcost.run/1", "trainer_state import: schema")
check(len(doc["steps"]) == 1 and doc["steps"][0]["count"] == 300, "trainer_state import: one aggregate of 300 steps")
check(abs(doc["steps"][0]["wall_s"] - 510.0) < 1e-6, "trainer_state import: train_runtime as wall time")
check(doc["steps"][0]["micro_batches"][0]["assumed"] is True, "trainer_state import: shape marked assumed")
check(any("memory" in x for x in doc["lacks"]), "trainer_state import: says it lacks memory")
ts_run = os.path.join(work, "trainer_state_run.json")
fp.write_json_atomic(ts_run, doc)
check(fp.check_run(json.load(open(ts_run))) == [], "trainer_state run passes check_run")
try:
    fp.import_trainer_state({"log_history": [{"loss": 1.0, "step": 10}]}, None, opts)
    check(False, "trainer_state without train_runtime must fail")
except fp.RunFileError as e:
    check("train_runtime" in str(e), "trainer_state error names train_runtime")
try:
    fp.import_trainer_state(state, None, dict(opts, seq=None))
    check(False, "trainer_state without --seq must fail")
except fp.RunFileError as e:
    check("--seq" in str(e), "trainer_state error names --seq")

log = open(os.path.join(fixtures, "torchtune_log.txt")).read()
tt = fp.import_torchtune_log(log, None, dict(opts, tokens_per_step=2048, warmup_steps=1))
check(len(tt["steps"]) == 4 and tt["steps"][0]["warmup"], "torchtune import: 4 logged steps, first warm-up")
check(abs(tt["steps"][1]["wall_s"] - 2048 / 1600.0) < 1e-9, "torchtune import: wall = tokens / tokens_per_second")
check(tt["memory"]["max_memory_allocated_bytes"] == int(20.5 * 1024 ** 3), "torchtune import: peak_memory_alloc GiB")
try:
    fp.import_torchtune_log(log, None, dict(opts, tokens_per_step=None))
    check(False, "torchtune without --tokens-per-step must fail")
except fp.RunFileError as e:
    check("--tokens-per-step" in str(e), "torchtune error names --tokens-per-step")

# ------------------------------------------------------------------------------------ recording (torch)
try:
    import torch
    import torch.nn as nn
except Exception as e:  # noqa: BLE001
    print("SKIP: torch not importable (%s): install Debian's python3-torch (scripts/setup.sh --native)" % e)
    sys.exit(77)

torch.manual_seed(0)
CONFIG = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256, "tie_word_embeddings": False,
          "_name_or_path": "tiny-test-llama"}


class TinyConfig:
    def __init__(self, d):
        self.__dict__.update(d)

    def to_dict(self):
        return {k: v for k, v in self.__dict__.items()}


class Block(nn.Module):
    def __init__(self, h, i, heads):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.attn = nn.MultiheadAttention(h, heads, batch_first=True)
        self.up, self.down = nn.Linear(h, i), nn.Linear(i, h)

    def forward(self, x, pad):
        a = self.n1(x)
        x = x + self.attn(a, a, a, key_padding_mask=pad, need_weights=False)[0]
        return x + self.down(torch.relu(self.up(self.n2(x))))


class TinyLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = TinyConfig(c)
        self.emb = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.blocks = nn.ModuleList(
            [Block(c["hidden_size"], c["intermediate_size"], c["num_attention_heads"]) for _ in range(c["num_hidden_layers"])])
        self.head = nn.Linear(c["hidden_size"], c["vocab_size"])

    def forward(self, input_ids=None, attention_mask=None, labels=None):
        x = self.emb(input_ids)
        pad = attention_mask == 0 if attention_mask is not None else None
        for b in self.blocks:
            x = b(x, pad)
        logits = self.head(x)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
        return types.SimpleNamespace(loss=loss, logits=logits)


def make_batch(b, s, real):
    ids = torch.randint(0, 256, (b, s))
    mask = torch.zeros(b, s, dtype=torch.long)
    for i, n in enumerate(real):
        mask[i, :n] = 1
    labels = ids.masked_fill(mask == 0, -100)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


# (1) plain-PyTorch hook
model = TinyLM(CONFIG)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
hook_path = os.path.join(work, "hook_run.json")
probe = fp.FtcostProbe(hook_path, warmup_steps=2, model=model,
                       training={"method": "full", "precision": "fp32", "optimizer": "adamw",
                                 "checkpointing": False, "attention": "eager"})
shapes = [(2, 16, [16, 9]), (4, 32, [32, 20, 7, 30]), (2, 24, [24, 24]), (3, 8, [8, 8, 5]), (4, 32, [32, 32, 32, 1])]
probe.start()
losses = []
for b, s, real in shapes:
    batch = make_batch(b, s, real)
    out = model(**batch)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(out.loss.item())
    probe.step(batch)
probe.save()
check(os.path.exists(hook_path) and not [f for f in os.listdir(work) if f.startswith(".ftcost-run-")],
      "hook: run file written, no temporary file left")
run = json.load(open(hook_path))
check(fp.check_run(run) == [], "hook run passes check_run: %s" % fp.check_run(run))
check(len(run["steps"]) == 5, "hook: 5 steps recorded")
check([s["warmup"] for s in run["steps"]] == [True, True, False, False, False], "hook: first 2 steps are warm-up")
check(all(s["wall_s"] > 0 for s in run["steps"]), "hook: every step has a wall time")
mb = [s["micro_batches"][0] for s in run["steps"]]
check([(m["batch_size"], m["seq_len"]) for m in mb] == [(b, s) for b, s, _ in shapes], "hook: padded shapes")
check([m["tokens"] for m in mb] == [sum(r) for _, _, r in shapes], "hook: tokens = attention_mask.sum()")
check(run["steps"][0]["max_memory_allocated_bytes"] is None and run["memory"]["null_reason"]
      and "CPU" in run["memory"]["null_reason"], "hook: CPU memory null with its reason")
check(run["gpu"] is None and "CPU" in run["gpu_null_reason"], "hook: no GPU on a CPU run, with the reason")
check(run["model"]["config"]["hidden_size"] == 64, "hook: the model's config recorded")
check("torch" in run["software"], "hook: torch version recorded")
check(losses[-1] == losses[-1], "hook: the model trained (finite loss)")

# hook with gradient accumulation (micro_batches=[...]) and a tuple batch (token ids first)
acc_path = os.path.join(work, "hook_accum_run.json")
acc = fp.FtcostProbe(acc_path, warmup_steps=0, config=CONFIG, training={"method": "full"})
acc.start()
for _ in range(2):
    mbs = [make_batch(2, 16, [16, 10]), make_batch(2, 8, [8, 8])]
    for mbatch in mbs:
        model(**mbatch).loss.backward()
    opt.step()
    opt.zero_grad()
    acc.step(micro_batches=mbs)
ids = torch.randint(0, 256, (3, 12))
model(input_ids=ids, labels=ids).loss.backward()
acc.step((ids, ids))
acc.save()
arun = json.load(open(acc_path))
check([len(s["micro_batches"]) for s in arun["steps"]] == [2, 2, 1], "hook: micro-batches per step")
check(arun["steps"][0]["micro_batches"][1]["tokens"] == 16, "hook: second micro-batch's tokens")
check(arun["steps"][2]["micro_batches"][0] == {"batch_size": 3, "seq_len": 12, "tokens": 36, "label_tokens": None},
      "hook: tuple batch, no mask (every position counts): %s" % arun["steps"][2]["micro_batches"][0])
check(arun["model"]["config"] == CONFIG, "hook: config given as a dict")
try:
    acc.step({"labels": ids})
    check(False, "hook: a batch without token ids must fail")
except fp.RunFileError as e:
    check("input_ids" in str(e), "hook: the error names input_ids")

# (2) Trainer stand-in: the events, arguments and kwargs transformers' CallbackHandler.call_event passes
class Args:
    per_device_train_batch_size = 2
    gradient_accumulation_steps = 2
    gradient_checkpointing = True
    bf16 = False
    fp16 = False
    optim = "adamw_torch"
    max_steps = 10


class State:
    global_step = 0
    log_history = []


class Control:
    should_training_stop = False


class StandInTrainer:
    """The order of events in transformers' Trainer._inner_training_loop: on_train_begin, then per
    optimizer step on_step_begin, `accum` forward/backward calls of model(**inputs), optimizer.step,
    on_step_end, on_log every logging step; on_train_end."""

    def __init__(self, model, callbacks):
        self.model, self.cbs = model, callbacks
        self.args, self.state, self.control = Args(), State(), Control()
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def call(self, event, **kw):
        for cb in self.cbs:
            r = getattr(cb, event)(self.args, self.state, self.control, model=self.model, optimizer=self.opt,
                                   lr_scheduler=None, train_dataloader=None, eval_dataloader=None, **kw)
            if r is not None:
                self.control = r

    def train(self, batches):
        self.model.train()
        self.call("on_train_begin")
        for step_batches in batches:
            self.call("on_step_begin")
            for inputs in step_batches:
                loss = self.model(**inputs).loss / len(step_batches)
                loss.backward()
            self.opt.step()
            self.opt.zero_grad()
            self.state.global_step += 1
            self.call("on_step_end")
            self.call("on_log", logs={"loss": loss.item(), "learning_rate": 1e-3, "epoch": 0.1})
            if self.control.should_training_stop:
                break
        self.call("on_train_end")


cb_path = os.path.join(work, "callback_run.json")
model2 = TinyLM(CONFIG)
orig_forward = model2.forward
cb = fp.FtcostProbe(cb_path, warmup_steps=1, stop_after=4)
trainer = StandInTrainer(model2, [cb])
plan = [[make_batch(2, 16, [16, 3]), make_batch(2, 12, [12, 12])] for _ in range(6)]
trainer.train(plan)
crun = json.load(open(cb_path))
check(crun["recorder"]["source"] == "trainer-callback", "callback: source")
check(len(crun["steps"]) == 4, "callback: stop_after=4 stopped the stand-in Trainer after 4 steps")
check(all(len(s["micro_batches"]) == 2 for s in crun["steps"]), "callback: both micro-batches of each step seen")
check(crun["steps"][1]["micro_batches"][0] == {"batch_size": 2, "seq_len": 16, "tokens": 19, "label_tokens": 19},
      "callback: micro-batch shape and tokens through the forward wrapper: %s" % crun["steps"][1]["micro_batches"][0])
check(crun["training"]["gradient_accumulation_steps"] == 2 and crun["training"]["checkpointing"] is True
      and crun["training"]["optimizer"] == "adamw" and crun["training"]["adamw_impl"] == "foreach"
      and crun["training"]["method"] == "full",
      "callback: training arguments read from args and the model: %s" % crun["training"])
check(crun["steps"][0]["warmup"] and not crun["steps"][1]["warmup"], "callback: warm-up flag")
check(len(crun["logs"]) == 4, "callback: on_log entries kept")
check(model2.forward == orig_forward, "callback: the model's forward restored at on_train_end")
check(fp.check_run(crun) == [], "callback run passes check_run")

# the JSON Schema (gpu-db/schema/run.schema.json) accepts what the recorder and importers write
try:
    import jsonschema

    schema = json.load(open(os.path.join(src, "gpu-db", "schema", "run.schema.json")))
    validator = jsonschema.validators.validator_for(schema)(schema)
    for f in (hook_path, cb_path, ts_run):
        errs = list(validator.iter_errors(json.load(open(f))))
        check(not errs, "%s matches run.schema.json: %s" % (f, [e.message[:120] for e in errs[:3]]))
except ImportError:
    print("note: jsonschema not importable here: run.schema.json not exercised")

# (3) the CLI checker and importer entry points
r = subprocess.run([sys.executable, os.path.join(src, "tools", "ftcost_probe.py"), "check", hook_path, cb_path],
                   capture_output=True, text=True)
check(r.returncode == 0, "ftcost_probe.py check: exit 0 (%s)" % r.stderr)
bad = os.path.join(work, "bad_run.json")
fp.write_json_atomic(bad, dict(run, steps=[{"wall_s": -1, "micro_batches": [{"batch_size": 0, "seq_len": 4}]}]))
r = subprocess.run([sys.executable, os.path.join(src, "tools", "ftcost_probe.py"), "check", bad],
                   capture_output=True, text=True)
check(r.returncode == 2 and "steps[0].wall_s" in r.stderr and "batch_size" in r.stderr,
      "ftcost_probe.py check: bad file exit 2 naming the fields (%s)" % r.stderr)

# (4) ftcost reads them
r = subprocess.run([ftcost_bin, "fit-stack", "--run", hook_path], capture_output=True, text=True)
check(r.returncode == 2 and "gpu" in r.stderr and "CPU" in r.stderr,
      "ftcost fit-stack --run on the CPU run: exit 2 naming gpu (%s)" % r.stderr.strip())
# The recorder's own file through the C++ loader and the fit (plumbing only): a copy of the CPU run with
# gpu.id stamped to a40 by this test. CPU timings of a tiny model mean nothing for an A40; what is tested is
# that ftcost reads the recorded config.json, training arguments, shapes and null memory, and fits no memory
# parameter.
stamped = os.path.join(work, "hook_run_stamped_a40.json")
fp.write_json_atomic(stamped, dict(run, gpu={"id": "a40", "name": "stamped by test_probe.py"}))
r = subprocess.run([ftcost_bin, "fit-stack", "--run", stamped, "--json"], capture_output=True, text=True)
check(r.returncode == 0, "ftcost fit-stack --run on the recorded run (stamped a40): exit 0 (%s)" % r.stderr.strip())
if r.returncode == 0:
    out = json.loads(r.stdout)
    check(out["time_points"] == 3, "recorded run: the 3 steps after the warm-up are fitted")
    check(out["memory_points"] == 0 and not any(p["kind"] == "memory" for p in out["parameters"]),
          "recorded run without memory figures: no memory parameter")
    check(any("no memory figures" in n for n in out["notes"]), "recorded run: the fit says memory is missing")
profile = os.path.join(work, "user-stack.json")
# the trainer_state fixture's step time sits inside the paper stack's parameter ranges (an exact one-point
# fit); the default base of fit-stack --run is today's HF/TRL stack, so the paper's is named here
r = subprocess.run([ftcost_bin, "fit-stack", "--run", ts_run, "--stack", "hf-transformers-2024", "--write", profile,
                    "--json"],
                   capture_output=True, text=True)
check(r.returncode == 0, "ftcost fit-stack --run trainer_state run: exit 0 (%s)" % r.stderr.strip())
if r.returncode == 0:
    out = json.loads(r.stdout)
    check(out["time_points"] == 1, "fit on the aggregate: one time point")
    check(out["step_time_rms_log_error"]["after"] < 1e-3, "one point, one parameter: fitted exactly")
    check(out["memory_points"] == 0, "no memory figures: no memory points")
    prof = json.load(open(profile))
    check(prof["schema"] == "ftcost.stack/1" and prof["throughput"]["fit"]["runs"][0]["file"] == ts_run,
          "user profile written with provenance")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("probe: all checks passed")
