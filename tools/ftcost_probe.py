#!/usr/bin/env python3
"""ftcost_probe: record a short fine-tuning run as an ``ftcost.run/1`` JSON file.

No dependency on ftcost or transformers: pure Python + torch (torch is only needed while recording;
the importers and ``check`` run without it). Three ways in (documentation: docs/runs.md):

1. Hugging Face Trainer (also TRL's SFTTrainer, LLaMA-Factory): ``trainer.add_callback(FtcostProbe("run.json"))``.
   The class is duck-typed to ``transformers.TrainerCallback`` (on_train_begin / on_step_begin /
   on_step_end / on_log / on_train_end with ``args, state, control, **kwargs``); it subclasses
   ``transformers.TrainerCallback`` only when that import succeeds.
2. Plain PyTorch / torchtune loop: ``probe = FtcostProbe("run.json", model=model, training={...})``, then
   ``probe.step(batch)`` after every optimizer step (``micro_batches=[...]`` with gradient accumulation)
   and ``probe.save()`` at the end.
3. Command line on logs that already exist::

       ftcost_probe.py import-trainer-state trainer_state.json --config config.json --gpu-name "NVIDIA A40" \
           --method qlora --batch 4 --seq 512 -o run.json
       ftcost_probe.py import-torchtune log_123.txt --config config.json --batch 2 --seq 2048 \
           --tokens-per-step 4096 -o run.json
       ftcost_probe.py check run.json

Every file is written atomically (a temporary file in the same folder, then os.replace).
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import sys
import tempfile
import time

SCHEMA = "ftcost.run/1"
PROBE_VERSION = "1"

try:  # only a base class for isinstance checks inside transformers; never required
    from transformers import TrainerCallback as _CallbackBase  # type: ignore
except Exception:  # noqa: BLE001 - any failure to import means "not available"
    _CallbackBase = object

PACKAGES = (
    "torch", "transformers", "peft", "trl", "bitsandbytes", "unsloth", "torchtune", "accelerate", "axolotl",
    "llamafactory",
)


class RunFileError(ValueError):
    """A run file or an input log that does not carry what is needed; the message names the field."""


# --------------------------------------------------------------------------------------------- helpers
def _now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json_atomic(path, doc):
    """Write `doc` as JSON to `path` atomically: a temporary file in the same folder, then os.replace."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ftcost-run-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, sort_keys=False, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def package_versions():
    """Versions of the training packages that are installed (absent ones are left out).

    Read from the installed distributions' metadata (importlib.metadata), so that nothing is imported for
    it: importing e.g. unsloth or bitsandbytes has side effects. A package without metadata that is already
    imported reports its __version__."""
    out = {"python": platform.python_version()}
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        metadata = None
    for name in PACKAGES:
        version = None
        if metadata is not None:
            try:
                version = metadata.version(name)
            except Exception:  # noqa: BLE001 - not installed (PackageNotFoundError) or broken metadata
                version = None
        if version is None and name in sys.modules:
            version = str(getattr(sys.modules[name], "__version__", "unknown"))
        if version is not None:
            out[name] = version
    return out


def gpu_info():
    """GPU name, memory, capability, driver and CUDA version; None with the reason on a CPU-only host."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        return None, "torch is not importable: %s" % e
    if not torch.cuda.is_available():
        return None, "no CUDA device (torch.cuda.is_available() is False: CPU run)"
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    info = {
        "name": props.name,
        "memory_bytes": int(props.total_memory),
        "capability": "%d.%d" % (props.major, props.minor),
        "multiprocessors": int(props.multi_processor_count),
        "cuda": torch.version.cuda,
        "driver": None,
        "count": int(torch.cuda.device_count()),
    }
    try:  # the driver version: NVML through torch when present, else nvidia-smi
        import subprocess

        r = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", str(dev)],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if r.returncode == 0 and r.stdout.strip():
            info["driver"] = r.stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001
        pass
    return info, None


def _is_tensor(x):
    return hasattr(x, "shape") and hasattr(x, "dim") and hasattr(x, "numel")


def batch_shape(batch):
    """(batch_size, padded seq_len, tokens, label_tokens) of one micro-batch.

    `batch` is a dict with input_ids (HF collators, torchtune's "tokens"), a 2-D tensor, or a tuple/list whose
    first 2-D tensor holds the token ids. tokens = attention_mask.sum() when there is a mask, else every
    position (packing). label_tokens = positions whose label is not -100 (the loss's ignore_index)."""
    ids = mask = labels = None
    if isinstance(batch, dict):
        for key in ("input_ids", "tokens"):
            if key in batch and _is_tensor(batch[key]):
                ids = batch[key]
                break
        mask = batch.get("attention_mask")
        labels = batch.get("labels")
    elif _is_tensor(batch):
        ids = batch
    elif isinstance(batch, (list, tuple)):
        for x in batch:
            if _is_tensor(x) and x.dim() == 2:
                ids = x
                break
    if ids is None or not _is_tensor(ids) or ids.dim() != 2:
        raise RunFileError(
            "batch: expected a dict with a 2-D 'input_ids' (or 'tokens') tensor, a 2-D tensor, or a tuple "
            "whose first 2-D tensor is the token ids; got %s" % type(batch).__name__
        )
    b, s = int(ids.shape[0]), int(ids.shape[1])
    tokens = int(mask.sum().item()) if _is_tensor(mask) else b * s
    label_tokens = int((labels != -100).sum().item()) if _is_tensor(labels) else None
    return {"batch_size": b, "seq_len": s, "tokens": tokens, "label_tokens": label_tokens}


_HF_OPTIM = {
    "adamw_torch": "adamw",
    "adamw_torch_fused": "adamw",
    "adamw_hf": "adamw",
    "adamw_apex_fused": "adamw",
    "adamw_bnb_8bit": "adamw-8bit",
    "adamw_8bit": "adamw-8bit",
    "paged_adamw_8bit": "paged-adamw-8bit",
    "paged_adamw_32bit": "paged-adamw",
    "sgd": "sgd",
}
# torch.optim.AdamW's implementation behind the Trainer's optim name (transformers' OptimizerNames): adamw_torch
# leaves torch's default on CUDA, foreach (a state-sized temporary at the step); adamw_torch_fused asks for
# fused=True (none). ftcost's --adamw-impl.
_HF_ADAMW_IMPL = {"adamw_torch": "foreach", "adamw_torch_fused": "fused"}


def training_from_hf_args(args, model=None):
    """The training arguments that matter, from a transformers TrainingArguments (duck-typed) and the model.

    Returns (training, raw): `training` uses ftcost's names (what `ftcost estimate` takes; null where it
    could not be told), `raw` what was read, for the record."""
    g = lambda name, default=None: getattr(args, name, default)  # noqa: E731
    raw = {
        k: g(k)
        for k in (
            "per_device_train_batch_size",
            "gradient_accumulation_steps",
            "gradient_checkpointing",
            "bf16",
            "fp16",
            "optim",
            "max_steps",
            "num_train_epochs",
            "learning_rate",
            "packing",
            "max_seq_length",
            "max_length",
            "group_by_length",
            "torch_compile",
        )
        if g(k) is not None
    }
    raw = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in raw.items()}
    optim = str(g("optim", "") or "")
    optim = optim.split(".")[-1].lower()  # OptimizerNames.ADAMW_TORCH -> adamw_torch
    training = {
        "batch_size": g("per_device_train_batch_size"),
        "gradient_accumulation_steps": g("gradient_accumulation_steps", 1) or 1,
        "checkpointing": bool(g("gradient_checkpointing", False)),
        "precision": "bf16" if g("bf16") else ("fp16" if g("fp16") else "fp32"),
        "optimizer": _HF_OPTIM.get(optim),
        "adamw_impl": _HF_ADAMW_IMPL.get(optim),
        "packing": bool(g("packing", False)),
        "max_length": g("max_seq_length") or g("max_length"),
    }
    if model is not None:
        training.update(training_from_model(model))
    return training, raw


def training_from_model(model):
    """method, quant, LoRA rank and targets, attention, from a (PEFT-wrapped) transformers model."""
    out = {"method": "full"}
    peft_cfg = getattr(model, "peft_config", None)
    if isinstance(peft_cfg, dict) and peft_cfg:
        cfg = next(iter(peft_cfg.values()))
        out["method"] = "lora"
        r = getattr(cfg, "r", None)
        if r is not None:
            out["lora_rank"] = int(r)
        p = getattr(cfg, "lora_dropout", None)
        if isinstance(p, (int, float)):
            out["lora_dropout"] = float(p)
        tm = getattr(cfg, "target_modules", None)
        if tm is not None:
            out["lora_targets"] = sorted(tm) if not isinstance(tm, str) else [tm]
    config = getattr(model, "config", None)
    q = getattr(config, "quantization_config", None) if config is not None else None
    if q is None:
        q = getattr(model, "quantization_config", None)
    if q is not None:
        qd = q if isinstance(q, dict) else (q.to_dict() if hasattr(q, "to_dict") else vars(q))
        if qd.get("load_in_4bit"):
            quant = "nf4-dq" if qd.get("bnb_4bit_use_double_quant") else "nf4"
            if str(qd.get("bnb_4bit_quant_type", "nf4")) != "nf4":
                quant = None  # fp4: ftcost has no preset for it
            out["quant"] = quant
            out["method"] = "qlora" if out["method"] == "lora" else out["method"]
        elif qd.get("load_in_8bit"):
            out["quant"] = "int8"
            out["method"] = "qlora" if out["method"] == "lora" else out["method"]
    attn = getattr(config, "_attn_implementation", None) if config is not None else None
    if attn is not None:
        # transformers' attn_implementation: flash_attention_2/3 -> flash, sdpa -> sdpa (ftcost models it as
        # flash), eager -> eager; anything else (flex_attention, a kernels-hub name) is left unnamed
        out["attention"] = ("flash" if "flash" in str(attn) else "sdpa" if attn == "sdpa"
                            else "eager" if attn == "eager" else None)
        out["attention_raw"] = str(attn)
    return out


def model_config_dict(model):
    config = getattr(model, "config", None)
    if config is None:
        return None
    if hasattr(config, "to_dict"):
        d = config.to_dict()
    elif isinstance(config, dict):
        d = dict(config)
    else:
        return None
    return json.loads(json.dumps(d, default=str))  # only JSON values


# --------------------------------------------------------------------------------------------- recorder
class FtcostProbe(_CallbackBase):
    """Records wall time, batch shapes and peak memory of each training step; writes ftcost.run/1.

    path:           the run file to write (atomically; rewritten every `save_every` steps and at the end)
    warmup_steps:   the first steps are recorded but marked "warmup": true (compilation, allocator growth,
                    cuDNN/cuBLAS autotuning); ftcost does not fit on them
    stop_after:     with the Trainer, stop training after this many steps (control.should_training_stop)
    model, config:  for the plain-PyTorch hook: the model (its .config and PEFT config are read) or a
                    config.json dict; `training` overrides/extends what is read (ftcost names, docs/runs.md)
    gpu_id:         the ftcost GPU id (e.g. "a40"), if you know it; otherwise ftcost matches the GPU name
    """

    def __init__(self, path, warmup_steps=2, stop_after=None, model=None, config=None, training=None,
                 model_preset=None, gpu_id=None, save_every=10):
        if warmup_steps < 0:
            raise ValueError("warmup_steps must be >= 0")
        self.path = path
        self.warmup_steps = int(warmup_steps)
        self.stop_after = stop_after
        self.save_every = save_every
        self.steps = []
        self.logs = []
        self._t0 = None
        self._shapes = []
        self._orig_forward = None
        self._hooked = None
        self._cuda = None
        self.training = {}
        self.training_raw = {}
        self.source = "hook"
        self.model_doc = {"preset": model_preset, "name_or_path": None, "config": config}
        self.gpu, self.gpu_null_reason = None, None
        self.gpu_id = gpu_id
        if model is not None:
            self._read_model(model)
        if training:
            self.training.update(training)
        self.created = _now_utc()

    # ----- shared
    def _torch(self):
        import torch

        return torch

    def _cuda_ok(self):
        if self._cuda is None:
            try:
                self._cuda = bool(self._torch().cuda.is_available())
            except Exception:  # noqa: BLE001
                self._cuda = False
        return self._cuda

    def _read_model(self, model):
        cfg = model_config_dict(model)
        if cfg is not None:
            self.model_doc["config"] = cfg
            self.model_doc["name_or_path"] = cfg.get("_name_or_path")
        self.training.update({k: v for k, v in training_from_model(model).items() if v is not None})

    def _mark_start(self):
        if self._cuda_ok():
            torch = self._torch()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        self._t0 = time.perf_counter()

    def _record(self, shapes, step_no):
        if self._cuda_ok():
            self._torch().cuda.synchronize()
        t1 = time.perf_counter()
        wall = t1 - self._t0 if self._t0 is not None else None
        rec = {"step": step_no, "wall_s": wall, "count": 1, "warmup": len(self.steps) < self.warmup_steps,
               "micro_batches": shapes}
        if self._cuda_ok():
            torch = self._torch()
            rec["max_memory_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
            rec["max_memory_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
        else:
            rec["max_memory_allocated_bytes"] = None
            rec["max_memory_reserved_bytes"] = None
        if wall is None:
            rec["warmup"] = True  # no start mark: the duration is unknown
            rec["wall_s"] = 0.0
            rec["note"] = "no start mark before the first step: duration unknown"
        self.steps.append(rec)
        if self.save_every and len(self.steps) % self.save_every == 0:
            self.save()

    # ----- plain PyTorch / torchtune hook
    def start(self):
        """Mark the beginning of the first step (optional: otherwise the first step has no duration)."""
        self._mark_start()

    def step(self, batch=None, micro_batches=None):
        """Call once per optimizer step, right after optimizer.step(): records the time since the previous
        call (or start()), the batch's shape and the peak memory since then. With gradient accumulation
        pass every micro-batch of the step as `micro_batches=[...]`."""
        if micro_batches is None:
            if batch is None:
                raise RunFileError("step: give the batch (or micro_batches=[...])")
            micro_batches = [batch]
        shapes = [batch_shape(b) for b in micro_batches]
        if self.gpu is None and self.gpu_null_reason is None:
            self.gpu, self.gpu_null_reason = gpu_info()
        self._record(shapes, len(self.steps) + 1)
        self._mark_start()

    # ----- Hugging Face TrainerCallback interface (duck-typed)
    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.source = "trainer-callback"
        training, raw = training_from_hf_args(args, model)
        self.training.update({k: v for k, v in training.items() if v is not None})
        self.training_raw.update(raw)
        if model is not None:
            self._read_model(model)
            self._hook_forward(model)
        self.gpu, self.gpu_null_reason = gpu_info()
        return control

    def _hook_forward(self, model):
        """The Trainer passes no batch to callbacks: wrap the model's forward to see each micro-batch."""
        if self._hooked is not None:
            return
        orig = model.forward
        probe = self

        def forward(*a, **kw):
            if probe._t0 is not None and getattr(model, "training", True):
                ids = kw.get("input_ids")
                if ids is None and a:
                    ids = a[0]
                if _is_tensor(ids) and ids.dim() == 2:
                    probe._shapes.append(batch_shape({"input_ids": ids, "attention_mask": kw.get("attention_mask"),
                                                      "labels": kw.get("labels")}))
            return orig(*a, **kw)

        model.forward = forward
        self._orig_forward, self._hooked = orig, model

    def on_step_begin(self, args, state, control, **kwargs):
        self._shapes = []
        self._mark_start()
        return control

    def on_step_end(self, args, state, control, **kwargs):
        shapes = self._shapes
        if not shapes:  # forward not seen (wrapped model): take the configured shape, flagged
            b = self.training.get("batch_size")
            shapes = [{"batch_size": b, "seq_len": None, "tokens": None, "label_tokens": None,
                       "note": "batch not observed (model forward not reachable)"}] if b else []
        self._record(shapes, int(getattr(state, "global_step", len(self.steps) + 1)))
        self._t0 = None
        if self.stop_after is not None and len(self.steps) >= self.stop_after:
            control.should_training_stop = True
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs:
            self.logs.append({k: v for k, v in logs.items() if isinstance(v, (int, float, str))})
        return control

    def on_train_end(self, args, state, control, **kwargs):
        if self._hooked is not None:
            self._hooked.forward = self._orig_forward
            self._hooked = None
        self.save()
        return control

    # ----- output
    def document(self):
        mem_alloc = [s["max_memory_allocated_bytes"] for s in self.steps
                     if s.get("max_memory_allocated_bytes") is not None]
        mem_res = [s["max_memory_reserved_bytes"] for s in self.steps
                   if s.get("max_memory_reserved_bytes") is not None]
        gpu = dict(self.gpu) if self.gpu else None
        if gpu is not None and self.gpu_id:
            gpu["id"] = self.gpu_id
        lacks = []
        if not mem_alloc:
            lacks.append("memory: " + (self.gpu_null_reason or "no CUDA peak-memory figures"))
        if gpu is None:
            lacks.append("gpu: " + (self.gpu_null_reason or "not recorded"))
        return {
            "schema": SCHEMA,
            "recorder": {"tool": "ftcost_probe.py", "version": PROBE_VERSION, "source": self.source,
                         "created_utc": self.created, "warmup_steps": self.warmup_steps},
            "gpu": gpu,
            "gpu_null_reason": None if gpu is not None else (self.gpu_null_reason or "not recorded"),
            "software": self._software(),
            "model": self.model_doc,
            "training": self.training,
            "training_raw": self.training_raw,
            "steps": self.steps,
            "memory": {
                "max_memory_allocated_bytes": max(mem_alloc) if mem_alloc else None,
                "max_memory_reserved_bytes": max(mem_res) if mem_res else None,
                "null_reason": None if mem_alloc else (self.gpu_null_reason or "no CUDA device"),
            },
            "logs": self.logs,
            "lacks": lacks,
        }

    def _software(self):
        if getattr(self, "_versions", None) is None:
            self._versions = package_versions()
        return self._versions

    def save(self, path=None):
        doc = self.document()
        write_json_atomic(path or self.path, doc)
        return doc


# --------------------------------------------------------------------------------------------- importers
def _load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise RunFileError("%s: cannot read %s (%s)" % (what, path, e.strerror)) from None
    except ValueError as e:
        raise RunFileError("%s: %s is not valid JSON (%s)" % (what, path, e)) from None


def _base_doc(source, config, opts):
    training = {k: v for k, v in {
        "method": opts.get("method"), "quant": opts.get("quant"), "lora_rank": opts.get("lora_rank"),
        "lora_targets": opts.get("lora_targets"), "precision": opts.get("precision"),
        "optimizer": opts.get("optimizer"), "adamw_impl": opts.get("adamw_impl"),
        "checkpointing": opts.get("checkpointing"),
        "attention": opts.get("attention"), "batch_size": opts.get("batch"),
        "gradient_accumulation_steps": opts.get("accumulation") or 1, "packing": opts.get("packing"),
        "max_length": opts.get("seq")}.items() if v is not None}
    gpu = None
    if opts.get("gpu_name") or opts.get("gpu_id"):
        gpu = {"name": opts.get("gpu_name"), "id": opts.get("gpu_id"), "count": 1}
    return {
        "schema": SCHEMA,
        "recorder": {"tool": "ftcost_probe.py", "version": PROBE_VERSION, "source": source,
                     "created_utc": _now_utc(), "warmup_steps": 0},
        "gpu": gpu,
        "gpu_null_reason": None if gpu else "the log does not name the GPU (give --gpu-name or --gpu-id)",
        "software": {},
        "model": {"preset": opts.get("model_preset"), "name_or_path": (config or {}).get("_name_or_path"),
                  "config": config},
        "training": training,
        "training_raw": {},
        "steps": [],
        "memory": {"max_memory_allocated_bytes": None, "max_memory_reserved_bytes": None,
                   "null_reason": None},
        "logs": [],
        "lacks": [],
    }


def import_trainer_state(state, config, opts):
    """HF trainer_state.json -> ftcost.run/1.

    What it carries: global_step, and in log_history the final summary {train_runtime,
    train_samples_per_second, train_steps_per_second, total_flos, train_loss} (Trainer._inner_training_loop's
    speed_metrics) and per-logging-step {loss, learning_rate, epoch, step}. What it lacks: per-step wall
    times (log entries have no timestamps), the padded batch shape (--batch/--seq are taken from you and
    marked assumed), peak memory, GPU, driver and package versions; train_runtime also includes the warm-up
    steps, evaluation and checkpoint saving inside train()."""
    if not isinstance(state, dict) or not isinstance(state.get("log_history"), list):
        raise RunFileError("trainer_state.json: log_history: required list (is this a trainer_state.json?)")
    summary = None
    for entry in state["log_history"]:
        if isinstance(entry, dict) and "train_runtime" in entry:
            summary = entry
    if summary is None:
        raise RunFileError("trainer_state.json: log_history: no entry with train_runtime (the run did not "
                           "finish train(), or this file is from a checkpoint folder: use the final output "
                           "folder's trainer_state.json)")
    runtime = summary.get("train_runtime")
    steps = state.get("global_step") or summary.get("step")
    if not isinstance(runtime, (int, float)) or not math.isfinite(runtime) or runtime <= 0:
        raise RunFileError("trainer_state.json: log_history[].train_runtime: must be a positive number of "
                           "seconds, got %r" % (runtime,))
    if not isinstance(steps, int) or steps <= 0:
        raise RunFileError("trainer_state.json: global_step: must be a positive whole number, got %r" % (steps,))
    if not opts.get("batch") or not opts.get("seq"):
        raise RunFileError("--batch and --seq: required for trainer_state.json (it records neither the batch "
                           "size nor the padded length)")
    doc = _base_doc("trainer_state", config, opts)
    accum = int(opts.get("accumulation") or 1)
    mb = {"batch_size": int(opts["batch"]), "seq_len": int(opts["seq"]), "tokens": None, "label_tokens": None,
          "assumed": True}
    doc["steps"].append({"step": steps, "wall_s": float(runtime), "count": steps, "warmup": False,
                         "micro_batches": [mb] * accum, "max_memory_allocated_bytes": None,
                         "max_memory_reserved_bytes": None,
                         "note": "train_runtime over all %d steps (warm-up, evaluation and saving included)"
                                 % steps})
    doc["logs"] = [e for e in state["log_history"] if isinstance(e, dict)]
    doc["memory"]["null_reason"] = "trainer_state.json records no memory figures"
    doc["lacks"] = ["per-step wall times (log_history has no timestamps): one aggregate step over the run",
                    "padded batch shape: --batch/--seq as given, marked assumed",
                    "memory: trainer_state.json records no memory figures",
                    "software versions and driver"]
    if doc["gpu"] is None:
        doc["lacks"].append("gpu: not in trainer_state.json")
    return doc


# DiskLogger (torchtune/training/metric_logging.py): log() writes "Step N | name:value", log_dict() (what the
# recipes call) "Step N | name:value name:value ..." on one line.
_TT_LINE = re.compile(r"^Step\s+(\d+)\s*\|(.*)$")
_TT_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_./-]*):(\S+)")


def import_torchtune_log(text, config, opts):
    """torchtune DiskLogger log (txt "Step N | name:value" lines, or jsonl {"step": N, name: value}) ->
    ftcost.run/1.

    What it carries (recipes/full_finetune_single_device.py, lora_finetune_single_device.py): per logged
    step loss, lr, tokens_per_second_per_gpu = non-ignored label tokens of the step / its wall time, and with
    log_peak_memory_stats peak_memory_active/alloc/reserved in GiB (training.get_memory_stats, peaks reset at
    each log). What it lacks: the token count per step (the wall time is tokens / tokens_per_second, so
    --tokens-per-step is needed), the padded shape (--batch/--seq, marked assumed), GPU and versions."""
    rows = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                d = json.loads(line)
            except ValueError:
                raise RunFileError("torchtune log: line %d: not valid JSON" % n) from None
            step = d.pop("step", None)
            if not isinstance(step, int):
                raise RunFileError("torchtune log: line %d: step: required whole number" % n)
            rows.setdefault(step, {}).update(d)
            continue
        m = _TT_LINE.match(line)
        if not m:
            raise RunFileError("torchtune log: line %d: expected 'Step N | name:value ...', got %r" % (n, line[:80]))
        for name, value in _TT_PAIR.findall(m.group(2)):
            try:
                v = float(value)
            except ValueError:
                continue  # non-numeric values (tensor reprs, strings) are ignored
            rows.setdefault(int(m.group(1)), {})[name] = v
    if not rows:
        raise RunFileError("torchtune log: no 'Step N | name:value' lines")
    tps_steps = [s for s in sorted(rows) if "tokens_per_second_per_gpu" in rows[s]]
    if not tps_steps:
        raise RunFileError("torchtune log: tokens_per_second_per_gpu: no logged step carries it")
    tokens = opts.get("tokens_per_step")
    if not tokens or tokens <= 0:
        raise RunFileError("--tokens-per-step: required for a torchtune log (tokens_per_second_per_gpu is "
                           "label tokens / step time; the log does not say how many tokens a step had)")
    if not opts.get("batch") or not opts.get("seq"):
        raise RunFileError("--batch and --seq: required for a torchtune log (it records no batch shape)")
    doc = _base_doc("torchtune-log", config, opts)
    accum = int(opts.get("accumulation") or 1)
    warm = int(opts.get("warmup_steps", 1))
    gib = 1024.0 ** 3
    have_mem = False
    for i, s in enumerate(tps_steps):
        r = rows[s]
        tps = float(r["tokens_per_second_per_gpu"])
        if not math.isfinite(tps) or tps <= 0:
            raise RunFileError("torchtune log: step %d: tokens_per_second_per_gpu must be > 0, got %r" % (s, tps))
        mb = {"batch_size": int(opts["batch"]), "seq_len": int(opts["seq"]), "tokens": None,
              "label_tokens": None, "assumed": True}
        rec = {"step": s, "wall_s": float(tokens) / tps, "count": 1, "warmup": i < warm,
               "micro_batches": [mb] * accum, "max_memory_allocated_bytes": None,
               "max_memory_reserved_bytes": None}
        if "peak_memory_alloc" in r:
            rec["max_memory_allocated_bytes"] = int(r["peak_memory_alloc"] * gib)
            have_mem = True
        if "peak_memory_reserved" in r:
            rec["max_memory_reserved_bytes"] = int(r["peak_memory_reserved"] * gib)
        doc["steps"].append(rec)
    if have_mem:
        allocs = [x["max_memory_allocated_bytes"] for x in doc["steps"] if x["max_memory_allocated_bytes"]]
        res = [x["max_memory_reserved_bytes"] for x in doc["steps"] if x["max_memory_reserved_bytes"]]
        doc["memory"]["max_memory_allocated_bytes"] = max(allocs)
        doc["memory"]["max_memory_reserved_bytes"] = max(res) if res else None
    else:
        doc["memory"]["null_reason"] = "the log has no peak_memory_* entries (log_peak_memory_stats off)"
    doc["lacks"] = ["tokens per step: --tokens-per-step as given (wall time = tokens / tokens_per_second)",
                    "padded batch shape: --batch/--seq as given, marked assumed",
                    "software versions and driver"]
    if not have_mem:
        doc["lacks"].append("memory: " + doc["memory"]["null_reason"])
    if doc["gpu"] is None:
        doc["lacks"].append("gpu: not in the torchtune log")
    return doc


# --------------------------------------------------------------------------------------------- check
def check_run(doc):
    """Structural check of an ftcost.run/1 document (the C++ loader checks more, against the database).
    Returns a list of problems, each naming its field."""
    p = []
    if not isinstance(doc, dict):
        return ["(root): must be a JSON object"]
    if doc.get("schema") != SCHEMA:
        p.append("schema: expected %r, got %r" % (SCHEMA, doc.get("schema")))
    steps = doc.get("steps")
    if not isinstance(steps, list) or not steps:
        p.append("steps: required non-empty list")
        return p
    for i, s in enumerate(steps):
        f = "steps[%d]" % i
        w = s.get("wall_s") if isinstance(s, dict) else None
        if not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            p.append("%s.wall_s: must be a number >= 0 seconds, got %r" % (f, w))
        mbs = s.get("micro_batches") if isinstance(s, dict) else None
        if not isinstance(mbs, list):
            p.append("%s.micro_batches: required list" % f)
            continue
        for j, mb in enumerate(mbs):
            for k in ("batch_size", "seq_len"):
                v = mb.get(k) if isinstance(mb, dict) else None
                if not isinstance(v, int) or v <= 0:
                    p.append("%s.micro_batches[%d].%s: must be a whole number > 0, got %r" % (f, j, k, v))
    return p


def _main(argv=None):
    ap = argparse.ArgumentParser(prog="ftcost_probe.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(sp):
        sp.add_argument("--config", help="the model's config.json")
        sp.add_argument("--model-preset", help="ftcost model preset id instead of a config.json")
        sp.add_argument("--gpu-name", help="GPU name as nvidia-smi prints it, e.g. 'NVIDIA A40'")
        sp.add_argument("--gpu-id", help="ftcost GPU id, e.g. a40")
        sp.add_argument("--method", choices=["full", "lora", "qlora"])
        sp.add_argument("--quant", choices=["nf4-dq", "nf4", "int8"])
        sp.add_argument("--lora-rank", type=int)
        sp.add_argument("--lora-targets", help="comma-separated PEFT module names")
        sp.add_argument("--precision", choices=["bf16", "fp16", "fp32"])
        sp.add_argument("--optimizer", choices=["adamw", "adamw-mixed", "adamw-8bit", "paged-adamw",
                                                "paged-adamw-8bit", "sgd", "sgd-momentum"])
        sp.add_argument("--adamw-impl", choices=["foreach", "fused"],
                        help="torch AdamW's implementation (adamw_torch: foreach; adamw_torch_fused: fused)")
        sp.add_argument("--checkpointing", choices=["on", "off"])
        sp.add_argument("--attention", choices=["flash", "sdpa", "eager"])
        sp.add_argument("--batch", type=int, help="micro-batch size")
        sp.add_argument("--seq", type=int, help="padded sequence length of a micro-batch")
        sp.add_argument("--accumulation", type=int, default=1, help="gradient accumulation steps")
        sp.add_argument("-o", "--output", required=True, help="run file to write (atomically)")

    a = sub.add_parser("import-trainer-state", help="HF trainer_state.json -> run file")
    a.add_argument("state")
    common(a)
    b = sub.add_parser("import-torchtune", help="torchtune metric log (txt or jsonl) -> run file")
    b.add_argument("log")
    b.add_argument("--tokens-per-step", type=int, help="label tokens per optimizer step")
    b.add_argument("--warmup-steps", type=int, default=1, help="first logged steps to mark as warm-up")
    common(b)
    c = sub.add_parser("check", help="structural check of run files")
    c.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "check":
            bad = 0
            for f in args.files:
                probs = check_run(_load_json(f, f))
                for q in probs:
                    print("%s: %s" % (f, q), file=sys.stderr)
                bad += bool(probs)
                if not probs:
                    print("%s: ok" % f)
            return 2 if bad else 0
        config = _load_json(args.config, "--config") if args.config else None
        if config is None and not args.model_preset:
            raise RunFileError("--config or --model-preset: one is required (the run must say which model)")
        opts = {k: getattr(args, k, None) for k in (
            "method", "quant", "lora_rank", "precision", "optimizer", "adamw_impl", "attention", "batch", "seq",
            "accumulation", "gpu_name", "gpu_id", "model_preset", "tokens_per_step", "warmup_steps")}
        opts["lora_targets"] = args.lora_targets.split(",") if args.lora_targets else None
        opts["checkpointing"] = None if args.checkpointing is None else args.checkpointing == "on"
        if args.cmd == "import-trainer-state":
            doc = import_trainer_state(_load_json(args.state, "trainer_state.json"), config, opts)
        else:
            try:
                with open(args.log, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                raise RunFileError("torchtune log: cannot read %s (%s)" % (args.log, e.strerror)) from None
            doc = import_torchtune_log(text, config, opts)
        write_json_atomic(args.output, doc)
        print("wrote %s (%d step record(s); lacks: %s)" % (args.output, len(doc["steps"]),
                                                            "; ".join(doc["lacks"]) or "nothing"))
        return 0
    except RunFileError as e:
        print("ftcost_probe: error: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_main())
