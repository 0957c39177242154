#!/usr/bin/env python3
"""tools/dataset_lengths.py without network: its writer on a tiny local JSON Lines / text file with the
whitespace tokenizer, a mocked Hugging Face tokenizer (chat template counted), its errors, and ftcost reading
what it wrote (same sample count, mean and maximum; the same binning as ftcost's own text reader).

usage: test_dataset_lengths.py FTCOST SOURCE_DIR WORK_DIR   (exit 77 = skipped: Python lacks what it needs)
"""
import importlib.util
import json
import os
import subprocess
import sys

if sys.version_info < (3, 6):
    print("SKIP: needs Python 3.6+")
    sys.exit(77)

ftcost, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
script = os.path.join(source, "tools", "dataset_lengths.py")
spec = importlib.util.spec_from_file_location("dataset_lengths", script)
dl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dl)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True)


def estimate(dataset):
    r = subprocess.run([ftcost, "estimate", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--method", "qlora",
                        "--dataset", dataset, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("ftcost on %s: %s" % (dataset, r.stderr))
        return None
    return json.loads(r.stdout)


# 1. a JSON Lines file, whitespace tokenizer: lengths are word counts
jsonl = os.path.join(work, "tiny.jsonl")
texts = ["one two three", "a b c d e f g h i j", "x", "one two three", "  spaced   words here  "]
with open(jsonl, "w") as f:
    for t in texts:
        f.write(json.dumps({"text": t, "other": 1}) + "\n")
out = os.path.join(work, "tiny.json")
r = run("--jsonl", jsonl, "--tokenizer", "whitespace", "-o", out)
check(r.returncode == 0, "jsonl run exits 0: " + r.stderr)
doc = json.load(open(out))
want = sorted(len(t.split()) for t in texts)  # 1, 3, 3, 3, 10
check(doc["schema"] == "ftcost.dataset/1", "schema")
check(doc["queries"] == 5, "queries")
check(doc["histogram"] == [[1, 1, 1], [3, 3, 3], [10, 10, 1]], "histogram %r" % doc["histogram"])
check(doc["length_tokens"] == {"min": 1, "median": 3, "mean": 4.0, "p90": 10, "p99": 10, "max": 10},
      "summary %r" % doc["length_tokens"])
check("whitespace" in doc["tokenizer"], "tokenizer named")
check(not [k for k in os.listdir(work) if k.endswith(".tmp")], "no temporary file left")
e = estimate(out)
if e:
    check(e["dataset"]["queries"] == 5 and e["dataset"]["own_data"], "ftcost reads the file: queries")
    check(abs(e["dataset"]["mean_tokens"] - 4.0) < 1e-9, "ftcost mean %r" % e["dataset"]["mean_tokens"])
    check(e["dataset"]["max_tokens"] == 10, "ftcost max")
    check(e["inputs"]["template_tokens"] == 0, "no template tokens on own data")

# 2. a text file, one sample per line
txt = os.path.join(work, "tiny.txt")
with open(txt, "w") as f:
    f.write("hello world\n\nthree words here\n")
r = run("--text", txt, "--tokenizer", "whitespace", "-o", os.path.join(work, "t.json"), "--id", "mine")
check(r.returncode == 0, "text run: " + r.stderr)
d2 = json.load(open(os.path.join(work, "t.json")))
check(d2["id"] == "mine" and d2["queries"] == 2 and d2["histogram"] == [[2, 2, 1], [3, 3, 1]], "text file %r" % d2)

# 3. a mocked Hugging Face tokenizer: the chat template's tokens are part of the length


class FakeTok:
    chat_template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"

    def __call__(self, text):
        return {"input_ids": [0] + [1] * len(text.split())}  # BOS + one per word

    def apply_chat_template(self, messages, tokenize=True):
        ids = [0]
        for m in messages:
            ids += [7, 7] + [1] * len(m["content"].split())  # two template tokens per turn
        return ids


class Args:
    messages_field = "messages"
    prompt_field = None
    completion_field = None
    text_field = None
    limit = None


tok = dl.HfTokenizer(FakeTok(), "fake/tok")
recs = [{"messages": [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello"}]},
        {"messages": [{"role": "user", "content": "a b c d"}]}]
check(dl.lengths_of(recs, Args, tok) == [1 + 2 + 2 + 2 + 1, 1 + 2 + 4], "chat template counted")
Args.messages_field, Args.text_field = None, "text"
check(dl.lengths_of([{"text": "a b"}], Args, dl.HfTokenizer(FakeTok(), "f", add_eos=True)) == [4], "text + BOS + EOS")
Args.prompt_field, Args.completion_field, Args.text_field = "p", "c", None
check(dl.lengths_of([{"p": "a b ", "c": "c"}], Args, tok) == [4], "prompt + completion")
try:
    dl.lengths_of([{"q": "x"}], Args, tok)
    check(False, "a missing field is an error")
except dl.UsageError as ex:
    check("sample 0 has no field 'p' (it has: q)" in str(ex), "missing field message: %s" % ex)

# 4. many distinct lengths: the same ~1% binning as ftcost's own reader of a plain length list
lengths = [1 + (i * 7919) % 20000 for i in range(30000)]
big = dl.dataset_document(lengths, "big", "big", "t", "s")
check(len(big["histogram"]) < 800, "binned to %d bins" % len(big["histogram"]))
check(sum(b[2] for b in big["histogram"]) == 30000, "bins hold every sample")
bigjson = os.path.join(work, "big.json")
dl.write_atomic(bigjson, json.dumps(big))
bigtxt = os.path.join(work, "big.txt")
with open(bigtxt, "w") as f:
    f.write("\n".join(map(str, lengths)) + "\n")
a, b = estimate(bigjson), estimate(bigtxt)
if a and b:
    check(a["dataset"]["mean_tokens"] == b["dataset"]["mean_tokens"], "JSON and text give the same mean")
    check(abs(a["dataset"]["mean_tokens"] - sum(lengths) / len(lengths)) / (sum(lengths) / len(lengths)) < 0.005,
          "binned mean within 0.5%")
    check(a["max_batch_size"] == b["max_batch_size"], "same max batch")

# 5. errors: exit 2 and a message naming the problem
bad = os.path.join(work, "bad.jsonl")
with open(bad, "w") as f:
    f.write('{"text": "ok"}\n{broken\n')
r = run("--jsonl", bad, "--tokenizer", "whitespace", "-o", os.path.join(work, "x.json"))
check(r.returncode == 2 and "bad.jsonl:2: not valid JSON" in r.stderr, "bad JSONL: %d %s" % (r.returncode, r.stderr))
check(not os.path.exists(os.path.join(work, "x.json")), "nothing written on error")
r = run("--jsonl", jsonl, "--tokenizer", "whitespace", "--text-field", "nope", "-o", os.path.join(work, "x.json"))
check(r.returncode == 2 and "has no field 'nope'" in r.stderr, "missing field: " + r.stderr)
empty = os.path.join(work, "empty.txt")
open(empty, "w").close()
r = run("--text", empty, "--tokenizer", "whitespace", "-o", os.path.join(work, "x.json"))
check(r.returncode == 2 and "no samples" in r.stderr, "empty input: " + r.stderr)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("dataset_lengths: all checks passed")
