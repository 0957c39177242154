#include "ftcost/job.hpp"

#include "ftcost/paper.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/units.hpp"

#include <utility>

namespace ftcost {

std::string one_gpu_only_option(const Inputs& in) {
  const Objective obj = in.workload.objective.objective;
  if (obj != Objective::sft) return std::string("--objective ") + objective_name(obj);
  if (in.workload.fp8_te()) return "--fp8 " + in.workload.fp8;
  return "";
}

Result<Job> make_job(const Inputs& in, const Database& db) {
  Job job;
  job.in = in;
  job.multi = in.multi.active() || !in.multi.parallel.empty();
  FTCOST_TRY(plan, plan_from_inputs(in, db));
  job.plan = std::move(plan);
  // A stack whose software trains on one GPU (plan.hpp's stack_strategies: Unsloth 2024) has no
  // multi-GPU answer: refused, not estimated as if it scaled.
  if (job.plan.ranks() > 1 && stack_strategies(in.stack, in.model, "", job.plan.gpus_per_node).empty())
    return make_error(Errc::invalid_value, "--gpus",
                      in.stack.id +
                          " trains on one GPU (Unsloth 2024: unsloth/__init__.py \"Currently only "
                          "supports 1 GPU\"): use --gpus 1, or a stack that shards (TRL, torchtune, axolotl, "
                          "LLaMA-Factory)");
  // Preference and RL objectives are modelled on one training GPU (GRPO's vLLM server GPUs aside): a
  // sharded reference model, ZeRO-3's gathers for generation and vLLM tensor parallelism are not.
  const Objective obj = in.workload.objective.objective;
  if (job.multi && obj != Objective::sft)
    return make_error(Errc::invalid_value, job.plan.ranks() > 1 ? "--gpus" : "--offload",
                      std::string("--objective ") + objective_name(obj) +
                          " is estimated on one training GPU (GRPO's vLLM server GPUs aside: --generation "
                          "vllm-server --vllm-gpus N); several training GPUs, sharding and offload are not "
                          "modelled for it yet");
  // Transformer Engine's FP8 linears are modelled on one GPU: under FSDP2 te.Linear keeps no FP8 weight for
  // the backward (linear.py `wt_save = None` when is_fsdp2) and all-gathers differently; not modelled yet.
  if (job.multi && in.workload.fp8_te())
    return make_error(
        Errc::invalid_value, job.plan.ranks() > 1 ? "--gpus" : "--offload",
        "--fp8 " + in.workload.fp8 +
            " (Transformer Engine) is estimated on one GPU; with several GPUs, sharding or offload "
            "use --fp8 tensorwise (torchao, FSDP2) or leave --fp8 off");
  return job;
}

Result<Job> resolve_job(const Request& req, const Database& db, const FileReader& reader, long today_days) {
  FTCOST_TRY(in, resolve_request(req, db, reader, today_days));
  return make_job(in, db);
}

namespace {

// The answer of a job on one GPU.
JobAnswer single_answer(const Estimate& e) {
  JobAnswer a;
  const Workload& w = e.in.workload;
  a.fits = e.batch > 0 && e.batch <= e.max_batch.batch;
  a.memory_state = e.memory_state;
  a.peak_gib = e.memory.total() / kGiB;
  a.usable_gib = e.max_batch.usable_bytes / kGiB;
  a.memory_low_gib = e.memory_low / kGiB;
  a.memory_high_gib = e.memory_high / kGiB;
  a.batch = e.batch;
  a.max_batch = e.max_batch.batch;
  a.max_batch_range_fit = e.max_batch_range_fit;
  a.grad_accum = w.grad_accum;
  a.global_batch = e.batch * w.grad_accum;
  a.max_seq_len = e.max_seq.seq_len;
  a.batch_choice = e.batch_choice;
  a.warnings = e.warnings;
  a.generation_gpus = rented_gpus(e.in) - 1;
  if (!a.fits) return a;
  a.step_s = e.step.total_s;
  a.qps = e.throughput_qps;
  a.qps_low = e.throughput_low;
  a.qps_high = e.throughput_high;
  a.tokens_per_s = e.throughput_tps;
  a.data_tokens_per_s = e.throughput_data_tps;
  a.hours = e.time_hours;
  a.hours_low = paper::hours(w.queries, w.epochs, e.throughput_high) + e.precompute_hours;
  a.hours_high = paper::hours(w.queries, w.epochs, e.throughput_low) + e.precompute_hours;
  a.has_price = e.has_price;
  if (!e.has_price) return a;
  a.price = e.chosen.price;
  a.usd_per_hour = e.chosen.price.usd_per_hour * rented_gpus(e.in);  // with GRPO's vLLM server GPUs
  a.cost = e.chosen.cost_usd;
  a.cost_low = e.chosen.cost_low;
  a.cost_high = e.chosen.cost_high;
  return a;
}

// The answer of a job on several GPUs (or one with an offload): per rank, the chosen strategy's.
JobAnswer multi_answer(const ParallelEstimate& p) {
  JobAnswer a;
  a.gpus = p.plan.ranks();
  a.gpus_per_node = p.plan.gpus_per_node;
  a.nodes = p.plan.nodes;
  a.strategy = p.strategy_label;
  a.fits = p.fits;
  a.memory_state = rank_memory_state(p);
  a.peak_gib = p.memory.total() / kGiB;
  a.usable_gib = p.usable_bytes / kGiB;
  a.memory_low_gib = p.memory_low / kGiB;
  a.memory_high_gib = p.memory_high / kGiB;
  a.batch = p.micro_batch;
  a.max_batch = p.max_micro_batch;
  a.max_batch_range_fit = p.max_micro_range_fit;
  a.grad_accum = p.plan.grad_accum;
  a.global_batch = p.global_batch;
  a.max_seq_len = p.max_seq_len;
  a.batch_choice = p.batch_choice;
  a.warnings = single_gpu_warnings(p);
  a.warnings.insert(a.warnings.end(), p.warnings.begin(), p.warnings.end());
  if (!p.fits) return a;
  a.step_s = p.step_s;
  a.qps = p.throughput_qps;
  a.qps_low = p.throughput_low;
  a.qps_high = p.throughput_high;
  a.tokens_per_s = p.throughput_tps;
  a.data_tokens_per_s = p.throughput_data_tps;
  a.hours = p.time_hours;
  a.hours_low = p.hours_low;
  a.hours_high = p.hours_high;
  a.has_price = p.usd_per_gpu_hour > 0 || p.price.basis == "given";
  if (!a.has_price) return a;
  a.price = p.price;
  a.usd_per_hour = p.usd_per_gpu_hour * a.gpus;
  a.cost = p.cost_usd;
  a.cost_low = p.cost_low;
  a.cost_high = p.cost_high;
  return a;
}

}  // namespace

Result<JobEstimate> estimate_job(const Job& job, const Database& db) {
  JobEstimate out;
  out.job = job;
  if (job.multi) {
    FTCOST_TRY(pe, estimate_parallel(job.in, job.plan, db));
    out.pe = std::move(pe);
  } else {
    FTCOST_TRY(e, estimate(job.in, db));
    out.pe.single = std::move(e);
    out.pe.plan = job.plan;
    out.pe.is_single = true;
  }
  out.answer = out.pe.is_single ? single_answer(out.pe.single) : multi_answer(out.pe);
  return out;
}

Result<JobEstimate> estimate_request(const Request& req, const Database& db, const FileReader& reader,
                                     long today_days) {
  FTCOST_TRY(job, resolve_job(req, db, reader, today_days));
  return estimate_job(job, db);
}

json answer_to_json(const JobAnswer& a) {
  json j = {{"gpus", a.gpus},
            {"gpus_per_node", a.gpus_per_node},
            {"nodes", a.nodes},
            {"strategy", a.strategy},
            {"fits", a.fits},
            {"memory_state", a.memory_state},
            {"peak_gib", a.peak_gib},
            {"usable_gib", a.usable_gib},
            {"memory_range_gib", {a.memory_low_gib, a.memory_high_gib}},
            {"batch", a.batch},
            {"max_batch", a.max_batch},
            {"max_batch_range_fit", a.max_batch_range_fit},
            {"grad_accum", a.grad_accum},
            {"global_batch", a.global_batch},
            {"max_seq_len", a.max_seq_len},
            {"batch_reason", a.batch_choice.reason},
            {"warnings", a.warnings}};
  if (a.generation_gpus > 0) j["generation_gpus"] = a.generation_gpus;
  if (!a.fits) {
    for (const char* k :
         {"step_s", "queries_per_s", "tokens_per_s", "data_tokens_per_s", "hours", "cost_usd"})
      j[k] = nullptr;
    return j;
  }
  j["step_s"] = a.step_s;
  j["queries_per_s"] = a.qps;
  j["queries_per_s_range"] = {a.qps_low, a.qps_high};
  j["tokens_per_s"] = a.tokens_per_s;
  j["data_tokens_per_s"] = a.data_tokens_per_s;
  j["hours"] = a.hours;
  j["hours_range"] = {a.hours_low, a.hours_high};
  if (!a.has_price) {
    j["cost_usd"] = nullptr;
    return j;
  }
  j["cost_usd"] = a.cost;
  j["cost_usd_range"] = {a.cost_low, a.cost_high};
  j["price"] = {{"provider", a.price.provider},
                {"provider_id", a.price.provider_id},
                {"usd_per_gpu_hour", a.price.usd_per_hour},
                {"usd_per_hour", a.usd_per_hour},
                {"kind", a.price.spot ? "spot" : "on-demand"},
                {"class", price_class(a.price)},
                {"date", a.price.date},
                {"basis", a.price.basis},
                {"instance_type", a.price.instance_type},
                {"instance_gpus", a.price.gpu_count}};
  return j;
}

json job_to_json(const JobEstimate& e) {
  json j = e.pe.is_single ? estimate_to_json(e.pe.single) : parallel_to_json(e.pe);
  j["answer"] = answer_to_json(e.answer);
  return j;
}

Result<json> estimate_job_json(const Inputs& in, const Database& db) {
  FTCOST_TRY(job, make_job(in, db));
  FTCOST_TRY(e, estimate_job(job, db));
  return job_to_json(e);
}

}  // namespace ftcost
