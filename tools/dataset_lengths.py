#!/usr/bin/env python3
"""dataset_lengths: write the token lengths of a fine-tuning data set as an ``ftcost.dataset/1`` JSON file.

``ftcost estimate --dataset FILE`` (and the calculator's "Load your lengths" button) read it: the number of
samples and a histogram of tokens per sample, counted with the tokenizer you will train with, after the
chat/prompt template your trainer applies. Documentation: docs/dataset.md.

    # a Hugging Face dataset + tokenizer (needs `datasets` and `transformers`; the only script that does)
    dataset_lengths.py --hf-dataset HuggingFaceH4/ultrachat_200k --split train_sft \\
        --tokenizer meta-llama/Llama-3.1-8B-Instruct --messages-field messages -o ultrachat.json

    # a local JSON Lines or text file, no dependencies (a whitespace "tokenizer" gives rough counts only)
    dataset_lengths.py --jsonl my.jsonl --text-field text --tokenizer whitespace -o mine.json
    dataset_lengths.py --text my.txt --tokenizer whitespace -o mine.json   # one sample per line

How a sample is counted (what TRL's SFTTrainer feeds the model):
  --messages-field F  tokenizer.apply_chat_template(sample[F], tokenize=True): the chat template's tokens
                      are part of the length, so ftcost adds no template tokens of its own.
  --text-field F      len(tokenizer(sample[F]).input_ids) (special tokens included) [+1 with --add-eos].
  --prompt-field P --completion-field C   prompt + completion concatenated, as --text-field.

The file is written atomically (a temporary file in the same folder, then os.replace).
"""

import argparse
import datetime
import json
import math
import os
import sys
import tempfile

SCHEMA = "ftcost.dataset/1"
EXACT_LENGTH_BINS = 1024  # core/spec/include/ftcost/dataset.hpp kExactLengthBins
MAX_SAMPLE_TOKENS = 4194304  # kMaxSampleTokens


class UsageError(Exception):
    """Bad input: printed as 'dataset_lengths: error: ...', exit code 2."""


# ---------------------------------------------------------------------------------------------- writer


def bin_lengths(lengths):
    """[[lo, hi, count], ...]: one bin per distinct length while there are at most 1024 of them, else bins
    of about 1% relative width (hi = max(lo, floor(lo * 1.01))), the last one ending at the longest sample.
    The same rule as ftcost's bin_lengths() for text and CSV files."""
    counts = {}
    for n in lengths:
        counts[n] = counts.get(n, 0) + 1
    keys = sorted(counts)
    if len(keys) <= EXACT_LENGTH_BINS:
        return [[k, k, counts[k]] for k in keys]
    bins = []
    for k in keys:
        if bins and k <= bins[-1][1]:
            bins[-1][2] += counts[k]
            continue
        bins.append([k, max(k, math.floor(k * 1.01)), counts[k]])
    bins[-1][1] = min(bins[-1][1], keys[-1])
    return bins


def summary(lengths):
    """min, median, mean, p90, p99, max of the exact lengths (nearest-rank percentiles)."""
    s = sorted(lengths)
    n = len(s)

    def rank(q):
        return s[min(n - 1, max(0, math.ceil(q * n) - 1))]

    return {
        "min": s[0],
        "median": rank(0.5),
        "mean": round(sum(s) / n, 3),
        "p90": rank(0.9),
        "p99": rank(0.99),
        "max": s[-1],
    }


def check_lengths(lengths):
    if not lengths:
        raise UsageError("no samples: the data set (after --limit and filters) is empty")
    for i, n in enumerate(lengths):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n > MAX_SAMPLE_TOKENS:
            raise UsageError("sample %d: length %r is not a whole number of tokens from 1 to %d"
                             % (i, n, MAX_SAMPLE_TOKENS))


def dataset_document(lengths, dataset_id, display_name, tokenizer, source, notes=None):
    """The ftcost.dataset/1 document for these lengths (gpu-db/schema/dataset.schema.json)."""
    check_lengths(lengths)
    return {
        "schema": SCHEMA,
        "id": dataset_id,
        "display_name": display_name,
        "queries": len(lengths),
        "queries_published": None,
        "length_tokens": summary(lengths),
        "histogram": bin_lengths(lengths),
        "tokenizer": tokenizer,
        "source": source,
        "notes": notes,
    }


def write_atomic(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".dataset_lengths-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------------------------- counting


class WhitespaceTokenizer:
    """No-dependency fallback: one token per whitespace-separated word. Real tokenizers give 1.3-2x more
    tokens for English text; use it for tests and rough checks only (the file says so)."""

    name = "whitespace (words, not a real tokenizer: counts are rough)"

    def count_text(self, text):
        return max(1, len(text.split()))

    def count_messages(self, messages):
        return max(1, sum(len(str(m.get("content", "")).split()) for m in messages))


class HfTokenizer:
    """A transformers tokenizer: what TRL's SFTTrainer counts."""

    def __init__(self, tok, name, add_eos=False):
        self.tok = tok
        self.name = name
        self.add_eos = add_eos

    def count_text(self, text):
        n = len(self.tok(text)["input_ids"])
        return n + (1 if self.add_eos else 0)

    def count_messages(self, messages):
        if getattr(self.tok, "chat_template", None) is None:
            raise UsageError("the tokenizer %s has no chat template; use --text-field instead" % self.name)
        ids = self.tok.apply_chat_template(messages, tokenize=True)
        if isinstance(ids, dict):  # newer transformers may return a BatchEncoding
            ids = ids["input_ids"]
        return len(ids)


def sample_length(record, index, args, tokenizer):
    def field(name):
        if not isinstance(record, dict) or name not in record:
            keys = ", ".join(sorted(record)) if isinstance(record, dict) else type(record).__name__
            raise UsageError("sample %d has no field %r (it has: %s)" % (index, name, keys))
        return record[name]

    if args.messages_field:
        msgs = field(args.messages_field)
        if not isinstance(msgs, list) or not all(isinstance(m, dict) for m in msgs):
            raise UsageError("sample %d: %r is not a list of {role, content} messages" % (index, args.messages_field))
        return tokenizer.count_messages(msgs)
    if args.prompt_field:
        p, c = field(args.prompt_field), field(args.completion_field)
        if not isinstance(p, str) or not isinstance(c, str):
            raise UsageError("sample %d: prompt and completion must be text" % index)
        return tokenizer.count_text(p + c)
    text = field(args.text_field)
    if not isinstance(text, str):
        raise UsageError("sample %d: %r is not text" % (index, args.text_field))
    return tokenizer.count_text(text)


def lengths_of(records, args, tokenizer):
    out = []
    for i, r in enumerate(records):
        if args.limit is not None and i >= args.limit:
            break
        out.append(sample_length(r, i, args, tokenizer))
    return out


def read_jsonl(path):
    records = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise UsageError("%s:%d: not valid JSON (%s)" % (path, n, e.msg))
    return records


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return [{"text": line.rstrip("\r\n")} for line in f if line.strip()]


def load_tokenizer(args):
    if args.tokenizer == "whitespace":
        return WhitespaceTokenizer()
    try:
        from transformers import AutoTokenizer  # type: ignore
    except ImportError:
        raise UsageError("--tokenizer %s needs the transformers package (pip install transformers); "
                         "--tokenizer whitespace needs nothing but gives rough counts" % args.tokenizer)
    tok = AutoTokenizer.from_pretrained(args.tokenizer, revision=args.revision)
    return HfTokenizer(tok, args.tokenizer, args.add_eos)


def load_records(args):
    if args.jsonl:
        return read_jsonl(args.jsonl), args.jsonl
    if args.text:
        args.text_field = "text"
        return read_text(args.text), args.text
    try:
        import datasets  # type: ignore
    except ImportError:
        raise UsageError("--hf-dataset needs the datasets package (pip install datasets)")
    ds = datasets.load_dataset(args.hf_dataset, args.hf_config, split=args.split, revision=args.revision)
    return ds, "Hugging Face dataset %s%s, split %s" % (
        args.hf_dataset, (" (" + args.hf_config + ")") if args.hf_config else "", args.split)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="dataset_lengths.py", description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--hf-dataset", help="Hugging Face dataset id (datasets.load_dataset)")
    src.add_argument("--jsonl", help="local JSON Lines file, one sample per line")
    src.add_argument("--text", help="local text file, one sample per line")
    p.add_argument("--hf-config", help="dataset configuration name")
    p.add_argument("--split", default="train")
    p.add_argument("--revision", help="dataset / tokenizer revision")
    p.add_argument("--tokenizer", required=True,
                   help="tokenizer id or path (transformers.AutoTokenizer), or 'whitespace' (no dependencies)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--messages-field", help="chat messages field: counted through the chat template")
    what.add_argument("--text-field", help="text field (default: text)")
    what.add_argument("--prompt-field", help="prompt field (with --completion-field)")
    p.add_argument("--completion-field", help="completion field (with --prompt-field)")
    p.add_argument("--add-eos", action="store_true", help="count one EOS token per text sample")
    p.add_argument("--limit", type=int, help="count only the first N samples")
    p.add_argument("--id", help="id written into the file (default: the output file name)")
    p.add_argument("-o", "--output", required=True, help="output JSON file")
    a = p.parse_args(argv)
    if a.prompt_field and not a.completion_field:
        p.error("--prompt-field needs --completion-field")
    if a.completion_field and not a.prompt_field:
        p.error("--completion-field needs --prompt-field")
    if not (a.messages_field or a.prompt_field or a.text_field):
        a.text_field = "text"
    if a.limit is not None and a.limit < 1:
        p.error("--limit must be >= 1")
    return a


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        tokenizer = load_tokenizer(args)
        records, source = load_records(args)
        lengths = lengths_of(records, args, tokenizer)
        base = os.path.basename(args.output)
        dataset_id = args.id or (base[:-5] if base.endswith(".json") else base)
        how = ("chat template of the tokenizer on field %r" % args.messages_field if args.messages_field else
               "prompt %r + completion %r" % (args.prompt_field, args.completion_field) if args.prompt_field else
               "text field %r%s" % (args.text_field, " + EOS" if args.add_eos else ""))
        doc = dataset_document(
            lengths, dataset_id, dataset_id, tokenizer.name,
            "%s, counted by tools/dataset_lengths.py on %s" % (source, datetime.date.today().isoformat()),
            "Tokens per sample: %s%s." % (how, "; first %d samples" % args.limit if args.limit else ""))
        write_atomic(args.output, json.dumps(doc, indent=1) + "\n")
    except UsageError as e:
        print("dataset_lengths: error: %s" % e, file=sys.stderr)
        return 2
    except OSError as e:
        print("dataset_lengths: error: %s" % e, file=sys.stderr)
        return 2
    s = doc["length_tokens"]
    print("%s: %d samples, tokens min %d / median %d / mean %.1f / p99 %d / max %d (%s)"
          % (args.output, doc["queries"], s["min"], s["median"], s["mean"], s["p99"], s["max"], tokenizer.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
