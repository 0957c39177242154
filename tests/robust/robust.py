#!/usr/bin/env python3
"""ftcost robustness suite: hostile inputs against the command line's contract (issue #15).

Generates its inputs in a scratch folder (files of every kind: FIFO, folder, device, symlink, symlink loop,
empty, huge, byte-order mark, control characters, binary; numbers at every edge; empty values; output
targets that are devices, symlinks, FIFOs, folders and full disks; stdout on a full disk or closed) and
checks, for every case:

  - it ends within the timeout (a hang is a failure);
  - it is not killed by a signal (SIGPIPE only where the reader quits early on purpose);
  - exit 0 only with valid output: non-empty stdout, JSON that parses when --json was asked, and no
    non-finite number anywhere (NaN/Infinity in JSON, nan/inf in text);
  - exit 2 with a message on stderr that starts with "ftcost: error:" and names the flag, field or path;
  - exit 1 (internal error) never;
  - no device node it was given is modified (type, device number, inode), and no symlink it was given as an
    output is replaced.

A case may be marked xfail (Case(..., xfail="why")) while the fix it waits for is not merged: it is then
reported, not counted as a failure, and reported as XPASS once it passes. No case is marked now (items 9
and 10 of issue #15, empty values and values that do not apply, were marked until the option table landed).

Python 3 standard library only. Usage:
  robust.py --ftcost build/native/bin/ftcost [--tmp DIR] [--jobs N] [--timeout S] [-k SUBSTRING]
            [--sample N] [-v]
--sample N runs a deterministic 1/N of the cases (chosen by a hash of each name, the same on every run and
machine): the sanitizer build runs a sample, the native build runs them all.
Exit status 0 when every case that is not xfail passes, 1 otherwise.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

# --------------------------------------------------------------------------------------------------- cases


JOB = ["--model", "llama-3.1-8b", "--gpu", "a40", "--method", "qlora", "--seq", "512"]
MOE_JOB = ["--model", "mixtral-8x7b", "--gpu", "a40", "--method", "qlora", "--dataset", "math14k"]

# (not a word's part: "ZeRO-Infinity" is DeepSpeed's name, a "-inf" after a space is a number)
NONFINITE_TEXT = re.compile(r"(?<![A-Za-z-])(?<![A-Za-z]-)-?(nan|inf|infinity)(?![A-Za-z])", re.IGNORECASE)


class Case:
    def __init__(self, name, args, expect="any", mention=(), json_out=None, stdout=None, xfail=None,
                 check=None, nodes=(), links=(), allow_sigpipe=False, stdin=None, env=None, cwd_gone=False):
        self.name = name
        self.args = args  # list of str; the binary is prepended
        self.expect = expect  # "ok" (exit 0), "bad" (exit 2), "fail" (exit != 0, not 1 unless...), "any"
        self.mention = mention if isinstance(mention, (tuple, list)) else (mention,)
        self.json_out = json_out if json_out is not None else ("--json" in args)
        self.stdout = stdout  # None: captured; "full": /dev/full; "closed": fd 1 closed; "early": reader quits
        self.xfail = xfail
        self.check = check  # extra check(result) -> error string or None
        self.nodes = nodes  # device nodes that must be unchanged
        self.links = links  # (link, target) pairs: the link must stay a link to that target
        self.allow_sigpipe = allow_sigpipe
        self.stdin = stdin
        self.env = env  # the whole environment (None: inherited)
        self.cwd_gone = cwd_gone  # run from a folder that was deleted


class Result:
    def __init__(self):
        self.code = None
        self.signal = None
        self.out = ""
        self.err = ""
        self.timed_out = False
        self.seconds = 0.0


def node_id(path):
    st = os.lstat(path)
    return (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_ino)


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)
    return path


class Env:
    """The scratch folder and every hostile file in it."""

    def __init__(self, root, source):
        self.root = root
        self.source = source
        self.notes = []
        os.makedirs(root, exist_ok=True)
        j = lambda *p: os.path.join(root, *p)  # noqa: E731
        self.j = j
        # --- inputs
        self.fifo = j("fifo.json")
        os.mkfifo(self.fifo)
        self.fifo_csv = j("fifo.csv")
        os.mkfifo(self.fifo_csv)
        self.folder = j("folder.json")
        os.makedirs(self.folder)
        self.empty = write(j("empty.json"), "")
        self.empty_csv = write(j("empty.csv"), "")
        self.huge = j("huge.json")
        with open(self.huge, "wb") as f:  # sparse: 9 MiB of zeros, over the 8 MiB input limit
            f.truncate(9 * 1024 * 1024)
        self.binary = write(j("binary.json"), bytes(range(256)) * 64, "wb")
        self.nul_csv = write(j("nul.csv"), b"\0" * 4096, "wb")
        self.loop = j("loop.json")
        os.symlink(self.loop, self.loop)
        self.dangling_in = j("dangling-in.json")
        os.symlink(j("does-not-exist.json"), self.dangling_in)
        self.missing = j("missing.json")
        llama = {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1376, "num_hidden_layers": 4,
                 "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 32000}
        self.model = write(j("model.json"), json.dumps(llama))
        self.model_bom = write(j("model-bom.json"), "\ufeff" + json.dumps(llama), "w")
        self.model_link = j("model-link.json")
        os.symlink(self.model, self.model_link)
        jamba = json.load(open(os.path.join(source, "gpu-db/models/jamba-v0.1.json")))["config"]
        self.jamba_ok = write(j("jamba-ok.json"), json.dumps(jamba))
        self.jamba_attn = write(j("jamba-attn.json"), json.dumps(dict(jamba, attn_layer_offset=8)))
        self.jamba_attn9 = write(j("jamba-attn9.json"), json.dumps(dict(jamba, attn_layer_offset=9)))
        self.jamba_expert = write(j("jamba-expert.json"), json.dumps(dict(jamba, expert_layer_offset=2)))
        # 3 layers: offsets 4 and 1 give 0 attention and 1 expert layer, offsets 0 and 0 would give 1 and 2
        self.jamba_3 = write(j("jamba-3-layers.json"), json.dumps(dict(jamba, num_hidden_layers=3)))
        self.jamba_noff = write(j("jamba-no-offsets.json"), json.dumps(
            {k: v for k, v in dict(jamba, num_hidden_layers=3).items()
             if k not in ("attn_layer_offset", "expert_layer_offset")}))
        gpu = json.load(open(os.path.join(source, "gpu-db/gpus/a40.json")))
        gpu["id"] = "my-a40"
        self.gpu = write(j("gpu.json"), json.dumps(gpu))
        self.gpu_bad = {}
        for key, patch in {
            "empty-id": {"id": ""},
            "dotdot-id": {"id": "../../etc/passwd"},
            "long-id": {"id": "a" * 100000},
            "upper-id": {"id": "A40"},
            "ctrl-id": {"id": "a40\u001b[2J"},
            "ctrl-name": {"name": "A40\u001b[2J\u001b[H"},
            "c1-name": {"name": "A40\u009b2J"},
            "nl-name": {"name": "A40\nwarning: fake"},
            "empty-name": {"name": ""},
            "ctrl-vendor": {"vendor": "NVIDIA\u0007"},
            "ctrl-source": {"sources": ["https://example.com/\u001b]0;pwned\u0007"]},
        }.items():
            self.gpu_bad[key] = write(j("gpu-" + key + ".json"), json.dumps(dict(gpu, **patch)))
        # --- fit points
        self.points = write(j("points.csv"), "batch,throughput,sparsity\n1,0.341,0.25\n2,0.657,0.25\n4,1.135,0.25\n")
        self.points_bom = write(j("points-bom.csv"), "\ufeffbatch,throughput\r\n1,0.3\r\n2,0.6\r\n4,1.1\r\n")
        self.points_link = j("points-link.csv")
        os.symlink(self.points, self.points_link)

        def pts(name, rows, header="batch,throughput"):
            return write(j("points-" + name + ".csv"), header + "\n" + "\n".join(rows) + "\n")

        self.points_bad = {
            "batch-2p64": pts("b2p64", ["1,0.3", "18446744073709551616,0.6"]),
            "batch-1e300": pts("b1e300", ["1,0.3", "1e300,0.6"]),
            "batch-hex": pts("bhex", ["1,0.3", "0x10,0.6"]),
            "batch-frac": pts("bfrac", ["1,0.3", "2.5,0.6"]),
            "batch-neg": pts("bneg", ["1,0.3", "-2,0.6"]),
            "batch-zero": pts("bzero", ["0,0.3", "2,0.6"]),
            "batch-plus": pts("bplus", ["1,0.3", "+2,0.6"]),
            "tp-1e308": pts("t1e308", ["1,1e308", "2,1e308"]),
            "tp-huge-one": pts("thuge1", ["1,0.3", "2,1e308"]),
            "tp-inf": pts("tinf", ["1,0.3", "2,inf"]),
            "tp-nan": pts("tnan", ["1,0.3", "2,nan"]),
            "tp-hex": pts("thex", ["1,0.3", "2,0x1p3"]),
            "tp-zero": pts("tzero", ["1,0", "2,0.6"]),
            "tp-neg": pts("tneg", ["1,-0.3", "2,0.6"]),
            "tp-empty": pts("tempty", ["1,", "2,0.6"]),
            "sparsity-2": pts("s2", ["1,0.3,2", "2,0.6,2"], "batch,throughput,sparsity"),
            "no-rows": pts("norows", []),
            "one-row": pts("onerow", ["1,0.3"]),
            "same-batch": pts("same", ["2,0.3", "2,0.6"]),
            "bad-header": write(j("points-badheader.csv"), "b,t\n1,0.3\n2,0.6\n"),
            "ctrl": write(j("points-ctrl.csv"), "batch,throughput\n1,0.3\n2,\u001b[2J\n"),
        }
        self.points_tiny = pts("tiny", ["1,1e-300", "2,2e-300"])
        # --- reference rows (validate --dir, fit-stack --dir)
        ref = json.load(open(os.path.join(source, "tests/data/reference/paper-a40.json")))
        row = ref["rows"][0]

        def refdir(name, rows, extra_files=()):
            d = j("ref-" + name)
            os.makedirs(d)
            write(os.path.join(d, "rows.json"), json.dumps({"schema": "ftcost.reference/1", "rows": rows}))
            for fname, content in extra_files:
                write(os.path.join(d, fname), content)
            return d

        self.ref_ok = refdir("ok", [row])
        # a small training set (the profile has 6 free parameters: 7 rows at least) keeps fit-stack fast
        training = [r for r in ref["rows"] if r["role"] == "training" and r["metric"] != "max_batch_size"]
        self.ref_fit = refdir("fit", training[:8])
        self.ref_bad = {
            "empty-rows": refdir("empty", []),
            "empty-row": refdir("emptyrow", [{}]),
            "empty-id": refdir("emptyid", [dict(row, id="")]),
            "dup-id": refdir("dup", [row, dict(row)]),
            "dup-across": refdir("dupx", [row], [("more.json", json.dumps(
                {"schema": "ftcost.reference/1", "rows": [row]}))]),
            "measured-1e308": refdir("m1e308", [dict(row, measured=1e308)]),
            "measured-0": refdir("m0", [dict(row, measured=0)]),
            "unknown-model": refdir("unkmodel", [dict(row, request=dict(row["request"], model="nope"))]),
            "bad-batch": refdir("badbatch", [dict(row, request=dict(row["request"], batch="0x10"))]),
            "unknown-metric": refdir("unkmetric", [dict(row, metric="bogus")]),
            "bad-role": refdir("badrole", [dict(row, role="")]),
            "rows-object": refdir("rowsobj", {"a": 1}),
        }
        self.ref_fifo = j("ref-fifo")
        os.makedirs(self.ref_fifo)
        write(os.path.join(self.ref_fifo, "rows.json"), json.dumps({"schema": "ftcost.reference/1", "rows": [row]}))
        os.mkfifo(os.path.join(self.ref_fifo, "zz-fifo.json"))
        # --- outputs
        self.out_dir = j("out")
        os.makedirs(self.out_dir)
        self.out_target = write(j("out", "target.md"), "old\n")
        self.out_link = j("out", "link.md")
        os.symlink("target.md", self.out_link)  # relative link
        self.out_dangling = j("out", "dangling.md")
        os.symlink("new-target.md", self.out_dangling)
        self.out_fifo = j("out", "fifo.md")
        os.mkfifo(self.out_fifo)
        self.out_missing_dir = j("no-such-folder", "report.md")
        self.stack_copy = j("out", "stack.json")
        shutil.copy(os.path.join(source, "gpu-db/stacks/hf-transformers-2024.json"), self.stack_copy)
        self.stack_link = j("out", "stack-link.json")
        os.symlink("stack.json", self.stack_link)
        # --- device nodes: as root the tool could replace a node, so it gets private ones (mknod) and never
        # /dev/null or /dev/full themselves; an unprivileged run cannot replace /dev's nodes.
        self.dev_null, self.dev_full = "/dev/null", "/dev/full"
        self.devices_ok = True
        if os.geteuid() == 0:
            self.devices_ok = False
            try:
                os.mknod(j("null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
                os.mknod(j("full"), 0o666 | stat.S_IFCHR, os.makedev(1, 7))
                with open(j("null"), "w") as f:
                    f.write("x")
                self.dev_null, self.dev_full = j("null"), j("full")
                self.devices_ok = True
            except OSError as e:
                self.notes.append("private device nodes unavailable (%s): device-output cases skipped" % e)


def cases_issue39_model(env):
    """Issue 39, the model's side (W1-W5, W8-W10): answers that were wrong with exit 0 on the multi-GPU paths,
    and flags accepted without an effect. Each check reruns ftcost where the property needs a second answer."""
    c = []
    add = c.append
    H100 = ["--gpu", "h100-sxm5-80gb"]
    L8 = ["--model", "llama-3.1-8b"] + H100
    LORA512 = L8 + ["--method", "lora", "--seq", "512"]

    def rerun(args):
        p = subprocess.run([ARGS.ftcost] + args, capture_output=True, text=True, timeout=ARGS.timeout)
        return p.returncode, p.stdout, p.stderr

    def flags(request):
        out = []
        for k, v in sorted(request.items()):
            out += ["--" + k, str(v)]
        return out

    # W1: --seq max with more than one GPU times the resolved length, not a 1-token sample (P_SEQ_TOKENS:
    # tokens/s / queries/s is the sequence length)
    def seq_tokens(r):
        j = json.loads(r.out)
        ratio = j["throughput_tokens_per_s"] / j["throughput_queries_per_s"]
        if abs(ratio - j["memory_seq_len"]) > 1e-6 * j["memory_seq_len"]:
            return "tokens/s / queries/s = %g, but the memory is at %g tokens" % (ratio, j["memory_seq_len"])
        return None

    for extra in (["--gpus", "8"], ["--gpus", "2", "--parallel", "zero3"], ["--gpus", "2", "--parallel", "cp:2"],
                  ["--node", "dgx-h100"]):
        add(Case("issue39 W1 seq max %s" % " ".join(extra),
                 ["estimate"] + L8 + ["--method", "lora", "--seq", "max", "--json"] + extra, "ok", check=seq_tokens))

    def scale_seq(r):
        pts = [p for p in json.loads(r.out)["points"] if p.get("fits")]
        lens = {round(p["throughput_tokens_per_s"] / p["throughput_queries_per_s"]) for p in pts}
        return None if len(pts) > 1 and len(lens) == 1 else "points at different lengths: %s" % sorted(lens)

    add(Case("issue39 W1 scale seq max", ["scale"] + L8 + ["--method", "lora", "--seq", "max", "--counts", "1,2,8",
                                                           "--json"], "ok", check=scale_seq))

    def plan_repro_seq(r):
        front = json.loads(r.out)["front"]
        if not front:
            return "no plan"
        for e in front:
            code, out, err = rerun(["estimate"] + flags(e["request"]) + ["--json"])
            if code != 0:
                return "plan %d's reproduce request fails: %s" % (e["id"], err.strip()[:200])
            j = json.loads(out)
            if abs(j["time_hours"] - e["hours"]) > 1e-9 * e["hours"]:
                return "plan %d: %s h, its request estimates %s h" % (e["id"], e["hours"], j["time_hours"])
            wrong = seq_tokens(type("R", (), {"out": out}))
            if wrong:
                return "plan %d's request: %s" % (e["id"], wrong)
        return None

    add(Case("issue39 W1 plan seq max reproduces", ["plan", "--model", "llama-3.1-8b", "--method", "lora", "--seq",
                                                    "max", "--max-gpus", "8", "--json"], "ok", check=plan_repro_seq))

    # W2: the multi-GPU maximum micro-batch is the largest that fits (P_MAXBATCH: max fits, max + 1 does not)
    def max_batch_is_largest(args):
        def check(r):
            j0 = json.loads(r.out)
            mx = j0["max_batch_size"]
            if mx < 1:
                return "max batch %s" % mx
            # (auto: of the strategy it chose; another may fit a larger batch and would be chosen for it)
            pinned = [a if a != "auto" else j0["parallel"]["strategy"] for a in args]
            for b, want in ((mx, True), (mx + 1, False)):
                code, out, err = rerun(pinned + ["--batch", str(b)])
                if code != 0:
                    return "--batch %d: exit %d %s" % (b, code, err[:200])
                j = json.loads(out)
                if j["fits"] != want:
                    return "max batch %d, but batch %d has fits %s" % (mx, b, j["fits"])
                if want and any("does not fit" in w for w in j["warnings"]):
                    return "batch %d fits but a warning says it does not" % b
            return None
        return check

    for par in (["--gpus", "2", "--parallel", "zero1"], ["--gpus", "8", "--parallel", "fsdp"],
                ["--gpus", "2", "--parallel", "tp:2"], ["--gpus", "4", "--parallel", "cp:2"],
                ["--gpus", "8", "--parallel", "auto"]):
        args = ["estimate"] + LORA512 + ["--queries", "100000", "--json"] + par
        add(Case("issue39 W2 max batch %s" % " ".join(par), args, "ok", check=max_batch_is_largest(args)))

    # W3: a job lasts at least one optimizer step (P_STEP_FLOOR), says when its global batch exceeds the
    # data, and plan / scale do not offer such shapes
    def step_floor(r):
        j = json.loads(r.out)
        if j["time_hours"] * 3600 < j["step_time_s"] * (1 - 1e-9):
            return "the job (%g s) is shorter than one step (%g s)" % (j["time_hours"] * 3600, j["step_time_s"])
        if not any("larger than the data" in w for w in j["warnings"]):
            return "no warning that the global batch exceeds the data"
        return None

    add(Case("issue39 W3 global batch beyond the data",
             ["estimate"] + LORA512 + ["--gpus", "72", "--nodes", "4096", "--network", "infiniband",
                                       "--network-gbit-per-gpu", "400", "--json"], "ok", check=step_floor))
    add(Case("issue39 W3 one query on 8 GPUs", ["estimate"] + LORA512 + ["--queries", "1", "--gpus", "8", "--json"],
             "ok", check=step_floor))

    def plan_within_data(r):
        j = json.loads(r.out)
        for e in j["front"]:
            if e["effective_batch"] > 1000:
                return "plan %d: global batch %d > 1000 samples" % (e["id"], e["effective_batch"])
            if e["hours"] * 3600 < e["step_time_s"] * (1 - 1e-9):
                return "plan %d is shorter than one step" % e["id"]
        return None if j["front"] else "no plan"

    add(Case("issue39 W3 plan minimize time on 1000 samples",
             ["plan", "--model", "llama-3.1-8b", "--method", "lora", "--seq", "512", "--minimize", "time",
              "--max-gpus", "4096", "--json"], "ok", check=plan_within_data))

    def scale_floor(r):
        for p in json.loads(r.out)["points"]:
            if p.get("fits") and p["time_hours"] * 3600 < p["step_time_s"] * (1 - 1e-9):
                return "%d GPUs: %g s, shorter than one step of %g s" % (p["gpus"], p["time_hours"] * 3600,
                                                                         p["step_time_s"])
            if p.get("fits") and p["speedup"] > p["gpus"] * 1.05:
                return "%d GPUs: speedup %g" % (p["gpus"], p["speedup"])
        return None

    add(Case("issue39 W3 scale to 4096 GPUs on 1000 samples",
             ["scale"] + LORA512 + ["--node", "dgx-h100", "--counts", "1,8,64,512,4096", "--json"], "ok",
             check=scale_floor))

    # W4: a job that does not fit (host RAM for the offload, or its batch per GPU) has no time or cost
    def no_fit_no_cost(r):
        j = json.loads(r.out)
        if j["fits"]:
            return "expected fits false"
        for k in ("cost_usd", "time_hours", "throughput_queries_per_s", "step_time_s"):
            if j.get(k) is not None:
                return "%s = %s for a job that does not fit" % (k, j[k])
        return None

    BIG_OFFLOAD = ["--model", "llama-3.1-405b"] + H100 + ["--method", "full", "--seq", "512", "--node", "dgx-h100",
                                                          "--offload", "params"]
    add(Case("issue39 W4 offload beyond host RAM", ["estimate"] + BIG_OFFLOAD + ["--json"], "ok",
             check=no_fit_no_cost))
    add(Case("issue39 W4 offload beyond host RAM text", ["estimate"] + BIG_OFFLOAD, "ok",
             check=lambda r: None if "cost: $" not in r.out and "host RAM: offload needs" in r.out else
             "a cost is printed, or the host RAM is not named as the reason"))
    add(Case("issue39 W4 batch per GPU that does not fit",
             ["estimate"] + LORA512 + ["--gpus", "2", "--parallel", "zero1", "--batch", "300", "--json"], "ok",
             check=no_fit_no_cost))

    # W5: compare --electricity prices every row at board power x $/kWh
    def electricity_rows(r):
        rows = [x for x in json.loads(r.out)["rows"] if "price" in x]
        if not rows:
            return "no priced row"
        bad = [x["gpu"] for x in rows if "electricity" not in x["price"]["provider"]]
        return "rows priced by a rental offer: %s" % bad[:5] if bad else None

    add(Case("issue39 W5 compare --electricity", ["compare", "--model", "llama-3.1-8b", "--method", "lora", "--seq",
                                                  "512", "--electricity", "0.3", "--json"], "ok",
             check=electricity_rows))

    # W8: --parallel on one GPU: a warning (nothing to shard), hsdp an error as on one node of 8
    for strat in ("zero3", "ddp", "fsdp", "fsdp-grad-op", "zero1"):
        add(Case("issue39 W8 --parallel %s on one GPU" % strat,
                 ["estimate"] + L8 + ["--method", "full", "--seq", "512", "--parallel", strat, "--json"], "ok",
                 check=lambda r: None if any("--parallel" in w for w in json.loads(r.out)["warnings"]) else
                 "--parallel dropped without a word"))
    add(Case("issue39 W8 hsdp on one GPU", ["estimate"] + L8 + ["--method", "full", "--seq", "512", "--parallel",
                                                               "hsdp"], "bad", ("--parallel", "--nodes 2")))

    # W9: --host-ram is checked against ZeRO/FSDP offload and checkpoint offload per node, and warns when it
    # applies to nothing
    add(Case("issue39 W9 --host-ram below ZeRO offload",
             ["estimate"] + L8 + ["--method", "full", "--seq", "512", "--node", "dgx-h100", "--offload", "params",
                                  "--host-ram", "0.5", "--json"], "ok", check=no_fit_no_cost))
    add(Case("issue39 W9 --host-ram below offloaded checkpoints on 2 GPUs",
             ["estimate"] + L8 + ["--method", "lora", "--seq", "2048", "--offload-activations", "on",
                                  "--checkpointing", "on", "--gpus", "2", "--host-ram", "0.5", "--json"], "ok",
             check=no_fit_no_cost))
    # issue 36: a stack that trains on one GPU is refused on several, naming --gpus
    add(Case("issue36 unsloth on 2 GPUs", ["estimate"] + L8 + ["--method", "lora", "--seq", "512", "--stack",
                                                               "unsloth-2024q4", "--gpus", "2"],
             "bad", ("--gpus", "one GPU")))
    add(Case("issue39 W9 --host-ram with nothing offloaded", ["estimate"] + LORA512 + ["--host-ram", "0.5", "--json"],
             "ok", check=lambda r: None if any("--host-ram" in w for w in json.loads(r.out)["warnings"]) else
             "--host-ram ignored without a word"))

    # W10: a strategy the model cannot run is an error in scale and compare as in estimate; a --vs key given
    # twice is an error
    add(Case("issue39 W10 scale ep on a dense model", ["scale"] + LORA512 + ["--counts", "1,2", "--parallel", "ep:2"],
             "bad", ("--parallel", "MoE")))
    add(Case("issue39 W10 compare ep on a dense model", ["compare", "--model", "llama-3.1-8b", "--method", "lora",
                                                         "--seq", "512", "--parallel", "ep:2"], "bad",
             ("--parallel", "MoE")))
    add(Case("issue39 W10 --vs key twice", ["estimate"] + LORA512 + ["--vs", "method=lora,method=full"], "bad",
             ("--vs", "method")))
    return c


def build_cases(env):
    c = []
    c += cases_issue39_model(env)
    E = env
    add = c.append

    # ---------------------------------------------------------------- files of every kind as inputs
    for flag, extra in (("--model", ["--gpu", "a40", "--seq", "512", "--method", "lora"]),
                        ("--gpu", ["--model", "llama-3.1-8b", "--seq", "512", "--method", "lora"]),
                        ("--calibration", ["--model", "llama-3.1-8b", "--gpu", "a40", "--seq", "512", "--method",
                                           "lora"])):
        for kind, path, mention in (
                ("fifo", E.fifo, "FIFO"), ("folder", E.folder, "folder"), ("empty", E.empty, E.empty),
                ("huge", E.huge, "8 MiB"), ("binary", E.binary, E.binary), ("loop", E.loop, E.loop),
                ("dangling-link", E.dangling_in, "no such file"), ("missing", E.missing, "no such file"),
                ("dev-zero", "/dev/zero", "character device"), ("dev-null", "/dev/null", "character device"),
                ("dev-urandom", "/dev/urandom", "character device")):
            add(Case("input %s %s" % (flag, kind), ["estimate", flag, path] + extra, "bad", mention))
    add(Case("input --model symlink", ["estimate", "--model", E.model_link, "--gpu", "a40", "--seq", "512",
                                       "--method", "full"], "ok"))
    add(Case("input --model BOM", ["estimate", "--model", E.model_bom, "--gpu", "a40", "--seq", "512", "--method",
                                   "full", "--json"], "ok"))
    add(Case("input --gpu path", ["estimate", "--model", "llama-3.1-8b", "--gpu", E.gpu, "--seq", "512",
                                  "--method", "qlora"], "ok"))
    for kind, path, mention in (("fifo", E.fifo, "FIFO"), ("folder", E.folder, "folder"),
                                ("missing", E.missing, "no such file")):
        add(Case("input compare --model %s" % kind, ["compare", "--model", path, "--seq", "512", "--method", "lora"],
                 "bad", mention))
        add(Case("input sweep --model %s" % kind, ["sweep", "--model", path, "--gpu", "a40", "--seq", "512",
                                                   "--method", "lora"], "bad", mention))
    # recorded runs (ftcost.run/1): fit-stack --run and estimate --run
    for kind, path, mention in (("fifo", E.fifo, "FIFO"), ("folder", E.folder, "folder"),
                                ("dev-zero", "/dev/zero", "character device"), ("empty", E.empty, E.empty),
                                ("huge", E.huge, "8 MiB"), ("binary", E.binary, E.binary),
                                ("missing", E.missing, "no such file"), ("not a run", E.model, "schema")):
        add(Case("fit-stack --run %s" % kind, ["fit-stack", "--run", path], "bad", mention))
        add(Case("estimate --run %s" % kind, ["estimate"] + JOB + ["--run", path], "bad", mention))
    if E.devices_ok:
        add(Case("fit-stack --run --write full device", ["fit-stack", "--run", E.fifo, "--write", E.dev_full],
                 "bad", "--run", nodes=(E.dev_null, E.dev_full)))
    # fit --points
    for kind, path, mention in (
            ("fifo", E.fifo_csv, "FIFO"), ("folder", E.folder, "folder"), ("empty", E.empty_csv, "empty"),
            ("huge", E.huge, "8 MiB"), ("nul", E.nul_csv, "header"), ("dev-zero", "/dev/zero", "character device"),
            ("dev-urandom", "/dev/urandom", "character device"), ("missing", E.missing, "no such file"),
            ("loop", E.loop, E.loop)):
        add(Case("fit --points %s" % kind, ["fit", "--points", path], "bad", mention))
    add(Case("fit --points symlink", ["fit", "--points", E.points_link, "--json"], "ok"))
    add(Case("fit --points BOM+CRLF", ["fit", "--points", E.points_bom, "--json"], "ok"))
    add(Case("fit --points tiny throughput", ["fit", "--points", E.points_tiny, "--json"], "any"))
    for kind, path in E.points_bad.items():
        mention = {"no-rows": "no data rows", "one-row": "two", "same-batch": "do not vary",
                   "bad-header": "header"}.get(kind, "batch" if kind.startswith("batch") else
                                               "sparsity" if kind.startswith("sparsity") else "throughput")
        if kind in ("tp-1e308",):
            mention = "throughput"
        add(Case("fit --points %s" % kind, ["fit", "--points", path], "bad", mention))
        add(Case("fit --points %s --json" % kind, ["fit", "--points", path, "--json"], "bad", mention))
    # --c3 edges
    for v, ok in (("1.8", True), ("1e-9", True), ("1e12", True), ("1e308", False), ("0", False), ("-1", False),
                  ("nan", False), ("inf", False), ("1e-10", False), ("0x10", False), ("", False)):
        add(Case("fit --c3 %r" % v, ["fit", "--points", E.points, "--c3", v, "--json"], "ok" if ok else "bad",
                 () if ok else ("--c3",) + (("1e12",) if v in ("1e308", "0", "-1", "1e-10") else ())))
    add(Case("fit --help states the --c3 range", ["fit", "--help"], "ok",
             check=lambda r: None if "1e-9 and 1e12" in r.out else "--help does not state --c3's range"))

    # ---------------------------------------------------------------- GPU JSON given as a path
    for kind, path in E.gpu_bad.items():
        field = "name" if "name" in kind else "vendor" if "vendor" in kind else "sources" if "source" in kind \
            else "id"
        add(Case("--gpu PATH %s" % kind, ["estimate", "--model", "llama-3.1-8b", "--gpu", path, "--seq", "512",
                                          "--method", "qlora"], "bad", field, check=no_raw_escape))
    # ---------------------------------------------------------------- model configs
    add(Case("jamba as in transformers", ["estimate", "--model", E.jamba_ok, "--gpu", "h100-sxm5-80gb", "--seq",
                                          "512", "--method", "qlora", "--json"], "ok"))
    add(Case("jamba default offsets", ["estimate", "--model", E.jamba_noff, "--gpu", "h100-sxm5-80gb", "--seq", "512",
                                       "--method", "qlora", "--json"], "ok",
             check=same_params_as(E, E.jamba_3)))
    for kind, path, field in (("attn offset = period", E.jamba_attn, "attn_layer_offset"),
                              ("attn offset > period", E.jamba_attn9, "attn_layer_offset"),
                              ("expert offset = period", E.jamba_expert, "expert_layer_offset")):
        add(Case("jamba %s" % kind, ["estimate", "--model", path, "--gpu", "h100-sxm5-80gb", "--seq", "512",
                                     "--method", "qlora"], "bad", field))

    # ---------------------------------------------------------------- numbers at every edge (job flags)
    edges = ["0", "-1", "1", "2", "16777216", "16777217", "18446744073709551616", "1e300", "1e308", "1e-300",
             "0x10", "1.5", " 1", "1 ", "+1", "nan", "inf", "-inf", "1e3", "00001", "9" * 400, "\u0661"]
    for flag in ("--batch", "--seq", "--lora-rank", "--queries", "--epochs", "--max-length", "--template-tokens",
                 "--top-k", "--price-per-hour", "--stale-days", "--grad-accum", "--headroom", "--electricity",
                 "--gpus", "--nodes", "--network-gbit-per-gpu"):
        base = MOE_JOB if flag == "--top-k" else JOB
        for v in edges:
            args = ["estimate"] + [a for a in base] + [flag, v, "--json"]
            if flag == "--seq":
                args = ["estimate", "--model", "llama-3.1-8b", "--gpu", "a40", "--method", "qlora", flag, v,
                        "--json"]
            add(Case("edge %s %r" % (flag, v), args, "any", flag))
    # values that cannot be right for any flag
    for flag in ("--batch", "--seq", "--epochs", "--queries", "--price-per-hour", "--lora-rank"):
        for v in ("nan", "inf", "-1", "0x10", "1e400", "abc"):
            args = ["estimate"] + JOB + [flag, v]
            if flag == "--seq":
                args = ["estimate", "--model", "llama-3.1-8b", "--gpu", "a40", "--method", "lora", flag, v]
            add(Case("bad %s %r" % (flag, v), args, "bad", flag))
    # paper commands
    for args in (["paper", "eq1", "--gpu-mem", "1e308"], ["paper", "eq1", "--gpu-mem", "1e-9"],
                 ["paper", "eq1", "--seq", "1e12", "--json"], ["paper", "eq1", "--sparsity", "0.001", "--json"],
                 ["paper", "eq1", "--model-mem", "1e12", "--json"], ["paper", "table4", "--queries", "1e12",
                                                                       "--epochs", "1e12", "--json"],
                 ["paper", "table4", "--queries", "1e-9", "--json"], ["bench", "--iterations", "0"],
                 ["sweep"] + JOB + ["--points", "1000000"], ["sweep"] + JOB + ["--points", "2", "--json"]):
        add(Case("edge " + " ".join(args), args, "any"))
    # extreme but valid jobs: exit 0 with finite numbers, or exit 2 naming why
    for model, gpu, method in (("llama-3.1-405b", "t4", "full"), ("llama-3.1-405b", "h100-sxm5-80gb", "qlora"),
                               ("mixtral-8x22b", "a10", "lora"), ("gpt-oss-120b", "b200", "qlora")):
        add(Case("extreme %s on %s %s" % (model, gpu, method),
                 ["estimate", "--model", model, "--gpu", gpu, "--method", method, "--seq", "4194304", "--json"],
                 "any"))
        add(Case("extreme %s on %s %s batch 1" % (model, gpu, method),
                 ["estimate", "--model", model, "--gpu", gpu, "--method", method, "--seq", "1", "--batch",
                  "16777216", "--queries", "1099511627776", "--epochs", "1e6"], "any"))
    add(Case("compare extreme", ["compare", "--model", "llama-3.1-405b", "--method", "full", "--seq", "4194304",
                                 "--json"], "any"))
    # item 12: an explicit batch that does not fit is not a result
    add(Case("explicit batch that does not fit", ["estimate"] + MOE_JOB + ["--batch", "64"], "ok",
             check=lambda r: None if "does not fit at batch 64" in r.out and "cost: $" not in r.out and
             "throughput:" not in r.out else "time/cost printed as a result for a batch that does not fit"))

    # ---------------------------------------------------------------- empty values (item 9, the lead's)
    for flag in ("--seq", "--batch", "--lora-targets", "--model", "--gpu", "--method", "--dataset", "--epochs",
                 "--queries", "--provider", "--price-per-hour", "--calibration", "--moe", "--quant"):
        args = ["estimate"] + [a for a in MOE_JOB] + [flag, ""]
        add(Case("empty value %s" % flag, args, "bad", flag))
    add(Case("empty value validate --markdown", ["validate", "--markdown", ""], "bad", "--markdown"))
    add(Case("empty value validate --svg", ["validate", "--svg", ""], "bad", "--svg"))
    add(Case("empty value fit --points", ["fit", "--points", ""], "bad", "--points"))
    add(Case("empty value validate --dir", ["validate", "--dir", ""], "bad", "--dir"))
    add(Case("empty value fit-stack --dir", ["fit-stack", "--dir", ""], "bad", "--dir"))
    add(Case("empty value fit-stack --write", ["fit-stack", "--write", ""], "bad", "--write"))
    # values that do not apply (item 10, the lead's)
    add(Case("--moe bogus on a dense model", ["estimate"] + JOB + ["--moe", "bogus"], "bad", "--moe"))
    add(Case("--provider with --price-per-hour", ["estimate"] + JOB + ["--provider", "runpod",
                                                                      "--price-per-hour", "2"], "any",
             check=provider_pair_explained))

    # ---------------------------------------------------------------- output targets
    nodes = (E.dev_null, E.dev_full)
    if E.devices_ok:
        for flag in ("--markdown", "--svg"):
            add(Case("validate %s full device" % flag, ["validate", flag, E.dev_full], "bad",
                     ("No space left", flag), nodes=nodes))
            add(Case("validate %s null device" % flag, ["validate", flag, E.dev_null], "ok", nodes=nodes))
        add(Case("fit-stack --write full device", ["fit-stack", "--write", E.dev_full], "bad", "--write",
                 nodes=nodes))
        add(Case("fit-stack --write null device", ["fit-stack", "--write", E.dev_null], "bad", "--write",
                 nodes=nodes))
    add(Case("validate --markdown symlink", ["validate", "--markdown", E.out_link], "ok",
             links=((E.out_link, "target.md"),),
             check=lambda r: None if open(E.out_target).read().startswith("| group") else
             "the symlink's target was not updated"))
    add(Case("validate --svg dangling symlink", ["validate", "--svg", E.out_dangling], "ok",
             links=((E.out_dangling, "new-target.md"),),
             check=lambda r: None if os.path.isfile(os.path.join(E.out_dir, "new-target.md")) else
             "the dangling symlink's target was not created"))
    add(Case("validate --markdown FIFO without reader", ["validate", "--markdown", E.out_fifo], "bad",
             ("--markdown", "FIFO"), check=lambda r: None if stat.S_ISFIFO(os.lstat(E.out_fifo).st_mode) else
             "the FIFO was replaced"))
    add(Case("validate --markdown folder", ["validate", "--markdown", E.out_dir], "bad", ("--markdown", "folder")))
    add(Case("validate --svg in a missing folder", ["validate", "--svg", E.out_missing_dir], "bad",
             ("--svg", "no-such-folder")))
    add(Case("fit-stack --write missing file", ["fit-stack", "--write", E.j("out", "nope.json")], "bad",
             ("--write", "no such file")))
    add(Case("fit-stack --write folder", ["fit-stack", "--write", E.out_dir], "bad", ("--write", "folder")))
    add(Case("fit-stack --write FIFO", ["fit-stack", "--write", E.out_fifo], "bad", ("--write", "FIFO")))
    add(Case("fit-stack --write not a profile", ["fit-stack", "--write", E.points], "bad", "--write"))
    add(Case("fit-stack --write symlink", ["fit-stack", "--dir", E.ref_fit, "--write", E.stack_link], "ok",
             links=((E.stack_link, "stack.json"),),
             check=lambda r: None if "fit" in json.load(open(E.stack_copy)).get("throughput", {}) else
             "the symlink's target was not updated"))

    # ---------------------------------------------------------------- stdout
    for label, args in (("estimate --json", ["estimate"] + JOB + ["--json"]), ("estimate", ["estimate"] + JOB),
                        ("models --json", ["models", "--json"]), ("gpus", ["gpus"]),
                        ("paper table4", ["paper", "table4"]), ("validate", ["validate"]),
                        ("compare", ["compare", "--model", "llama-3.1-8b", "--seq", "512", "--method", "qlora"]),
                        ("--help", ["--help"])):
        add(Case("stdout full: " + label, args, "fail", ("cannot write to stdout", "No space left on device"),
                 stdout="full"))
        add(Case("stdout closed: " + label, args, "fail", ("cannot write to stdout", "Bad file descriptor"),
                 stdout="closed"))
    add(Case("stdout reader quits early", ["models", "--json"], "any", stdout="early", allow_sigpipe=True))

    # ---------------------------------------------------------------- validate / fit-stack --dir
    for kind, d in E.ref_bad.items():
        mention = {"empty-rows": "rows", "empty-row": "id", "empty-id": "id", "dup-id": "duplicate",
                   "dup-across": "duplicate", "measured-1e308": "measured", "measured-0": "measured",
                   "unknown-model": "nope", "bad-batch": "--batch", "unknown-metric": "metric",
                   "bad-role": "role", "rows-object": "rows"}[kind]
        add(Case("validate --dir %s" % kind, ["validate", "--dir", d], "bad", mention))
        add(Case("validate --dir %s --json" % kind, ["validate", "--dir", d, "--json"], "bad", mention))
    add(Case("validate --dir one row", ["validate", "--dir", E.ref_ok, "--json"], "ok"))
    add(Case("validate --dir with a FIFO .json", ["validate", "--dir", E.ref_fifo], "bad", "FIFO"))
    for kind, path, mention in (("file", E.points, "--dir"), ("missing", E.missing, "--dir"),
                                ("fifo", E.fifo, "--dir"), ("in a missing folder", E.out_missing_dir, "--dir")):
        add(Case("validate --dir %s" % kind, ["validate", "--dir", path], "bad", mention))
    add(Case("fit-stack --dir with bad rows", ["fit-stack", "--dir", E.ref_bad["measured-1e308"]], "bad",
             "measured"))

    # ---------------------------------------------------------------- db check paths
    for kind, path, mention in (("fifo", E.fifo, "not a regular file"), ("missing", E.missing, "no such file"),
                                ("dev-zero", "/dev/zero", "not a regular file"), ("empty", E.empty, E.empty),
                                ("huge", E.huge, E.huge), ("binary", E.binary, E.binary),
                                ("loop", E.loop, E.loop), ("gpu ctrl name", E.gpu_bad["ctrl-name"], "name")):
        add(Case("db check %s" % kind, ["db", "check", path], "bad", mention, json_out=False,
                 check=no_raw_escape))

    # ---------------------------------------------------------------- command line and environment
    for label, env in (("empty environment", {}), ("LC_ALL bogus", dict(os.environ, LC_ALL="xx_YY.bogus")),
                       ("LANG tr_TR", dict(os.environ, LANG="tr_TR.UTF-8", LC_ALL="tr_TR.UTF-8")),
                       ("TZ bogus", dict(os.environ, TZ="Nowhere/Bogus+99"))):
        add(Case("env %s: estimate" % label, ["estimate"] + JOB + ["--json"], "ok", env=env))
        add(Case("env %s: db check" % label, ["db", "check", "--json"], "ok", env=env))
    add(Case("cwd deleted: estimate", ["estimate"] + JOB, "ok", cwd_gone=True))
    add(Case("cwd deleted: db check", ["db", "check", "--json"], "ok", cwd_gone=True))
    add(Case("cwd deleted: validate --markdown relative", ["validate", "--markdown", "report.md"], "bad",
             "--markdown", cwd_gone=True))
    add(Case("unknown command", ["frobnicate"], "bad", "unknown command"))
    add(Case("no command", [], "bad", "ftcost"))
    add(Case("unknown flag", ["estimate"] + JOB + ["--frobnicate", "1"], "bad", "--frobnicate"))
    add(Case("control characters in a value", ["estimate"] + JOB + ["--method", "\u001b[2Jfull"], "bad",
             "--method", check=no_raw_escape))
    add(Case("invalid UTF-8 in a value", ["estimate", "--model", "\udcff\udcfe", "--gpu", "a40"], "bad", "--model",
             check=no_raw_escape))
    add(Case("very long value", ["estimate"] + JOB + ["--method", "x" * 100000], "bad", "--method"))
    c += cases_issue39_inputs(E)  # E: `env` is rebound by the environment cases above
    return c


def cases_issue39_inputs(env):
    """Issue 39, input, file and performance defects: each case failed before its fix."""
    c = []
    E = env
    add = c.append
    j = E.j
    LORA = ["--model", "llama-3.1-8b", "--method", "lora"]

    # H1: a length file near the 8 MiB cap (4.19M lines) is binned once, not once per shape
    big = j("i39-4m-lines.txt")
    with open(big, "w") as f:
        f.write("8\n9\n" * 2095000)
    fine = j("i39-460k-bins.json")  # 8 MB of exact bins: reduced like the list they came from
    write(fine, json.dumps({"schema": "ftcost.dataset/1",
                            "histogram": [[n, n, 1 + n % 7] for n in range(1, 460000)]}, separators=(",", ":")))
    for cmd in ("compare", "plan"):
        for label, path in (("4.19M lengths", big), ("460k histogram bins", fine)):
            add(Case("i39 H1 %s with %s finishes in seconds" % (cmd, label), [cmd] + LORA + ["--dataset", path],
                     "ok", check=lambda r: None if r.seconds < 10 else "took %.1f s (bar: 5 s)" % r.seconds))

    # L1: --out named like a companion is refused, not overwritten by it; L2: all or none
    def unchanged(path, text):
        return lambda r: None if open(path).read() == text else "%s was replaced" % path

    full_plan = ["plan", "--model", "llama-3.1-8b", "--method", "full", "--dataset", "math14k", "--max-gpus", "8",
                 "--config", "trl"]
    zero_plan = ["plan"] + LORA + ["--dataset", "math14k", "--deadline", "0.01", "--config", "trl", "--pick", "0"]
    for label, args, name in (("accelerate.yaml", full_plan, "accelerate.yaml"),
                              ("deepspeed.json", zero_plan, "deepspeed.json")):
        d = j("i39-l1-" + name)
        os.makedirs(d)
        add(Case("i39 L1 plan --out named like its companion %s" % label, args + ["--out", os.path.join(d, name)],
                 "bad", ("--out", name), check=lambda r, d=d: None if not os.listdir(d) else
                 "wrote %s" % os.listdir(d)))
    d = j("i39-l2")
    os.makedirs(os.path.join(d, "accelerate.yaml"))
    mine = write(os.path.join(d, "trl.yaml"), "my own trl.yaml\n")
    add(Case("i39 L2 a companion that cannot be written leaves --out untouched", full_plan + ["--out", mine],
             "bad", ("--out", "accelerate.yaml", "folder"), check=unchanged(mine, "my own trl.yaml\n")))
    md = write(j("i39-l2-report.md"), "my notes\n")
    add(Case("i39 L2 validate --svg and --markdown naming one file", ["validate", "--svg", md, "--markdown", md],
             "bad", ("--svg", "--markdown"), check=unchanged(md, "my notes\n")))
    add(Case("i39 L2 validate --markdown failing leaves --svg untouched",
             ["validate", "--svg", md, "--markdown", E.out_missing_dir], "bad", "--markdown",
             check=unchanged(md, "my notes\n")))

    # L3: fit-stack --run --write replaces a stack profile or writes a new file, nothing else; what it writes
    # loads with --stack FILE
    run_path = os.path.join(E.source, "gpu-db/runs/h200-sxm-141gb/trainer-llama-3.2-3b-lora-r16.json")
    run_doc = json.load(open(run_path))
    notes = write(j("i39-notes.json"), '{"my": "notes"}\n')
    add(Case("i39 L3 fit-stack --run --write refuses a file that is not a profile",
             ["fit-stack", "--run", run_path, "--write", notes], "bad", ("--write", "ftcost.stack/1"),
             check=unchanged(notes, '{"my": "notes"}\n')))
    profile = j("i39-profile.json")
    profile = j("i39-profile.json")

    def loads_with_stack(r):
        if "--stack " + profile not in r.out:
            return "no hint how to load the profile"
        est = subprocess.run([ARGS.ftcost, "estimate", "--model", "llama-3.2-3b", "--gpu", "h200-sxm-141gb", "--method",
                              "lora", "--seq", "512", "--stack", profile, "--json"], capture_output=True, text=True,
                             timeout=ARGS.timeout)
        if est.returncode != 0:
            return "estimate --stack %s: %s" % (profile, est.stderr.strip()[:200])
        return None if "+run" in json.loads(est.stdout)["stack"]["id"] else "not the refitted profile"

    add(Case("i39 L3 fit-stack --run --write a new profile that --stack FILE loads",
             ["fit-stack", "--run", run_path, "--write", profile], "ok", check=loads_with_stack))
    prof_copy = j("i39-stack-profile.json")
    shutil.copy(os.path.join(E.source, "gpu-db/stacks/hf-trl-2026.json"), prof_copy)
    add(Case("i39 L3 --stack FILE loads a complete profile",
             ["estimate", "--model", "llama-3.2-3b", "--gpu", "h200-sxm-141gb", "--method", "lora", "--seq", "512",
              "--stack", prof_copy, "--json"], "ok"))
    add(Case("i39 M3 --stack FILE in plan says it takes ids",
             ["plan"] + LORA + ["--dataset", "math14k", "--stack", prof_copy], "bad", ("--stack", "ids")))
    add(Case("i39 M3 --node FILE says it takes preset ids",
             ["estimate"] + LORA + ["--gpu", "h100-sxm5-80gb", "--seq", "512", "--node",
                                    os.path.join(E.source, "gpu-db/nodes/dgx-h100.json")],
             "bad", ("--node", "not a file")))
    add(Case("i39 M3 fit-stack --stack FILE says it takes ids",
             ["fit-stack", "--run", run_path, "--stack", prof_copy], "bad", ("--stack", "not a file")))
    add(Case("i39 fit-stack --run with --dir is an error", ["fit-stack", "--run", run_path, "--dir", E.ref_ok],
             "bad", "--dir"))
    # W6: a run with one timed step (or identical steps) never gives a zero-width range
    RUN_JOB = ["estimate", "--model", "llama-3.2-3b", "--gpu", "h200-sxm-141gb", "--method", "lora"]

    def range_width(r):
        d = json.loads(r.out)
        lo, hi = d["throughput_queries_per_s_range"]
        return None if hi > lo * 1.05 else "range %s is (nearly) zero-width" % [lo, hi]

    one = write(j("i39-run-one-step.json"), json.dumps(dict(run_doc, steps=run_doc["steps"][-1:])))
    same = write(j("i39-run-same-steps.json"), json.dumps(dict(run_doc, steps=run_doc["steps"][-1:] * 200)))
    for label, path in (("one timed step", one), ("200 identical steps", same)):
        add(Case("i39 W6 estimate --run with %s has a range" % label,
                 RUN_JOB + ["--seq", "128", "--batch", "1", "--run", path, "--json"], "ok", check=range_width))
    # W7: absurd run memory is refused naming the field; a fitted parameter at its bound is warned about
    steps1 = [dict(st, max_memory_allocated_bytes=1, max_memory_reserved_bytes=2) for st in run_doc["steps"]]
    m1 = write(j("i39-run-1-byte.json"), json.dumps(dict(run_doc, steps=steps1)))
    for cmd in (["fit-stack", "--run", m1], RUN_JOB + ["--seq", "2048", "--run", m1]):
        add(Case("i39 W7 %s --run with a 1-byte peak" % cmd[0], cmd, "bad",
                 "steps[0].max_memory_allocated_bytes"))
    slow = write(j("i39-run-slow.json"), json.dumps(dict(run_doc, steps=[dict(st, wall_s=3600)
                                                                          for st in run_doc["steps"]])))
    add(Case("i39 W7 estimate --run warns about a parameter at its bound", RUN_JOB + ["--seq", "2048", "--run",
                                                                                     slow], "ok",
             check=lambda r: None if "sits at its bound" in r.out else "no warning of the bound"))
    # A1: the run schema's fields the fit does not read are checked all the same
    for field, patch in (("training.batch_size", {"training": dict(run_doc["training"], batch_size=0)}),
                         ("training.batch_size", {"training": dict(run_doc["training"], batch_size=-4)}),
                         ("training.gradient_accumulation_steps",
                          {"training": dict(run_doc["training"], gradient_accumulation_steps=0)}),
                         ("training.max_length", {"training": dict(run_doc["training"], max_length=0)}),
                         ("training.packing", {"training": dict(run_doc["training"], packing="yes")}),
                         ("recorder.warmup_steps", {"recorder": dict(run_doc.get("recorder", {}), warmup_steps=-1)}),
                         ("gpu.memory_bytes", {"gpu": dict(run_doc["gpu"], memory_bytes=-1)}),
                         ("gpu.memory_bytes", {"gpu": dict(run_doc["gpu"], memory_bytes=1e300)})):
        section, key = field.split(".")
        shown = "%s=%s" % (field, json.dumps(patch[section][key]))
        path = write(j("i39-run-a1-%s.json" % hashlib.sha256(shown.encode()).hexdigest()[:8]),
                     json.dumps(dict(run_doc, **patch)))
        for cmd in (["fit-stack", "--run", path], RUN_JOB + ["--seq", "512", "--run", path]):
            add(Case("i39 A1 %s --run with %s" % (cmd[0], shown), cmd, "bad", field))

    # R1: a length file whose samples are all shorter than 8 tokens (the default --max-length is the longest)
    short = write(j("i39-short.txt"), "5\n6\n7\n")
    one_token = write(j("i39-one-token.txt"), "1\n")
    for cmd, extra in (("estimate", ["--gpu", "h100-sxm5-80gb"]), ("compare", []), ("plan", []),
                       ("scale", ["--gpu", "h100-sxm5-80gb", "--counts", "1,2"]), ("sweep", ["--gpu", "h100-sxm5-80gb"])):
        add(Case("i39 R1 %s with samples under 8 tokens" % cmd, [cmd] + LORA + extra + ["--dataset", short], "ok"))
    add(Case("i39 R1 estimate with a 1-token sample", ["estimate"] + LORA + ["--gpu", "a40", "--dataset", one_token],
             "ok"))
    # R2: scale takes the network it asks for
    add(Case("i39 R2 scale --network --network-gbit-per-gpu", ["scale"] + LORA + [
        "--gpu", "h100-sxm5-80gb", "--seq", "512", "--counts", "8,16", "--network", "infiniband",
        "--network-gbit-per-gpu", "400", "--json"], "ok",
        check=lambda r: None if [p["nodes"] for p in json.loads(r.out)["points"]] == [1, 2] and
        "error" not in json.loads(r.out)["points"][1] else "the 16-GPU row is missing or an error"))
    # R3: a --headroom above the smallest GPUs leaves them out with a note, not the whole comparison
    add(Case("i39 R3 compare --headroom 30", ["compare"] + LORA + ["--seq", "512", "--headroom", "30"], "ok",
             check=lambda r: None if "a10 has only" in r.out else "no note for the GPUs left out"))
    add(Case("i39 R3 plan --headroom 30", ["plan"] + LORA + ["--dataset", "math14k", "--headroom", "30"], "ok",
             check=lambda r: None if "a10" in r.out and "left out" in r.out else "no note for the GPUs left out"))
    add(Case("i39 R3 compare --fits-only --headroom 70", ["compare"] + LORA + ["--seq", "512", "--fits-only",
                                                                              "--headroom", "70"], "ok"))
    add(Case("i39 R3 compare --headroom above every GPU", ["compare"] + LORA + ["--seq", "512", "--headroom",
                                                                               "1000"], "bad", "--headroom"))
    # A2 / M1: an ftcost.dataset/1 file's fields are checked and errors name the file and the field
    hist = [[100, 300, 5]]
    stats = {"min": 100, "median": 200, "mean": 200, "p90": 280, "p99": 299, "max": 300}
    for label, doc, field in (
            ("length_tokens.min negative", {"length_tokens": dict(stats, min=-5)}, "length_tokens.min"),
            ("length_tokens with only min", {"length_tokens": {"min": 100}}, "length_tokens.median"),
            ("length_tokens.max against the data", {"length_tokens": dict(stats, max=99999)}, "length_tokens.max"),
            ("id a path", {"id": "../../etc/passwd"}, "id"),
            ("id with ESC", {"id": "d\u001b[2J"}, "id"),
            ("template_tokens 2.5", {"template_tokens": 2.5}, "template_tokens"),
            ("counts adding to 1e300", {"histogram": [[100, 300, 1e300]]}, "histogram"),
            ("counts adding to 2^64", {"histogram": [[100, 300, 18446744073709551616]]}, "histogram")):
        path = write(j("i39-ds-%s.json" % hashlib.sha256(label.encode()).hexdigest()[:8]), json.dumps(
            dict({"schema": "ftcost.dataset/1", "histogram": hist}, **doc)))
        add(Case("i39 A2 dataset file %s" % label, ["estimate"] + LORA + ["--gpu", "a40", "--dataset", path], "bad",
                 (os.path.basename(path), field), check=lambda r: None if "--queries" not in r.err and
                 "--template-tokens" not in r.err else "a file field reported as a flag"))
    ok_doc = write(j("i39-ds-ok.json"), json.dumps({"schema": "ftcost.dataset/1", "histogram": hist, "id": "My data",
                                                   "length_tokens": stats, "template_tokens": 12}))
    add(Case("i39 A2 dataset file with valid length_tokens and a free-form id",
             ["estimate"] + LORA + ["--gpu", "a40", "--dataset", ok_doc], "ok"))
    # A3: model config rope_scaling / rope_theta as transformers' rope_config_validation checks them
    llama = {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1376, "num_hidden_layers": 4,
             "num_attention_heads": 8, "num_key_value_heads": 4, "vocab_size": 32000}
    for label, patch, field in (("rope_scaling string", {"rope_scaling": "junk"}, "rope_scaling"),
                                ("rope_scaling list", {"rope_scaling": [1, 2, 3]}, "rope_scaling"),
                                ("rope_scaling unknown type", {"rope_scaling": {"rope_type": "warp9", "factor": 2}},
                                 "rope_scaling.rope_type"),
                                ("rope_scaling factor -1", {"rope_scaling": {"rope_type": "linear", "factor": -1}},
                                 "rope_scaling.factor"),
                                ("rope_scaling factor NaN text", {"rope_scaling": {"rope_type": "linear",
                                                                                   "factor": "NaN"}},
                                 "rope_scaling.factor"),
                                ("rope_scaling factor 1e308", {"rope_scaling": {"rope_type": "linear",
                                                                                "factor": 1e308}},
                                 "rope_scaling.factor"),
                                ("rope_theta -1", {"rope_theta": -1}, "rope_theta"),
                                ("rope_theta text", {"rope_theta": "x"}, "rope_theta")):
        path = write(j("i39-model-%s.json" % hashlib.sha256(label.encode()).hexdigest()[:8]),
                     json.dumps(dict(llama, **patch)))
        add(Case("i39 A3 model config %s" % label, ["estimate", "--model", path, "--gpu", "a40", "--method", "lora",
                                                    "--seq", "512"], "bad", field))

    # M2: flags the plan chooses itself say so, not "arguments were not expected"
    for flag, value in (("--gpu", "a40"), ("--batch", "4"), ("--parallel", "tp:2"), ("--provider", "crusoe"),
                        ("--node", "dgx-h100")):
        add(Case("i39 M2 plan %s says the plan chooses it" % flag, ["plan"] + LORA + ["--dataset", "math14k", flag,
                                                                                  value],
                 "bad", (flag, "chosen by the plan")))
    # M4: --network none over a node preset's network says a network is needed
    add(Case("i39 M4 --node with --nodes 2 --network none", ["estimate"] + LORA + [
        "--gpu", "h100-sxm5-80gb", "--seq", "512", "--node", "dgx-h100", "--nodes", "2", "--network", "none"], "bad",
        ("--network", "needs a network")))
    # M5: every error of the --vs job carries its marker
    add(Case("i39 M5 --vs parallel=tp:2 on one GPU", ["estimate"] + LORA + ["--gpu", "h100-sxm5-80gb", "--seq", "512",
                                                                           "--vs", "parallel=tp:2"], "bad",
             ("--parallel", "(--vs)")))

    # A4: empty values are errors, not "not given"
    add(Case("i39 A4 fit-stack --run --write ''", ["fit-stack", "--run", run_path, "--write", ""], "bad", "--write"))
    add(Case("i39 A4 scale --counts ''", ["scale"] + LORA + ["--gpu", "h100-sxm5-80gb", "--seq", "512", "--counts",
                                                             ""], "bad", "--counts"))
    # T1: control characters from input files never reach the terminal (--csv, fit-stack text and errors)
    tok = write(j("i39-ctrl-dataset.json"), json.dumps(
        {"schema": "ftcost.dataset/1", "histogram": [[100, 200, 5]], "tokenizer": "x\u001b]0;pwned\u0007",
         "display_name": "d\u001b[2J"}))
    for cmd, extra in (("estimate", ["--gpu", "h100-sxm5-80gb"]), ("compare", []),
                       ("scale", ["--gpu", "h100-sxm5-80gb", "--counts", "1,2"]),
                       ("sweep", ["--gpu", "h100-sxm5-80gb"])):
        add(Case("i39 T1 %s --csv escapes the dataset's fields" % cmd, [cmd] + LORA + extra + ["--dataset", tok,
                                                                                            "--csv"],
                 "ok", check=no_raw_escape))
    lacks = write(j("i39-run-lacks.json"), json.dumps(dict(run_doc, lacks=["\u001b[2J"])))
    add(Case("i39 T1 fit-stack --run text escapes the run's fields", ["fit-stack", "--run", lacks], "ok",
             check=no_raw_escape))
    gid = write(j("i39-run-gpu-id.json"), json.dumps(dict(run_doc, gpu=dict(run_doc["gpu"], id="h200\u001b[31m"))))
    add(Case("i39 T1 fit-stack --run error escapes the run's fields", ["fit-stack", "--run", gid], "bad", "gpu.id",
             check=no_raw_escape))
    return c


# ------------------------------------------------------------------------------------------------ checks


def no_raw_escape(r):
    """Nothing from the input reaches the terminal raw: no ESC, BEL or C1 CSI in stdout or stderr."""
    for name, text in (("stdout", r.out), ("stderr", r.err)):
        for ch in ("\x1b", "\x07", "\x9b"):
            if ch in text:
                return "%s holds a raw control character %r" % (name, ch)
    return None


def provider_pair_explained(r):
    if r.code == 2:
        return None if "--provider" in r.err else "exit 2 without naming --provider"
    text = r.out + r.err
    if "--provider" in text and "--price-per-hour" in text:
        return None
    return "--provider and --price-per-hour given together: neither rejected nor said which one wins"


def same_params_as(env, other_config):
    def check(r):
        ref = subprocess.run([ARGS.ftcost, "estimate", "--model", other_config, "--gpu", "h100-sxm5-80gb", "--seq", "512",
                              "--method", "qlora", "--json"], capture_output=True, text=True, timeout=ARGS.timeout)
        if ref.returncode != 0:
            return "reference run failed"
        a = json.loads(r.out)["model"]["params"]
        b = json.loads(ref.stdout)["model"]["params"]
        return None if a == b else "missing offsets are not transformers' defaults (4 and 1)"

    return check


def nonfinite_in_json(text):
    bad = []

    def const(name):
        bad.append(name)
        return 0.0

    json.loads(text, parse_constant=const)
    return bad


def run_case(case):
    r = Result()
    argv = [ARGS.ftcost] + case.args
    before = {}
    for n in case.nodes:
        before[n] = node_id(n)
    t0 = time.monotonic()
    try:
        if case.stdout in ("full", "closed", "early"):
            if case.stdout == "full":
                cmd = '"$0" "$@" > %s' % shlex_quote(ENV.dev_full if ENV.devices_ok else "/dev/full")
            elif case.stdout == "closed":
                cmd = '"$0" "$@" >&-'
            else:
                cmd = '"$0" "$@" | head -c 1 > /dev/null; exit "${PIPESTATUS[0]}"'
            p = subprocess.run(["bash", "-c", cmd] + argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=ARGS.timeout)
        elif case.cwd_gone:
            gone = os.path.join(ENV.root, "gone-" + str(abs(hash(case.name))))
            cmd = 'mkdir -p "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"'
            p = subprocess.run(["bash", "-c", cmd, "bash", gone] + argv, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=ARGS.timeout)
        else:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=ARGS.timeout, env=case.env)
        r.code = p.returncode
        r.out = p.stdout.decode("utf-8", "surrogateescape")
        r.err = p.stderr.decode("utf-8", "surrogateescape")
        if r.code < 0:
            r.signal = -r.code
        elif case.stdout in ("full", "closed", "early") and r.code > 128:
            r.signal = r.code - 128
    except subprocess.TimeoutExpired as e:
        r.timed_out = True
        r.out = (e.stdout or b"").decode("utf-8", "replace")
        r.err = (e.stderr or b"").decode("utf-8", "replace")
    r.seconds = time.monotonic() - t0
    problems = judge(case, r)
    for n, ident in before.items():
        try:
            if node_id(n) != ident:
                problems.append("device node %s was modified" % n)
        except OSError as e:
            problems.append("device node %s is gone: %s" % (n, e))
    for link, target in case.links:
        if not os.path.islink(link) or os.readlink(link) != target:
            problems.append("symlink %s was replaced" % link)
    return case, r, problems


def shlex_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def judge(case, r):
    p = []
    if r.timed_out:
        return ["hang: still running after %g s" % ARGS.timeout]
    if r.signal is not None:
        if not (case.allow_sigpipe and r.signal == signal.SIGPIPE):
            return ["killed by signal %d" % r.signal]
        return []
    if r.code == 1:
        p.append("exit 1 (internal error)")
    if r.code not in (0, 1, 2):
        p.append("exit %d: neither 0 (ok) nor 2 (bad input)" % r.code)
    if case.expect == "ok" and r.code != 0:
        p.append("expected exit 0, got %d" % r.code)
    if case.expect == "bad" and r.code != 2:
        p.append("expected exit 2, got %d" % r.code)
    if case.expect == "fail" and r.code == 0:
        p.append("expected a failure, got exit 0")
    if r.code == 0 and case.stdout is None:
        if not r.out.strip():
            p.append("exit 0 with empty stdout")
        if case.json_out:
            try:
                bad = nonfinite_in_json(r.out)
                if bad:
                    p.append("non-finite numbers in JSON: %s" % bad)
                if "null" in r.out and case.expect == "ok" and case.args[:1] == ["fit"]:
                    p.append("null in fit JSON")
            except ValueError as e:
                p.append("stdout is not JSON: %s" % e)
        m = NONFINITE_TEXT.search(r.out)
        if m:
            p.append("non-finite number in output: %r" % m.group(0))
    json_error = json_error_object(r) if case.json_out and r.code != 0 else None
    if json_error is not None:
        # under --json an input error is the JS API's object on stdout (issue 36): code, field, message
        if not all(isinstance(json_error.get(k), str) for k in ("code", "field", "message")):
            p.append("--json error object lacks string code/field/message: %r" % r.out[:200])
        missing = [m for m in case.mention if m and m not in json_error.get("message", "")]
        if missing:
            p.append("message does not mention %s: %r" % (missing, r.out[:300]))
    elif r.code != 0:
        if not r.err.startswith("ftcost: error:") and not r.err.startswith("ftcost db check") and \
                "ftcost: error:" not in r.err:
            p.append("stderr does not start with 'ftcost: error:': %r" % r.err[:200])
        said = r.err + (r.out if case.args[:2] == ["db", "check"] else "")  # db check lists problems on stdout
        missing = [m for m in case.mention if m and m not in said]
        if missing:
            p.append("message does not mention %s: %r" % (missing, r.err[:300]))
    if case.check is not None and not p:
        try:
            extra = case.check(r)
        except Exception as e:  # noqa: BLE001 - a failing check is a failed case, with its reason
            extra = "check raised %r" % e
        if extra:
            p.append(extra)
    return p


def json_error_object(r):
    """The {"error": {...}} object a --json run printed on stdout, or None."""
    try:
        d = json.loads(r.out)
    except ValueError:
        return None
    return d.get("error") if isinstance(d, dict) and isinstance(d.get("error"), dict) else None


# -------------------------------------------------------------------------------------------------- main


def main():
    global ARGS, ENV
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ftcost", required=True, help="the ftcost binary")
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    help="the repository (for gpu-db/ and tests/data/)")
    ap.add_argument("--tmp", default=None, help="scratch folder (emptied first); default: a new temporary one")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case before it counts as a hang")
    ap.add_argument("-k", default="", help="run only cases whose name contains this")
    ap.add_argument("--sample", type=int, default=1, metavar="N",
                    help="run a deterministic 1/N of the cases, chosen by a hash of each name (default 1: all)")
    ap.add_argument("-v", action="store_true", help="print every case")
    ARGS = ap.parse_args()
    if ARGS.sample < 1:
        ap.error("--sample must be 1 or more, got %d" % ARGS.sample)
    ARGS.ftcost = os.path.abspath(ARGS.ftcost)
    if ARGS.tmp:
        if os.path.exists(ARGS.tmp):
            shutil.rmtree(ARGS.tmp)
        root = ARGS.tmp
    else:
        root = tempfile.mkdtemp(prefix="ftcost-robust-")
    ENV = Env(os.path.abspath(root), ARGS.source)
    guard = {d: node_id(d) for d in ("/dev/null", "/dev/full", "/dev/zero") if os.path.exists(d)}
    cases = [c for c in build_cases(ENV) if ARGS.k in c.name]
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        print("robust: duplicate case names: %s" % sorted(dup))
        return 1
    if ARGS.sample > 1:
        total = len(cases)
        cases = [c for c in cases
                 if int(hashlib.sha256(c.name.encode()).hexdigest()[:8], 16) % ARGS.sample == 0]
        print("robust: a deterministic sample of %d of %d cases (--sample %d)" % (len(cases), total, ARGS.sample))
    # Cases that write to the same output file run one after another (the symlink checks read it back).
    serial = [c for c in cases if c.links or c.nodes or "--write" in c.args]
    parallel = [c for c in cases if c not in serial]
    t0 = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, ARGS.jobs)) as ex:
        results += list(ex.map(run_case, parallel))
    for c in serial:
        results.append(run_case(c))
    elapsed = time.monotonic() - t0
    failed, xfailed, xpassed = [], [], []
    for case, r, problems in results:
        status = "ok"
        if problems and case.xfail:
            status = "xfail"
            xfailed.append(case)
        elif problems:
            status = "FAIL"
            failed.append((case, r, problems))
        elif case.xfail:
            status = "XPASS"
            xpassed.append(case)
        if ARGS.v or status in ("FAIL", "XPASS"):
            print("%-5s %s (exit %s, %.2f s)" % (status, case.name, r.code, r.seconds))
        if status == "FAIL":
            print("      ftcost " + " ".join(shlex_quote(a) if (not a or " " in a) else a for a in case.args)[:300])
            for pr in problems:
                print("      - " + pr)
    for d, ident in guard.items():
        if node_id(d) != ident:
            print("FAIL  %s was modified during the run" % d)
            failed.append((None, None, ["%s modified" % d]))
    for n in ENV.notes:
        print("note: " + n)
    slowest = max(results, key=lambda t: t[1].seconds) if results else None
    print("robust: %d cases, %d passed, %d failed, %d expected failures, %d unexpected passes; %.1f s"
          " (slowest: %s, %.2f s)" % (len(results), len(results) - len(failed) - len(xfailed), len(failed),
                                      len(xfailed), len(xpassed), elapsed,
                                      slowest[0].name if slowest else "-", slowest[1].seconds if slowest else 0))
    if not ARGS.tmp and not failed:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


ARGS = None
ENV = None

if __name__ == "__main__":
    sys.exit(main())
