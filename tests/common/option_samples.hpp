// A sample value for every job option and a base request in which it applies — shared by the tests that walk
// the option table (unit: JSON request and resolution; cli: CLI flags; web_ui_smoke: URL hash).
#pragma once

#include "ftcost/database.hpp"
#include "ftcost/options.hpp"

#include <cmath>
#include <string>

namespace ftcost::test {

struct OptionSample {
  Request request;                    // a complete job with the option set to `value`
  std::string value;                  // the sample value
  const char* skip_reason = nullptr;  // set when the value is a file (resolution needs a reader)
};

inline std::string sample_number(double v) {
  if (std::floor(v) == v) return std::to_string(static_cast<long long>(v));
  return std::to_string(v);
}

inline OptionSample option_sample(const Option& o, const Database& db) {
  OptionSample s;
  // MoE model, QLoRA and a dataset: every option applies here except the ones handled below
  s.request = {{"model", "mixtral-8x7b"}, {"gpu", "a40"}, {"method", "qlora"}, {"dataset", "math14k"}};
  switch (o.kind) {
    case OptionKind::choice:
    case OptionKind::toggle:
    case OptionKind::text:
      // the last listed value differs from the default in every choice of the table
      s.value = o.values.empty() ? std::string() : o.values.back().value;
      break;
    case OptionKind::count:
      s.value = sample_number(std::min(o.lo + 1, o.hi));
      break;
    case OptionKind::real:
      s.value = sample_number(o.lo * 2);
      break;
    case OptionKind::id_or_path: {
      const std::vector<std::string> ids = option_ids(o.id_list, db);
      s.value = ids.empty() ? std::string("x") : ids.back();
      break;
    }
  }
  if (o.key == "model") s.value = "olmoe-1b-7b";  // a MoE model, so that moe/top-k/routing still apply
  if (o.key == "seq") s.request.erase("dataset");
  if (o.key == "method") s.value = "lora";      // quant applies only to qlora: the base keeps qlora
  if (o.key == "model-kind") s.value = "step";  // paper's Eq. (2) needs the A40 + a paper workload
  if (o.key == "routing") s.value = "skew:1";
  if (o.key == "attention") s.request["stack"] = "unsloth-2024q4";  // only Unsloth runs xformers
  if (o.key == "run") {
    s.value = "my-run.json";
    s.skip_reason = "a file (tests/unit/test_run.cpp applies runs)";
  }
  // multi-GPU: a node preset needs its own GPU; the strategy sample runs on two GPUs; the network options
  // apply only with more than one node.
  if (o.key == "node") {
    s.value = "dgx-h100";
    s.request["gpu"] = "h100-sxm5-80gb";
  }
  if (o.key == "parallel") {
    s.value = "zero2";
    s.request["gpus"] = "2";
  }
  if (o.key == "nodes") {
    s.request["network"] = "infiniband";
    s.request["network-gbit-per-gpu"] = "400";
  }
  if (o.key == "network") {
    s.value = "infiniband";
    s.request["nodes"] = "2";
    s.request["network-gbit-per-gpu"] = "400";
  }
  if (o.key == "network-gbit-per-gpu") {
    s.request["nodes"] = "2";
    s.request["network"] = "ethernet";
  }
  if (o.key == "nvme-gbps") {  // ZeRO-Infinity: ZeRO-3 with an NVMe offload
    s.value = "27,11";
    s.request["gpus"] = "2";
    s.request["parallel"] = "zero3";
    s.request["offload"] = "optimizer-nvme";
  }
  if (o.key == "zero3") {  // DeepSpeed's names, with and without the stage3_ prefix
    s.value = "stage3_max_live_parameters=5e8,prefetch_bucket_size=auto,zero_hpz_partition_size=2";
    s.request["gpus"] = "4";
    s.request["parallel"] = "zero3";
  }
  if (o.key == "host-memory-gbps") {  // a PCIe node without peer-to-peer shares its host memory
    s.value = "102.4";
    s.request["gpu"] = "rtx-4090";
    s.request["gpus"] = "2";
    s.request["parallel"] = "ddp";
  }
  if (o.key == "sequence-parallel") {  // DeepSpeed Ulysses over 4 of 8 GPUs, with ZeRO
    s.value = "4";
    s.request["gpus"] = "8";
    s.request["parallel"] = "zero3";
  }
  if (o.key == "tiled-mlp") s.value = "4";  // a shard count (the last listed word, on, is ALST's own count)
  if (o.key == "fp8") {                     // torchao float8: full fine-tuning on a GPU with FP8 tensor cores
    s.value = "tensorwise";
    s.request["gpu"] = "h100-sxm5-80gb";
    s.request["method"] = "full";
  }
  // Preference/RL objectives (issue 42): each option applies only to its objective; a small model on an H100
  // so that every sample is estimated (vLLM's share must hold the weights).
  const bool grpo_option = o.key == "num-generations" || o.key == "completion-len" ||
                           o.key == "num-iterations" || o.key == "beta" || o.key == "reward-s" ||
                           o.key == "generation" || o.key == "vllm-gpu-memory-utilization" ||
                           o.key == "vllm-gpus";
  if (o.key == "objective" || o.key == "precompute-ref" || grpo_option) {
    s.request = {{"model", "tinyllama-1.1b"}, {"gpu", "h100-sxm5-80gb"}, {"method", "lora"}, {"seq", "256"}};
    s.request["objective"] = o.key == "precompute-ref" ? "dpo" : "grpo";
  }
  if (o.key == "vllm-gpu-memory-utilization") {
    s.value = "0.5";
    s.request["generation"] = "vllm-colocate";
  }
  if (o.key == "vllm-gpus") s.request["generation"] = "vllm-server";
  if (o.key == "fp8-all-gather") {  // torchao float8 all-gather under FSDP2: tensorwise FP8, full, two GPUs
    s.request["gpu"] = "h100-sxm5-80gb";
    s.request["method"] = "full";
    s.request["fp8"] = "tensorwise";
    s.request["gpus"] = "2";
    s.request["parallel"] = "fsdp";
  }
  if (o.key == "calibration") {
    s.value = std::string(FTCOST_SOURCE_DIR) + "/tests/data/calibration/h100-sxm-synthetic.json";
    s.request["gpu"] = "h100-sxm5-80gb";
    s.skip_reason = "a file";
  }
  s.request[o.key] = s.value;
  return s;
}

}  // namespace ftcost::test
