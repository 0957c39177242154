// An estimate as JSON (estimate_to_json): the resolved inputs, memory, the step and its top ops, the
// objective's split, throughput, time and costs — the object `ftcost estimate --json`, the JSON API and the
// calculator read.
#include "ftcost/calibration.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/model_constants.hpp"
#include "ftcost/objective.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

namespace ftcost {

namespace {

// The job's inputs as resolved (method, precision, ... and what applies to this model and data).
json inputs_json(const Estimate& e) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  json inputs = {{"method", method_name(w.method)},
                 {"precision", w.precision},
                 {"optimizer", optimizer_name(w.optimizer)},
                 {"checkpointing", w.checkpointing},
                 {"attention", attention_name(w.attention)},
                 {"grad_accum", w.grad_accum},
                 {"queries", w.queries},
                 {"epochs", w.epochs},
                 {"stack", in.stack.id},
                 {"routing", in.routing},
                 {"model_kind", in.model_kind}};
  if (w.method == Method::qlora) inputs["quant"] = quant_name(w.quant);
  if (w.method != Method::full) {
    inputs["lora_rank"] = w.lora_rank;
    inputs["lora_targets"] = w.lora_targets.names;
    if (w.lora_dropout > 0) inputs["lora_dropout"] = w.lora_dropout;
  }
  if (m.is_moe()) {
    inputs["moe"] = w.moe == MoeMode::sparse ? "sparse" : "dense";
    inputs["experts_per_token"] = w.active_experts(m);
  }
  if (in.dataset_id.empty()) {
    inputs["seq"] = w.seq_len;
  } else {
    inputs["dataset"] = in.dataset_id;
    inputs["padding"] = padding_name(w.padding);
    inputs["max_length"] = w.max_length;
    inputs["template_tokens"] = w.template_tokens;
  }
  return inputs;
}

using MergedOps = std::map<std::tuple<int, std::string, int, int>, Op>;

// The ops as the step model sums them, one per (stage, name, kernel class, layer type).
MergedOps merged_ops(const StepTime& step) {
  MergedOps merged;
  for (const auto& op : step.ops) {
    auto key = std::make_tuple(static_cast<int>(op.stage), std::string(op.name), static_cast<int>(op.kclass),
                               static_cast<int>(op.layer));
    auto it = merged.find(key);
    if (it == merged.end()) {
      merged.emplace(key, op);
    } else {
      it->second.flops += op.flops;
      it->second.bytes += op.bytes;
      it->second.kernels += op.kernels;
      it->second.gpu_s += op.gpu_s;
      it->second.compute_bound = it->second.compute_bound || op.compute_bound;
    }
  }
  return merged;
}

// Where the step goes, for the step chart: the ops with the most device time (up to 10, by name and stage
// summed over layer types and classes), each with its share of the device time; and per stage the device
// time, the host time issuing it, and the wall time (the larger of the two where they overlap).
json top_ops_json(const MergedOps& merged, const StepTime& step) {
  std::map<std::pair<int, std::string>, double> by_name;
  for (const auto& kv : merged) by_name[{std::get<0>(kv.first), std::get<1>(kv.first)}] += kv.second.gpu_s;
  std::vector<std::pair<double, std::pair<int, std::string>>> order;
  order.reserve(by_name.size());
  for (const auto& kv : by_name) order.emplace_back(kv.second, kv.first);
  // ties (a checkpointed layer's forward and recompute take the same time) in stage and name order, so every
  // build lists them alike
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first > y.first;
    return x.second < y.second;
  });
  json top = json::array();
  for (std::size_t i = 0; i < order.size() && i < 10; ++i)
    top.push_back(json{{"name", order[i].second.second},
                       {"stage", stage_name(static_cast<Stage>(order[i].second.first))},
                       {"device_s", order[i].first},
                       {"share", step.gpu_s > 0 ? order[i].first / step.gpu_s : 0.0}});
  std::array<double, kStages> device{};
  for (const auto& op : step.ops) device[static_cast<std::size_t>(op.stage)] += op.gpu_s;
  json stages = json::array();
  for (int i = 0; i < kStages; ++i) {
    const auto k = static_cast<std::size_t>(i);
    stages.push_back(json{{"stage", stage_name(static_cast<Stage>(i))},
                          {"device_s", device[k]},
                          {"host_s", step.host_issue_by_stage[k]},
                          {"wall_s", step.by_stage[k]},
                          {"bound", step.host_issue_by_stage[k] > device[k] ? "host" : "device"}});
  }
  return json{{"top", top}, {"stages", stages}};
}

// The step model's breakdowns (stage, layer type, kernel class), its ops and its device/host split.
void add_step_breakdown(json& j, const StepTime& step) {
  json st = json::object();
  json lt = json::object();
  json kc = json::object();
  for (int i = 0; i < kStages; ++i)
    st[stage_name(static_cast<Stage>(i))] = step.by_stage[static_cast<std::size_t>(i)];
  for (int i = 0; i < kLayerTypes; ++i)
    lt[layer_type_name(static_cast<LayerType>(i))] = step.by_layer[static_cast<std::size_t>(i)];
  for (int i = 0; i < kKernelClasses; ++i)
    kc[kernel_class_name(static_cast<KernelClass>(i))] = step.by_class[static_cast<std::size_t>(i)];
  j["step_breakdown_s"] = st;
  j["layer_breakdown_s"] = lt;
  j["kernel_classes_s"] = kc;
  // The ops as the step model sums them, one per (stage, layer type, kernel class, name): device time,
  // FLOPs, bytes, launches, bound. A linear layer's NF4 dequantization and its GEMM share a name and
  // stay two ops. Ordered by stage, then name, then class.
  json ops = json::array();
  const MergedOps merged = merged_ops(step);
  for (const auto& [key, op] : merged) {
    if (op.gpu_s <= 0 && op.kernels <= 0) continue;
    ops.push_back(json{{"stage", stage_name(op.stage)},
                       {"name", op.name},
                       {"layer", layer_type_name(op.layer)},
                       {"class", kernel_class_name(op.kclass)},
                       {"time_s", op.gpu_s},
                       {"flops", op.flops},
                       {"bytes", op.bytes},
                       {"kernels", op.kernels},
                       {"bound", op.compute_bound ? "compute" : "memory"}});
  }
  j["ops"] = ops;
  j["step_top_ops"] = top_ops_json(merged, step);
  j["device_time_s"] = step.gpu_s;
  j["host_wait_s"] = step.host_s;
  j["kernels_per_step"] = step.kernels;
  j["calibrated"] = step.calibrated;
}

// The headline price and cost, and the cost at every offer.
void add_costs(json& j, const Estimate& e) {
  if (e.has_price) {
    j["cost_usd"] = e.chosen.cost_usd;
    j["cost_usd_range"] = {e.chosen.cost_low, e.chosen.cost_high};
    j["price"] = {{"provider", e.chosen.price.provider},
                  {"usd_per_gpu_hour", e.chosen.price.usd_per_hour},
                  {"kind", e.chosen.price.spot ? "spot" : "on-demand"},
                  {"date", e.chosen.price.date},
                  {"stale", e.chosen.price.stale},
                  {"class", price_class(e.chosen.price)},
                  {"basis", e.chosen.price.basis},
                  {"instance_gpus", e.chosen.price.gpu_count}};
    if (!e.chosen.price.instance_type.empty()) j["price"]["instance_type"] = e.chosen.price.instance_type;
    if (!e.chosen.price.source.empty() && e.chosen.price.provider_id.empty())
      j["price"]["source"] = e.chosen.price.source;
  } else {
    j["cost_usd"] = nullptr;
  }
  json costs = json::array();
  for (const auto& c : e.costs) {
    json cj = {{"provider", c.price.provider},
               {"provider_id", c.price.provider_id},
               {"usd_per_gpu_hour", c.price.usd_per_hour},
               {"spot", c.price.spot},
               {"date", c.price.date.empty() ? json(nullptr) : json(c.price.date)},
               {"stale", c.price.stale},
               {"undated", c.price.date.empty()},
               {"instance_type", c.price.instance_type},
               {"region", c.price.region},
               {"gpu_count", c.price.gpu_count},
               {"hours", c.hours},
               {"cost_usd", c.cost_usd},
               {"cost_usd_range", {c.cost_low, c.cost_high}}};
    if (c.price.age_days >= 0) cj["age_days"] = c.price.age_days;
    costs.push_back(cj);
  }
  j["costs"] = costs;
}

}  // namespace

namespace {

// What a reference is for this job: a frozen copy, the base with the adapters disabled, precomputed, or none.
const char* reference_kind(const Workload& w) {
  const ObjectiveConfig& c = w.objective;
  if (c.precompute_ref && (c.objective == Objective::dpo || c.objective == Objective::kto))
    return "precomputed";
  if (!c.reference_pass()) return "none";
  return w.method == Method::full ? "frozen_copy" : "adapters_disabled";
}

json grpo_json(const Estimate& e) {
  const Workload& w = e.in.workload;
  const ObjectiveConfig& c = w.objective;
  const ObjectiveTime& o = e.step.objective;
  const GenerationTime& g = o.generation;
  const double ga = static_cast<double>(std::max<std::int64_t>(1, w.grad_accum));
  const double share = ga * static_cast<double>(c.iterations);
  json j = {
      {"num_generations", c.generations},
      {"completion_len", c.completion_len},
      {"prompt_len", std::max(0.0, e.padded_len - w.completion_padded(static_cast<double>(e.batch)))},
      {"completion_padded", w.completion_padded(static_cast<double>(e.batch))},
      {"num_iterations", c.iterations},
      {"beta", c.beta},
      {"generation", generation_name(c.generation)},
      {"completions_per_round", o.round_completions},
      {"prompts_per_round", o.round_completions / static_cast<double>(c.generations)},
      {"round_s", o.round_s},
      {"round_split_s",
       {{"generation", g.total_s},
        {"reference", o.reference_s * share},
        {"old_logps", o.policy_forward_s * share},
        {"reward", o.reward_s * share},
        {"training", o.train_s * share}}},
      {"generation_split_s", {{"prefill", g.prefill_s}, {"decode", g.decode_s}, {"weight_sync", g.sync_s}}},
      {"decode",
       {{"steps", g.decode_steps},
        {"waves", g.waves},
        {"device_step_s", g.device_step_s},
        {"host_step_s", g.host_step_s},
        {"bytes_per_step", g.bytes_per_step},
        {"bound", g.bound},
        {"tokens_per_s",
         g.decode_s > 0 ? o.round_completions * w.mean_completion_tokens() / g.decode_s : 0.0}}}};
  if (c.generation != Generation::hf) {
    const bool server = c.generation == Generation::vllm_server;
    const double frac = vllm_share(c);
    const VllmMemory vm = vllm_memory(e.in.model, w, e.in.gpu, frac, w.memory_seq_len());
    j["vllm"] = {{"mode", server ? "server" : "colocate"}, {"gpus", server ? c.vllm_gpus : 0},
                 {"gpu_memory_utilization", frac},         {"pool_gib", vm.pool / kGiB},
                 {"weights_gib", vm.weights / kGiB},       {"buffers_gib", vm.overhead / kGiB},
                 {"kv_cache_gib", vm.kv_cache / kGiB},     {"max_sequences", vm.max_sequences}};
  }
  return j;
}

// The objective's block of the estimate's JSON (absent for sft).
void add_objective_json(json& j, const Estimate& e) {
  const Workload& w = e.in.workload;
  const ObjectiveConfig& c = w.objective;
  if (c.objective == Objective::sft) return;
  const ObjectiveTime& o = e.step.objective;
  json ob = {{"name", objective_name(c.objective)},
             {"sequences_per_sample", c.train_sequences()},
             {"sample", c.grpo()     ? "prompt"
                        : c.paired() ? "preference pair"
                                     : "completion"},
             {"reference", reference_kind(w)},
             {"reference_weights_gib", e.memory.reference_weights / kGiB},
             {"precompute_hours", e.precompute_hours},
             {"step_split_s",
              {{"training", o.train_s},
               {"reference", o.reference_s},
               {"policy_forward", o.policy_forward_s},
               {"generation", o.generation_s},
               {"reward", o.reward_s}}},
             {"rented_gpus", rented_gpus(e.in)}};
  if (c.grpo()) ob["grpo"] = grpo_json(e);
  j["objective"] = ob;
}

}  // namespace

void null_timing(json& j) {
  for (const char* key :
       {"step_time_s", "throughput_queries_per_s", "throughput_tokens_per_s", "time_hours", "cost_usd"})
    j[key] = nullptr;
}

json step_top_ops_json(const StepTime& step) { return top_ops_json(merged_ops(step), step); }

json estimate_to_json(const Estimate& e) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  const json inputs = inputs_json(e);
  ParamCounts pc = m.params();
  json j = {{"model",
             {{"id", m.id},
              {"name", m.display_name},
              {"kind", m.kind()},
              {"total_params", pc.total()},
              {"active_params", m.active_params(m.is_moe() ? w.active_experts(m) : 0)},
              {"trainable_params", e.params.trainable},
              {"max_position_embeddings", m.max_position_embeddings},
              {"params", pc.to_json()}}},
            {"gpu", in.gpu.to_json()},
            {"inputs", inputs},
            {"defaults_applied", in.defaults},
            {"max_batch_size", e.max_batch.batch},
            {"batch_size", e.batch},
            {"effective_batch_size", e.batch * w.grad_accum},
            {"memory_state", e.memory_state},
            {"memory_fraction", e.memory_fraction},
            {"memory_seq_len", e.max_batch.seq_len},
            {"memory_gib", e.memory.to_json_gib()},
            {"memory_range_gib", {{"low", e.memory_low / kGiB}, {"high", e.memory_high / kGiB}}},
            {"free_gib", (e.max_batch.usable_bytes - e.memory.on_gpu(e.max_batch.usable_bytes)) / kGiB},
            {"max_seq_len_batch1", e.max_seq.seq_len},
            {"host_offload_gib", e.memory.host_offload / kGiB},
            {"paged_out_gib", e.memory.paged_out(e.max_batch.usable_bytes) / kGiB},
            {"stack", {{"id", in.stack.id}, {"name", in.stack.display_name}, {"version", in.stack.version}}},
            {"memory_model",
             {{"usable_gib", e.max_batch.usable_bytes / kGiB},
              {"fixed_gib", e.max_batch.fixed_bytes / kGiB},
              {"per_sample_gib", e.max_batch.per_sample_bytes / kGiB},
              {"note",
               "first-principles components; the stack profile's gc_retained_fraction is fitted on the "
               "paper's A40 maxima"}}}};
  if (in.dataset) j["dataset"] = in.dataset->to_json();
  json warnings = e.warnings;
  j["warnings"] = warnings;
  if (e.batch <= 0) {
    j["fits"] = false;
    null_timing(j);
    return j;
  }
  j["fits"] = e.max_batch.batch >= e.batch;
  j["batch_choice"] = {{"rule", e.batch_choice.rule},
                       {"largest_upper_fit", e.batch_choice.largest},
                       {"grad_accum", e.batch_choice.grad_accum},
                       {"reason", e.batch_choice.reason}};
  if (e.batch_choice.largest_qps > 0) j["batch_choice"]["largest_queries_per_s"] = e.batch_choice.largest_qps;
  j["mean_padded_len"] = e.padded_len;
  j["mean_data_len"] = w.mean_data_len();
  j["step_time_s"] = e.step.total_s;
  j["step_model"] = {{"name", e.step.model},
                     {"range_fraction", e.step.range_fraction},
                     {"note", e.step.range_note},
                     {"dominant_uncertainty", e.step.dominant_uncertainty}};
  if (e.step.model == "step-model") add_step_breakdown(j, e.step);
  add_objective_json(j, e);
  j["throughput_queries_per_s"] = e.throughput_qps;
  j["throughput_queries_per_s_range"] = {e.throughput_low, e.throughput_high};
  j["throughput_tokens_per_s"] = e.throughput_tps;
  j["throughput_data_tokens_per_s"] = e.throughput_data_tps;
  if (e.batch > e.max_batch.batch) {
    // a --batch that does not fit: its step is what it would take, but no time or cost is a result
    j["time_hours"] = nullptr;
    j["cost_usd"] = nullptr;
    return j;
  }
  j["time_hours"] = e.time_hours;
  add_costs(j, e);
  return j;
}

}  // namespace ftcost
