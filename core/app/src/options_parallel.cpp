// The multi-GPU groups of the option table (options_internal.hpp), the calculator's "More than one GPU"
// section (group "multi-gpu"; parallel.hpp turns them into a plan).
#include "ftcost/parallel.hpp"
#include "ftcost/suggest.hpp"
#include "options_internal.hpp"

#include <algorithm>
#include <cstdlib>

namespace ftcost {

namespace {

// What an unknown --node value is told: a path gets how to describe another machine.
std::string node_path_hint(const std::string& v) {
  if (!looks_like_path(v)) return "";
  return " (--node takes the id of a preset in gpu-db/nodes/, not a file: give --gpus, --nodes, "
         "--network and --network-gbit-per-gpu for another machine)";
}

// The GPUs that train together, all nodes.
int ranks(const ResolveState& st) { return st.in.multi.gpus * st.in.multi.nodes; }

// Options of a node's network (--nodes 2 or more) and of a node's GPUs together (2 or more in all).
std::string only_several_nodes(const ResolveState& st) {
  return st.in.multi.nodes > 1 ? "" : "applies only with --nodes 2 or more";
}

std::string only_several_gpus(const ResolveState& st) {
  return ranks(st) > 1 ? "" : "applies only with --gpus 2 or more";
}

// --nvme-gbps: only with an NVMe offload (ZeRO-Infinity); the value is checked by the plan's own parser.
std::string nvme_gbps_applies(const ResolveState& st) {
  const std::string& off = st.in.multi.offload;
  if (off == "optimizer-nvme" || off == "params-nvme") return "";
  return "applies only with --offload optimizer-nvme or params-nvme";
}

Status apply_nvme_gbps(ResolveState& st, const std::string& v) {
  FTCOST_TRY(rates, parse_nvme_gbps(json{{"nvme-gbps", v}}));
  (void)rates;
  st.in.multi.nvme_gbps = v;
  return Ok{};
}

// --zero3: only with --parallel zero3 or auto; the value is checked by the plan's own parser.
std::string zero3_applies(const ResolveState& st) {
  const std::string& p = st.in.multi.parallel;
  return p == "zero3" || p == "auto" ? "" : "applies only with --parallel zero3 (or auto)";
}

Status apply_zero3(ResolveState& st, const std::string& v) {
  FTCOST_TRY(z, parse_zero3(v, "--zero3"));
  (void)z;
  st.in.multi.zero3 = v;
  return Ok{};
}

// --parallel: the strategy's syntax (the same parser the plan uses, so the message names the flag and lists
// the strategies), then what the model rules out whatever the GPU count (check_parallel_for_model: ep:N on a
// dense model), refused here so that scale and compare refuse it as estimate does rather than fail at every
// GPU count.
Status apply_parallel(ResolveState& st, const std::string& v) {
  static const std::vector<std::string> plain = {"auto", "ddp",   "fsdp",  "fsdp-grad-op",
                                                 "hsdp", "zero1", "zero2", "zero3"};
  bool ok = std::find(plain.begin(), plain.end(), v) != plain.end();
  const std::size_t colon = v.find(':');
  if (!ok && colon != std::string::npos) {
    const std::string head = v.substr(0, colon);
    const std::string num = v.substr(colon + 1);
    bool digits = !num.empty() && num.size() <= 3;
    for (char c : num) digits = digits && c >= '0' && c <= '9';
    if ((head == "tp" || head == "ep" || head == "cp") && digits) {
      const int deg = std::atoi(num.c_str());
      if (deg < 2 || deg > 512)
        return make_error(Errc::out_of_range, "--parallel",
                          head + ":N needs N between 2 and 512, got " + num);
      ok = true;
    }
  }
  if (!ok)
    return make_error(Errc::invalid_value, "--parallel",
                      "must be one of ddp, fsdp, fsdp-grad-op, hsdp, zero1, zero2, zero3, tp:N, ep:N, cp:N "
                      "or auto, got \"" +
                          v + "\"");
  FTCOST_TRY(parsed, parse_parallel(v, "--parallel", {}));
  if (auto fit = check_parallel_for_model(parsed.strategy, parsed.degree, st.in.model); !fit.ok())
    return fit.error();
  st.in.multi.parallel = v;
  return Ok{};
}

// --fp8-all-gather: only with --fp8 tensorwise (torchao float8/config.py: the FP8 all-gather casts the weight
// with one tensorwise scale) on several GPUs.
std::string fp8_all_gather_applies(const ResolveState& st) {
  if (st.in.workload.fp8 != "tensorwise")
    return "applies only with --fp8 tensorwise (torchao's FSDP2 float8 all-gather uses tensorwise scales)";
  return only_several_gpus(st);
}

Option node_option() {
  Option o = declare_option("node", OptionKind::id_or_path, "multi-gpu", "Node");
  o.help = "Node preset (gpu-db/nodes/): GPUs per node, how they are joined, network, host RAM";
  o.details =
      "A machine shape with sources: its GPU count sets --gpus, its NVLink/PCIe and network set the "
      "communication links, its host RAM bounds offload. Its GPU must be --gpu.";
  o.id_list = "nodes";
  o.reads = {"gpu"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    const NodeShape* n = st.db.node(v);
    if (n == nullptr) {
      std::vector<std::string> ids;
      for (const auto& [id, x] : st.db.nodes()) ids.push_back(id);
      return make_error(Errc::unknown_id, "--node",
                        "unknown node preset \"" + v + "\"" + known_ids_hint(v, ids) + node_path_hint(v));
    }
    if (n->gpu != st.in.gpu.id)
      return make_error(Errc::invalid_value, "--node",
                        v + " holds " + n->gpu + " GPUs, but --gpu is " + st.in.gpu.id);
    st.in.multi.node = v;
    st.in.multi.gpus = n->gpus;
    return Ok{};
  };
  return o;
}

Option gpus_option() {
  Option o = declare_option("gpus", OptionKind::count, "multi-gpu", "GPUs per node");
  o.help = "GPUs per node";
  o.details = "GPUs in each node that train together; with --node, at most the preset's count.";
  o.unit = "GPUs";
  o.lo = 1;
  o.hi = 72;
  o.reads = {"node"};
  o.hi_rule = [](const ResolveState& st) {
    const NodeShape* n = st.in.multi.node.empty() ? nullptr : st.db.node(st.in.multi.node);
    return n ? static_cast<double>(n->gpus) : 72.0;
  };
  o.default_help = "1, or the --node preset's GPU count";
  o.default_rule = [](const ResolveState& st) {
    DefaultValue d = fixed_default(std::to_string(st.in.multi.gpus));
    d.listed = false;
    return d;
  };
  o.apply = stores(&MultiGpuRequest::gpus, count_value);
  return o;
}

Option nodes_option() {
  Option o = declare_option("nodes", OptionKind::count, "multi-gpu", "Nodes");
  o.help = "Nodes (each with --gpus GPUs); more than one needs a network (--node or --network)";
  o.details =
      "Machines that train together; the gradient and parameter traffic between them crosses the network.";
  o.unit = "nodes";
  o.lo = 1;
  o.hi = 4096;
  o.default_help = "1";
  o.default_rule = unlisted_default("1");
  o.apply = stores(&MultiGpuRequest::nodes, count_value);
  return o;
}

Option offload_option() {
  Option o = declare_option("offload", OptionKind::choice, "multi-gpu", "Offload");
  o.help = "Move optimizer states (or parameters too) to host RAM or NVMe";
  o.details =
      "DeepSpeed ZeRO-Offload / FSDP CPU offload: optimizer states and fp32 gradients (optimizer), or "
      "parameters as well (params: zero3 or fsdp), live in host RAM; the optimizer step runs on the CPU. "
      "ZeRO-Infinity (zero3): the same on the node's NVMe drives (optimizer-nvme, params-nvme), host RAM "
      "keeping only swap buffers; every step reads and writes them (--nvme-gbps).";
  o.values = {{"none", "none", "everything on the GPU"},
              {"optimizer", "optimizer", "optimizer states and fp32 gradients in host RAM (zero1/2/3)"},
              {"params", "params", "parameters too (zero3, fsdp)"},
              {"optimizer-nvme", "optimizer-nvme", "optimizer states and fp32 gradients on NVMe (zero3)"},
              {"params-nvme", "params-nvme", "parameters too, beyond 1e9 per GPU (zero3)"}};
  o.default_help = "none";
  o.default_rule = unlisted_default("none");
  o.apply = stores(&MultiGpuRequest::offload, text_value);
  return o;
}

Option nvme_gbps_option() {
  Option o = declare_option("nvme-gbps", OptionKind::text, "multi-gpu", "NVMe GB/s");
  o.help = "The node's NVMe read[,write] rate for ZeRO-Infinity, GB/s (e.g. 10,5)";
  o.details =
      "Sequential read and write rates of the node's NVMe drives together, as DeepSpeed's async I/O "
      "reaches them (one number: both). Used with --offload optimizer-nvme / params-nvme.";
  o.unit = "GB/s";
  o.default_help = "10,5 (DeepSpeed's measurement of 4 PCIe 4.0 SSDs in RAID-0)";
  o.not_applicable_warns = true;
  o.reads = {"offload"};
  o.applies = nvme_gbps_applies;
  o.apply = apply_nvme_gbps;
  return o;
}

Option parallel_option() {
  Option o = declare_option("parallel", OptionKind::text, "multi-gpu", "Strategy");
  o.help = "Multi-GPU strategy";
  o.details =
      "How the GPUs share the job: data parallel (ddp), sharded data parallel (fsdp, fsdp-grad-op, hsdp "
      "across nodes; DeepSpeed zero1/zero2/zero3), tensor(+sequence) parallel tp:N, expert parallel ep:N "
      "(MoE), context parallel cp:N; auto picks the fastest that fits.";
  o.values = {{"auto", "auto", "the fastest strategy that fits, and why"},
              {"ddp", "ddp", "PyTorch DDP: replicas, gradient all-reduce in buckets"},
              {"fsdp", "fsdp", "FSDP full shard: parameters, gradients, optimizer states sharded"},
              {"fsdp-grad-op", "fsdp-grad-op", "FSDP SHARD_GRAD_OP: gradients and optimizer sharded"},
              {"hsdp", "hsdp", "FSDP sharded in a node, replicated across nodes"},
              {"zero1", "zero1", "DeepSpeed ZeRO-1: optimizer states sharded"},
              {"zero2", "zero2", "DeepSpeed ZeRO-2: + gradients"},
              {"zero3", "zero3", "DeepSpeed ZeRO-3: + parameters"},
              {"tp:N", "tp:N", "Megatron tensor + sequence parallelism over N GPUs of a node"},
              {"ep:N", "ep:N", "expert parallelism over N GPUs (MoE)"},
              {"cp:N", "cp:N", "context (ring attention) parallelism over N GPUs"}};
  o.default_help = "auto with more than one GPU or with --offload";
  o.reads = {"model", "gpus", "nodes", "offload"};
  o.default_rule = [](const ResolveState& st) {
    if (ranks(st) <= 1 && st.in.multi.offload == "none") return DefaultValue{};
    return fixed_default("auto", "the fastest strategy that fits on " + std::to_string(ranks(st)) +
                                     (ranks(st) == 1 ? " GPU" : " GPUs"));
  };
  o.apply = apply_parallel;
  return o;
}

Option zero3_option() {
  Option o = declare_option("zero3", OptionKind::text, "multi-gpu", "ZeRO-3 cache");
  o.help =
      "DeepSpeed ZeRO-3 cache settings, KEY=VALUE,... (e.g. "
      "max_live_parameters=1e9,prefetch_bucket_size=auto)";
  o.details =
      "The zero_optimization keys of your DeepSpeed config that decide what stays gathered on each GPU: "
      "stage3_max_live_parameters, stage3_max_reuse_distance, stage3_prefetch_bucket_size, "
      "stage3_param_persistence_threshold (elements; auto = the HF Trainer's 0.9 H^2 and 10 H) and "
      "zero_hpz_partition_size (ZeRO++ hpZ). Without it ftcost assumes DeepSpeed's defaults with the HF "
      "Trainer's auto values, and the memory range's upper end covers a look-ahead up to "
      "max_live_parameters.";
  o.default_help = "DeepSpeed's defaults, auto bucket and persistence (assumed)";
  o.not_applicable_warns = true;
  o.reads = {"parallel"};
  o.applies = zero3_applies;
  o.apply = apply_zero3;
  return o;
}

Option network_option() {
  Option o = declare_option("network", OptionKind::choice, "multi-gpu", "Network");
  o.help = "Network between nodes (overrides the --node preset's)";
  o.details = "The fabric between nodes: InfiniBand or RoCE (GPUDirect RDMA) or plain Ethernet (TCP).";
  o.values = {{"infiniband", "InfiniBand", ""},
              {"roce", "RoCE", ""},
              {"ethernet", "Ethernet", ""},
              {"none", "none", "a single node"}};
  o.default_help = "the --node preset's";
  o.not_applicable_warns = true;  // like --moe on a dense model: ignored with a warning
  o.reads = {"nodes"};
  o.applies = only_several_nodes;
  o.apply = stores(&MultiGpuRequest::network, text_value);
  return o;
}

Option network_gbit_per_gpu_option() {
  Option o = declare_option("network-gbit-per-gpu", OptionKind::real, "multi-gpu", "Net. per GPU");
  o.help = "NIC line rate available to each GPU, Gbit/s (with --nodes 2 or more)";
  o.details = "The node's network bandwidth divided by its GPUs (8 x 400 Gb/s InfiniBand on 8 GPUs: 400).";
  o.unit = "Gbit/s";
  o.lo = 0.1;
  o.hi = 10000;
  o.default_help = "the --node preset's";
  o.not_applicable_warns = true;  // like --moe on a dense model: ignored with a warning
  o.reads = {"nodes"};
  o.applies = only_several_nodes;
  o.apply = stores(&MultiGpuRequest::network_gbit_per_gpu, real_value);
  return o;
}

Option host_memory_gbps_option() {
  Option o = declare_option("host-memory-gbps", OptionKind::real, "multi-gpu", "Host memory");
  o.help =
      "The node's host memory bandwidth, GB/s (all channels at line rate): bounds PCIe GPUs without "
      "peer-to-peer";
  o.details =
      "Without PCIe peer-to-peer (GeForce cards) NCCL stages GPU-to-GPU traffic through host memory, "
      "which every GPU of the node then shares: 8 channels of DDR4-3200 are 204.8 GB/s.";
  o.unit = "GB/s";
  o.lo = 1;
  o.hi = 100000;
  o.default_help = "the --node preset's, else 204.8 (assumed)";
  o.not_applicable_warns = true;
  o.reads = {"gpus", "nodes"};
  o.applies = only_several_gpus;
  o.apply = stores(&MultiGpuRequest::host_memory_gbps, real_value);
  return o;
}

Option sequence_parallel_option() {
  Option o = declare_option("sequence-parallel", OptionKind::count, "multi-gpu", "Sequence parallel");
  o.help =
      "DeepSpeed Ulysses sequence parallelism: split each sample's sequence over N GPUs of a node "
      "(with --parallel zero1, zero2 or zero3)";
  o.details =
      "Each rank holds 1/N of the tokens; attention all-to-alls the sequence for 1/N of the heads "
      "(deepspeed/runtime/sequence_parallel/ulysses_sp.py), as ArcticTraining, ms-swift and "
      "LLaMA-Factory run it. N divides the GPUs and the attention heads.";
  o.unit = "GPUs";
  o.lo = 1;
  o.hi = 64;
  o.default_help = "1 (off)";
  o.reads = {"gpus", "nodes"};
  o.applies = only_several_gpus;
  o.apply = stores(&MultiGpuRequest::sequence_parallel, count_value);
  return o;
}

Option fp8_all_gather_option() {
  Option o = declare_option("fp8-all-gather", OptionKind::toggle, "multi-gpu", "FP8 all-gather");
  o.help = "FSDP2 all-gathers the float8 linears' weights in FP8, 1 byte per parameter (--fp8 tensorwise)";
  o.details =
      "torchao's Float8LinearConfig(enable_fsdp_float8_all_gather=True): each float8 linear's weight is a "
      "WeightWithDynamicFloat8CastTensor whose fsdp_pre_all_gather casts the local shard to FP8 with a "
      "tensorwise scale, so FSDP2's forward and backward all-gathers move 1 B per parameter of those "
      "weights instead of 2 (torchao float8/fsdp_utils.py). Only with --parallel fsdp or hsdp; the "
      "embeddings, norms, router and lm_head are gathered as before.";
  o.values = {{"off", "off", ""}, {"on", "on", ""}};
  o.default_help = "off";
  o.reads = {"fp8", "gpus", "nodes"};
  o.default_rule = unlisted_default("off");
  o.applies = fp8_all_gather_applies;
  o.apply = stores(&Workload::fp8_all_gather, on_value);
  return o;
}

}  // namespace

// The node, the GPUs and nodes, offloading and the strategy.
void add_parallel_options(std::vector<Option>& table) {
  table.push_back(node_option());
  table.push_back(gpus_option());
  table.push_back(nodes_option());
  table.push_back(offload_option());
  table.push_back(nvme_gbps_option());
  table.push_back(parallel_option());
  table.push_back(zero3_option());
}

// The links between GPUs and nodes, Ulysses sequence parallelism and FP8 all-gathers.
void add_network_options(std::vector<Option>& table) {
  table.push_back(network_option());
  table.push_back(network_gbit_per_gpu_option());
  table.push_back(host_memory_gbps_option());
  table.push_back(sequence_parallel_option());
  table.push_back(fp8_all_gather_option());
}

}  // namespace ftcost
