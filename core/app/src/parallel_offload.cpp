// What offload moves between a rank and its host, and the node's host memory it needs: the GPU's own PCIe
// link, DeepSpeed's offloaded gradient accumulation, offloaded parameters' copies before their all-gathers,
// ZeRO-Infinity's NVMe optimizer swaps, paged optimizer states, the node's host RAM (parallel_internal.hpp
// declares them; parallel.cpp's evaluate calls them).
#include "ftcost/units.hpp"
#include "parallel_internal.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ftcost::detail {

// The GPU's own PCIe link to host memory, bytes/s: what offload moves over (intra_node_link of a node so
// large that no NVLink joins it, with peer-to-peer allowed).
double own_pcie_bytes_per_s(const GpuSpec& gpu) { return intra_node_link(gpu, 1 << 20, 1).busbw_gbps * 1e9; }

// DeepSpeed's optimizer offload accumulates partitioned gradients in host memory (ZeRO-2/3; ZeRO-1 reduces
// only at the accumulation boundary, engine.py allreduce_gradients): with gradient accumulation every
// micro-batch copies the rank's gradient partition (in the model's dtype, the default grad_accum_dtype:
// engine.py get_data_types) down to host memory, and every micro-batch after the first brings the running
// sum back up to add to first. ZeRO-2: stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu
// (accumulate_gradients: dest_buffer.copy_(accumulated_grads_in_cpu) and add_, then copy_gradients_to_cpu);
// ZeRO-3: stage3.py partition_grads (the grad partition buffer lives on self.device, the CPU under
// offload_optimizer: copy_ at micro_step_id 0, else to(device) + add_ + copy_ back); both @ edaa722. Beyond
// the boundary's crossing (in the offload item): A - 1 more down and A - 1 up per optimizer step. ZeRO-3 runs
// them on its reduce-and-partition stream during backward (overlap_comm on for stage 3); ZeRO-2 on the
// compute stream (overlap_comm off by default): exposed.
void add_offload_accumulation_crossings(ParallelEstimate& e, const GpuSpec& gpu, double grad_shard_bytes,
                                        double bwd_s) {
  const double accum = e.plan.grad_accum;
  const Strategy st = e.plan.strategy;
  if (accum <= 1 || (st != Strategy::zero2 && st != Strategy::zero3)) return;
  const double one = grad_shard_bytes / own_pcie_bytes_per_s(gpu);
  const bool overlapped = st == Strategy::zero3;
  CommItem it =
      comm_item("offload: gradient partitions to host and back on accumulation micro-batches (PCIe)",
                CollOp::send_recv, "pcie-host", 1, grad_shard_bytes, 2 * (accum - 1), 2 * (accum - 1) * one,
                overlapped ? "during backward on ZeRO-3's reduce-and-partition stream"
                           : "exposed (on the compute stream: overlap_comm is off for stage 2)");
  it.exposed_s = overlapped ? (accum - 1) * std::max(0.0, 2 * one - bwd_s) : it.time_s;
  add(e, it);
}

// Offloaded parameters cross the rank's PCIe link to the GPU before every all-gather of them: FSDP2
// (torch/distributed/fsdp/_fully_shard/_fsdp_param.py FSDPParam.all_gather_inputs: the shard kept in pinned
// host memory is copied with sharded_param_data.to(device, non_blocking=True) when offload_to_cpu; pytorch @
// 010ae4a8) and DeepSpeed ZeRO-3 (runtime/zero/partition_parameters.py all_gather_coalesced: p.ds_tensor.to(
// current_device) before _dist_allgather_fn; @ edaa722). Each gather pass of a micro-batch (forward, and
// backward unless fsdp-grad-op keeps the gathered parameters) moves the rank's shard. The copy is part
// of the gather's prefetch, so what it exposes is the pass's pipeline with it minus the pipeline without it.
// Nothing unless the plan offloads parameters.
void add_offloaded_param_copies(ParallelEstimate& e, const GpuSpec& gpu, double shard_bytes, double fwd_comm,
                                double fwd_s, double bwd_comm, double bwd_s, double accum) {
  if (!offloads_params(e.plan.offload)) return;
  const int passes = e.plan.strategy == Strategy::fsdp_grad_op ? 1 : 2;
  const double h2d = shard_bytes / own_pcie_bytes_per_s(gpu);
  // ZeRO-Infinity reads the part of the shard beyond max_in_cpu from the node's drives first (the node's
  // ranks at once): partition_parameters.py all_gather_coalesced swaps in params whose ds_tensor
  // final_location is nvme before the copy (@ edaa722).
  const double nvme = e.memory.nvme_param_bytes * e.plan.gpus_per_node / (e.plan.nvme_read_gbps * 1e9);
  const auto pass_exposed = [&](double extra) {
    double x = std::max(0.0, fwd_comm + extra - fwd_s) - std::max(0.0, fwd_comm - fwd_s);
    if (passes > 1) x += std::max(0.0, bwd_comm + extra - bwd_s) - std::max(0.0, bwd_comm - bwd_s);
    return x;
  };
  const double exposed = pass_exposed(h2d);
  add(e, CommItem{"offloaded parameters to the GPU before each all-gather (PCIe)", CollOp::send_recv,
                  "pcie-host", 1, shard_bytes, passes * accum, passes * accum * h2d, 0, accum * exposed,
                  "in the all-gather's prefetch: the shard is copied from pinned host memory, then gathered",
                  ""});
  if (nvme <= 0) return;
  add(e, CommItem{"NVMe: 16-bit parameters read before each all-gather (ZeRO-Infinity)", CollOp::send_recv,
                  "nvme", e.plan.gpus_per_node, e.memory.nvme_param_bytes, passes * accum,
                  passes * accum * nvme, 0, accum * (pass_exposed(h2d + nvme) - exposed),
                  "in the all-gather's prefetch, before the PCIe copy; the node's drives serve all its ranks",
                  ""});
}

// ZeRO-Infinity's optimizer step (stage3.py step -> _prepare_sub_group / _release_sub_group @ edaa722): per
// sub-group, swap_in_optimizer_state reads the fp32 master partition, its two Adam states and its fp32
// gradient (16 B per element; partitioned_optimizer_swapper.py), the CPU steps it, swap_out_optimizer_state
// writes the three states back (12 B); the fp32 gradients were written at the end of backward (4 B,
// _swap_out_offload_fp32_gradients); with parameters on NVMe the updated 16-bit partition is written too
// (_partitioned_params_swap_out, 2 B). offload_optimizer.pipeline_read / pipeline_write default to false
// (offload_config.py), so the step waits for every read and write. The node's ranks share its drives.
void add_nvme_optimizer_swaps(ParallelEstimate& e) {
  const RankMemory& m = e.memory;
  if (m.nvme_optimizer_bytes <= 0) return;
  const double gpn = e.plan.gpus_per_node;
  const double read = m.nvme_optimizer_bytes;
  const double write = m.nvme_optimizer_bytes + m.nvme_param_bytes;
  const double t = gpn * (read / (e.plan.nvme_read_gbps * 1e9) + write / (e.plan.nvme_write_gbps * 1e9));
  add(e, CommItem{"NVMe: optimizer states and fp32 gradients swapped in and out (ZeRO-Infinity)",
                  CollOp::send_recv, "nvme", e.plan.gpus_per_node, (read + write) / 2, 2, t, 0, t,
                  "exposed: pipeline_read / pipeline_write are off by default, the step waits for each "
                  "sub-group's read and write; the node's drives serve all its ranks",
                  ""});
}

// Paged optimizer states that do not fit next to the rank's other memory cross the rank's PCIe link out and
// back every optimizer step (add_optimizer_paging, throughput.hpp), in the step's critical path.
void add_optimizer_paging_item(ParallelEstimate& e, const GpuSpec& gpu) {
  const double paged = e.memory.paged_out(e.usable_bytes);
  if (paged <= 0) return;
  StepTime pg;
  add_optimizer_paging(pg, paged, gpu, 1);
  e.warnings.push_back("paged optimizer: " + json(std::round(paged / kGiB * 10) / 10).dump() + " of " +
                       json(std::round(e.memory.base.optimizer_states / kGiB * 10) / 10).dump() +
                       " GiB of optimizer states per rank do not fit next to the rest and are paged to host "
                       "RAM and back every optimizer step (" +
                       json(std::round(pg.paging_s * 100) / 100).dump() + " s of PCIe per step)");
  add(e, CommItem{"paged optimizer states: to host RAM and back (unified memory, PCIe)", CollOp::send_recv,
                  "pcie-host", 1, paged, 2, pg.paging_s, 0, pg.paging_s,
                  "exposed (evicted while the step allocates, prefetched before each update)", ""});
}

// Bytes as GiB for a message: one decimal, none when whole ("2048", "12.5").
std::string gib_text(double bytes) {
  const double g = std::round(bytes / kGiB * 10) / 10;
  return g == std::floor(g) ? std::to_string(static_cast<long long>(g)) : json(g).dump();
}

// The node's host RAM (--host-ram, else the --node preset's) holds every rank's offloaded states and its
// offloaded activation checkpoints (--offload-activations, memory.cpp host_offload): a job that needs more
// does not fit.
void check_node_host_ram(ParallelEstimate& e) {
  const ParallelPlan& plan = e.plan;
  const double node_host = (e.memory.host_bytes + e.memory.base.host_offload) * plan.gpus_per_node;
  if (plan.host_ram_gib <= 0 || node_host <= plan.host_ram_gib * kGiB) return;
  e.fits = false;
  const double ckpt = e.memory.base.host_offload * plan.gpus_per_node;
  const std::string host =
      "host RAM: offload needs " + gib_text(node_host) + " GiB per node" +
      (ckpt > 0 ? " (" + gib_text(ckpt) + " GiB of it offloaded checkpoints)" : std::string()) +
      ", the node has " + gib_text(plan.host_ram_gib * kGiB);
  e.does_not_fit += (e.does_not_fit.empty() ? "" : "; ") + host;
  e.warnings.push_back(
      "does not fit: " + host +
      (plan.offload == Offload::none || offload_on_nvme(plan.offload)
           ? std::string()
           : std::string("; --parallel zero3 --offload optimizer-nvme or params-nvme keeps the "
                         "states on NVMe (ZeRO-Infinity)")));
}

}  // namespace ftcost::detail
