// The field lists of the database file formats (fields.hpp) and the reader the loaders use.
#include "ftcost/fields.hpp"

#include "fields_build.hpp"
#include "ftcost/calibration.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace ftcost {

namespace {

using K = FieldKind;
using namespace field_build;  // NOLINT(google-build-using-namespace): the builders read as a table

// ---------------------------------------------------------------------------------------------- GPU

FieldList gpu_list() {
  return {
      "gpu",
      "ftcost.gpu/1",
      {
          req(choice("schema", {"ftcost.gpu/1"}, "Format identifier and version of this file.")),
          need(f("id", K::string, "Lower-case common name; equals the file name without '.json'.")),
          req(f("vendor", K::string, "Manufacturer: NVIDIA, AMD, Intel.")),
          need(f("name", K::string, "Marketing name of the SKU, for display.")),
          req(f("architecture", K::string, "Micro-architecture and die, e.g. 'Ampere (GA102)'.")),
          null_ok(req(f("compute_capability", K::string,
                        "CUDA compute capability 'major.minor'; null for non-NVIDIA devices."))),
          req(f("form_factor", K::string, "Board or module type: PCIe, SXM, OAM, superchip.")),
          req(range(f("release_year", K::integer, "Year the SKU became available."), 2010, 2100, "")),
          need(range(f("memory_gib", K::number, "Vendor capacity label, binary GiB."), 1, 4096, "GiB")),
          null_ok(req(range(f("usable_memory_mib_nvidia_smi", K::integer,
                              "memory.total reported by nvidia-smi; null if not verified."),
                            512, 4096.0 * 1024, "MiB"))),
          req(f("memory_type", K::string, "DRAM technology, e.g. HBM3, GDDR6 (ECC).")),
          null_ok(range(f("memory_bus_bits", K::integer,
                          "Width of the DRAM interface, bits (1024 per HBM stack); null if not published."),
                        32, 16384, "bits")),
          need(range(f("memory_bandwidth_gbps", K::number, "Peak DRAM bandwidth, decimal GB/s."), 10, 100000,
                     "GB/s")),
          need(object("dense_tflops", "gpu.dense_tflops", "Peak dense throughput per data type.")),
          null_ok(req(range(f("sm_count", K::integer, "Streaming multiprocessors (NVIDIA) or compute units."),
                            1, 1024, ""))),
          null_ok(req(
              range(f("boost_clock_mhz", K::number, "Maximum boost clock of the SMs."), 100, 10000, "MHz"))),
          null_ok(req(range(f("l2_cache_mb", K::number, "L2 cache size, MiB."), 0.1, 1024, "MiB"))),
          null_ok(req(range(f("tdp_w", K::number, "Board/module maximum power."), 1, 10000, "W"))),
          req(object("interconnect", "gpu.interconnect", "Links to other GPUs and the host.")),
          null_ok(req(f("sparsity_note", K::string, "How the dense figures relate to the printed ones."))),
          null_ok(req(f("notes", K::string, "Anything else worth knowing for estimates."))),
          null_ok(f("variant_of", K::string,
                    "Id of the GPU file whose die and datasheet class this SKU derives from; null if none.")),
          need(array("sources", K::string, 1, "Where the numbers come from.")),
          null_ok(f("disagreements", K::string, "Values on which the sources disagree (free text).")),
          array("chosen_values", K::object, 1, "Where sources disagree: the value kept and why.",
                "gpu.chosen_values[]"),
      }};
}

FieldList gpu_dense_tflops_list() {
  auto peak = [](const char* key, double hi, const char* unit, const char* help) {
    return null_ok(req(range(f(key, K::number, help), 0.1, hi, unit)));
  };
  return {"gpu.dense_tflops",
          "ftcost.gpu/1",
          {
              peak("fp32", 1000, "TFLOP/s", "FP32 on CUDA cores / vector units."),
              peak("tf32", 10000, "TFLOP/s", "TF32 tensor-core matmul, dense."),
              peak("fp16", 20000, "TFLOP/s", "FP16 tensor-core matmul, dense."),
              peak("bf16", 20000, "TFLOP/s", "BF16 tensor-core matmul, dense."),
              peak("fp8", 40000, "TFLOP/s", "FP8 tensor-core matmul, dense."),
              peak("int8_tops", 40000, "TOPS", "INT8 tensor-core matmul, dense, TOPS."),
              peak("fp4", 80000, "TFLOP/s", "FP4 tensor-core matmul, dense."),
          }};
}

FieldList gpu_interconnect_list() {
  return {
      "gpu.interconnect",
      "ftcost.gpu/1",
      {
          null_ok(req(range(f("nvlink_gbps_bidirectional", K::number,
                              "NVLink bandwidth per GPU, both directions together; null if none."),
                            0, 20000, "GB/s"))),
          null_ok(req(range(f("nvlink_generation", K::integer, "NVLink generation; null without NVLink."), 1,
                            9, ""))),
          null_ok(req(choice("nvlink_topology", {"switch", "mesh", "bridge"},
                             "How NVLink joins GPUs; null without NVLink."))),
          null_ok(req(range(f("nvlink_max_gpus", K::integer, "GPUs one NVLink domain joins."), 2, 576, ""))),
          null_ok(req(range(f("pcie_gen", K::integer, "PCIe generation of the host interface."), 1, 7, ""))),
          null_ok(req(range(f("pcie_lanes", K::integer, "PCIe lanes of the host interface."), 1, 32, ""))),
          null_ok(req(f("pcie_p2p", K::boolean, "Whether the stock driver allows PCIe peer-to-peer."))),
          f("other", K::string, "Free text: NVLink version and link count, Infinity Fabric, bridges."),
      }};
}

FieldList gpu_chosen_value_list() {
  return {"gpu.chosen_values[]",
          "ftcost.gpu/1",
          {
              req(f("field", K::string, "Dotted path of the field, e.g. dense_tflops.bf16.")),
              req(f("value", K::any, "The value chosen: must equal the field's value in this file.")),
              req(array("alternatives", K::string, 1, "The other values and their sources.")),
              req(at_least(f("why", K::string, "Why this value was chosen."), 10)),
          }};
}

// ------------------------------------------------------------------------------------------- prices

FieldList prices_list() {
  return {"prices",
          "ftcost.prices/1",
          {
              need(choice("schema", {"ftcost.prices/1"}, "Format identifier and version of this file.")),
              need(f("id", K::string, "Provider id; equals the file name without '.json'.")),
              need(f("provider", K::string, "Provider name for display.")),
              null_ok(req(f("url", K::string, "Provider homepage; null if the sources give none."))),
              req(limited(choice("currency", {"USD"}, "Currency of every price in this file."),
                          "only USD prices are supported")),
              need(array("offers", K::object, 1, "One entry per offer (GPU, instance type, region, date).",
                         "prices.offers[]")),
          }};
}

FieldList price_offer_list() {
  return {"prices.offers[]",
          "ftcost.prices/1",
          {
              need(f("gpu_id", K::string, "Id of a file in gpu-db/gpus/.")),
              req(above(f("on_demand_usd_per_gpu_hour", K::number,
                          "On-demand price per GPU-hour (instance price / gpu_count)."),
                        0, 1000, "USD per GPU-hour")),
              null_ok(req(above(f("spot_usd_per_gpu_hour", K::number,
                                  "Spot/interruptible price per GPU-hour; null if none or not given."),
                                0, 1000, "USD per GPU-hour"))),
              null_ok(req(
                  f("date", K::string, "When the price was seen: YYYY-MM or YYYY-MM-DD; null if undated."))),
              null_ok(req(f("date_note", K::string, "Where the date comes from, or why there is none."))),
              null_ok(req(f("instance_type", K::string, "The provider's instance type."))),
              req(range(f("gpu_count", K::integer, "GPUs in the instance."), 1, 576, "")),
              null_ok(req(f("region", K::string, "Region or location of the offer."))),
              need(at_least(f("source", K::string, "Where the price comes from."), 1)),
              null_ok(req(f("notes", K::string, "Anything else about the offer."))),
              f("reference_id", K::string, "Row id in the reference data this offer was imported from."),
              object("network", "prices.offers[].network", "The network between instances of this type."),
          }};
}

FieldList price_network_list() {
  return {
      "prices.offers[].network",
      "ftcost.prices/1",
      {
          need(choice("kind", {"infiniband", "roce", "ethernet"}, "Network technology between instances.")),
          need(range(f("gbit_per_gpu", K::number, "NIC line rate per GPU."), 0.1, 10000, "Gbit/s")),
          need(f("source", K::string, "Where the network figure comes from.")),
      }};
}

// ------------------------------------------------------- models and datasets (db check's key lists)

FieldList model_list() {
  return {"model",
          "ftcost.model/1",
          {
              req(f("schema", K::string, "Format identifier and version of this file.")),
              req(f("id", K::string, "Model id; equals the file name without '.json'.")),
              req(f("display_name", K::string, "Name for display.")),
              req(f("hf_repo", K::string, "Hugging Face repository of the weights.")),
              req(f("family", K::string, "Model family.")),
              req(f("kind", K::string, "dense or moe.")),
              req(object("published", "model.published", "Published parameter counts.")),
              req(f("config", K::object, "The model's config.json (architecture fields).")),
              req(f("config_source", K::object, "Where the config comes from.")),
              f("overrides", K::object, "Fields that differ from the upstream config, with reasons."),
          }};
}

FieldList model_published_list() {
  return {"model.published",
          "ftcost.model/1",
          {
              req(f("total_params", K::integer, "Published total parameter count.")),
              null_ok(req(f("active_params", K::integer, "Published active parameters per token (MoE)."))),
              f("exact_params", K::integer,
                "Exact total parameter count (safetensors metadata); the config must match it within 0.5%."),
              f("top_k", K::integer, "Experts per token the published active count assumes."),
              req(f("source", K::string, "Where the counts are published.")),
              null_ok(req(f("note", K::string, "Anything else about the counts."))),
          }};
}

// A dataset preset (datasets/<id>.json) or a user's own length file in the same format (parse_dataset):
// lengths as a quantile table or a histogram; the summary statistics (length_tokens) are for readers and
// db check, the loader recomputes them.
FieldList dataset_list() {
  const double most = 1099511627776.0;  // 2^40
  return {"dataset",
          "ftcost.dataset/1",
          {
              need(choice("schema", {"ftcost.dataset/1"}, "Format identifier and version of this file.")),
              need(f("id", K::string, "Dataset id; equals the file name without '.json'.")),
              req(f("display_name", K::string, "Name for display (default: the id).")),
              need(range(f("queries", K::integer, "Queries (examples) in the dataset."), 1, most, "")),
              null_ok(req(range(f("queries_published", K::integer, "Query count the source publishes."), 1,
                                most, ""))),
              req(object("length_tokens", "dataset.length_tokens", "Length statistics in tokens.")),
              array("quantiles", K::array, 2, "Length quantile table [[u, tokens], ...]."),
              array("histogram", K::array, 1, "Length histogram [[lo, hi, count], ...]."),
              array("completion_histogram", K::array, 1,
                    "GRPO: histogram of completion lengths [[lo, hi, count], ...] (generated tokens)."),
              req(f("tokenizer", K::string, "Tokenizer the lengths were counted with.")),
              need(at_least(f("source", K::string, "Where the dataset and statistics come from."), 1)),
              null_ok(req(f("notes", K::string, "Anything else about the dataset."))),
              null_ok(range(f("template_tokens", K::integer, "Prompt-template tokens added per query."), 0,
                            100000, "tokens")),
              null_ok(f("template_tokens_note", K::string, "Where template_tokens comes from.")),
          }};
}

FieldList dataset_length_list() {
  auto stat = [](const char* key, const char* help) {
    return req(range(f(key, K::number, help), 0, std::numeric_limits<double>::infinity(), "tokens"));
  };
  return {"dataset.length_tokens",
          "ftcost.dataset/1",
          {stat("min", "Shortest query."), stat("median", "Median query."), stat("mean", "Mean query."),
           stat("p90", "90th percentile."), stat("p99", "99th percentile."), stat("max", "Longest query.")}};
}

// --------------------------------------------------------------------------------------------- stacks
// A stack profile (stacks/<id>.json; read by stack.cpp) or a thin alias of one (alias_of + overrides, merged
// by the database loader). Keys ending in "_note" are free text: the provenance of the value they annotate.

FieldList stack_list() {
  Field vendors = array("vendors", K::string, 1, "GPU vendors the software runs on (any when absent).");
  return {
      "stack",
      "ftcost.stack/1",
      {
          need(choice("schema", {"ftcost.stack/1"}, "Format identifier and version of this file.")),
          need(f("id", K::string, "Stack id; equals the file name without '.json'.")),
          need(f("display_name", K::string, "Name for display: the software and its versions.")),
          req(f("version", K::string, "The versions of the libraries the profile describes.")),
          req(f("description", K::string, "What the stack is and which tools run on it.")),
          need(choice("moe_execution", {"loop", "grouped"}, "How MoE experts run: a loop or grouped GEMMs.")),
          f("zero3_moe_leaf_modules", K::boolean,
            "Under DeepSpeed ZeRO-3 the stack registers each MoE block as a leaf module "
            "(deepspeed.utils.set_z3_leaf_modules): one fetch per block, not per expert (default false)."),
          vendors,
          req(f("notes", K::string, "Which parameters are structural, fitted (on which rows) or assumed.")),
          need(object("memory", "stack.memory", "Memory model parameters.")),
          need(object("throughput", "stack.throughput", "Step-time model parameters.")),
          f("model_support", K::object,
            "Per software (transformers, unsloth, torchtune): the versions the profile pins and, per config "
            "model_type, the first version that loads it (\"none\": none up to the pinned ones)."),
          array("software_versions", K::object, 1,
                "The recorded software versions that map a user's run to this profile (no two profiles' "
                "ranges overlap).",
                "stack.software_versions[]"),
      },
      "_note"};
}

// One range of software_versions[] (read by stack.cpp; a run's software maps to the profile through it).
FieldList stack_software_list() {
  auto version = [](const char* key, const char* help) { return f(key, K::string, help); };
  return {
      "stack.software_versions[]",
      "ftcost.stack/1",
      {
          need(choice("package", {"transformers", "trl", "axolotl", "llamafactory"},
                      "The package whose recorded version decides (axolotl and llamafactory before trl, "
                      "trl before transformers).")),
          version("from", "First version of the package covered, MAJOR.MINOR (absent: every older one)."),
          version("to",
                  "First version of the package no longer covered, MAJOR.MINOR (absent: every newer one)."),
          version("transformers_from",
                  "First transformers version covered, MAJOR.MINOR (absent: any older)."),
          version("transformers_to",
                  "First transformers version no longer covered, MAJOR.MINOR (absent: any newer)."),
          f("note", K::string, "Said with the choice (why this profile)."),
      }};
}

FieldList stack_alias_list() {
  return {"stack.alias",
          "ftcost.stack/1",
          {
              req(choice("schema", {"ftcost.stack/1"}, "Format identifier and version of this file.")),
              req(f("id", K::string, "Stack id; equals the file name without '.json'.")),
              req(f("alias_of", K::string, "Id of the profile this one is an alias of.")),
              req(f("display_name", K::string, "Name for display.")),
              req(f("version", K::string, "The versions of the tools the alias stands for.")),
              req(f("description", K::string, "What runs on the base profile and why.")),
              req(f("notes", K::string, "What the alias changes, if anything.")),
              f("overrides", K::object, "Fields that differ from the base profile (a JSON merge patch)."),
          },
          "_note"};
}

FieldList stack_memory_list() {
  auto bytes = [](Field x, double lo, double hi) { return range(std::move(x), lo, hi, "bytes"); };
  auto share = [](Field x) { return range(std::move(x), 0, 1, ""); };
  return {
      "stack.memory",
      "ftcost.stack/1",
      {
          need(range(f("cuda_context_gib", K::number, "CUDA context and library workspaces."), 0, 16, "GiB")),
          need(share(f("allocator_overhead_fraction", K::number, "Reserved minus allocated at the peak."))),
          f("norm_saves_fp32_input", K::boolean, "RMSNorm saves its input in fp32 (default true)."),
          need(bytes(f("logits_bytes_per_vocab_entry", K::number, "Loss-path bytes per logit."), 0, 64)),
          need(bytes(f("own_code_logits_bytes_per_vocab_entry", K::number, "The same in own training code."),
                     0, 64)),
          need(bytes(f("trainable_param_bytes", K::number, "Bytes per trainable parameter."), 1, 8)),
          need(
              bytes(f("autocast_weight_copy_bytes", K::number, "Autocast copy of a weight, bytes per param."),
                    0, 8)),
          need(
              bytes(f("dequant_temp_bytes_per_param", K::number, "Dequantization buffer per param."), 0, 16)),
          need(share(f("gc_retained_fraction", K::number, "Activations checkpointing keeps resident."))),
          req(f("gc_retained_provenance", K::string, "How gc_retained_fraction was obtained.")),
          req(f("gc_retained_fit_residual_batches", K::number,
                "Residual of the gc_retained fit, in batches.")),
          choice("loss_path", {"full", "chunked", "fused_linear"},
                 "How the loss is computed (default full)."),
          range(f("loss_chunk_tokens", K::number, "Tokens per loss chunk (chunked loss)."), 1, 1e7, "tokens"),
          bytes(
              f("fused_ce_bytes_per_hidden", K::number, "Fused linear cross-entropy bytes per hidden unit."),
              0, 64),
          range(f("mlp_saved_intermediates", K::number, "MLP tensors autograd saves per token (default 4)."),
                0, 8, ""),
          share(f("memory_uncertainty_fraction", K::number, "Relative uncertainty of the memory estimate.")),
          bytes(f("qlora_unquantized_param_bytes", K::number, "Bytes per unquantized param under QLoRA."), 1,
                8),
          f("offload_checkpoints", K::boolean, "Checkpoints are offloaded to host memory (default false)."),
          f("fused_lora_needs_zero_dropout", K::boolean,
            "The stack's fused LoRA kernels apply only at lora_dropout 0 (default false)."),
          choice("default_attention", {"flash", "xformers"},
                 "The attention the stack runs when the job names none (default flash)."),
          choice("adamw_implementation", {"foreach", "fused"},
                 "How torch.optim.AdamW runs: foreach (a state-sized temporary at the step; default) or "
                 "fused."),
          req(choice("peak_model", {"phases", "sum"},
                     "Peak as the largest phase, or all components at once.")),
          array("fit_parameters", K::string, 0, "The memory parameters fit-stack scans, in order."),
          f("fit", K::object, "The scan that produced them: command, rows, intervals (memory.fit)."),
      },
      "_note"};
}

FieldList stack_throughput_list() {
  auto n = [](const char* key, double lo, double hi, const char* unit, const char* help) {
    return need(range(f(key, K::number, help), lo, hi, unit));
  };
  auto opt = [](const char* key, double lo, double hi, const char* unit, const char* help) {
    return range(f(key, K::number, help), lo, hi, unit);
  };
  return {
      "stack.throughput",
      "ftcost.stack/1",
      {
          n("host_us_per_kernel", 0, 1000, "us", "Host time per kernel launch."),
          n("backward_host_factor", 0, 4, "", "Host time of the backward pass relative to the forward."),
          n("host_sync_us", 0, 10000, "us", "Host time per device synchronisation."),
          n("kernel_floor_us", 0, 1000, "us", "Shortest time of a kernel."),
          n("host_device_overlap", 0, 1, "", "Share of host time hidden behind device work."),
          n("kernels_per_linear", 0, 100, "", "Kernels per linear layer."),
          n("kernels_per_quantized_linear_extra", 0, 100, "", "Extra kernels per quantized linear."),
          n("kernels_per_lora_module", 0, 100, "", "Kernels per LoRA adapter."),
          n("kernels_per_expert_overhead", 0, 1000, "", "Kernels per expert besides its GEMMs."),
          n("kernels_per_attention_block", 0, 1000, "", "Kernels per attention block."),
          n("kernels_per_mamba_block", 0, 1000, "", "Kernels per Mamba block."),
          n("kernels_per_router", 0, 1000, "", "Kernels per MoE router."),
          n("kernels_per_norm", 0, 100, "", "Kernels per norm."),
          n("gemm_efficiency", 0.01, 1, "", "Share of the GEMM roofline reached."),
          n("attention_efficiency_factor", 0.01, 1.5, "", "Attention efficiency relative to GEMMs."),
          n("memory_efficiency", 0.01, 1, "", "Share of DRAM bandwidth streaming kernels reach."),
          n("dequant_efficiency", 0.01, 1, "", "Share of bandwidth NF4 dequantization reaches."),
          n("optimizer_efficiency", 0.01, 1, "", "Share of bandwidth the optimizer step reaches."),
          n("dequant_bytes_per_param", 0, 64, "bytes", "DRAM traffic of dequantization per param."),
          n("optimizer_bytes_per_param_fp32", 0, 512, "bytes", "Optimizer traffic per fp32 param."),
          n("optimizer_bytes_per_param_16bit", 0, 512, "bytes", "Optimizer traffic per 16-bit param."),
          n("loss_bytes_per_vocab_entry", 0, 512, "bytes", "Loss traffic per logit."),
          opt("kernels_per_gather_backward", 0, 1000, "", "Kernels per gather in the backward (default 0)."),
          opt("own_code_kernels_per_router", 0, 1000, "", "Router kernels in own code (default: HF count)."),
          opt("own_code_kernels_per_norm", 0, 1000, "", "Norm kernels in own code (default: HF count)."),
          opt("own_code_kernels_per_expert_overhead", 0, 1000, "",
              "Expert overhead kernels in own code (default: HF count)."),
          opt("gemm_memory_efficiency", 0.01, 1, "",
              "Bandwidth share of memory-bound GEMMs (default: "
              "memory_efficiency)."),
          opt("hopper_tensor_peak_fraction", 0.05, 1, "", "Share of Hopper's tensor peak (default 1)."),
          f("hopper_tensor_note", K::string, "Why hopper_tensor_peak_fraction has its value."),
          req(f("note", K::string, "Where each throughput constant comes from.")),
          req(f("fit", K::object, "The fit that produced the fitted parameters: command, GPUs, rows.")),
          array("fit_parameters", K::string, 0, "The parameters the fit set."),
          object("ops", "stack.ops",
                 "The kernels between the GEMMs: inventory, fused groups, host time per op."),
      },
      "_note"};
}

FieldList stack_ops_list() {
  auto opt = [](const char* key, double lo, double hi, const char* unit, const char* help) {
    return range(f(key, K::number, help), lo, hi, unit);
  };
  return {
      "stack.ops",
      "ftcost.stack/1",
      {
          need(choice("inventory", {"coarse", "eager"},
                      "coarse: kernels_per_* constants per module; eager: the per-kernel inventory "
                      "(core/predict/src/ops.cpp).")),
          array("fused", K::string, 0, "Kernel groups the stack fuses: rmsnorm, rope, swiglu, residual."),
          opt("python_us_per_op", 0, 1000, "us", "Python time per op the forward issues (eager inventory)."),
          opt("dispatch_us_per_op", 0, 1000, "us", "Dispatcher and launch time per op on the host."),
          opt("optimizer_host_us_per_tensor", 0, 1000, "us",
              "Python time of the optimizer step, clipping and zero_grad per trainable tensor."),
          opt("bandwidth_fraction", 0.05, 1, "",
              "Share of the datasheet bandwidth element-wise kernels stream at."),
      },
      "_note"};
}

const std::vector<FieldList>& all_lists() {
  static const std::vector<FieldList> lists = [] {
    std::vector<FieldList> out = {gpu_list(),
                                  gpu_dense_tflops_list(),
                                  gpu_interconnect_list(),
                                  gpu_chosen_value_list(),
                                  prices_list(),
                                  price_offer_list(),
                                  price_network_list(),
                                  model_list(),
                                  model_published_list(),
                                  dataset_list(),
                                  dataset_length_list(),
                                  stack_list(),
                                  stack_alias_list(),
                                  stack_software_list(),
                                  stack_memory_list(),
                                  stack_throughput_list(),
                                  stack_ops_list()};
    // The calibration file's lists (fields_calibration.cpp), in their place after the datasets'.
    const std::vector<FieldList> cal = calibration_field_lists();
    out.insert(out.begin() + 11, cal.begin(), cal.end());
    return out;
  }();
  return lists;
}

std::string num_text(double v) {
  char buf[32];
  if (std::fabs(v) < 1e15 && std::floor(v) == v)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string with_unit(double v, const std::string& unit) {
  return unit.empty() ? num_text(v) : num_text(v) + " " + unit;
}

std::string quoted_list(const std::vector<std::string>& values, bool or_null) {
  std::string out;
  const std::size_t n = values.size() + (or_null ? 1 : 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) out += i + 1 == n ? " or " : ", ";
    out += i < values.size() ? json(values[i]).dump() : std::string("null");
  }
  return out;
}

std::string why(const Field& x) { return x.why_limited.empty() ? std::string() : ": " + x.why_limited; }

bool whole(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15;
}

}  // namespace

const Field* FieldList::find(const std::string& key) const {
  for (const auto& x : fields)
    if (x.key == key) return &x;
  return nullptr;
}

bool FieldList::free_text(const std::string& key) const {
  const std::string& sfx = free_text_suffix;
  return !sfx.empty() && key.size() > sfx.size() &&
         key.compare(key.size() - sfx.size(), sfx.size(), sfx) == 0;
}

const FieldList* field_list(const std::string& name) {
  for (const auto& l : all_lists())
    if (l.name == name) return &l;
  return nullptr;
}

std::vector<std::string> field_list_names() {
  std::vector<std::string> out;
  for (const auto& l : all_lists()) out.push_back(l.name);
  return out;
}

std::string field_kind_text(const Field& x) {
  std::string t;
  switch (x.kind) {
    case K::string:
      t = "a string";
      break;
    case K::number:
      t = "a number";
      break;
    case K::integer:
      t = "a whole number";
      break;
    case K::boolean:
      return x.nullable ? "true, false or null" : "true or false";
    case K::choice:
      return quoted_list(x.values, x.nullable);
    case K::object:
      t = "an object";
      break;
    case K::array:
      t = "an array";
      break;
    case K::any:
      return "a value";
  }
  return x.nullable ? t + " or null" : t;
}

std::string field_range_text(const Field& x) {
  const bool lo = x.has_min();
  const bool hi = x.has_max();
  if (lo && hi && !x.min_exclusive) return "between " + num_text(x.min) + " and " + with_unit(x.max, x.unit);
  if (lo && hi) return "> " + num_text(x.min) + " and at most " + with_unit(x.max, x.unit);
  if (lo) return (x.min_exclusive ? "> " : "at least ") + with_unit(x.min, x.unit);
  if (hi) return "at most " + with_unit(x.max, x.unit);
  return "";
}

std::string field_type_problem(const Field& x, const json& v) {
  if (v.is_null())
    return x.nullable || x.kind == K::any ? "" : "must be " + field_kind_text(x) + ", got null";
  bool ok = false;
  switch (x.kind) {
    case K::string:
    case K::choice:
      ok = v.is_string();
      break;
    case K::number:
      ok = v.is_number();
      break;
    case K::integer:
      ok = whole(v);
      break;
    case K::boolean:
      ok = v.is_boolean();
      break;
    case K::object:
      ok = v.is_object();
      break;
    case K::array:
      ok = v.is_array();
      break;
    case K::any:
      ok = true;
      break;
  }
  if (ok && v.is_number_float() && !std::isfinite(v.get<double>())) return "must be a finite number";
  if (ok) return "";
  if (x.kind == K::integer && v.is_number())
    return "must be a whole number, got " + num_text(v.get<double>());
  if (x.kind == K::choice) return "must be " + field_kind_text(x) + ", got " + v.type_name();
  return "must be " + field_kind_text(x) + ", got " + v.type_name();
}

std::string field_value_problem(const Field& x, const json& v) {
  std::string tp = field_type_problem(x, v);
  if (!tp.empty() || v.is_null()) return tp;
  if ((x.kind == K::number || x.kind == K::integer) && (x.has_min() || x.has_max())) {
    const double d = v.get<double>();
    const bool low = x.min_exclusive ? d <= x.min : d < x.min;
    if (low || d > x.max) return "must be " + field_range_text(x) + ", got " + num_text(d) + why(x);
  }
  if (x.kind == K::string) {
    const std::size_t n = v.get_ref<const std::string&>().size();
    if (x.min_length > 0 && n < x.min_length)
      return x.min_length == 1 ? "must not be empty"
                               : "must have at least " + std::to_string(x.min_length) + " characters";
    if (x.max_length > 0 && n > x.max_length)
      return "longer than " + std::to_string(x.max_length) + " characters";
  }
  if (x.kind == K::choice) {
    const std::string s = v.get<std::string>();
    bool known = false;
    for (const auto& a : x.values) known = known || a == s;
    if (!known) return "must be " + field_kind_text(x) + ", got " + json(s).dump() + why(x);
  }
  return "";  // array items are checked by the reader (strings) and the checker, with their index in the path
}

// ------------------------------------------------------------------------------------ FieldReader

FieldReader::FieldReader(const json& obj, const FieldList& list, std::string path, std::string where)
    : obj_(obj), list_(list), path_(std::move(path)), where_(std::move(where)) {}

Status FieldReader::check_object() const {
  if (obj_.is_object()) return Ok{};
  return make_error(Errc::wrong_type, path_.empty() ? where_ : path_,
                    std::string("must be a JSON object, got ") + obj_.type_name());
}

Status FieldReader::check_file() const {
  FTCOST_CHECK(check_object());
  FTCOST_CHECK(choice("schema"));
  return Ok{};
}

Result<FieldReader> FieldReader::file(const json& doc, const std::string& list, const std::string& source) {
  FieldReader r(doc, *field_list(list), "", source);
  FTCOST_CHECK(r.check_file());
  return r;
}

bool FieldReader::present(const std::string& key) const { return has(obj_, key); }

namespace {
// Each key's value into its member through read(key, the member's value as the fallback), in the order
// given; the first error stops the walk.
template <class T, class Read>
Status read_into(std::initializer_list<std::pair<const char*, T*>> fields, const Read& read) {
  for (const auto& [key, dst] : fields) {
    FTCOST_TRY(v, read(key, *dst));
    *dst = v;
  }
  return Ok{};
}
}  // namespace

Status FieldReader::numbers(std::initializer_list<std::pair<const char*, double*>> fields) const {
  return read_into(fields, [this](const char* key, double fallback) { return number(key, fallback); });
}

Status FieldReader::texts(std::initializer_list<std::pair<const char*, std::string*>> fields) const {
  return read_into(fields,
                   [this](const char* key, const std::string& fallback) { return string(key, fallback); });
}

Status FieldReader::flags(std::initializer_list<std::pair<const char*, bool*>> fields) const {
  return read_into(fields, [this](const char* key, bool fallback) -> Result<bool> {
    FTCOST_TRY(v, boolean(key, fallback ? 1 : 0));
    return v == 1;
  });
}

Result<const Field*> FieldReader::field(const std::string& key, FieldKind kind) const {
  const Field* x = list_.find(key);
  const bool fits = x && (x->kind == kind || (kind == K::string && x->kind == K::choice) ||
                          (kind == K::number && x->kind == K::integer));
  if (!fits)
    return make_error(Errc::internal, path_of(key),
                      "the loader reads a key that " + list_.name + "'s field list does not describe so");
  return x;
}

Result<const json*> FieldReader::value(const Field& x) const {
  FTCOST_CHECK(check_object());
  const std::string p = path_of(x.key);
  auto it = obj_.find(x.key);
  if (it == obj_.end() || it->is_null()) {
    if (x.needed)
      return make_error(Errc::missing_field, p, "required field is missing (" + field_kind_text(x) + ")");
    return static_cast<const json*>(nullptr);
  }
  const std::string tp = field_type_problem(x, *it);
  if (!tp.empty())
    return make_error(tp == "must be a finite number" ? Errc::invalid_value : Errc::wrong_type, p, tp);
  if (x.key == "schema" && x.values.size() == 1 && *it != x.values[0])  // the format identifier
    return make_error(Errc::schema_mismatch, p,
                      "expected " + json(x.values[0]).dump() + ", got " + it->dump());
  const std::string vp = field_value_problem(x, *it);
  if (!vp.empty()) return make_error(x.kind == K::choice ? Errc::invalid_value : Errc::out_of_range, p, vp);
  return &*it;
}

Result<double> FieldReader::number(const std::string& key, double fallback) const {
  FTCOST_TRY(x, field(key, K::number));
  FTCOST_TRY(v, value(*x));
  return v ? v->get<double>() : fallback;
}

Result<std::int64_t> FieldReader::integer(const std::string& key, std::int64_t fallback) const {
  FTCOST_TRY(x, field(key, K::integer));
  FTCOST_TRY(v, value(*x));
  return v ? static_cast<std::int64_t>(v->get<double>()) : fallback;
}

Result<std::string> FieldReader::string(const std::string& key, const std::string& fallback) const {
  FTCOST_TRY(x, field(key, K::string));
  FTCOST_TRY(v, value(*x));
  return v ? v->get<std::string>() : fallback;
}

Result<std::string> FieldReader::choice(const std::string& key, const std::string& fallback) const {
  FTCOST_TRY(x, field(key, K::choice));
  FTCOST_TRY(v, value(*x));
  return v ? v->get<std::string>() : fallback;
}

Result<int> FieldReader::boolean(const std::string& key, int fallback) const {
  FTCOST_TRY(x, field(key, K::boolean));
  FTCOST_TRY(v, value(*x));
  if (!v) return fallback;
  return v->get<bool>() ? 1 : 0;
}

Result<std::vector<std::string>> FieldReader::strings(const std::string& key) const {
  FTCOST_TRY(x, field(key, K::array));
  FTCOST_TRY(v, value(*x));
  std::vector<std::string> out;
  if (!v) return out;
  const std::string p = path_of(key);
  if (v->size() < x->min_items)
    return make_error(
        Errc::missing_field, p,
        "needs at least " + std::to_string(x->min_items) + " item" + (x->min_items == 1 ? "" : "s"));
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    const std::string ep = p + "[" + std::to_string(i) + "]";
    if (!e.is_string())
      return make_error(Errc::wrong_type, ep, std::string("must be a string, got ") + e.type_name());
    if (e.get<std::string>().empty()) return make_error(Errc::invalid_value, ep, "must not be empty");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<const json*> FieldReader::member(const std::string& key) const {
  const Field* x = list_.find(key);
  if (!x || (x->kind != K::object && x->kind != K::array))
    return make_error(Errc::internal, path_of(key),
                      "the loader reads a key that " + list_.name + "'s field list does not describe so");
  FTCOST_TRY(v, value(*x));
  if (v && x->kind == K::array && v->size() < x->min_items)
    return make_error(
        Errc::missing_field, path_of(key),
        "needs at least " + std::to_string(x->min_items) + " item" + (x->min_items == 1 ? "" : "s"));
  return v;
}

}  // namespace ftcost
