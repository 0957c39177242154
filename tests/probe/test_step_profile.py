#!/usr/bin/env python3
"""tools/step_profile.py: the summary of a hand-made Chrome trace (device busy time as the union of the
kernels, idle gaps and the CPU op running in each, kernel classes), the CLI's error for a bad file (exit 2),
and, where torch is installed (Debian's python3-torch, CPU only), StepProfiler around a real training step.

    test_step_profile.py WORK_DIR        exit 0 pass, 1 fail, 77 the torch part skipped (the rest passed)
"""
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import step_profile  # noqa: E402

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def near(a, b, tol=1e-9):
    return abs(a - b) <= tol


def hand_trace():
    # One step, microseconds: two overlapping GEMMs (100-300, 200-400), an element-wise kernel 600-700, a
    # foreach Adam kernel 900-950; the host is in aten::item (a sync) over 400-600 and in the optimizer's
    # Python over 700-900 (the first gap begins as aten::item does, before its _local_scalar_dense).
    X = lambda cat, name, ts, dur: {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur}  # noqa: E731
    return {"traceEvents": [
        X("cpu_op", "aten::mm", 90, 20), X("cpu_op", "aten::mm", 190, 20),
        X("cuda_runtime", "cudaLaunchKernel", 95, 5), X("cuda_runtime", "cudaLaunchKernel", 195, 5),
        X("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32", 100, 200),
        X("kernel", "ampere_bf16_s16816gemm_bf16_128x64", 200, 200),
        X("cpu_op", "aten::item", 400, 200), X("cpu_op", "aten::_local_scalar_dense", 410, 180),
        X("kernel", "void at::native::vectorized_elementwise_kernel<4, silu>", 600, 100),
        X("cpu_op", "Optimizer.step#AdamW.step", 700, 250),
        X("kernel", "void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>", 900, 50),
        {"ph": "i", "name": "instant", "ts": 5},  # not a complete event: ignored
    ]}


def test_summary(work):
    s = step_profile.summarize(hand_trace(), wall_s=0.001)
    check(s["schema"] == "ftcost.step_profile/1", "schema named")
    check(s["kernels"] == 4 and s["kernel_launches"] == 2, "4 kernels, 2 launches counted")
    check(near(s["device_busy_s"], 450e-6), "device busy = union of kernels (300 + 100 + 50 us), overlap once")
    check(near(s["kernel_time_s"], 550e-6), "kernel time = sum of kernels (550 us)")
    check(near(s["device_idle_s"], 0.001 - 450e-6), "idle = wall - busy")
    check(near(s["trace_span_s"], 950e-6 - 90e-6), "span from the first to the last event")
    gaps = s["largest_idle_gaps"]
    check(len(gaps) == 2 and near(gaps[0]["length_s"], 200e-6) and near(gaps[1]["length_s"], 200e-6),
          "two 200 us gaps (400-600, 700-900)")
    hosts = sorted(g["host_in"] for g in gaps)
    check(hosts == ["Optimizer.step#AdamW.step", "aten::item"],
          "each gap names the innermost CPU op running when it began: %s" % hosts)
    cls = s["by_class"]
    check(cls["gemm"]["count"] == 2 and near(cls["gemm"]["time_s"], 400e-6), "both GEMM kernels are gemm")
    check(cls["optimizer"]["count"] == 1 and cls["elementwise"]["count"] == 1, "Adam is optimizer, silu element-wise")
    check(list(cls)[0] == "gemm", "classes ordered by time")
    check(s["top_kernels"][0]["time_s"] >= s["top_kernels"][-1]["time_s"], "top kernels by time")
    # a gzipped file through the CLI; a file without events: exit 2 with the file named
    path = os.path.join(work, "t.json.gz")
    with gzip.open(path, "wt") as f:
        json.dump(hand_trace(), f)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "step_profile.py"), path, "--wall-s", "0.001"],
                         capture_output=True, text=True)
    check(out.returncode == 0 and json.loads(out.stdout)["kernels"] == 4, "CLI summarises a .json.gz trace")
    bad = os.path.join(work, "empty.json")
    with open(bad, "w") as f:
        json.dump({"traceEvents": []}, f)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "step_profile.py"), bad],
                         capture_output=True, text=True)
    check(out.returncode == 2 and "empty.json" in out.stderr and "no complete events" in out.stderr,
          "a trace without events: exit 2 naming the file")


def test_torch(work):
    try:
        import torch
    except ImportError:
        print("SKIP  StepProfiler: no torch for %s" % sys.executable)
        return False
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    prefix = os.path.join(work, "step")
    prof = step_profile.StepProfiler(prefix, step=2)
    for _ in range(3):
        prof.on_step_begin(None, None, None)
        loss = model(torch.randn(32, 64)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        prof.on_step_end(None, None, None)
    check(prof.on_train_end(None, None, None) is None, "other Trainer events are accepted and do nothing")
    ok = os.path.exists(prefix + ".json") and os.path.exists(prefix + ".trace.json.gz")
    check(ok, "StepProfiler writes the summary and the gzipped trace")
    if ok:
        with open(prefix + ".json") as f:
            s = json.load(f)
        check(s["step"] == 2 and s["wall_s"] > 0 and s["top_cpu_ops"], "the summary of the profiled step (CPU ops)")
        check(any("addmm" in o["name"] or "linear" in o["name"] for o in s["top_cpu_ops"]),
              "the linear layers' ops are among the CPU ops")
    return True


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else "/tmp/step-profile-work"
    os.makedirs(work, exist_ok=True)
    test_summary(work)
    ran_torch = test_torch(work)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0 if ran_torch else 77


if __name__ == "__main__":
    sys.exit(main())
