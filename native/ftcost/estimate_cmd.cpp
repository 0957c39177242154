// `ftcost estimate`: memory, maximum batch, throughput, time and cost of one job (on one GPU or, with
// --gpus/--nodes/--parallel, on several); --vs compares it with the same job changed.
#include "command.hpp"
#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/calibration_share.hpp"
#include "ftcost/compare.hpp"
#include "ftcost/job.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/parallel.hpp"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

namespace ftcost::cli {

namespace {

// The objective's split of the step (objective.hpp): what DPO/KTO's reference and GRPO's generation add.
void print_objective(const Estimate& e) {
  const Workload& w = e.in.workload;
  const ObjectiveConfig& c = w.objective;
  if (c.objective == Objective::sft) return;
  const ObjectiveTime& o = e.step.objective;
  std::cout << "objective " << objective_name(c.objective) << " (per micro-batch of " << e.batch
            << (c.grpo()     ? " completions"
                : c.paired() ? " pairs"
                             : " samples")
            << "): training " << fixed(o.train_s, 3) << " s";
  if (o.reference_s > 0) std::cout << ", reference " << fixed(o.reference_s, 3) << " s";
  if (o.policy_forward_s > 0)
    std::cout << ", policy forward (no grad) " << fixed(o.policy_forward_s, 3) << " s";
  if (o.generation_s > 0) std::cout << ", generation " << fixed(o.generation_s, 3) << " s";
  if (o.reward_s > 0) std::cout << ", reward " << fixed(o.reward_s, 3) << " s";
  std::cout << "\n";
  if (e.precompute_hours > 0)
    std::cout << "reference log-probs precomputed before training: " << fixed(e.precompute_hours, 2)
              << " h\n";
  if (!c.grpo()) return;
  const GenerationTime& g = o.generation;
  std::cout << "GRPO round: " << fixed(o.round_completions, 0) << " completions ("
            << fixed(o.round_completions / static_cast<double>(c.generations), 0) << " prompts x "
            << c.generations << ") in " << fixed(o.round_s, 2) << " s; generation " << fixed(g.total_s, 2)
            << " s (" << generation_name(c.generation) << ": prefill " << fixed(g.prefill_s, 2)
            << " s, decode " << fixed(g.decode_s, 2) << " s over " << fixed(g.decode_steps, 0) << " steps, "
            << fixed(g.device_step_s * 1e3, 2) << " ms device / " << fixed(g.host_step_s * 1e3, 2)
            << " ms host per step, " << g.bound << "-bound";
  if (g.sync_s > 0) std::cout << "; weight sync " << fixed(g.sync_s, 3) << " s";
  std::cout << ")\n";
}

// ---------------------------------------------------------------- estimate
// The answer's lines, the same on one GPU and on several: why this batch, throughput (data and computed
// tokens), time, cost with its price class and basis.
void print_result(const JobAnswer& a, const Workload& w, double optimizer_steps) {
  if (!a.batch_choice.reason.empty() && a.batch_choice.rule != "given")
    std::cout << "batch: " << a.batch << (a.gpus > 1 ? " per GPU" : "") << " — " << a.batch_choice.reason
              << "\n";
  const std::string noun = w.objective.sample_noun();
  std::cout << "throughput: " << fixed(a.qps, 3) << " " << noun << "/s [" << fixed(a.qps_low, 3) << "–"
            << fixed(a.qps_high, 3) << "], " << group_thousands(a.data_tokens_per_s) << " tokens/s of data ("
            << group_thousands(a.tokens_per_s) << " computed, padding included)\n";
  std::cout << "time: " << duration(a.hours) << " [" << duration(a.hours_low) << "–" << duration(a.hours_high)
            << "] for " << group_thousands(w.queries) << " " << noun << " × "
            << fixed(w.epochs, w.epochs == std::floor(w.epochs) ? 0 : 2)
            << (w.epochs == 1 ? " epoch" : " epochs");
  if (optimizer_steps > 0) std::cout << " (" << group_thousands(optimizer_steps) << " optimizer steps)";
  std::cout << "\n";
  if (!a.has_price) return;
  const PriceChoice& p = a.price;
  std::cout
      << "cost: " << money(a.cost) << " [" << money(a.cost_low) << "–" << money(a.cost_high) << "] at $"
      << fixed(p.usd_per_hour, 2) << "/GPU-h"
      << (a.gpus + a.generation_gpus > 1 ? " x " + std::to_string(a.gpus + a.generation_gpus) + " GPUs" : "")
      << (a.generation_gpus > 0 ? " (" + std::to_string(a.generation_gpus) + " for the vLLM server)" : "")
      << " (" << p.provider << (p.instance_type.empty() ? "" : " " + p.instance_type)
      << (p.date.empty() ? "" : ", " + p.date) << "; " << price_class(p)
      << (p.basis == "per-gpu" ? ", per-GPU price of a " + std::to_string(p.gpu_count) + "-GPU instance" : "")
      << ")\n";
}

// The job's identity: model, method, stack, calibration and the defaults the request fell back on.
void print_estimate_header(const Inputs& in) {
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  std::cout << "ftcost estimate: " << printable(m.display_name) << " on " << printable(in.gpu.name) << " — "
            << method_name(w.method);
  if (m.is_moe())
    std::cout << ", " << (w.moe == MoeMode::sparse ? "sparse" : "dense") << " MoE (" << w.active_experts(m)
              << " of " << m.moe.experts << " experts)";
  std::cout << "\n";
  std::cout << "stack: " << in.stack.id << " — " << in.stack.display_name
            << (in.stack.version.empty() ? std::string() : " [" + in.stack.version + "]") << "\n";
  if (in.calibration) {
    // which calibration, and whether it is synthetic or partial (decided from the file's own fields)
    const std::string flags = calibration_flags_text(calibration_flags(*in.calibration));
    std::cout << "calibration: " << printable(in.calibration_source) << " ("
              << printable(in.calibration->device.name) << ", fingerprint "
              << calibration_fingerprint(*in.calibration) << ")\n";
    if (!flags.empty()) std::cout << "! calibration is " << printable(flags) << "\n";
  }
  if (!in.defaults.empty()) {
    std::cout << "defaults:";
    for (const auto& d : in.defaults) std::cout << "\n  " << d;
    std::cout << "\n";
  }
}

// The memory table's rows, each shown where it is not zero.
const std::pair<const char*, double MemoryBreakdown::*> kMemoryRows[] = {
    {"weights", &MemoryBreakdown::weights},
    {"trainable params (adapters)", &MemoryBreakdown::trainable_params},
    {"gradients", &MemoryBreakdown::gradients},
    {"optimizer states", &MemoryBreakdown::optimizer_states},
    {"autocast weight copies", &MemoryBreakdown::autocast_copies},
    {"activations", &MemoryBreakdown::activations},
    {"logits + loss", &MemoryBreakdown::logits},
    {"dequant buffers", &MemoryBreakdown::dequant_buffers},
    {"DoRA weight norm", &MemoryBreakdown::dora_weight_norm},
    {"FP8 weight copies (TE)", &MemoryBreakdown::fp8_weight_copies},
    {"CUDA context", &MemoryBreakdown::cuda_context},
    {"allocator overhead", &MemoryBreakdown::allocator_overhead},
    {"optimizer step temporaries", &MemoryBreakdown::optimizer_step_temp},
    {"reference model (frozen copy)", &MemoryBreakdown::reference_weights},
    {"generation (KV cache, prefill)", &MemoryBreakdown::generation_temp},
};

// Whether the peak is not the rows' sum: phased, at the optimizer step or at generation, or the rows add up
// to more than the peak because not every component exists at once.
struct PeakKind {
  bool step_peak, gen_peak, not_sum;
};

// The memory table: components, the peak, what is usable and what is paged out.
PeakKind print_memory_table(const Estimate& e) {
  const MemoryBreakdown& mb = e.memory;
  Table t({"component", "GiB"}, {false, true});
  double rows_sum = 0;  // the rows' sum: more than the peak when not every component exists at once
  for (const auto& row : kMemoryRows) {
    const double bytes = mb.*row.second;
    if (bytes > 0) t.row({row.first, gib(bytes)});
    if (bytes > 0) rows_sum += bytes;
  }
  PeakKind k{};
  k.step_peak = mb.peak_moment() == MemoryBreakdown::Moment::optimizer_step;
  k.gen_peak = mb.peak_moment() == MemoryBreakdown::Moment::generation;
  k.not_sum = mb.phased || k.step_peak || k.gen_peak || rows_sum > mb.total() * (1 + 1e-9);
  t.row({k.not_sum ? "peak (not the sum: see below)" : "total", gib(mb.total())});
  t.row({"usable on " + printable(e.in.gpu.id), gib(e.max_batch.usable_bytes)});
  if (mb.paged_out(e.max_batch.usable_bytes) > 0)
    t.row({"paged optimizer states in host RAM", gib(mb.paged_out(e.max_batch.usable_bytes))});
  std::cout << t.str();
  return k;
}

// The lines under the memory table that say when the peak happens and what it leaves out.
void print_peak_notes(const MemoryBreakdown& mb, const PeakKind& k) {
  if (mb.phased) {
    const MemoryBreakdown::Phases ph = mb.phases();
    const std::string at = mb.peak_phase();
    auto mark = [&](const char* name) { return at == name ? " GiB (peak)" : " GiB"; };
    std::cout << "peak over the step (gradients exist only after the forward, logits and recompute never "
                 "together):\n  end of forward + loss "
              << gib(ph.forward_loss) << mark("forward_loss") << "; start of backward "
              << gib(ph.backward_start) << mark("backward_start") << "; end of backward "
              << gib(ph.backward_end) << mark("backward_end");
    if (mb.optimizer_step_temp > 0)
      std::cout << "; optimizer step " << gib(ph.optimizer_step) << mark("optimizer_step");
    std::cout << "\n";
  }
  if (k.gen_peak)
    std::cout << "peak at generation (model.generate): weights, optimizer states and the KV cache of the "
                 "generation batch, before the training step allocates its activations\n";
  else if (mb.generation_temp > 0)
    std::cout << "generation (model.generate) needs " << gib(mb.phases().generation)
              << " GiB at its own moment, less than the training step's peak\n";
  if (!mb.phased && !k.step_peak && !k.gen_peak && k.not_sum && mb.optimizer_step_temp > 0)
    std::cout << "peak with activations and logits; the optimizer step temporaries ("
              << gib(mb.optimizer_step_temp)
              << " GiB) come at the optimizer step, once those are freed, and are not part of it\n";
  if (!mb.phased && k.step_peak)
    std::cout
        << "peak at the optimizer step: foreach AdamW's temporary (sqrt of every exp_avg_sq, "
        << gib(mb.optimizer_step_temp)
        << " GiB) beside every gradient, once activations and logits are "
           "freed; fused AdamW (--adamw-impl fused, adamw_torch_fused) or an 8-bit optimizer has none\n";
}

// Parameters, memory at the chosen batch, its range, host RAM, the maximum batch and sequence.
void print_memory(const Estimate& e) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  std::cout << "\nparameters: " << human_count(static_cast<double>(m.params().total())) << " total, "
            << human_count(static_cast<double>(m.active_params(m.is_moe() ? w.active_experts(m) : 0)))
            << " active per token, " << human_count(e.params.trainable) << " trainable\n";
  std::cout << "memory at batch " << (e.batch > 0 ? e.batch : 1) << " × " << fixed(e.max_batch.seq_len, 0)
            << " tokens (peak, GiB" << (e.batch > 0 ? "" : "; does not fit") << "):\n";
  const MemoryBreakdown& mb = e.memory;
  print_peak_notes(mb, print_memory_table(e));
  if (in.stack.memory_uncertainty_fraction > 0)
    std::cout << "memory range: " << gib(e.memory_low) << "-" << gib(e.memory_high)
              << " GiB (stack uncertainty ±" << fixed(in.stack.memory_uncertainty_fraction * 100, 0)
              << "% of activations, loss, allocator); free " << gib(e.max_batch.usable_bytes - mb.total())
              << " GiB\n";
  if (mb.host_offload > 0)
    std::cout << "host RAM: " << gib(mb.host_offload) << " GiB of offloaded checkpoints (pinned), "
              << fixed(e.step.offload_pcie_s, 3) << " s of PCIe copies per step, overlapped with compute\n";
  std::cout << "\nmax batch size: " << e.max_batch.batch << " (padded length "
            << fixed(e.max_batch.seq_len, 0) << " tokens; " << gib(e.max_batch.per_sample_bytes)
            << " GiB per sample)\n";
  std::cout << "longest sequence at batch 1: " << fixed(e.max_seq.seq_len, 0) << " tokens\n";
}

// The step model's split of the step: by stage, layer type and kernel class, and where its range comes from.
void print_step_split(const Estimate& e) {
  const double tot = e.step.total_s;
  auto pct = [&](double v) { return fixed(100.0 * v / (tot > 0 ? tot : 1), 0) + "%"; };
  Table st({"stage", "s", "share"}, {false, true, true});
  for (int i = 0; i < kStages; ++i) {
    double v = e.step.by_stage[static_cast<std::size_t>(i)];
    if (v > 0) st.row({stage_name(static_cast<Stage>(i)), fixed(v, 3), pct(v)});
  }
  std::cout << st.str();
  Table lt({"layer type", "device s"}, {false, true});
  for (int i = 0; i < kLayerTypes; ++i) {
    double v = e.step.by_layer[static_cast<std::size_t>(i)];
    if (v > 0) lt.row({layer_type_name(static_cast<LayerType>(i)), fixed(v, 3)});
  }
  Table kt({"kernel class", "device s"}, {false, true});
  for (int i = 0; i < kKernelClasses; ++i) {
    double v = e.step.by_class[static_cast<std::size_t>(i)];
    if (v > 0) kt.row({kernel_class_name(static_cast<KernelClass>(i)), fixed(v, 3)});
  }
  std::cout << lt.str() << kt.str();
  // the top ops as `--json` step_top_ops lists them (and the calculator's step chart draws them)
  const json top = step_top_ops_json(e.step);
  if (!top["top"].empty()) {
    Table ot({"top op (stage)", "device s", "of device"}, {false, true, true});
    std::size_t shown = 0;
    for (const auto& o : top["top"])
      if (shown++ < 5)
        ot.row({o.value("name", "") + " (" + o.value("stage", "") + ")", fixed(o.value("device_s", 0.0), 3),
                fixed(100.0 * o.value("share", 0.0), 0) + "%"});
    std::cout << ot.str();
  }
  std::cout << "device busy " << fixed(e.step.gpu_s, 3) << " s, host-bound wait " << fixed(e.step.host_s, 3)
            << " s, " << group_thousands(e.step.kernels) << " kernel launches per step"
            << (e.step.calibrated ? " (calibrated)" : " (spec efficiencies, no calibration)") << "\n";
  std::cout << "range dominated by: " << e.step.dominant_uncertainty << "\n";
}

// Every provider's price for this GPU, the one the price rule used marked.
void print_providers(const Estimate& e, const JobAnswer& a) {
  std::cout << "\nproviders for " << e.in.gpu.id << ":\n";
  Table pt({"provider", "kind", "$/GPU-h", "date", "cost", "note"}, {false, false, true, false, true, false});
  for (const auto& c : e.costs) {
    const bool used = a.has_price && c.price.provider_id == a.price.provider_id &&
                      c.price.usd_per_hour == a.price.usd_per_hour && c.price.spot == a.price.spot &&
                      c.price.instance_type == a.price.instance_type;
    std::string note = used ? "used (the price rule)" : "";
    if (c.price.stale)
      note += std::string(note.empty() ? "" : ", ") + "stale (" + std::to_string(c.price.age_days) + " days)";
    if (c.price.date.empty()) note += std::string(note.empty() ? "" : ", ") + "undated";
    pt.row({c.price.provider, c.price.spot ? "spot" : "on-demand", fixed(c.price.usd_per_hour, 2),
            c.price.date.empty() ? "-" : c.price.date, money(c.cost_usd), note});
  }
  std::cout << pt.str();
}

int print_estimate(const Estimate& e, const JobAnswer& a) {
  const Inputs& in = e.in;
  print_estimate_header(in);
  print_memory(e);
  if (e.batch > e.max_batch.batch && e.max_batch.batch > 0) {
    // An explicit --batch that does not fit: no step time, throughput, time or cost is a result.
    std::cout << "does not fit at batch " << e.batch << ": the maximum on " << in.gpu.id << " is "
              << e.max_batch.batch << "; step time, throughput, time and cost are not estimated (use --batch "
              << e.max_batch.batch << " or --batch max)\n";
  } else if (e.batch > 0) {
    std::cout << "step time: " << fixed(e.step.total_s, 3) << " s at batch " << e.batch << " ("
              << e.step.model << ", ±" << fixed(e.step.range_fraction * 100, 0) << "%)\n";
    if (e.step.model == "step-model") {
      print_step_split(e);
      print_objective(e);
    }
    print_result(a, in.workload, 0);
    if (!e.costs.empty()) print_providers(e, a);
  }
  for (const auto& wmsg : a.warnings) std::cout << "warning: " << printable(wmsg) << "\n";
  return 0;
}

// ---------------------------------------------------------------- estimate on more than one GPU
int print_parallel(const ParallelEstimate& p, const JobAnswer& a) {
  const Inputs& in = p.single.in;
  std::cout << "parallel: " << p.strategy_label << " on " << p.plan.ranks() << " x " << in.gpu.id << " ("
            << p.plan.gpus_per_node << " per node x " << p.plan.nodes << " node"
            << (p.plan.nodes > 1 ? "s" : "")
            << (p.plan.node_id.empty() ? std::string() : ", " + p.plan.node_id) << "), data parallel " << p.dp
            << ", offload " << offload_name(p.plan.offload) << "\n";
  std::cout << "links: intra-node " << link_kind_name(p.plan.intra.kind) << " "
            << fixed(p.plan.intra.busbw_gbps, 1) << " GB/s bus bandwidth (" << p.plan.intra.note << ")\n";
  if (p.plan.nodes > 1)
    std::cout << "       network " << link_kind_name(p.plan.inter.kind) << " "
              << fixed(p.plan.inter.busbw_gbps, 1) << " GB/s per GPU (" << p.plan.inter.note << ")\n";
  const MemoryBreakdown& b = p.memory.base;
  std::cout << "memory per rank at micro-batch " << (p.micro_batch > 0 ? p.micro_batch : 1) << " x "
            << fixed(p.seq_len, 0) << " tokens (peak, GiB" << (p.micro_batch > 0 ? "" : "; does not fit")
            << "):\n";
  const std::pair<const char*, double> rows[] = {{"weights", b.weights},
                                                 {"trainable params (adapters)", b.trainable_params},
                                                 {"gradients", b.gradients},
                                                 {"fp32 gradient partition", p.memory.fp32_grad_partition},
                                                 {"optimizer states", b.optimizer_states},
                                                 {"autocast weight copies", b.autocast_copies},
                                                 {"all-gather / prefetch buffers", p.memory.gather_buffers},
                                                 {"live parameters (cache, root)", p.memory.live_params},
                                                 {"4-bit quant states (unsharded)", p.memory.quant_states},
                                                 {"expert-loop weight copies", p.memory.expert_copies},
                                                 {"gradient buckets", p.memory.bucket_buffers},
                                                 {"NCCL buffers", p.memory.nccl_buffers},
                                                 {"activations", b.activations},
                                                 {"logits + loss", b.logits},
                                                 {"dequantization buffers", b.dequant_buffers},
                                                 {"DoRA weight norm", b.dora_weight_norm},
                                                 {"CUDA context", b.cuda_context},
                                                 {"allocator overhead", b.allocator_overhead},
                                                 {"optimizer step temporaries", b.optimizer_step_temp}};
  for (const auto& [name, bytes] : rows)
    if (bytes > 0)
      std::cout << "  " << std::left << std::setw(30) << name << std::right << std::setw(8) << gib(bytes)
                << "\n";
  std::cout << "  " << std::left << std::setw(30) << "total" << std::right << std::setw(8)
            << gib(p.memory.total()) << "\n";
  std::cout << "  " << std::left << std::setw(30) << ("usable on " + in.gpu.id) << std::right << std::setw(8)
            << gib(p.usable_bytes) << "\n";
  const std::string state = rank_memory_state(p);
  std::cout << "  " << std::left << std::setw(30) << "range (low-high)" << std::right << std::setw(8)
            << (gib(p.memory_low) + "-" + gib(p.memory_high))
            << (state == "may_not_fit" ? "  may not fit: the upper end exceeds the usable memory" : "")
            << "\n";
  if (p.memory.residue_high > 0)
    std::cout << "  upper end includes " << gib(p.memory.residue_high) << " GiB: " << p.memory.residue_term
              << "\n";
  if (p.memory.host_bytes > 0)
    std::cout << "  host RAM per rank (offload): " << gib(p.memory.host_bytes) << " GiB\n";
  if (offload_on_nvme(p.plan.offload))
    std::cout << "  on NVMe per rank (ZeRO-Infinity): "
              << gib(p.memory.nvme_optimizer_bytes + p.memory.nvme_param_bytes) << " GiB; NVMe "
              << p.plan.nvme_note << "\n";
  if (p.memory.paged_out(p.usable_bytes) > 0)
    std::cout << "  paged optimizer states in host RAM per rank: " << gib(p.memory.paged_out(p.usable_bytes))
              << " GiB\n";
  if (p.deepspeed.gpu_bytes > 0)
    std::cout << "  DeepSpeed's own estimator, model states: "
              << gib(static_cast<double>(p.deepspeed.gpu_bytes)) << " GiB per GPU, "
              << gib(static_cast<double>(p.deepspeed.cpu_bytes)) << " GiB host per node\n";
  std::cout << "max micro-batch per GPU: " << p.max_micro_batch << "; global batch " << p.global_batch
            << "\n";
  if (!p.fits) {
    // as on one GPU: a job that does not fit is not a result
    std::cout << "does not fit: " << p.does_not_fit
              << "; step time, throughput, time and cost are not estimated\n";
  } else {
    std::cout << "communication per optimizer step:\n";
    for (const auto& c : p.comm)
      std::cout << "  " << std::left << std::setw(48) << c.name << std::right << " " << coll_op_name(c.op)
                << " x" << fixed(c.calls, 0) << " on " << c.ranks << " (" << c.scope
                << (c.algorithm.empty() ? "" : ", NCCL " + c.algorithm) << "): " << fixed(c.time_s * 1e3, 1)
                << " ms, exposed " << fixed(c.exposed_s * 1e3, 1) << " ms  # " << c.overlap << "\n";
    std::cout << "step: " << fixed(p.step_s, 3) << " s = compute " << fixed(p.compute_s, 3) << " + optimizer "
              << fixed(p.optimizer_s, 3) << " + exposed communication " << fixed(p.comm_exposed_s, 3)
              << " (of " << fixed(p.comm_s, 3) << ")\n";
    if (p.scaling_efficiency > 0)
      std::cout << "scaling efficiency " << fixed(p.scaling_efficiency * 100, 0)
                << "% (throughput over the GPUs x one GPU's at its own batch)\n";
    print_result(a, in.workload, p.optimizer_steps);
  }
  for (const auto& y : p.why) std::cout << "why: " << y << "\n";
  for (const auto& wmsg : a.warnings) std::cout << "warning: " << printable(wmsg) << "\n";
  return 0;
}

struct EstimateState {
  Request req;
  bool as_json = false, as_csv = false;
  std::string vs_spec;
  CLI::Option* vs = nullptr;
};

int run_estimate(const EstimateState& s) {
  const Database& db = Database::embedded();
  const Request& req = s.req;
  if (s.vs->count() > 0) {
    // two jobs side by side: this one (A) and the same with --vs applied (B), through the same core path
    auto req_b = apply_vs(s.vs_spec, req);
    if (!req_b.ok()) return fail(req_b.error());
    // every error of job B, from its resolution or its estimate, carries the marker
    auto fail_b = [](Error e) {
      e.message = "(--vs) " + e.message;
      return fail(e);
    };
    auto in_a = resolve_request(req, db, read_input_file, today_days());
    if (!in_a.ok()) return fail(in_a.error());
    auto in_b = resolve_request(req_b.value(), db, read_input_file, today_days());
    if (!in_b.ok()) return fail_b(in_b.error());
    auto ja = estimate_job_json(in_a.value(), db);
    if (!ja.ok()) return fail(ja.error());
    auto jb = estimate_job_json(in_b.value(), db);
    if (!jb.ok()) return fail_b(jb.error());
    const json jobs = compare_jobs(req, ja.value(), req_b.value(), jb.value());
    if (s.as_json)
      print_json(jobs);
    else
      std::cout << compare_jobs_text(jobs);
    return 0;
  }
  // one job; --json prints the result's JSON object, --csv its fields as rows
  auto print_fields = [&s](const json& result) {
    if (s.as_json)
      print_json(result);
    else
      std::cout << printable_csv(json_to_field_csv(result));
    return 0;
  };
  auto est = estimate_request(req, db, read_input_file, today_days());
  if (!est.ok()) return fail(est.error());
  if (s.as_json || s.as_csv) return print_fields(job_to_json(est.value()));
  return est->pe.is_single ? print_estimate(est->pe.single, est->answer)
                           : print_parallel(est->pe, est->answer);
}

}  // namespace

Command add_estimate(CLI::App& app) {
  auto s = std::make_shared<EstimateState>();
  auto* est = app.add_subcommand("estimate",
                                 "Memory, maximum batch, throughput, time and cost of one fine-tuning job");
  add_job_options(est, s->req, {});
  auto* est_json = est->add_flag("--json", s->as_json, "print one JSON object");
  est->add_flag("--csv", s->as_csv, "print the same fields as CSV rows: field,value")->excludes(est_json);
  s->vs = est->add_option("--vs", s->vs_spec,
                          "Compare with the same job changed: KEY=VALUE[,KEY=VALUE] (job options without "
                          "--, e.g. method=lora or gpu=h100-sxm5-80gb,lora-rank=64): memory, time and "
                          "cost of both side by side");
  s->vs->excludes("--csv");
  return {est, [s] { return run_estimate(*s); }};
}

}  // namespace ftcost::cli
