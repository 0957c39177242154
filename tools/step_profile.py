#!/usr/bin/env python3
"""Where one training step's time goes on the GPU: a torch.profiler trace of one step, summarised.

Issue 38: the recorded H200 Trainer runs are 30-110 ms per step slower than the step model, and reading the
Trainer, PEFT and torch code found no term of that size. A trace of one step settles it: the device's busy
time (the union of its kernels), its idle time inside the step (host-bound gaps, syncs), the kernels by
ftcost's kernel classes and the longest idle gaps with the CPU op that was running when each began.

Two parts:
- ``StepProfiler``: a Trainer callback (duck-typed: on_step_begin / on_step_end) that profiles one optimizer
  step (CPU and CUDA activities, no shapes or stacks, to keep the profiler's own overhead low), writes the
  Chrome trace (gzipped) and its summary. Add it after ``FtcostProbe``, whose on_step_begin synchronises the
  device first, so the profiled step starts on an idle GPU as every recorded step does.
- ``summarize(trace, wall_s)``: the summary of a Chrome trace (torch.profiler's ``export_chrome_trace``
  format: ``traceEvents`` with ``ph == "X"``, ``ts``/``dur`` in microseconds, ``cat`` "kernel" for device
  kernels, "cpu_op" for ATen ops). Pure Python: testable without a GPU (tests/probe/test_step_profile.py).

    python3 tools/step_profile.py TRACE.json[.gz] [--wall-s S]   # summarise a trace written elsewhere

The profiler adds host time per op (a few microseconds), so the profiled step is slower than an unprofiled
one; its device busy time and its kernels are not changed, and the idle gaps it shows are upper bounds.
"""

import argparse
import gzip
import json
import os
import re
import sys

# ftcost's kernel classes (core/predict ops.cpp KernelClass), matched on the kernel's name; first match wins.
# cuBLAS/cuBLASLt/CUTLASS GEMMs, FlashAttention / cuDNN / PyTorch's fused attention, the loss, the
# optimizer's multi-tensor kernels, then everything element-wise or a reduction.
KERNEL_CLASSES = [
    ("gemm", re.compile(r"gemm|cutlass|xmma|nvjet|cublas|s16816|s1688|h16816|wgmma|_mm_|matmul", re.I)),
    ("attention", re.compile(r"flash|fmha|attention|sdpa|mem_eff|cudnn.*(mha|attn)", re.I)),
    ("loss", re.compile(r"cross_entropy|log_softmax|nll_loss|softmax_backward", re.I)),
    ("optimizer", re.compile(r"multi_tensor|adam|foreach|fused_sgd", re.I)),
    ("norm", re.compile(r"rms_?norm|layer_?norm|norm_kernel", re.I)),
    ("copy", re.compile(r"memcpy|memset|copy_kernel|cat_|index|gather|scatter", re.I)),
]


def kernel_class(name):
    for cls, rx in KERNEL_CLASSES:
        if rx.search(name):
            return cls
    return "elementwise"


def _union_us(intervals):
    """Total length of the union of [start, end) intervals (microseconds), and the gaps between them."""
    total = 0.0
    gaps = []
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if cur_e is None:
            cur_s, cur_e = s, e
        elif s > cur_e:
            total += cur_e - cur_s
            gaps.append((cur_e, s))
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total, gaps


def _load(trace):
    if isinstance(trace, dict):
        return trace
    opener = gzip.open if str(trace).endswith(".gz") else open
    with opener(trace, "rt") as f:
        return json.load(f)


def summarize(trace, wall_s=None, top=15):
    """The summary of one step's Chrome trace (a dict or a path). wall_s: the step's synchronised wall time
    (the recorder's); without it, the span from the first to the last event."""
    doc = _load(trace)
    raw = doc.get("traceEvents", []) if isinstance(doc, dict) else doc  # older torch: a bare array of events
    events = [e for e in raw if isinstance(e, dict) and e.get("ph") == "X" and "dur" in e and "ts" in e]
    for e in events:  # the legacy (non-Kineto) profiler writes no "cat": its pid says "CPU/CUDA functions"
        if "cat" not in e:
            pid = str(e.get("pid", ""))
            e["cat"] = "kernel" if "CUDA" in pid else "cpu_op" if "CPU" in pid else ""
    kernels = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    cpu_ops = [e for e in events if e.get("cat") == "cpu_op"]
    launches = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and re.search(r"LaunchKernel|cuLaunch", e.get("name", ""))]
    if not events:
        raise ValueError("the trace has no complete events (ph \"X\" with ts and dur)")
    t0 = min(float(e["ts"]) for e in events)
    t1 = max(float(e["ts"]) + float(e["dur"]) for e in events)
    span_s = (t1 - t0) * 1e-6
    wall = float(wall_s) if wall_s else span_s
    busy_us, gaps = _union_us([(float(k["ts"]), float(k["ts"]) + float(k["dur"])) for k in kernels])
    by_name, by_class = {}, {}
    for k in kernels:
        name = k.get("name", "?")
        d = by_name.setdefault(name, {"name": name, "class": kernel_class(name), "count": 0, "time_s": 0.0})
        d["count"] += 1
        d["time_s"] += float(k["dur"]) * 1e-6
        c = by_class.setdefault(d["class"], {"count": 0, "time_s": 0.0})
        c["count"] += 1
        c["time_s"] += float(k["dur"]) * 1e-6
    ops = {}
    for o in cpu_ops:
        d = ops.setdefault(o.get("name", "?"), {"name": o.get("name", "?"), "count": 0, "time_s": 0.0})
        d["count"] += 1
        d["time_s"] += float(o["dur"]) * 1e-6

    def running_at(ts):
        # the innermost CPU op running when a gap began: what the host was doing while the GPU waited
        best = None
        for o in cpu_ops:
            s = float(o["ts"])
            if s <= ts <= s + float(o["dur"]) and (best is None or float(o["dur"]) < float(best["dur"])):
                best = o
        return best.get("name") if best else None

    gaps.sort(key=lambda g: g[1] - g[0], reverse=True)
    return {
        "schema": "ftcost.step_profile/1",
        "wall_s": wall,
        "trace_span_s": span_s,
        "device_busy_s": busy_us * 1e-6,
        "device_idle_s": max(0.0, wall - busy_us * 1e-6),
        "kernels": len(kernels),
        "kernel_launches": len(launches),
        "kernel_time_s": sum(float(k["dur"]) for k in kernels) * 1e-6,
        "by_class": {k: by_class[k] for k in sorted(by_class, key=lambda c: -by_class[c]["time_s"])},
        "top_kernels": sorted(by_name.values(), key=lambda d: -d["time_s"])[:top],
        "top_cpu_ops": sorted(ops.values(), key=lambda d: -d["time_s"])[:top],
        "largest_idle_gaps": [{"at_s": (s - t0) * 1e-6, "length_s": (e - s) * 1e-6, "host_in": running_at(s)}
                              for s, e in gaps[:10]],
    }


class StepProfiler:
    """Profiles optimizer step ``step`` (1-based, counted by this callback) of a Trainer run; writes
    ``<prefix>.trace.json.gz`` and ``<prefix>.json`` (the summary)."""

    def __init__(self, prefix, step=4):
        self.prefix = prefix
        self.step = step
        self.seen = 0
        self.prof = None
        self.t0 = None

    def on_step_begin(self, args=None, state=None, control=None, **kwargs):
        import time

        import torch

        self.seen += 1
        if self.seen != self.step:
            return control
        acts = [torch.profiler.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            acts.append(torch.profiler.ProfilerActivity.CUDA)
            torch.cuda.synchronize()
        self.prof = torch.profiler.profile(activities=acts, record_shapes=False, with_stack=False)
        self.prof.__enter__()
        self.t0 = time.perf_counter()
        return control

    def on_step_end(self, args=None, state=None, control=None, **kwargs):
        import time

        import torch

        if self.prof is None:
            return control
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        wall = time.perf_counter() - self.t0
        self.prof.__exit__(None, None, None)
        raw = self.prefix + ".trace.json"
        self.prof.export_chrome_trace(raw)
        with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb") as g:
            g.write(f.read())
        os.remove(raw)
        summary = summarize(raw + ".gz", wall_s=wall)
        summary["step"] = self.step
        summary["torch"] = torch.__version__
        summary["note"] = ("one profiled step: the profiler adds host time per op, so wall_s and the idle "
                           "gaps are upper bounds; device_busy_s and the kernels are the step's")
        tmp = self.prefix + ".json.tmp"
        with open(tmp, "w") as f:
            json.dump(summary, f, indent=1)
        os.replace(tmp, self.prefix + ".json")
        self.prof = None
        return control

    # the Trainer calls every event on every callback; the rest do nothing here
    def __getattr__(self, name):
        if name.startswith("on_"):
            return lambda *a, **k: None
        raise AttributeError(name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="Chrome trace (torch.profiler export_chrome_trace), .json or .json.gz")
    ap.add_argument("--wall-s", type=float, default=None, help="the step's synchronised wall time")
    a = ap.parse_args(argv)
    try:
        s = summarize(a.trace, a.wall_s)
    except (OSError, ValueError) as e:
        print("step_profile: %s: %s" % (a.trace, e), file=sys.stderr)
        return 2
    json.dump(s, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
