#!/usr/bin/env python3
"""Build gpu-db/ (GPU spec sheets, prices, model presets, datasets) from the reference data.

The reference folder (by default docs/sources/reference in the repository; paper.md one folder up) holds:

    gpu-specs.json      GPU spec records with their sources
    cloud-prices.json   dated cloud GPU prices, one record per offer
    models/*.json       Hugging Face config.json copies, each with a `_source` object
    paper.md            arXiv 2408.04693 (dataset statistics, the paper's CUDO prices)

What this script writes under gpu-db/ (one pretty-printed JSON file per thing, file name = id):

    gpus/<id>.json           ftcost.gpu/1       the reference record verbatim, "schema" key first, plus
                                                `chosen_values` (CHOSEN below) where its sources disagree
    prices/<provider>.json   ftcost.prices/1    offers of one provider, in reference order
    models/<id>.json         ftcost.model/1     config (minus `_source`) + published parameter counts
    datasets/<id>.json       ftcost.dataset/1   CS15K and MATH14K length statistics (paper + its repo)

The formats are documented in gpu-db/schema/*.schema.json (hand-written, not generated).
What the reference files do not carry (published parameter counts, display names, dataset
statistics, which value was chosen where GPU sources disagree and why) is kept in the tables below,
each with its source.

The output is deterministic: running the script twice gives byte-identical files. It never deletes
anything; files in the generated folders that it did not write are listed as warnings.

Usage:
    python3 tools/import_reference.py [--reference DIR] [--out DIR] [--check]

    --check   write nothing; exit 1 if any generated file is missing or differs from its content
"""

import argparse
import json
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = REPO / "docs" / "sources" / "reference"
DEFAULT_OUT = REPO / "gpu-db"

GPU_SCHEMA = "ftcost.gpu/1"
PRICES_SCHEMA = "ftcost.prices/1"
MODEL_SCHEMA = "ftcost.model/1"
DATASET_SCHEMA = "ftcost.dataset/1"

DATE_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")

# --------------------------------------------------------------------------------------------
# Models: reference file stem -> preset metadata. `total` / `active` are the parameter counts the
# model's authors publish (model card, paper or release post), not counts derived from the config.
# `active` is None for models without routed experts. `top_k` (optional) is the number of experts
# per token the published active count refers to, where it differs from the config's routing.
# --------------------------------------------------------------------------------------------
B = 1_000_000_000
M = 1_000_000

MODELS = {
    "BlackMamba-2.8B": dict(
        id="blackmamba-2.8b", display_name="BlackMamba-2.8B", family="blackmamba", kind="hybrid",
        total=2.8 * B, active=630 * M, top_k=1,
        overrides={"top_k": 2, "reason": "The paper's 'sparse' BlackMamba fine-tuning routes top-2 of 8 experts (paper.md 1.1; its scripts set topk 2 / 8). The config's topk 8 was set by the paper's authors for dense runs; pretraining used top-1. --top-k overrides this."},
        source="Zyphra, 'BlackMamba: Mixture of Experts for State-Space Models', arXiv 2402.01771 "
               "(https://arxiv.org/abs/2402.01771): BlackMamba 630M/2.8B (active/total); "
               "arXiv 2408.04693 Table I: 2.8B",
        note="Mamba blocks alternating with 8-expert MoE blocks (no attention). The active count is for "
             "top-1 routing, as pretrained. The config is the paper's copy with topk 8 (its dense "
             "fine-tuning, all experts active); the paper's sparse runs use top-2. Only GLU experts "
             "(swiglu: true, 3 matrices of 1472 x 3872) reproduce the 2.8B total."),
    "DeepSeek-V2-Lite": dict(
        id="deepseek-v2-lite", display_name="DeepSeek-V2-Lite", family="deepseek-v2", kind="moe",
        total=15.7 * B, active=2.4 * B,
        source="DeepSeek-AI, 'DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language "
               "Model', arXiv 2405.04434 (https://arxiv.org/abs/2405.04434), DeepSeek-V2-Lite: 15.7B total, "
               "2.4B activated per token; same on the model card "
               "https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite",
        note="Counting every weight of this config gives about 2.66B active; the published 2.4B appears "
             "to leave out the input embedding (102400 x 2048 = 0.21B)."),
    "Jamba-v0.1": dict(
        id="jamba-v0.1", display_name="Jamba-v0.1", family="jamba", kind="hybrid",
        total=51.574 * B, active=12 * B,
        source="AI21 Labs model card https://huggingface.co/ai21labs/Jamba-v0.1 ('12B active parameters and "
               "a total of 52B parameters across all experts'); Jamba paper arXiv 2403.19887; 51.574B: "
               "metadata.total_size / 2 of the shipped model.safetensors.index.json of ai21labs/Jamba-v0.1, as "
               "a public parameter-count test quotes it ('ai21labs_Jamba-v0.1', 51.574, index id 71352361367); "
               "the card's 52B is that rounded",
        note="Attention + Mamba + MoE hybrid: 4 attention and 28 Mamba layers; MoE (16 experts, top-2) "
             "on every second layer."),
    "Llama-2-13b-hf": dict(
        id="llama-2-13b", display_name="Llama-2-13B", family="llama-2", kind="dense",
        total=13.0 * B, active=None,
        source="Meta, 'Llama 2: Open Foundation and Fine-Tuned Chat Models', arXiv 2307.09288 "
               "(https://arxiv.org/abs/2307.09288): 13B; model page "
               "https://huggingface.co/meta-llama/Llama-2-13b-hf (safetensors count 13B)",
        note=None),
    "Llama-2-70b-hf": dict(
        id="llama-2-70b", display_name="Llama-2-70B", family="llama-2", kind="dense",
        total=69 * B, active=None,
        source="Model page https://huggingface.co/meta-llama/Llama-2-70b-hf (safetensors count '69B "
               "params'); named 70B in Meta's Llama 2 paper arXiv 2307.09288",
        note=None),
    "Llama-2-7b-hf": dict(
        id="llama-2-7b", display_name="Llama-2-7B", family="llama-2", kind="dense",
        total=6.74 * B, active=None,
        source="Model page https://huggingface.co/meta-llama/Llama-2-7b-hf (safetensors count '6.74B "
               "params'); named 7B in Meta's Llama 2 paper arXiv 2307.09288",
        note=None),
    "Meta-Llama-3.1-405B": dict(
        id="llama-3.1-405b", display_name="Llama-3.1-405B", family="llama-3.1", kind="dense",
        total=406 * B, active=None,
        source="Model page https://huggingface.co/meta-llama/Llama-3.1-405B (safetensors count '406B "
               "params'); named 405B in Meta's 'The Llama 3 Herd of Models', arXiv 2407.21783",
        note="With 8 KV heads as in this config; the launch-day upload's 16 KV heads would add weights "
             "(see config_source.notes)."),
    "Meta-Llama-3.1-70B": dict(
        id="llama-3.1-70b", display_name="Llama-3.1-70B", family="llama-3.1", kind="dense",
        total=70.6 * B, active=None,
        source="Model page https://huggingface.co/meta-llama/Llama-3.1-70B (safetensors count '70.6B "
               "params'); arXiv 2407.21783",
        note=None),
    "Meta-Llama-3.1-8B": dict(
        id="llama-3.1-8b", display_name="Llama-3.1-8B", family="llama-3.1", kind="dense",
        total=8.03 * B, active=None,
        source="Model page https://huggingface.co/meta-llama/Llama-3.1-8B (safetensors count '8.03B "
               "params'); arXiv 2407.21783",
        note=None),
    "Mistral-7B-v0.1": dict(
        id="mistral-7b", display_name="Mistral-7B-v0.1", family="mistral", kind="dense",
        total=7.24 * B, active=None,
        source="Model card https://huggingface.co/mistralai/Mistral-7B-v0.1 ('7.24B params'); Mistral AI "
               "announcement https://mistral.ai/news/announcing-mistral-7b/ calls it a 7.3B model",
        note=None),
    "Mixtral-8x22B-v0.1": dict(
        id="mixtral-8x22b", display_name="Mixtral-8x22B", family="mixtral", kind="moe",
        total=141 * B, active=39 * B,
        source="Mistral AI, 'Cheaper, Better, Faster, Stronger' https://mistral.ai/news/mixtral-8x22b/ "
               "('39B active parameters out of 141B')",
        note=None),
    "Mixtral-8x7B-v0.1": dict(
        id="mixtral-8x7b", display_name="Mixtral-8x7B", family="mixtral", kind="moe",
        total=46.7 * B, active=12.9 * B,
        source="Mistral AI, 'Mixtral of experts' https://mistral.ai/news/mixtral-of-experts/ ('46.7B total "
               "parameters but only uses 12.9B parameters per token'); arXiv 2401.04088",
        note="arXiv 2408.04693 Table I rounds the total to 47B; its 4-bit QLoRA footprint is 23.35 GB."),
    "OLMoE-1B-7B-0924": dict(
        id="olmoe-1b-7b", display_name="OLMoE-1B-7B-0924", family="olmoe", kind="moe",
        total=6.9 * B, active=1.3 * B,
        source="Allen AI, 'OLMoE: Open Mixture-of-Experts Language Models', arXiv 2409.02060 "
               "(https://arxiv.org/abs/2409.02060): 6.9B total, 1.3B active; model card "
               "https://huggingface.co/allenai/OLMoE-1B-7B-0924",
        note=None),
    "Phi-3.5-MoE-instruct": dict(
        id="phi-3.5-moe", display_name="Phi-3.5-MoE-instruct", family="phi-3.5", kind="moe",
        total=41.9 * B, active=6.6 * B,
        source="Model card https://huggingface.co/microsoft/Phi-3.5-MoE-instruct ('16x3.8B parameters with "
               "6.6B active parameters'; safetensors count 41.9B); Phi-3 technical report arXiv 2404.14219",
        note="Only an instruct model was released (no base)."),
    "Qwen1.5-MoE-A2.7B": dict(
        id="qwen1.5-moe-a2.7b", display_name="Qwen1.5-MoE-A2.7B", family="qwen1.5", kind="moe",
        total=14.3 * B, active=2.7 * B,
        source="Model card https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B and Qwen blog "
               "https://qwenlm.github.io/blog/qwen-moe/ (14.3B total, 2.7B activated)",
        note=None),
    "Qwen2-57B-A14B": dict(
        id="qwen2-57b-a14b", display_name="Qwen2-57B-A14B", family="qwen2", kind="moe",
        total=57.4 * B, active=14 * B,
        source="Model page https://huggingface.co/Qwen/Qwen2-57B-A14B (safetensors count '57.4B params'); "
               "Qwen2 technical report arXiv 2407.10671 (57B total, 14B activated)",
        note=None),
    "Qwen2.5-7B": dict(
        id="qwen2.5-7b", display_name="Qwen2.5-7B", family="qwen2.5", kind="dense",
        total=7.61 * B, active=None,
        source="Model card https://huggingface.co/Qwen/Qwen2.5-7B ('Number of Parameters: 7.61B; "
               "Non-Embedding: 6.53B')",
        note=None),
    "Qwen2.5-14B": dict(
        id="qwen2.5-14b", display_name="Qwen2.5-14B", family="qwen2.5", kind="dense",
        total=14.7 * B, active=None,
        source="Model card https://huggingface.co/Qwen/Qwen2.5-14B ('Number of Parameters: 14.7B; "
               "Number of Paramaters (Non-Embedding): 13.1B')",
        note=None),
    "Qwen2.5-32B": dict(
        id="qwen2.5-32b", display_name="Qwen2.5-32B", family="qwen2.5", kind="dense",
        total=32.5 * B, active=None,
        source="Model card https://huggingface.co/Qwen/Qwen2.5-32B ('Number of Parameters: 32.5B; "
               "Number of Paramaters (Non-Embedding): 31.0B')",
        note=None),
    "Qwen2.5-72B": dict(
        id="qwen2.5-72b", display_name="Qwen2.5-72B", family="qwen2.5", kind="dense",
        total=72.7 * B, active=None,
        source="Model card https://huggingface.co/Qwen/Qwen2.5-72B ('Number of Parameters: 72.7B; "
               "Number of Paramaters (Non-Embedding): 70.0B')",
        note=None),
    "Qwen3-8B": dict(
        id="qwen3-8b", display_name="Qwen3-8B", family="qwen3", kind="dense",
        total=8.2 * B, active=None,
        source="Model card https://huggingface.co/Qwen/Qwen3-8B ('Number of Parameters: 8.2B')",
        note=None),
    "Llama-3.2-3B": dict(
        id="llama-3.2-3b", display_name="Llama-3.2-3B", family="llama-3.2", kind="dense",
        total=3.21 * B, active=None,
        source="Model page https://huggingface.co/meta-llama/Llama-3.2-3B (safetensors count '3.21B params')",
        note="tied input/output embeddings (tie_word_embeddings true): 3.21B counts the shared matrix once"),
    "Llama-3.3-70B-Instruct": dict(
        id="llama-3.3-70b", display_name="Llama-3.3-70B-Instruct", family="llama-3.3", kind="dense",
        total=70.6 * B, active=None,
        source="Model page https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct (safetensors count '70.6B "
               "params')",
        note="Only an instruct model was released (no base)."),
    "Qwen-7B": dict(
        id="qwen-7b", display_name="Qwen-7B (Qwen 1.0)", family="qwen", kind="dense",
        total=7720000000, active=None,
        source="Model page https://huggingface.co/Qwen/Qwen-7B (safetensors '7.72B params')",
        note="Read with the checkpoint's own modeling_qwen.py (custom_code, QWenLMHeadModel): intermediate_size 22016 counts both halves of the gated MLP (w1 and w2 are 11008 wide); c_attn has a bias."),
    "phi-2": dict(
        id="phi-2", display_name="Phi-2", family="phi", kind="dense",
        total=2780000000, active=None,
        source="Model card https://huggingface.co/microsoft/phi-2 ('a Transformer with 2.7 billion parameters'; the page's safetensors count '2.78B params')",
        note="The card's '2.7 billion' is truncated, not rounded (2.78B): total_params holds the page's safetensors count. Non-gated MLP (fc1 -> gelu_new -> fc2), parallel attention and MLP after one LayerNorm, biases everywhere incl. lm_head."),
    "gemma-3-1b-pt": dict(
        id="gemma-3-1b", display_name="Gemma-3-1B", family="gemma-3", kind="dense",
        total=1000000000, active=None,
        source="Model card https://huggingface.co/google/gemma-3-1b-pt ('1B')",
        note="Text-only checkpoint (Gemma3ForCausalLM, model_type gemma3_text): no vision tower. Embeddings tied."),
    "Llama-4-Scout-17B-16E": dict(
        id="llama-4-scout", display_name="Llama-4-Scout-17B-16E", family="llama-4", kind="moe",
        total=109 * B, active=17 * B,
        source="Model card https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E ('Llama 4 Scout (17Bx16E) ... "
               "17B (Activated) 109B (Total)')",
        note="The text decoder (parse_llama4, 107,769,861,120) plus the vision tower and projector counted from "
             "vision_config (llama4_vision_params: 871,932,416, frozen and not priced): 108,641,793,536, the Hub's "
             "count to the parameter. Active: one routed expert + the shared expert per layer, with the embeddings."),
    "OLMo-2-1124-7B": dict(
        id="olmo-2-7b", display_name="OLMo-2-1124-7B", family="olmo2", kind="dense",
        total=7.3 * B, active=None,
        source="Allen AI, '2 OLMo 2 Furious', arXiv 2501.00656 (named OLMo 2 7B); total_params is the exact count "
               "below to two significant digits (the paper's '7B' names the size class)",
        note="Post-norm layers (post_attention_layernorm, post_feedforward_layernorm) and q/k RMSNorms over the whole "
             "projection (Olmo2Attention)."),
    "TinyLlama-1.1B-Chat-v1.0": dict(
        id="tinyllama-1.1b", display_name="TinyLlama-1.1B-Chat-v1.0", family="llama-2", kind="dense",
        total=1.1 * B, active=None,
        source="Model page https://huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0 (safetensors count '1.1B "
               "params'); TinyLlama paper arXiv 2401.02385",
        note=None),
    "CodeLlama-34b-hf": dict(
        id="codellama-34b", display_name="CodeLlama-34B", family="llama-2", kind="dense",
        total=33.7 * B, active=None,
        source="Model page https://huggingface.co/codellama/CodeLlama-34b-hf (safetensors count '33.7B params'); "
               "named 34B in Meta's Code Llama paper arXiv 2308.12950",
        note=None),
    "Qwen3-30B-A3B": dict(
        id="qwen3-30b-a3b", display_name="Qwen3-30B-A3B", family="qwen3", kind="moe",
        total=30.5 * B, active=3.3 * B,
        source="Model card https://huggingface.co/Qwen/Qwen3-30B-A3B ('Number of Parameters: 30.5B in total "
               "and 3.3B activated')",
        note=None),
    "Qwen3-235B-A22B": dict(
        id="qwen3-235b-a22b", display_name="Qwen3-235B-A22B", family="qwen3", kind="moe",
        total=235 * B, active=22 * B,
        source="Model card https://huggingface.co/Qwen/Qwen3-235B-A22B ('Number of Parameters: 235B in total "
               "and 22B activated'); Qwen3 technical report arXiv 2505.09388",
        note="94 layers, every one MoE: 128 routed experts of 1,536, 8 per token, no shared expert."),
    "dbrx-base": dict(
        id="dbrx-base", display_name="DBRX Base", family="dbrx", kind="moe",
        total=132 * B, active=36 * B,
        source="Databricks, 'Introducing DBRX' https://www.databricks.com/blog/introducing-dbrx-new-state-art-"
               "open-llm ('132B total parameters of which 36B are active on any input')",
        note=None),
    "deepseek-moe-16b-base": dict(
        id="deepseek-moe-16b", display_name="DeepSeekMoE-16B-Base", family="deepseek-moe", kind="moe",
        total=16.4 * B, active=2.8 * B,
        source="DeepSeek-AI, 'DeepSeekMoE', arXiv 2401.06066 (https://arxiv.org/abs/2401.06066): "
               "DeepSeekMoE 16B, 16.4B total, 2.8B activated; model card "
               "https://huggingface.co/deepseek-ai/deepseek-moe-16b-base",
        note=None),
    "gemma-2-9b": dict(
        id="gemma-2-9b", display_name="Gemma-2-9B", family="gemma-2", kind="dense",
        total=9.24 * B, active=None,
        source="Model page https://huggingface.co/google/gemma-2-9b (safetensors count '9.24B params'); "
               "Gemma 2 report arXiv 2408.00118",
        note="Input and output embeddings are tied (Gemma default; not listed in the config)."),
    "gpt-oss-120b": dict(
        id="gpt-oss-120b", display_name="gpt-oss-120b", family="gpt-oss", kind="moe",
        total=116.83 * B, active=5.13 * B,
        source="OpenAI, 'gpt-oss-120b & gpt-oss-20b Model Card', arXiv 2508.10925 "
               "(https://openai.com/index/gpt-oss-model-card/): 116.83B total, 5.13B active per token",
        note="The published active count matches this config's weights without the input embedding "
             "(201088 x 2880 = 0.58B). "
             "Released with MXFP4 expert weights (see config.quantization_config)."),
    "gpt-oss-20b": dict(
        id="gpt-oss-20b", display_name="gpt-oss-20b", family="gpt-oss", kind="moe",
        total=20.91 * B, active=3.61 * B,
        source="OpenAI, 'gpt-oss-120b & gpt-oss-20b Model Card', arXiv 2508.10925 "
               "(https://openai.com/index/gpt-oss-model-card/): 20.91B total, 3.61B active per token",
        note="The published active count matches this config's weights without the input embedding "
             "(201088 x 2880 = 0.58B). "
             "Released with MXFP4 expert weights (see config.quantization_config)."),
    "mamba-2.8b": dict(
        id="mamba-2.8b", display_name="Mamba-2.8B", family="mamba", kind="mamba",
        total=2.8 * B, active=None,
        source="Gu & Dao, 'Mamba: Linear-Time Sequence Modeling with Selective State Spaces', arXiv "
               "2312.00752 (https://arxiv.org/abs/2312.00752): 2.8B model; "
               "https://huggingface.co/state-spaces/mamba-2.8b",
        note="Nominal size; the weights of this config (d_model 2560, 64 layers, tied embeddings) "
             "come to about 2.77B. The config is in mamba_ssm format; the transformers-format port "
             "is kept in config._hf_transformers_variant."),
}

# --------------------------------------------------------------------------------------------
# GPUs: where the sources of a record disagree (its `disagreements` text, kept verbatim), the value
# chosen and why, as `chosen_values` entries {field, value, alternatives, why}. `value` must equal
# the record's value at `field` (checked here and by `ftcost db check`), so a changed reference is
# noticed; every record with `disagreements` needs at least one entry.
# --------------------------------------------------------------------------------------------
def chosen(field, value, alternatives, why):
    return dict(field=field, value=value, alternatives=alternatives, why=why)


CHOSEN = {
    "h100-sxm5-96gb": [
        chosen("dense_tflops.bf16", 886.8,
               ["989.4 (H100 SXM5 at 700 W; torchtitan's MFU denominator, which its footnote calls too high)",
                "835.5 (H100 NVL at 400 W, the lower bound torchtitan names)",
                "893.8 (a power law through the same two datasheet points)"],
               "Assumed, not published: NVIDIA rates the same 132-SM die at 989.4 TFLOPS / 700 W (SXM5) and "
               "835.5 / 400 W (NVL); the peak is SMs x clock, so the 500 W part's clock is interpolated "
               "linearly in power (1640 MHz). The power-law alternative differs by 0.8%; the lower value is "
               "kept. A calibration on this part replaces it."),
        chosen("dense_tflops.fp16", 886.8,
               ["989.4 (H100 SXM5 at 700 W)", "835.5 (H100 NVL at 400 W)"],
               "As for bf16: the same tensor cores at the same interpolated clock."),
    ],
    "h20": [
        chosen("memory_bandwidth_gbps", 4000,
               ["4022 (github:citsjtu2020/LLM-Prof hardware_spec.md, no source given)"],
               "The H20 listing (Tom's Hardware's table, TweakTown) prints 4.0 TB/s; 4022 has no stated source."),
    ],
    "a10": [
        chosen("memory_gib", 24,
               ["28 and 40 (github:cli99/llm-analysis gpu_configs a10-pcie-28gb.json, a10-pcie-40gb.json)"],
               "NVIDIA's A10 datasheet lists one model with 24 GB GDDR6, and public nvidia-smi printouts show "
               "23028 MiB; the llm-analysis files describe no product."),
    ],
    "a10g": [
        chosen("dense_tflops.bf16", 70,
               ["125 (github:ritikmahy5/ftune gpus.yaml: the A10 datasheet value)"],
               "NVIDIA publishes no A10G datasheet. llm-analysis (a10g-pcie-24gb.json) gives 70 dense, the "
               "GeForce-like FP32-accumulate rate (half of the A10's 125); ftune's 125 is the A10 datasheet "
               "value copied over. 70 is also the lower, safer number for time and cost estimates."),
        chosen("dense_tflops.fp16", 70,
               ["125 (github:ritikmahy5/ftune gpus.yaml: the A10 datasheet value)"],
               "As for bf16: the A10G's FP32-accumulate tensor rate; 125 is the A10's datasheet value."),
        chosen("dense_tflops.fp32", 35,
               ["31.52 (the 72-SM A10 figure: 72 x 256 FLOP per clock x 1710 MHz = 31.5)", "31.2 (ftune, the A10 datasheet value)"],
               "The file's own 80 SMs x 256 FP32 FLOP per clock per SM (GA102: 128 FP32 lanes, FMA = 2 FLOP) x 1710 MHz boost = 35.0 TFLOPS, as Baseten's A10 vs A10G table gives; 31.52 matches 72 SMs (the A10), not this part. int8_tops 140 is already 2 x fp16 (70), as for every Ampere tensor core."),
    ],
    "b200": [
        chosen("dense_tflops.fp32", 75,
               ["80 (github:stas00/ml-engineering TFLOPS table, derived from GB200)"],
               "NVIDIA's HGX B200 sheet gives 600 TFLOPS FP32 for 8 GPUs = 75 per GPU; 80 is the GB200 "
               "(higher-power) figure."),
        chosen("memory_gib", 180,
               ["192 (8 HBM3e stacks of 24 GiB physically present)"],
               "180 GB is what NVIDIA lists as enabled and what nvidia-smi shows (183359 MiB = 179.1 GiB); "
               "192 GB is the physical capacity, not usable."),
        chosen("sm_count", None,
               ["148 (third-party reports)"],
               "NVIDIA does not publish the SM count; null keeps an unverified number out of the estimates."),
    ],
    "b300": [
        chosen("dense_tflops.int8_tops", None,
               ["4500 (stas00 table, Glenn Lockwood: the B200 value)",
                "about 125 (HGX B300 sheet: 2 POPS sparse for 8 GPUs)"],
               "The HGX B300 sheet cuts INT8 far below B200 and the secondary sources repeat the B200 value; "
               "with no consistent figure the field is null (INT8 is not used by the estimates)."),
        chosen("dense_tflops.fp4", 13125,
               ["12600 (stas00 table)", "15000 (NVFP4 marketing figure)"],
               "HGX B300 sheet: 105 PFLOPS dense FP4 for 8 GPUs = 13125 per GPU; Glenn Lockwood gives the same."),
        chosen("tdp_w", 1100,
               ["1400 (GB300 superchip configurations)"],
               "1100 W is the HGX B300 module power; 1400 W applies to GB300 NVL72 boards."),
    ],
    "gaudi3": [
        chosen("dense_tflops.bf16", 1835,
               ["1677 (github:stas00/ml-engineering: at the 1600 MHz MME clock of shipping parts)"],
               "1835 is Intel's whitepaper peak (MME at 1750 MHz), the vendor figure used for every other GPU "
               "here; the lower shipping-clock figure is noted in sparsity_note and disagreements."),
        chosen("dense_tflops.fp8", 1835,
               ["1677 (github:stas00/ml-engineering: at the 1600 MHz MME clock)"],
               "As for bf16: Intel's whitepaper peak."),
        chosen("dense_tflops.fp32", None,
               ["229 (Intel / stas00 table: the MME (matrix engine) FP32 rate, not the vector rate this field holds)", "~14.3 (derived: Intel's BF16 vector 28.7 TFLOPS, Hot Chips 2024, x 64/128, the TPC's FP32:BF16 lanes per cycle in Habana's TPC User Guide; not published by Intel)"],
               "The schema defines fp32 as the CUDA-core / vector-unit rate (gpu.schema.json dense_tflops.fp32); the 229 held here before is the matrix engine's FP32 rate. Intel publishes only the BF16 vector rate (28.7 TFLOPS, Hot Chips 2024 'Intel Gaudi 3 Spec' table), so the FP32 vector rate stays null rather than a derived number; fine-tuning estimates use the matrix peaks (bf16/fp8)."),
    ],
    "gaudi2": [
        chosen("memory_bandwidth_gbps", 2450,
               ["2460 (Intel's Hot Chips 2024 Gaudi 3 deck, 'Gaudi Product Generations' table: 2.46 TB/s; stas00 memory table)"],
               "2.45 TB/s is Intel's Gaudi 2 white paper / product figure (the first source listed); the 2.46 of a later slide deck is the same memory rounded differently. The lower figure is kept, as for every other GPU here (the vendor's own spec sheet)."),
    ],
    "gb200": [
        chosen("interconnect.pcie_gen", 5,
               ["6 (held here before; Gen6 is B300's host interface)"],
               "The GB200's GPU is the B200 chip, whose host interface is PCIe Gen5 (HGX B200; gpus/b200.json): the two files must agree. In GB200 the GPU reaches the Grace CPU over NVLink-C2C, so this PCIe generation does not carry host traffic (notes)."),
    ],
    "gh200-144gb": [
        chosen("memory_gib", 144,
               ["141 (github:stas00/ml-engineering memory table)"],
               "NVIDIA markets the HBM3e GH200 with 144 GB; 141 GB is the H200's capacity, which stas00's table "
               "lists as usable."),
        chosen("memory_bandwidth_gbps", 4900,
               ["4800 (github:stas00/ml-engineering memory table)"],
               "4.9 TB/s is NVIDIA's GH200 (HBM3e) figure; 4.8 TB/s is the H200's."),
    ],
    "h100-nvl": [
        chosen("memory_gib", 94,
               ["188 (2023 launch material: the pair of cards)"],
               "The current datasheet and stas00 give 94 GB per GPU; 188 GB was the NVLink-bridged pair."),
        chosen("memory_bandwidth_gbps", 3900,
               ["7800 (launch material, per pair)", "4800 (gpu.blog estimator table)"],
               "NVIDIA's current datasheet: 3.9 TB/s per GPU; 7.8 TB/s is the pair; 4.8 TB/s is the H200 NVL's."),
        chosen("tdp_w", 400,
               ["350 (lower end of the configurable range)"],
               "The datasheet gives 350-400 W configurable; the maximum is the board power."),
    ],
    "h100-sxm5-80gb": [
        chosen("boost_clock_mhz", 1980,
               ["1830 (the clock the tensor-core peak corresponds to, per stas00)"],
               "1980 MHz is the published maximum SM boost clock; the dense peaks stored here are NVIDIA's "
               "figures and do not depend on this field."),
        chosen("memory_bandwidth_gbps", 3350,
               ["3000 (some estimator tables, e.g. gpu.blog)"],
               "NVIDIA's datasheet, stas00 and llm-analysis all give 3.35 TB/s for the SXM5 part."),
    ],
    "mi250x": [
        chosen("memory_bandwidth_gbps", 3276.8,
               ["3200 (github:cli99/llm-analysis mi250x-128gb.json)"],
               "AMD's product page: 3.2768 TB/s (8 HBM2e stacks x 409.6 GB/s); 3200 is a rounded value."),
    ],
    "rtx-5090": [
        chosen("dense_tflops.bf16", 209.5,
               ["419 (dense with FP16 accumulate)", "838 (marketing figure: sparse, FP16 accumulate)"],
               "Training accumulates in FP32, which GeForce cards run at half rate: 419 / 2 = 209.5 (Blackwell "
               "whitepaper appendix, as recorded in the reference; disagreements asks to re-check it)."),
        chosen("dense_tflops.fp16", 209.5,
               ["419 (dense with FP16 accumulate)"],
               "As for bf16: the FP32-accumulate rate that training uses."),
    ],
    "t4": [
        chosen("memory_bandwidth_gbps", 320,
               ["300 (ftune gpus.yaml)", "298 (benchmark_lib)"],
               "NVIDIA's T4 datasheet: 320+ GB/s (256-bit GDDR6 at 10 Gbps = 320 GB/s)."),
    ],
    "v100-sxm2-16gb": [
        chosen("memory_gib", 16,
               ["32 (github:cli99/llm-analysis v100-sxm-16gb.json: a copy error)"],
               "The 16 GB SKU has 16 GB HBM2 (NVIDIA datasheet); the 32 GB part is v100-sxm2-32gb."),
    ],
}

# --------------------------------------------------------------------------------------------
# Datasets: arXiv 2408.04693 Table II (query counts, medians) and the Fig. 2 histogram data of
# the paper's repository, as summarised in paper.md section 1.3. The `evidence` strings must
# appear in paper.md, so that a changed reference is noticed.
# --------------------------------------------------------------------------------------------
TOKENIZER = ("Mixtral-8x7B / Mistral SentencePiece tokenizer (32,000-token vocabulary), "
             "assumed: the paper's profiling model")
TOKENIZER_NOTE = ("The reference does not name the tokenizer behind the Fig. 2 histogram; the Mixtral "
                  "tokenizer (the paper's profiling model, LLaMA-Factory template 'mistral') is "
                  "assumed. BlackMamba's GPT-NeoX tokenizer gives different counts.")

# Prompt-template tokens the paper's pipeline adds to every query (used by the core's padding model).
TEMPLATE_TOKENS = 80
TEMPLATE_TOKENS_NOTE = ("Tokens the paper's training pipeline adds to every sample beyond the histogram lengths "
                        "(prompt template and instruction wrapper of LLaMA-Factory / LLM-Adapters). Inferred, not "
                        "fitted: the paper's A40 step time at batch 1 on this data (paper.md 2.4: CS 2.93 s, MATH "
                        "2.99 s for Mixtral) exceeds its 128-token profiling step (2.87 s, 2.3) by what 67-94 more "
                        "tokens cost on the S1->S10 slope, while the histogram means are 100 and 187; 80 is the "
                        "rounded middle. Override with --template-tokens.")

DATASETS = [
    dict(
        schema=DATASET_SCHEMA, id="cs15k", display_name="Commonsense 15K (LLM-Adapters)",
        queries=15119, queries_published=15000,
        length_tokens=dict(min=42, median=79, mean=100, p90=171, p99=318, max=512),
        quantiles=[[0.0, 42], [0.5, 79], [0.9, 171], [0.99, 318], [1.0, 512]],
        tokenizer=TOKENIZER,
        source="arXiv 2408.04693 Table II (15K queries, median 79) and Fig. 2 histogram data from "
               "github.com/stsxxx/finetune (15,119 samples, 42-512 tokens, mean ~100, p90 171, p99 318)",
        notes="Fine-tuning set of the paper (common sense). A query is a prompt joined with its "
              "ground-truth answer; lengths are tokens per query. The mean is approximate. The "
              "histogram stops at 512, so the maximum may be the histogram's edge rather than the "
              "longest query. " + TOKENIZER_NOTE,
        template_tokens=TEMPLATE_TOKENS,
        template_tokens_note=TEMPLATE_TOKENS_NOTE,
        evidence=["15,119 samples", "42–512", "p90 171", "p99 318"],
    ),
    dict(
        schema=DATASET_SCHEMA, id="math14k", display_name="Math 14K (LLM-Adapters)",
        queries=13921, queries_published=14000,
        length_tokens=dict(min=55, median=174, mean=187, p90=271, p99=411, max=1470),
        quantiles=[[0.0, 55], [0.5, 174], [0.9, 271], [0.99, 411], [0.997, 512], [1.0, 1470]],
        tokenizer=TOKENIZER,
        source="arXiv 2408.04693 Table II (14K queries, median 174) and Fig. 2 histogram data from "
               "github.com/stsxxx/finetune (13,921 samples, 55-1470 tokens, mean ~187, p90 271, p99 411, "
               "41 samples longer than 512)",
        notes="Fine-tuning set of the paper (math; the paper also calls the workload 'GS'). A query is a "
              "prompt joined with its ground-truth answer; lengths are tokens per query. The mean is "
              "approximate. 41 of 13,921 samples (0.29%) are longer than 512 tokens, hence the "
              "[0.997, 512] point. The paper trains with cutoff_len 1024, so the longest queries are "
              "truncated to 1024 tokens. The paper's Table IV costs use 15,000 queries although its "
              "caption names this data set. " + TOKENIZER_NOTE,
        template_tokens=TEMPLATE_TOKENS,
        template_tokens_note=TEMPLATE_TOKENS_NOTE,
        evidence=["13,921 samples", "55–1470", "p90 271", "p99 411", "41 samples longer than 512"],
    ),
]

# The paper's cost-model prices (Table IV): they must end up in the CUDO Compute file.
PAPER_PRICES = [("a40", 0.79), ("a100-pcie-80gb", 1.67), ("h100-sxm5-80gb", 2.1)]

# Reference records whose GPU id this project reads differently, with the reason (kept in the offer's notes).
GPU_ID_OVERRIDES = {
    "price-002": ("a100-pcie-80gb",
                  "gpu_id: the reference guesses a100-sxm4-80gb; CUDO Compute lists its A100 80GB as PCIe "
                  "(its catalogue's instance types are 'a100-pci', price-068/069 here), so the paper's A100 "
                  "price is taken as the PCIe part, as the validation rows of Table IV are."),
}
# The network between instances, for offers whose provider documents one (the reference prices carry none).
# Only these offers are rented as several nodes (core/app/include/ftcost/shapes.hpp). EFA counts as ethernet.
OFFER_NETWORKS = {
    "price-027": {
        "kind": "ethernet",
        "gbit_per_gpu": 50,
        "source": "https://aws.amazon.com/ec2/instance-types/p4/ (p4d.24xlarge: 8 GPUs, 400 Gbps networking "
                  "with Elastic Fabric Adapter and GPUDirect RDMA = 50 Gbit/s per GPU; EFA runs on AWS's "
                  "Ethernet fabric, as in the 8x-l40s-pcie node preset)",
    },
    "price-026": {
        "kind": "ethernet",
        "gbit_per_gpu": 400,
        "source": "https://aws.amazon.com/ec2/instance-types/p5/ (p5.48xlarge: 8 H100, 3,200 Gbps of Elastic "
                  "Fabric Adapter networking with GPUDirect RDMA = 400 Gbit/s per GPU; EFA runs on AWS's "
                  "Ethernet fabric)",
    },
    "price-036": {
        "kind": "infiniband",
        "gbit_per_gpu": 400,
        "source": "https://learn.microsoft.com/azure/virtual-machines/nd-h100-v5-series (Standard_ND96isr_H100_v5: "
                  "8 H100 with NVLink 4.0, one 400 Gb/s NVIDIA Quantum-2 CX7 InfiniBand connection per GPU, "
                  "3.2 Tb/s per VM)",
    },
    "price-037": {
        "kind": "infiniband",
        "gbit_per_gpu": 200,
        "source": "https://learn.microsoft.com/azure/virtual-machines/nda100-v4-series (ND96asr_v4 with 8 A100 "
                  "40GB, ND96amsr_A100_v4 with 8 A100 80GB: NVLink 3.0, one 200 Gb/s Mellanox HDR InfiniBand "
                  "connection per GPU, 1.6 Tb/s per VM)",
    },
}
# Reference offers whose instance is misdescribed (instance type or GPU count), with the correction and why.
# Prices stay per GPU as the reference gives them.
OFFER_SHAPE_OVERRIDES = {
    "price-026": ({"instance_type": "p5.48xlarge", "gpu_count": 8},
                  "ftcost: the reference lists this price as a 1-GPU 'p5.xlarge' (a size AWS does not sell) with "
                  "the note 'p5.48xlarge is $98.32/hr for 8 GPUs' = $12.29/GPU, within 1% of this row: the "
                  "per-GPU price of the 8-GPU p5.48xlarge, which the offer now names."),
    "price-036": ({"gpu_count": 8},
                  "ftcost: gpu_count 8, the VM's GPUs (the reference says 1; its own note calls it an 8-GPU VM)."),
    "price-037": ({"gpu_count": 8},
                  "ftcost: gpu_count 8 (the ND96asr/ND96amsr A100 v4 VMs carry 8 GPUs; the reference says 1)."),
}
PAPER_PRICE_PROVIDER = "cudo-compute"
PAPER_PRICE_DATE = "2024-07"

OFFER_KEYS = ["gpu_id", "on_demand_usd_per_gpu_hour", "spot_usd_per_gpu_hour", "date", "date_note",
              "instance_type", "gpu_count", "region", "source", "notes"]


class ReferenceDataError(Exception):
    pass


def fail(msg):
    raise ReferenceDataError(msg)


def info(msg):
    print(msg)


def warn(msg):
    print(msg, file=sys.stderr)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def dump(obj):
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def slug(name):
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not ID_RE.match(s):
        fail(f"cannot make an id from provider name {name!r}")
    return s


def check_id(kind, ident):
    if not isinstance(ident, str) or not ID_RE.match(ident):
        fail(f"{kind} id {ident!r} is not lower-case [a-z0-9.-]")


# ------------------------------------------------------------------------------------------ gpus
def build_gpus(ref):
    data = load_json(ref / "gpu-specs.json")
    records = data["gpus"]
    expected = data.get("_meta", {}).get("count")
    if expected is not None and expected != len(records):
        fail(f"gpu-specs.json: _meta.count {expected} but {len(records)} records")
    out = {}
    for rec in records:
        gid = rec.get("id")
        check_id("gpu", gid)
        if gid in out:
            fail(f"gpu-specs.json: duplicate id {gid}")
        if not rec.get("sources"):
            fail(f"gpu-specs.json: {gid} has no sources")
        if "schema" in rec:
            fail(f"gpu-specs.json: {gid} already has a 'schema' key")
        out[gid] = {"schema": GPU_SCHEMA, **rec}
        choices = CHOSEN.get(gid)
        if rec.get("disagreements") and not choices:
            fail(f"gpu-specs.json: {gid} lists disagreements; add the chosen values and why to CHOSEN")
        if choices:
            for c in choices:
                if lookup(rec, c["field"]) != ("found", c["value"]):
                    fail(f"CHOSEN[{gid!r}]: {c['field']} is {lookup(rec, c['field'])[1]!r} in the reference, "
                         f"not {c['value']!r}; re-check the choice")
                if not c["alternatives"] or not c["why"]:
                    fail(f"CHOSEN[{gid!r}]: {c['field']} needs alternatives and why")
            out[gid]["chosen_values"] = choices
    unknown = sorted(set(CHOSEN) - set(out))
    if unknown:
        fail(f"CHOSEN has entries for GPUs not in the reference: {', '.join(unknown)}")
    return out


def lookup(rec, dotted):
    """("found", value) for a dotted path into a record, ("missing", None) when absent."""
    cur = rec
    for key in dotted.split("."):
        if not isinstance(cur, dict) or key not in cur:
            return ("missing", None)
        cur = cur[key]
    return ("found", cur)


# ---------------------------------------------------------------------------------------- prices
def provider_url(provider, sources):
    """Homepage (scheme://host) of the first URL in the provider's sources whose host names it."""
    words = [w for w in re.findall(r"[a-z0-9]+", provider.lower()) if len(w) >= 3]
    for src in sources:
        for url in re.findall(r"https?://[^\s'\")\]]+", src):
            parts = urlsplit(url)
            if any(w in parts.netloc.lower() for w in words):
                return f"{parts.scheme}://{parts.netloc}"
    return None


def build_prices(ref, gpu_ids):
    data = load_json(ref / "cloud-prices.json")
    records = data["prices"]
    expected = data.get("_meta", {}).get("count")
    if expected is not None and expected != len(records):
        fail(f"cloud-prices.json: _meta.count {expected} but {len(records)} records")
    files = {}
    seen_refs = set()
    dropped = []
    for rec in records:
        ref_id = rec["id"]
        if ref_id in seen_refs:
            fail(f"cloud-prices.json: duplicate id {ref_id}")
        seen_refs.add(ref_id)
        pid = slug(rec["provider"])
        entry = files.setdefault(pid, {"provider": rec["provider"], "offers": [], "sources": []})
        if entry["provider"] != rec["provider"]:
            fail(f"providers {entry['provider']!r} and {rec['provider']!r} map to the same id {pid}")
        entry["sources"].append(rec["source"])
        gid = rec.get("gpu_id")
        override = GPU_ID_OVERRIDES.get(ref_id)
        if override:
            gid = override[0]
        if gid is None or gid not in gpu_ids:
            dropped.append(f"{ref_id} ({rec['provider']}: {rec.get('gpu_as_listed')}, gpu_id {gid})")
            continue
        date = rec.get("date")
        if date is not None and not DATE_RE.match(date):
            fail(f"cloud-prices.json: {ref_id} date {date!r} is not YYYY-MM or YYYY-MM-DD")
        if date is None and not rec.get("date_note"):
            fail(f"cloud-prices.json: {ref_id} has neither date nor date_note")
        if not isinstance(rec.get("on_demand_usd_per_gpu_hour"), (int, float)):
            fail(f"cloud-prices.json: {ref_id} has no on-demand price")
        offer = {k: rec.get(k) for k in OFFER_KEYS}
        if override:
            offer["gpu_id"] = gid
            offer["notes"] = ((offer.get("notes") or "") + " " + override[1]).strip()
        if ref_id in OFFER_SHAPE_OVERRIDES:
            fix, why = OFFER_SHAPE_OVERRIDES[ref_id]
            offer.update(fix)
            offer["notes"] = ((offer.get("notes") or "") + " " + why).strip()
        offer["reference_id"] = ref_id
        if ref_id in OFFER_NETWORKS:
            offer["network"] = OFFER_NETWORKS[ref_id]
        entry["offers"].append(offer)

    listed = data.get("_meta", {}).get("providers")
    if listed is not None and sorted(listed) != sorted(e["provider"] for e in files.values()):
        fail("cloud-prices.json: _meta.providers does not match the providers of the records")

    out = {}
    for pid in sorted(files):
        entry = files[pid]
        if not entry["offers"]:
            warn(f"warning: provider {entry['provider']} has no offer for a known GPU; no file written")
            continue
        out[pid] = {
            "schema": PRICES_SCHEMA,
            "id": pid,
            "provider": entry["provider"],
            "url": provider_url(entry["provider"], entry["sources"]),
            "currency": "USD",
            "offers": entry["offers"],
        }

    cudo = out.get(PAPER_PRICE_PROVIDER)
    for gid, price in PAPER_PRICES:
        if not cudo or not any(o["gpu_id"] == gid and o["on_demand_usd_per_gpu_hour"] == price
                               and o["date"] == PAPER_PRICE_DATE for o in cudo["offers"]):
            fail(f"the paper's price {gid} ${price}/h ({PAPER_PRICE_DATE}) is missing from "
                 f"{PAPER_PRICE_PROVIDER}")

    info(f"prices: {len(records)} reference offers, {len(records) - len(dropped)} kept in "
        f"{len(out)} provider files, {len(dropped)} dropped (gpu_id null or not in gpus/):")
    for d in dropped:
        info(f"  dropped {d}")
    return out


# ---------------------------------------------------------------------------------------- models
# Exact published parameter counts (issue 41; docs/sources/model-families.md §5): preset id -> (count, where it
# is published). published() writes the count as published.exact_params and appends the text to the source;
# db check and tests/unit/test_models.cpp hold the config's count (Llama-4: with its vision tower) to it within 0.5%.
EXACT = {
    "codellama-34b": (33743970304, "num_parameters of Phind/Phind-CodeLlama-34B-v2 (a full fine-tune of this checkpoint: same config and tensor shapes) in a public GitHub copy of Together AI's model catalogue (index id 36031785305)"),
    "deepseek-moe-16b": (16375728128, "num_params of deepseek-ai/deepseek-moe-16b-base in public profiling configs (index ids 67161653560, 67345452968) and a model table ('deepseek-ai/deepseek-moe-16b-base | base | 16375728128', index id 69468411049)"),
    "deepseek-v2-lite": (15706484224, "the parameter count of deepseek-ai/DeepSeek-V2-Lite in a public model table ('deepseek-ai/DeepSeek-V2-Lite | base | 15706484224', index id 69468411049) and printed by a server loading it ('with 15706484224 ... parameters', index id 41727181442)"),
    "gemma-2-9b": (9241705984, "the Hugging Face Hub API's safetensors.total for google/gemma-2-9b as recorded in a public test fixture (index id 56108414625); Keras-Hub's gemma2_9b_en preset metadata gives the same (index id 123073332)"),
    "gemma-3-1b": (999885952, "the Hub's safetensors total for google/gemma-3-1b-it (same architecture) and KerasHub's gemma3_1b preset metadata \"params\": 999885952 (public GitHub files, index ids 3173084990 and 71142266638)"),
    "gpt-oss-120b": (116829156672, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for openai/gpt-oss-120b (the model card's 116.83B)"),
    "gpt-oss-20b": (20914757184, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for openai/gpt-oss-20b (the model card's 20.91B)"),
    "llama-2-13b": (13015864320, "the elements of DeepSpeed's reconstructed fp32 state dict of a Llama-2-13B fine-tune ('Reconstructed Trainable fp32 state dict with 363 params 13015864320 elements', index id 13334078062); the Hub API's safetensors.total for meta-llama/Llama-2-13b-hf is 13,015,866,880 (index id 71571056092), 2,560 more: the 40 layers' rotary inv_freq buffers (64 each) this checkpoint stores"),
    "llama-2-70b": (68976648192, "togethercomputer/llama-2-70b's count in a public fine-tuning client's table (index id 4120541175); the Hub API's safetensors.total for meta-llama/Llama-2-70b-hf is 68,976,653,312 (index id 71571056092), 5,120 more: the 80 layers' rotary inv_freq buffers (64 each)"),
    "llama-2-7b": (6738415616, "model.num_parameters() of the LLaMA-7B architecture (PEFT's print_trainable_parameters 'all params: 6738415616' for huggyllama/llama-7b, and GGUF general.parameter_count 6738415616 for Llama-2-7B-Chat; public GitHub files, index ids 71239455211 and 48212167485): Llama-2-7B has the same shapes"),
    "llama-3.1-405b": (405853388800, "the Hugging Face Hub API's safetensors.total for meta-llama/Llama-3.1-405B, revision b906e4dc842aa489c962f9db26554dcfdde901fe, as recorded in a public dataset builder (index id 71571056092)"),
    "llama-3.1-70b": (70553706496, "the Hugging Face Hub API's safetensors.total for meta-llama/Llama-3.1-70B, revision 349b2ddb53ce8f2849a6c168a81980ab25258dac, as recorded in a public dataset builder (index id 71571056092)"),
    "llama-3.1-8b": (8030261248, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for meta-llama/Llama-3.1-8B-Instruct, the same architecture"),
    "llama-3.2-3b": (3212749824, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for meta-llama/Llama-3.2-3B-Instruct, the same architecture"),
    "llama-3.3-70b": (70553706496, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for meta-llama/Llama-3.3-70B-Instruct"),
    "llama-4-scout": (108641793536, "the Hugging Face Hub API's safetensors.total for meta-llama/Llama-4-Scout-17B-16E-Instruct (the same architecture) as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638)"),
    "mamba-2.8b": (2768345600, "printed when loading state-spaces/mamba-2.8b ('Number of parameters: 2768345600', index id 26211555743); the same for state-spaces/mamba-2.8b-hf in a public table (index id 49071488734)"),
    "mistral-7b": (7241732096, "general.parameter_count of a Mistral-7B GGUF (the tensors of the checkpoint counted by llama.cpp's converter) in a public Ollama model_info (index id 38362529119) and num_parameters of Mistral-7B fine-tunes in Together AI's catalogue (index id 36031785305)"),
    "mixtral-8x7b": (46702792704, "KerasHub mixtral_8_7b_en \"params\": 46702792704 (public GitHub file, index id 678925060) and a Hub API fixture's safetensors.total for mistralai/Mixtral-8x7B-Instruct-v0.1 (index id 59143658729); docs/sources/stack-facts.md §1.1 derives the same from the modules"),
    "olmo-2-7b": (7298617344, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for allenai/OLMo-2-1124-7B-Instruct, the same architecture"),
    "olmoe-1b-7b": (6919161856, "the parameter count of allenai/OLMoE-1B-7B-0924 read from its three safetensors headers (index id 65753564317); the same for the -Instruct checkpoint (index id 71333551460)"),
    "phi-2": (2779683840, "its model.safetensors.index.json metadata.total_size 5,559,367,680 bytes of fp16 (the index as quoted in a public GitHub file, index id 9232979876)"),
    "qwen-7b": (7721324544, "its model.safetensors.index.json metadata.total_size 15,442,649,088 bytes of bf16 (the total_size as quoted in a public GitHub file, index id 54872141627)"),
    "qwen1.5-moe-a2.7b": (14315784192, "Keras-Hub's qwen1.5_moe_2.7b_en preset metadata (index id 583820047) and a model table ('Qwen/Qwen1.5-MoE-A2.7B | base | 14315784192', index id 69468411049)"),
    "qwen2-57b-a14b": (57408658944, "the Hugging Face Hub API's safetensors.total for Qwen/Qwen2-57B-A14B as recorded in a public test fixture (index id 59924751875)"),
    "qwen2.5-14b": (14770033664, "general.parameter_count of Qwen2.5-14B(-Instruct) GGUFs, the tensors counted by llama.cpp's converter (index ids 69153007027, 56913516336); the card's 14.7B is truncated, the Hub's safetensors count reads 14.8B"),
    "qwen2.5-32b": (32763876352, "KerasHub qwen2.5_instruct_32b_en \"params\": 32763876352 (keras-team/keras-hub keras_hub/src/models/qwen/qwen_presets.py @ 12870d2794fb0f7a098e9afcc1ed37f3ef2e8cd2), the same as a Hub API fixture's safetensors {\"BF16\": 32763876352} (index id 56216002053); the card's 32.5B is 0.8% low"),
    "qwen2.5-72b": (72706203648, "KerasHub qwen2.5_instruct_72b_en \"params\": 72706203648 (keras-team/keras-hub keras_hub/src/models/qwen/qwen_presets.py @ 12870d2794fb0f7a098e9afcc1ed37f3ef2e8cd2)"),
    "qwen2.5-7b": (7615616512, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for Qwen/Qwen2.5-7B-Instruct, the same architecture; also KerasHub qwen2.5_math_7b_en \"params\" (keras-team/keras-hub keras_hub/src/models/qwen/qwen_presets.py @ 12870d27)"),
    "qwen3-235b-a22b": (235093634560, "the Hugging Face Hub API's safetensors {\"parameters\": {\"BF16\": 235093634560}, \"total\": 235093634560} for Qwen/Qwen3-235B-A22B as quoted in a public note (index id 68299976510), KerasHub's qwen3_moe_235b_a22b_en preset metadata \"params\": 235093634560 (index id 1878678529), and its model.safetensors.index.json total_size 470,187,269,120 bytes of bf16 as a public test checks it (index id 56011531800)"),
    "qwen3-30b-a3b": (30532122624, "the sum of the tensor shapes of Qwen3-30B-A3B's checkpoint shards checked by a public loader (index id 68391653552) and general.parameter_count of its GGUF (index id 58538622392)"),
    "qwen3-8b": (8190735360, "the Hugging Face Hub API's safetensors.total as listed in a public GitHub file (\"HF Hub API 2026-09-25: ... safetensors.total\", index id 71142266638) for Qwen/Qwen3-8B"),
    "tinyllama-1.1b": (1100048384, "sum(p.numel() for p in model.parameters()) of TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T (index id 59208154669), the same architecture; the base checkpoint's safetensors metadata {\"F32\": 1100048384} (index id 71366605573)"),
}


def published(meta):
    out = {
        "total_params": int(round(meta["total"])),
        "active_params": None if meta["active"] is None else int(round(meta["active"])),
    }
    source = meta["source"]
    if meta["id"] in EXACT:
        count, where = EXACT[meta["id"]]
        out = {"total_params": out["total_params"], "exact_params": count, "active_params": out["active_params"]}
        source = f"{source.rstrip('.')}; exact: {count:,}, {where}"
    if "top_k" in meta:
        out["top_k"] = meta["top_k"]
    out["source"] = source
    out["note"] = meta["note"]
    return out


# Reference configs that are not shipped as presets, and why (the import names them instead of failing).
NOT_PRESETS = {
    "Qwen-1_8B": "Qwen 1.0 (model_type qwen): parse_qwen1 reads it (1.84B for a published 1.8B), but the copy's "
                 "identity is uncertain (an mlc-llm preset keyed \"qwen\") and no exact count was found",
}


def build_models(ref):
    paths = sorted(p for p in (ref / "models").glob("*.json") if p.stem not in NOT_PRESETS)
    for stem, why in sorted(NOT_PRESETS.items()):
        info(f"models: {stem} is not a preset: {why}")
    stems = {p.stem for p in paths}
    unknown = sorted(stems - MODELS.keys())
    missing = sorted(MODELS.keys() - stems)
    if unknown:
        fail(f"reference models without an entry in MODELS: {', '.join(unknown)}")
    if missing:
        fail(f"MODELS entries without a reference file: {', '.join(missing)}")
    out = {}
    for path in paths:
        meta = MODELS[path.stem]
        mid = meta["id"]
        check_id("model", mid)
        if mid in out:
            fail(f"duplicate model id {mid}")
        if meta["kind"] not in ("dense", "moe", "mamba", "hybrid"):
            fail(f"{mid}: unknown kind {meta['kind']}")
        if (meta["active"] is None) != (meta["kind"] in ("dense", "mamba")):
            fail(f"{mid}: active_params must be null exactly for dense and mamba models")
        config = load_json(path)
        source = config.pop("_source", None)
        if not isinstance(source, dict) or not source.get("model_id"):
            fail(f"{path.name}: no _source.model_id")
        out[mid] = {
            "schema": MODEL_SCHEMA,
            "id": mid,
            "display_name": meta["display_name"],
            "hf_repo": source["model_id"].split()[0],
            "family": meta["family"],
            "kind": meta["kind"],
            "published": published(meta),
            "config": config,
            "config_source": source,
        }
        if "overrides" in meta:
            out[mid]["overrides"] = meta["overrides"]
    return out


# -------------------------------------------------------------------------------------- datasets
def build_datasets(ref):
    paper_md = ref / "paper.md" if (ref / "paper.md").exists() else ref.parent / "paper.md"
    paper = paper_md.read_text(encoding="utf-8")
    out = {}
    for ds in DATASETS:
        ds = dict(ds)
        for snippet in ds.pop("evidence"):
            if snippet not in paper:
                fail(f"dataset {ds['id']}: paper.md no longer says {snippet!r}; re-check the numbers")
        lt = ds["length_tokens"]
        q = ds["quantiles"]
        if q[0] != [0.0, lt["min"]] or q[-1] != [1.0, lt["max"]]:
            fail(f"dataset {ds['id']}: quantiles must start at min and end at max")
        if [0.5, lt["median"]] not in q or [0.9, lt["p90"]] not in q or [0.99, lt["p99"]] not in q:
            fail(f"dataset {ds['id']}: quantiles disagree with length_tokens")
        if any(a[0] >= b[0] or a[1] > b[1] for a, b in zip(q, q[1:])):
            fail(f"dataset {ds['id']}: quantiles must increase")
        out[ds["id"]] = ds
    return out


# ------------------------------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE,
                    help=f"reference folder (default: {DEFAULT_REFERENCE})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"gpu-db folder (default: {DEFAULT_OUT})")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if a generated file is missing or out of date")
    args = ap.parse_args(argv)

    try:
        gpus = build_gpus(args.reference)
        groups = {
            "gpus": gpus,
            "prices": build_prices(args.reference, set(gpus)),
            "models": build_models(args.reference),
            "datasets": build_datasets(args.reference),
        }
    except (ReferenceDataError, OSError, KeyError, json.JSONDecodeError) as e:
        warn(f"import_reference: error: {e}")
        return 2

    stale = changed = 0
    for folder, items in groups.items():
        d = args.out / folder
        wanted = {f"{i}.json" for i in items}
        for name in sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []:
            if name not in wanted:
                warn(f"warning: {folder}/{name} is not produced from the reference (left in place)")
                stale += 1
        for ident in sorted(items):
            path = d / f"{ident}.json"
            text = dump(items[ident])
            old = path.read_text(encoding="utf-8") if path.exists() else None
            if old == text:
                continue
            changed += 1
            if args.check:
                warn(f"out of date: {folder}/{ident}.json")
            else:
                d.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".json.tmp")
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(path)

    counts = ", ".join(f"{len(v)} {k}" for k, v in groups.items())
    verb = "out of date" if args.check else "written"
    info(f"import_reference: {counts}; {changed} file(s) {verb}, {stale} not from the reference")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
