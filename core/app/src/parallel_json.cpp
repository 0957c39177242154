// The JSON of a multi-GPU estimate: the single-GPU answer with the per-rank memory, the communication items,
// the plan's links and the job's time and cost; and the single GPU's warnings that still apply.
#include "ftcost/parallel.hpp"
#include "ftcost/units.hpp"

namespace ftcost {

std::vector<std::string> single_gpu_warnings(const ParallelEstimate& p) {
  // What quotes the single GPU's memory, batch or step (its fit, its range, its loss at its batch, its
  // host-bound share and the advice priced at its batch) is not about the ranks: they answer for themselves.
  static const char* const kOneGpuOnly[] = {"does not fit",
                                            "paged optimizer:",
                                            "offloaded checkpoints need",
                                            "fits only at the low end",
                                            "tight:",
                                            "loss:",
                                            "host-bound:",
                                            "batch "};
  std::vector<std::string> out;
  for (const auto& w : p.single.warnings) {
    bool keep = true;
    for (const char* k : kOneGpuOnly)
      if (w.rfind(k, 0) == 0 || (std::string(k) == "does not fit" && w.find(k) != std::string::npos))
        keep = false;
    if (keep) out.push_back(w);
  }
  return out;
}

json parallel_to_json(const ParallelEstimate& p) {
  json j = estimate_to_json(p.single);
  if (p.is_single) return j;
  const ParallelEstimate& e = p;
  json single = {{"max_batch_size", j["max_batch_size"]},
                 {"fits", j["fits"]},
                 {"step_time_s", j["step_time_s"]},
                 {"throughput_queries_per_s", j["throughput_queries_per_s"]}};
  for (const char* k : {"ops", "step_top_ops", "step_breakdown_s", "layer_breakdown_s", "kernel_classes_s",
                        "costs", "cost_usd_range", "throughput_queries_per_s_range", "device_time_s",
                        "host_wait_s", "kernels_per_step", "price",
                        // one-GPU memory answers: per rank they would be wrong
                        "memory_range_gib", "free_gib", "max_seq_len_batch1"})
    j.erase(k);
  j["single_gpu"] = single;
  j["gpus"] = e.plan.ranks();
  j["max_batch_size"] = e.max_micro_batch;
  j["batch_size"] = e.micro_batch;
  j["global_batch_size"] = e.global_batch;
  j["fits"] = e.fits;
  // the memory state per rank (estimate.hpp's rule: tight above kTightMemoryFraction of the usable memory)
  const double fraction = e.usable_bytes > 0 ? e.memory.on_gpu(e.usable_bytes) / e.usable_bytes : 0;
  j["memory_fraction"] = fraction;
  j["memory_state"] = rank_memory_state(e);
  json mem = components_gib(e.memory.base);  // the rank's own breakdown, plus what sharding adds
  mem["total"] = e.memory.total() / kGiB;
  mem["fp32_grad_partition"] = e.memory.fp32_grad_partition / kGiB;
  mem["gather_buffers"] = e.memory.gather_buffers / kGiB;
  mem["bucket_buffers"] = e.memory.bucket_buffers / kGiB;
  mem["nccl_buffers"] = e.memory.nccl_buffers / kGiB;
  mem["live_params"] = e.memory.live_params / kGiB;
  mem["quant_states"] = e.memory.quant_states / kGiB;
  mem["expert_copies"] = e.memory.expert_copies / kGiB;
  mem["residue_high"] = e.memory.residue_high / kGiB;
  if (!e.memory.residue_term.empty()) mem["residue_term"] = e.memory.residue_term;
  j["memory_gib"] = mem;
  j["paged_out_gib"] = e.memory.paged_out(e.usable_bytes) / kGiB;
  json comm = json::array();
  for (const auto& c : e.comm)
    comm.push_back(json_object({"name", c.name}, {"op", coll_op_name(c.op)}, {"scope", c.scope},
                               {"algorithm", c.algorithm}, {"ranks", c.ranks}, {"bytes_per_call", c.bytes},
                               {"calls", c.calls}, {"time_s", c.time_s}, {"overlapped_s", c.overlapped_s},
                               {"exposed_s", c.exposed_s}, {"overlap", c.overlap}));
  json par = json_object(
      {"strategy", e.strategy_label}, {"gpus_per_node", e.plan.gpus_per_node}, {"nodes", e.plan.nodes},
      {"data_parallel", e.dp}, {"grad_accum", e.plan.grad_accum}, {"offload", offload_name(e.plan.offload)},
      {"intra_node_link",
       {{"kind", link_kind_name(e.plan.intra.kind)},
        {"busbw_gbps", e.plan.intra.busbw_gbps},
        {"latency_us", e.plan.intra.latency_us},
        {"note", e.plan.intra.note}}},
      {"host_gib_per_rank", e.memory.host_bytes / kGiB}, {"communication", comm},
      {"optimizer_steps", e.optimizer_steps}, {"compute_s", e.compute_s}, {"optimizer_s", e.optimizer_s},
      {"communication_s", e.comm_s}, {"communication_exposed_s", e.comm_exposed_s},
      {"scaling_efficiency", e.scaling_efficiency}, {"why", e.why});
  if (!e.plan.node_id.empty()) par["node"] = e.plan.node_id;
  if (offload_on_nvme(e.plan.offload))
    par["nvme"] = {{"gib_per_rank", (e.memory.nvme_optimizer_bytes + e.memory.nvme_param_bytes) / kGiB},
                   {"optimizer_gib_per_rank", e.memory.nvme_optimizer_bytes / kGiB},
                   {"param_gib_per_rank", e.memory.nvme_param_bytes / kGiB},
                   {"read_gbps", e.plan.nvme_read_gbps},
                   {"write_gbps", e.plan.nvme_write_gbps},
                   {"note", e.plan.nvme_note}};
  if (e.plan.nodes > 1)
    par["network_link"] = {{"kind", link_kind_name(e.plan.inter.kind)},
                           {"busbw_gbps", e.plan.inter.busbw_gbps},
                           {"latency_us", e.plan.inter.latency_us},
                           {"note", e.plan.inter.note}};
  if (e.plan.strategy == Strategy::ep) par["expert_imbalance"] = e.expert_imbalance;
  if (e.zero3_hook_s > 0) par["zero3_hook_s"] = e.zero3_hook_s;
  if (e.deepspeed.gpu_bytes > 0)
    par["deepspeed_estimator"] = {
        {"gpu_gib", static_cast<double>(e.deepspeed.gpu_bytes) / kGiB},
        {"cpu_gib_per_node", static_cast<double>(e.deepspeed.cpu_bytes) / kGiB},
        {"note", "DeepSpeed's own model-state estimate (additional_buffer_factor 1.5 on CPU)"}};
  j["parallel"] = par;
  json warnings = json::array();
  for (const auto& w : single_gpu_warnings(e)) warnings.push_back(w);
  for (const auto& w : e.warnings) warnings.push_back(w);
  j["warnings"] = warnings;
  if (!e.fits) {
    null_timing(j);  // as on one GPU
    return j;
  }
  j["step_time_s"] = e.step_s;
  j["throughput_queries_per_s"] = e.throughput_qps;
  j["throughput_tokens_per_s"] = e.throughput_tps;
  j["time_hours"] = e.time_hours;
  if (e.usd_per_gpu_hour > 0) {
    j["cost_usd"] = e.cost_usd;
    j["price"] = {
        {"provider", e.price_provider}, {"usd_per_gpu_hour", e.usd_per_gpu_hour}, {"gpus", e.plan.ranks()}};
  } else {
    j["cost_usd"] = nullptr;
  }
  return j;
}

}  // namespace ftcost
