#!/usr/bin/env python3
"""Token lengths of Alpaca samples as torchtune 0.1 feeds them to Llama-2, written as ftcost.dataset/1.

How the preset gpu-db/datasets/alpaca-llama2.json was made (standard library only):

  python3 docs/sources/datasets/alpaca_llama2_lengths.py \
      --tokenizer tokenizer.bin --out gpu-db/datasets/alpaca-llama2.json a1k.json small.json

Inputs (public, see README.md beside this file for the commits):
  * tokenizer.bin: the Llama 2 SentencePiece vocabulary (32,000 pieces with their BPE scores) as exported by
    github.com/karpathy/llama2.c (tokenizer.bin, a copy of Meta's tokenizer.model in llama2.c's format).
  * Alpaca records (JSON lists of {instruction, input, output}): samples of tatsu-lab/alpaca.

What is counted, from torchtune @ 0217d44c2 (the commit of the README's Llama-2 table):
  * torchtune/datasets/_instruct.py InstructDataset._prepare_sample: prompt = AlpacaInstructTemplate.format(
    sample); messages = [user: prompt, assistant: output]; tokenizer.tokenize_messages(messages, max_seq_len).
  * torchtune/data/_instruct_templates.py AlpacaInstructTemplate: the two templates below.
  * torchtune/modules/tokenizers/_sentencepiece.py tokenize_messages: BOS, encode(prompt.rstrip(" ")),
    encode(output.rstrip(" ")) with its leading whitespace trimmed (encode("\n" + s) minus encode("\n")),
    EOS. Truncation to max_seq_len happens in the estimate (--max-length), not here.

The encoder is SentencePiece BPE as llama2.c's run.c encode() implements it (dummy prefix, code points looked
up in the vocabulary, byte fallback to <0xNN> pieces, then repeatedly the highest-scoring adjacent merge,
leftmost first), with a heap instead of run.c's quadratic scan.
"""

import argparse
import heapq
import json
import os
import struct
import sys
import tempfile

PROMPT_INPUT = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n"
)
PROMPT_NO_INPUT = (
    "Below is an instruction that describes a task. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Response:\n"
)


class Tokenizer:
    def __init__(self, path, vocab_size=32000):
        with open(path, "rb") as f:
            data = f.read()
        (self.max_token_length,) = struct.unpack_from("<i", data, 0)
        off = 4
        self.pieces, self.scores = [], []
        for _ in range(vocab_size):
            score, n = struct.unpack_from("<fi", data, off)
            off += 8
            self.pieces.append(data[off : off + n])
            off += n
            self.scores.append(score)
        self.ids = {}
        for i, p in enumerate(self.pieces):
            self.ids.setdefault(p, i)

    def encode(self, text):
        """Token ids of text without BOS/EOS (run.c encode with bos=eos=0)."""
        if not text:
            return []
        toks = [self.ids[b" "]]
        for ch in text:
            b = ch.encode("utf-8")
            i = self.ids.get(b)
            if i is not None:
                toks.append(i)
            else:
                toks.extend(x + 3 for x in b)  # byte fallback: <0x00> is id 3
        n = len(toks)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        alive = [True] * n
        heap = []

        def push(i):
            j = nxt[i]
            if j < n:
                m = self.ids.get(self.pieces[toks[i]] + self.pieces[toks[j]])
                if m is not None:
                    heapq.heappush(heap, (-self.scores[m], i, toks[i], toks[j], m))

        for i in range(n - 1):
            push(i)
        while heap:
            _, i, a, b, m = heapq.heappop(heap)
            j = nxt[i] if alive[i] else n
            if not alive[i] or j >= n or toks[i] != a or toks[j] != b:
                continue  # stale candidate
            toks[i] = m
            alive[j] = False
            nxt[i] = nxt[j]
            if nxt[j] < n:
                prev[nxt[j]] = i
            if prev[i] >= 0:
                push(prev[i])
            push(i)
        return [t for t, a in zip(toks, alive) if a]


def sample_length(tok, rec, nl_len):
    if rec.get("input"):
        prompt = PROMPT_INPUT.format(instruction=rec["instruction"], input=rec["input"])
    else:
        prompt = PROMPT_NO_INPUT.format(instruction=rec["instruction"])
    n_prompt = len(tok.encode(prompt.rstrip(" ")))
    out = rec["output"].rstrip(" ")
    n_out = len(tok.encode("\n" + out)) - nl_len if out else 0
    return 1 + n_prompt + n_out + 1  # BOS ... EOS


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("records", nargs="+")
    a = ap.parse_args()
    tok = Tokenizer(a.tokenizer)
    nl_len = len(tok.encode("\n"))
    seen, lengths = set(), []
    for path in a.records:
        with open(path, encoding="utf-8") as f:
            for rec in json.load(f):
                key = (rec["instruction"], rec.get("input", ""), rec["output"])
                if key in seen:
                    continue  # the two samples may share records
                seen.add(key)
                lengths.append(sample_length(tok, rec, nl_len))
    lengths.sort()
    n = len(lengths)
    def q(p):
        return lengths[min(n - 1, int(p * n))]

    doc = {
        "schema": "ftcost.dataset/1",
        "id": "alpaca-llama2",
        "display_name": "Alpaca 52K (Llama-2 tokens, torchtune template)",
        "queries": 52002,
        "queries_published": 52002,
        "length_tokens": {
            "min": lengths[0],
            "median": q(0.5),
            "mean": round(sum(lengths) / n, 1),
            "p90": q(0.9),
            "p99": q(0.99),
            "max": lengths[-1],
        },
        # A preset's lengths are a quantile table (db check): the empirical quantiles every 1%, and the tail.
        "quantiles": [[0.0, lengths[0]]]
        + [[u / 100, q(u / 100)] for u in range(1, 100)]
        + [[0.995, q(0.995)], [0.999, q(0.999)], [1.0, lengths[-1]]],
        "tokenizer": "meta-llama/Llama-2-7b-hf (SentencePiece, 32,000 pieces; llama2.c tokenizer.bin)",
        "source": (
            "Token lengths of %d distinct records of tatsu-lab/alpaca (alpaca_data.json, 52,002 records) "
            "found in two public subsets (docs/sources/datasets/README.md), counted by "
            "docs/sources/datasets/alpaca_llama2_lengths.py as torchtune 0.1 tokenizes them" % n
        ),
        "notes": (
            "Tokens per sample as torchtune @ 0217d44c2 feeds them to Llama-2: BOS + AlpacaInstructTemplate "
            "prompt + output + EOS (InstructDataset._prepare_sample, SentencePieceTokenizer.tokenize_messages). "
            "The template is included: template_tokens is 0. Not truncated: torchtune's alpaca_dataset "
            "truncates to max_seq_len 512 (--max-length 512). The lengths are a sample of %d of the 52,002 "
            "records, not the whole set [assumed representative]." % n
        ),
        "template_tokens": 0,
    }
    d = os.path.dirname(os.path.abspath(a.out))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".alpaca-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)
    print("%d samples: min %d median %d mean %.1f p90 %d p99 %d max %d" % (
        n, lengths[0], q(0.5), sum(lengths) / n, q(0.9), q(0.99), lengths[-1]), file=sys.stderr)


if __name__ == "__main__":
    main()
