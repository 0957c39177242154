#include "ftcost/estimate.hpp"

#include "ftcost/calibration.hpp"
#include "ftcost/model_constants.hpp"
#include "ftcost/objective.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

namespace ftcost {

int price_tier(const PriceChoice& p) {
  if (p.date.empty()) return 2;
  return p.stale ? 1 : 0;
}

const char* price_class(const std::string& date, bool stale) {
  return date.empty() ? "undated" : stale ? "stale" : "fresh";
}

const char* price_class(const PriceChoice& p) { return price_class(p.date, p.stale); }

std::string slower_largest_note(std::int64_t largest, double largest_qps, double best_qps) {
  return "; the largest, " + std::to_string(largest) + ", is slower (" +
         json(std::round(largest_qps * 1000) / 1000).dump() + " against " +
         json(std::round(best_qps * 1000) / 1000).dump() + " samples/s)";
}

bool offer_rents_shape(const PriceChoice& p, int gpus_per_node, int nodes) {
  return p.gpu_count == gpus_per_node && (nodes <= 1 || p.network != "none");
}

bool price_better(const PriceChoice& a, double cost_a, const PriceChoice& b, double cost_b) {
  const int ta = price_tier(a);
  const int tb = price_tier(b);
  if (ta != tb) return ta < tb;
  return cost_a < cost_b;
}

namespace {

// The step model's time for the job `in` with workload `w` (in.workload, or a variant of it) run on `stack`
// at `batch` (padded_len: w.mean_padded_len(batch)). Only a paged optimizer moves states over PCIe
// (memory.cpp sets paged_optimizer for paged AdamW alone), so the memory model runs only for one.
StepTime job_step(const Inputs& in, const Workload& w, const StackProfile& stack, std::int64_t batch,
                  double padded_len) {
  StepTime t =
      objective_step(in.model, w, stack, in.gpu, in.calibration.get(), batch, padded_len, in.expert_shares);
  if (w.optimizer == Optimizer::paged_adamw || w.optimizer == Optimizer::paged_adamw_8bit) {
    const MemoryBreakdown mb = memory_for_batch(in.model, w, stack, batch, padded_len);
    add_optimizer_paging(t, mb.paged_out(in.gpu.usable_bytes()), in.gpu, w.grad_accum);
  }
  return t;
}

// Samples per second of that job at `batch` (its step model's time).
double batch_qps(const Inputs& in, const Workload& w, const StackProfile& stack, std::int64_t batch) {
  const StepTime t = job_step(in, w, stack, batch, w.mean_padded_len(batch));
  return t.total_s > 0 ? static_cast<double>(batch) * w.queries_per_row() / t.total_s : 0;
}

// Hours for a message: two decimals under an hour (0.78 h), one above (2.1 h).
std::string hours_text(double h) {
  const double scale = h < 1 ? 100 : 10;
  return json(std::round(h * scale) / scale).dump() + " h";
}

// The job's hours on `stack` at `batch` (the step model's time; memory and prices are not compared).
double job_hours(const Inputs& in, const StackProfile& stack, std::int64_t batch) {
  const Workload& w = in.workload;
  const double qps = batch_qps(in, w, stack, batch);
  return qps > 0 ? paper::hours(w.queries, w.epochs, qps) : 0;
}

// Why the launches are so many: the ops that issue most of them (StepTime::ops, as the step model counts
// them), with the stack fields that make it so. Empty when no group has a third of them.
std::string host_bound_cause(const Estimate& e) {
  double expert_lora = 0;
  double experts = 0;
  double total = 0;
  for (const auto& op : e.step.ops) {
    total += op.kernels;
    if (op.layer != LayerType::moe) continue;
    (std::string(op.name).rfind("lora", 0) == 0 ? expert_lora : experts) += op.kernels;
  }
  const StackProfile& s = e.in.stack;
  const auto pct = [&](double k) { return std::to_string(std::lround(k / total * 100)) + "% of them "; };
  if (total <= 0) return {};
  if (expert_lora >= experts && expert_lora * 3 >= total)
    return pct(expert_lora) + "are the LoRA adapters on the " + std::to_string(e.in.model.moe.experts) +
           " experts, launched once per expert hit (" + s.id + " runs the experts' base weights as " +
           (s.moe_execution == "grouped"
                ? std::string("grouped GEMMs, the adapters per expert)")
                : std::string("a Python loop, and each expert's adapters with them)"));
  if (experts * 3 >= total)
    return pct(experts) + "are the MoE layers' kernels" +
           (s.moe_execution == "loop"
                ? " (" + s.id + " runs the experts as a Python loop, one set per expert)"
                : std::string());
  return {};
}

// The same job with its LoRA adapters on attention only (--lora-targets attention): the experts' adapters are
// what a grouped stack still launches per expert. A different job (the experts stay frozen), priced at the
// same batch. Empty unless the job adapts the experts.
std::string expert_lora_alternative(const Estimate& e) {
  const Workload& w = e.in.workload;
  if (w.method == Method::full || !e.in.model.is_moe() ||
      !(w.lora_targets.expert_gate_up || w.lora_targets.expert_down))
    return {};
  auto attention = parse_lora_targets("attention", "--lora-targets");
  if (!attention.ok()) return {};
  Inputs alt = e.in;
  alt.workload.lora_targets = attention.value();
  const double h = job_hours(alt, alt.stack, e.batch);
  if (!(h > 0 && h < e.time_hours)) return {};
  return "; with adapters on attention only (--lora-targets attention: the experts stay frozen) the same "
         "batch "
         "takes " +
         hours_text(h);
}

// The job as `stack` would run it: xformers attention is only the default of stacks that run it (Unsloth's);
// elsewhere the job's default is flash (options_table.cpp attention_default), as `--stack <id>` would resolve
// it.
Inputs job_on_stack(const Inputs& in, const StackProfile& stack) {
  Inputs out = in;
  if (out.workload.attention == Attention::xformers && stack.default_attention != "xformers")
    out.workload.attention = Attention::flash;
  return out;
}

// The same job on the first stack that runs the experts the other way and is faster, at that stack's own
// batch: the job's batch when it fits there, else (and when the job left the batch to the estimate) the
// largest batch that fits there, the estimate's default. Empty when no such stack loads the model and fits.
std::string other_stack_alternative(const Estimate& e, const Database& db) {
  const Workload& w = e.in.workload;
  for (const auto& [id, alt] : db.stacks()) {
    if (id == e.in.stack.id || alt.moe_execution == e.in.stack.moe_execution ||
        !stack_supports(alt, e.in.model).ok)
      continue;
    const Inputs in = job_on_stack(e.in, alt);
    const std::int64_t max_b = max_batch_size(in.model, in.workload, alt, in.gpu).batch;
    if (max_b <= 0) continue;
    const bool job_batch_fits = w.batch > 0 && w.batch <= max_b;
    const std::int64_t b = job_batch_fits ? w.batch : max_b;
    const double h = job_hours(in, alt, b);
    // only a stack that makes the job faster is advice (from a grouped stack, a loop one is slower)
    if (!(h > 0 && h < e.time_hours)) continue;
    const std::string at = job_batch_fits ? "at batch " + std::to_string(b)
                           : w.batch > 0
                               ? "at batch " + std::to_string(w.batch) +
                                     ", which does not fit there; at its max batch " + std::to_string(b)
                               : "at its max batch " + std::to_string(b);
    std::string msg = "; on " + id;
    msg.append(" (")
        .append(alt.moe_execution)
        .append(" experts: ")
        .append(alt.version)
        .append(") ")
        .append(at);
    return msg.append(" the same job takes ")
        .append(hours_text(h))
        .append(" instead of ")
        .append(hours_text(e.time_hours));
  }
  return {};
}

// When the host launching kernels sets the pace, say so, name the cause and price what changes it: the same
// job on a stack that runs the experts the other way, or without adapters on the experts (computed, not
// guessed).
void host_bound_advice(Estimate& e, const Database& db) {
  const StepTime& s = e.step;
  if (!e.in.advise || s.model != "step-model" || s.total_s <= 0 || s.host_s <= kHostBoundFraction * s.total_s)
    return;
  std::string msg = "host-bound: " + std::to_string(std::lround(s.host_s / s.total_s * 100)) +
                    "% of each step waits on the host launching " + std::to_string(std::llround(s.kernels)) +
                    " kernels";
  const std::string cause = host_bound_cause(e);
  if (!cause.empty()) msg += ": " + cause;
  std::string alt = other_stack_alternative(e, db);
  if (alt.empty()) alt = expert_lora_alternative(e);
  e.warnings.push_back(msg + alt);
}
}  // namespace

namespace {

// The largest batch whose memory range's upper end (total + uncertainty x variable part) fits: the upper end
// is non-decreasing in the batch, so a bisection on [0, max batch] finds it.
std::int64_t largest_batch_upper_fit(const ModelSpec& m, const Workload& w, const StackProfile& s,
                                     const MaxBatch& mx, double usable) {
  const double u = s.memory_uncertainty_fraction;
  std::int64_t hi = mx.batch;
  if (u <= 0 || hi < 1) return std::max<std::int64_t>(hi, 0);
  const BatchMemory bm(m, w, s, mx.seq_len);  // the batch-independent part once
  auto upper_fits = [&](std::int64_t b) {
    const MemoryBreakdown mb = bm.at(b);
    return mb.resident() + u * mb.variable() <= usable;
  };
  if (upper_fits(hi)) return hi;
  std::int64_t lo = 0;
  while (hi - lo > 1) {  // invariant: lo fits at the upper end (or is 0), hi does not
    const std::int64_t mid = lo + (hi - lo) / 2;
    (upper_fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// Throughput (samples/s) of the job at micro-batch b and grad-accum ga (the workload is copied only for
// another grad-accum).
double batch_qps(const Inputs& in, std::int64_t b, std::int64_t ga) {
  if (ga == in.workload.grad_accum) return batch_qps(in, in.workload, in.stack, b);
  Workload other = in.workload;
  other.grad_accum = ga;
  return batch_qps(in, other, in.stack, b);
}

// The micro-batches the fastest-batch search times over [1, hi]: every batch up to 16, then steps of 20%
// (refine_batch scans around the best of them), and hi itself.
std::vector<std::int64_t> batch_candidates(std::int64_t hi) {
  std::vector<std::int64_t> c;
  for (std::int64_t b = 1; b <= std::min<std::int64_t>(hi, 16); ++b) c.push_back(b);
  for (double x = 16; c.back() < hi;) {
    x *= 1.2;
    c.push_back(std::min<std::int64_t>(hi, std::max<std::int64_t>(c.back() + 1, std::llround(x))));
  }
  return c;
}

// Between the timed neighbours lo < hi of the best batch: every batch (at most 48 of them, evenly spaced
// beyond that). The throughput is jagged at the 1-3% scale (wave quantization, padding rounded to 8), so the
// neighbourhood is scanned rather than bisected.
std::int64_t refine_batch(const Inputs& in, std::int64_t lo, std::int64_t hi, std::int64_t best,
                          double& best_q, int& evals) {
  const std::int64_t step = std::max<std::int64_t>(1, (hi - lo) / 48);
  for (std::int64_t b = lo + 1; b < hi; b += step) {
    if (b == best) continue;
    const double q = batch_qps(in, b, in.workload.grad_accum);
    ++evals;
    if (q > best_q) best_q = q, best = b;
  }
  return best;
}

// --batch fastest: the micro-batch of the highest throughput among those whose memory range's upper end fits
// (with --effective-batch, among the divisors of it, grad-accum the quotient). With a fixed length, packing
// or max-length padding every sample costs the same: throughput grows with the batch and the largest is the
// fastest; with padding to the longest sample a larger batch pads more, so the candidates are timed.
std::int64_t choose_fastest_batch(Estimate& e, double usable) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  BatchChoice& c = e.batch_choice;
  c.rule = "fastest";
  c.largest = largest_batch_upper_fit(in.model, w, in.stack, e.max_batch, usable);
  if (c.largest < 1) return e.max_batch.batch;  // only the low end of the range fits: the largest, warned
  const bool varies = w.mean_padded_len(1) != w.mean_padded_len(c.largest);
  std::vector<std::int64_t> cand;
  if (w.effective_batch > 0) {
    for (std::int64_t b = 1; b <= std::min(c.largest, w.effective_batch); ++b)
      if (w.effective_batch % b == 0) cand.push_back(b);
  } else if (varies && in.model_kind != "paper") {
    cand = batch_candidates(c.largest);
  } else {
    c.reason =
        "the largest batch whose memory range's upper end fits: with every sample the same length, a "
        "larger batch is never slower";
    return c.largest;
  }
  std::int64_t best = 0;
  double best_q = -1;
  std::size_t at = 0;
  for (std::size_t i = 0; i < cand.size(); ++i) {
    const std::int64_t ga = w.effective_batch > 0 ? w.effective_batch / cand[i] : w.grad_accum;
    const double q = batch_qps(in, cand[i], ga);
    ++c.evaluated;
    if (cand[i] == c.largest) c.largest_qps = q;
    if (q > best_q) best_q = q, best = cand[i], at = i;
  }
  if (w.effective_batch <= 0 && at > 0 && at + 1 < cand.size() && cand[at + 1] - cand[at - 1] > 2)
    best = refine_batch(in, cand[at - 1], cand[at + 1], best, best_q, c.evaluated);
  if (w.effective_batch > 0) {
    c.grad_accum = w.effective_batch / best;
    e.in.workload.grad_accum = c.grad_accum;
  }
  c.reason = best == c.largest ? "the largest batch whose memory range's upper end fits is the fastest"
                               : "batch " + std::to_string(best) + " is the fastest that fits";
  if (best != c.largest && c.largest_qps > 0)
    c.reason += slower_largest_note(c.largest, c.largest_qps, best_q) +
                (w.mean_padded_len(c.largest) > w.mean_padded_len(best) * 1.05
                     ? ": a larger batch is padded to a longer sample"
                     : "");
  if (w.effective_batch > 0)
    c.reason += " for the effective batch " + std::to_string(w.effective_batch) + " (grad-accum " +
                std::to_string(c.grad_accum) + ")";
  return best;
}

}  // namespace

Result<Inputs> resolve_longest_seq(const Inputs& in) {
  Inputs at = in;
  Workload& w = at.workload;
  if (!w.seq_max) return at;
  w.seq_max = false;
  if (w.batch > 1)
    return make_error(Errc::invalid_value, "--seq",
                      "max is the longest sequence at batch 1; leave --batch out or give 1");
  // GRPO at batch 1: the step's completions (1 x grad-accum) must make whole groups of num_generations, and
  // the generation batch and kept gradients that follow are part of what must fit.
  const std::int64_t G = w.objective.generations;
  std::string ga_note;
  if (w.objective.grpo() && w.grad_accum % G != 0) {
    w.grad_accum = G * ((w.grad_accum + G - 1) / G);
    ga_note = "grad-accum=" + std::to_string(w.grad_accum) +
              " (--seq max: batch 1, so that a step holds whole groups of " + std::to_string(G) +
              " generations)";
  }
  const MaxSeq ms = max_seq_len(at.model, w, at.stack, at.gpu, 8);
  if (ms.seq_len <= 0)
    return make_error(
        Errc::does_not_fit, "--seq",
        "max: even 8 tokens at batch 1 do not fit on " + at.gpu.id + " with stack " + at.stack.id);
  // GRPO: --seq is the prompt; the longest sequence holds the completion too.
  const double completion = w.completion_tokens();
  if (ms.seq_len <= completion)
    return make_error(Errc::does_not_fit, "--seq",
                      "max: at batch 1 the longest sequence that fits on " + at.gpu.id + " is " +
                          json(ms.seq_len).dump() + " tokens, not more than --completion-len " +
                          json(completion).dump() + ": no room for a prompt");
  Inputs fixed =
      at_fixed_length(at, ms.seq_len - completion,
                      completion > 0 ? "the longest prompt that fits at batch 1 with the completion"
                                     : "the longest sequence that fits at batch 1");
  if (!ga_note.empty()) fixed.defaults.push_back(ga_note);
  return fixed;
}

Inputs at_fixed_length(const Inputs& in, double seq, const std::string& why) {
  Inputs at = in;
  Workload& w = at.workload;
  w.seq_max = false;
  w.seq_len = seq;
  w.lengths = LengthDistribution::fixed(seq);
  w.max_length = seq;
  w.batch = 1;
  at.defaults.push_back("seq=" + std::to_string(static_cast<long long>(seq)) + " (--seq max: " + why + ")");
  return at;
}

namespace {

// --seq max: the estimate at the longest length that fits at batch 1 (resolve_longest_seq).
Result<Estimate> estimate_at_longest_seq(const Inputs& in, const Database& db) {
  FTCOST_TRY(at, resolve_longest_seq(in));
  return estimate(at, db);
}

std::string gib1(double bytes) { return json(std::round(bytes / kGiB * 10) / 10).dump(); }

// A sequence longer than the model's context window: positions it was never trained on.
void context_window_warning(Estimate& e) {
  const ModelSpec& m = e.in.model;
  if (m.max_position_embeddings <= 0 || e.max_batch.seq_len <= static_cast<double>(m.max_position_embeddings))
    return;
  e.warnings.push_back("context window: the longest sequence is " +
                       std::to_string(static_cast<long long>(e.max_batch.seq_len)) + " tokens, longer than " +
                       m.display_name + "'s context window of " + std::to_string(m.max_position_embeddings) +
                       " tokens (config " + m.max_position_field +
                       "); positions beyond it were never trained (extend it with RoPE scaling, or shorten " +
                       (e.in.workload.seq_len > 0 ? std::string("--seq") : std::string("--max-length")) +
                       ")");
}

// The stack's software cannot load the model's architecture at the versions the profile pins (model_support;
// stack_supports names the software and the first version that can).
void model_support_warning(Estimate& e) {
  const StackSupport s = stack_supports(e.in.stack, e.in.model);
  if (!s.message.empty()) e.warnings.push_back("stack: " + s.message);
}

// Unsloth patches its fused LoRA MLP/QKV/O kernels only at lora_dropout 0: the memory follows the PEFT
// modules then (memory.cpp), the step time was fitted with the fused kernels.
void fused_lora_dropout_warning(Estimate& e) {
  const Inputs& in = e.in;
  if (!in.stack.fused_lora_needs_zero_dropout || in.workload.method == Method::full ||
      fused_lora(in.stack, in.workload))
    return;
  e.warnings.push_back(
      "lora-dropout " + json(in.workload.lora_dropout).dump() + ": " + in.stack.id +
      " runs its fused LoRA kernels only at lora_dropout 0; with dropout the adapted layers run as "
      "PEFT modules (memory counts the unfused MLP; the step time, fitted with the fused kernels, "
      "is optimistic). lora_dropout 0 keeps them");
}

// TRL's chunked loss is a property of SFTTrainer, not of the job: a plain transformers Trainer (or any
// trainer that passes labels to the model) on the same libraries materialises the full logits. When the
// database has that configuration as a thin alias of this profile (hf-trainer-2026 of hf-trl-2026) and it
// needs materially more, say so: the H200 Trainer runs measured 20-50% above the chunked loss's estimate.
void plain_trainer_loss_warning(Estimate& e, const Database& db) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  if (e.batch <= 0 || effective_loss_path(in.stack, w) != "chunked") return;
  for (const auto& [id, p] : db.stacks()) {
    if (p.alias_of != in.stack.id || p.loss_path != "full") continue;
    const double full = memory_for_batch(in.model, w, p, e.batch, e.max_batch.seq_len).resident();
    if (full <= 1.1 * e.memory.resident()) return;
    const MaxBatch mb = max_batch_size(in.model, w, p, in.gpu);
    e.warnings.push_back("loss: " + in.stack.id + " is TRL SFTTrainer's chunked loss; a plain transformers " +
                         "Trainer (the model's own loss, full logits) needs " + gib1(full) +
                         " GiB at batch " + std::to_string(e.batch) + " (max batch " +
                         std::to_string(mb.batch) + "): --stack " + id);
    return;
  }
}

// The memory range from the stack's uncertainty on the variable part, and the warning when only its low end
// fits.
void memory_range(Estimate& e, double usable) {
  const Inputs& in = e.in;
  const double u = in.stack.memory_uncertainty_fraction;
  e.memory_low = e.memory.total() - u * e.memory.variable();
  e.memory_high = e.memory.total() + u * e.memory.variable();
  e.max_batch_range_fit = largest_batch_upper_fit(in.model, in.workload, in.stack, e.max_batch, usable);
  // (paged optimizer states yield: what must fit is the resident part and its range)
  const double need = e.memory.resident();
  if (e.batch <= 0 || need > usable || need + u * e.memory.variable() <= usable) return;
  // The largest batch whose upper end still fits, for the advice.
  const std::int64_t safe = std::min(e.max_batch_range_fit, e.batch - 1);
  e.warnings.push_back("fits only at the low end: the memory range is " + gib1(e.memory_low) + "-" +
                       gib1(e.memory_high) + " GiB (stack " + in.stack.id + ", +/-" +
                       std::to_string(static_cast<int>(std::lround(u * 100))) +
                       "% on activations, loss and allocator) and its upper end exceeds the " + gib1(usable) +
                       " GiB usable on " + in.gpu.id + "; " +
                       (safe > 0 ? "batch " + std::to_string(safe) + " fits at the upper end"
                                 : std::string("a shorter sequence leaves headroom")));
}

// The memory at the chosen batch, its share of the usable memory and its state. Tight or not is what must fit
// (paged optimizer states fill whatever room is left by design).
void set_memory_at_batch(Estimate& e) {
  const Inputs& in = e.in;
  e.memory = memory_for_batch(in.model, in.workload, in.stack, std::max<std::int64_t>(e.batch, 0),
                              e.max_batch.seq_len);
  const double usable = in.gpu.usable_bytes();
  e.memory_fraction = usable > 0 ? e.memory.on_gpu(usable) / usable : 0;
  const double need = usable > 0 ? e.memory.resident() / usable : 0;
  e.memory_state = e.batch <= 0 || e.batch > e.max_batch.batch ? "does_not_fit"
                   : need > kTightMemoryFraction               ? "tight"
                                                               : "fits";
}

// Memory: the largest batch, the batch used, its breakdown, state and range, and the warnings about fit.
// Returns false when not even batch 1 fits (the estimate is then complete: memory at batch 1, no step).
bool estimate_memory(Estimate& e) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  e.max_batch = max_batch_size(m, w, in.stack, in.gpu);
  e.params = param_breakdown(m, w);
  context_window_warning(e);
  model_support_warning(e);
  fused_lora_dropout_warning(e);
  if (w.batch > 0) {
    e.batch = w.batch;
    if (w.batch > e.max_batch.batch)
      e.warnings.push_back("batch " + std::to_string(w.batch) + " does not fit: the maximum on " + in.gpu.id +
                           " is " + std::to_string(e.max_batch.batch));
  } else {
    e.batch = e.max_batch.batch;
    e.batch_choice.rule = "largest";
    e.batch_choice.reason = "the largest batch that fits (--batch max)";
    if ((w.batch_fastest || w.effective_batch > 0) && e.batch > 0)
      e.batch = choose_fastest_batch(e, in.gpu.usable_bytes());
  }
  e.batch_choice.grad_accum = e.in.workload.grad_accum;
  set_memory_at_batch(e);
  const double usable = in.gpu.usable_bytes();
  const double need = usable > 0 ? e.memory.resident() / usable : 0;
  // At "the largest batch that fits" the memory is full by construction: the state says "tight" there, and
  // the warning is for a batch the user chose.
  if (e.memory_state == "tight" && w.batch > 0)
    e.warnings.push_back("tight: the job needs " + json(std::round(need * 1000) / 10).dump() +
                         "% of the usable memory of " + in.gpu.id +
                         "; allocator fragmentation or a longer batch than expected can run it out of memory "
                         "(a smaller batch or --headroom leaves a margin)");
  e.max_seq = max_seq_len(m, w, in.stack, in.gpu);
  // Nothing fits: the memory shown (breakdown, range, fraction) is batch 1's, the job that does not fit.
  if (e.batch <= 0) {
    e.memory = memory_for_batch(m, w, in.stack, 1, e.max_batch.seq_len);
    e.memory_fraction = usable > 0 ? e.memory.on_gpu(usable) / usable : 0;
  }
  memory_range(e, usable);
  if (w.host_ram_gib > 0 && e.memory.host_offload > w.host_ram_gib * kGiB)
    e.warnings.push_back("offloaded checkpoints need " + gib1(e.memory.host_offload) +
                         " GiB of host RAM, more than --host-ram " + json(w.host_ram_gib).dump() + " GiB");
  // --host-ram checks offloaded checkpoints and (on the multi-GPU path) --offload's states: with neither it
  // applies to nothing, and says so.
  if (w.host_ram_gib > 0 && !w.offloads(in.stack.offload_checkpoints) && in.multi.offload == "none")
    e.warnings.push_back(
        "--host-ram " + json(w.host_ram_gib).dump() +
        " applies only to what is offloaded to host RAM: checkpoints (--offload-activations on, "
        "with --checkpointing on) or model states (--offload); nothing is offloaded here");
  if (e.batch <= 0) {
    e.warnings.push_back("does not fit: even batch 1 needs " + gib1(e.memory.resident()) + " GiB; " +
                         in.gpu.id + " has " + gib1(in.gpu.usable_bytes()) + " GiB usable");
    return false;
  }
  if (in.gpu.usable_memory_estimated())
    e.warnings.push_back(
        in.gpu.id + ": usable memory estimated as 97.5% of the label (no nvidia-smi total in the database)");
  return true;
}

// --model-kind paper: the paper's Eq. (2) fit, its RMSE as the range.
Status paper_step(Estimate& e) {
  const Inputs& in = e.in;
  const ModelSpec& m = in.model;
  double rmse = 0;
  const double sparsity =
      m.is_moe() ? static_cast<double>(in.workload.active_experts(m)) / static_cast<double>(m.moe.experts)
                 : 1.0;
  FTCOST_TRY(qps, paper_eq2_qps(m.id, in.dataset_id, in.gpu.id, sparsity, e.batch, &rmse));
  if (qps <= 0)
    return make_error(Errc::invalid_value, "--model-kind",
                      "Eq. (2) gives a non-positive throughput at this batch");
  e.throughput_qps = qps;
  e.step.model = "paper-eq2";
  e.step.total_s = static_cast<double>(e.batch) / qps;
  e.step.range_fraction = rmse / qps;
  e.step.range_note = "RMSE of the Eq. (2) fit on the paper's A40 sweep";
  return Ok{};
}

// The step model's range (step_range_fraction, declared in estimate.hpp) into the estimate.
void step_range(Estimate& e) {
  std::string dominant;
  e.step.range_fraction = step_range_fraction(e.in, &dominant);
  e.step.dominant_uncertainty = dominant;
  e.step.range_note = dominant;
}

// The job's hours and cost (with its range) at one price.
ProviderCost cost_at(const Estimate& e, PriceChoice p) {
  const Workload& w = e.in.workload;
  ProviderCost c;
  c.price = std::move(p);
  const PriceChoice& pc = c.price;
  const auto gpus = static_cast<double>(rented_gpus(e.in));
  c.hours = e.time_hours;
  c.cost_usd = e.time_hours * pc.usd_per_hour * gpus;
  c.cost_low =
      (paper::hours(w.queries, w.epochs, e.throughput_high) + e.precompute_hours) * pc.usd_per_hour * gpus;
  c.cost_high =
      (paper::hours(w.queries, w.epochs, e.throughput_low) + e.precompute_hours) * pc.usd_per_hour * gpus;
  return c;
}

// Every provider offer for this GPU (on demand and spot), cheapest first.
void offer_costs(Estimate& e, const Database& db) {
  const Inputs& in = e.in;
  std::vector<ProviderCost> costs;
  costs.reserve(32);  // on-demand and spot of every offer of one GPU: about 20 today
  db.for_each_offer(in.gpu.id, [&](const PriceOffer& o) {
    for (int spot = 0; spot < 2; ++spot) {
      const double price = spot ? o.spot_usd_per_gpu_hour : o.on_demand_usd_per_gpu_hour;
      if (price <= 0) continue;
      PriceChoice p;
      p.provider = o.provider;
      p.provider_id = o.provider_id;
      p.usd_per_hour = price;
      p.date = o.date;
      p.spot = spot == 1;
      p.source = o.source;
      p.instance_type = o.instance_type;
      p.region = o.region;
      p.gpu_count = o.gpu_count;
      p.network = o.network;
      if (o.date_days >= 0 && in.today_days >= 0) {
        p.age_days = in.today_days - o.date_days;
        p.stale = p.age_days > in.stale_days;
      }
      costs.push_back(cost_at(e, std::move(p)));
    }
  });
  // Cheapest first, ties in the database's order (a stable sort: the native and WebAssembly builds' standard
  // libraries order ties alike). The positions are sorted, not the offers (strings and all): each moves once.
  std::vector<std::size_t> order(costs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&costs](std::size_t a, std::size_t b) { return costs[a].cost_usd < costs[b].cost_usd; });
  e.costs.reserve(e.costs.size() + costs.size());
  for (const std::size_t i : order) e.costs.push_back(std::move(costs[i]));
}

// The headline price among the offers: the one price rule (price_better) over the eligible offers; a stale or
// undated price is only used when nothing better exists, and then with a warning.
// (By the price per GPU-hour: the job's cost is proportional to it, and a job one GPU cannot hold has no
// time, so no cost to compare, when the multi-GPU layer prices it.)
void headline_offer(Estimate& e) {
  const Inputs& in = e.in;
  const int per_node = std::max(1, in.multi.gpus) + rented_gpus(in) - 1;
  const int nodes = std::max(1, in.multi.nodes);
  const ProviderCost* best = nullptr;  // copied into e.chosen once
  for (int pass = 0; pass < 2 && best == nullptr; ++pass)
    for (const auto& c : e.costs) {
      if ((c.price.spot && !in.spot) || (!in.provider.empty() && c.price.provider_id != in.provider))
        continue;
      if (pass == 0 && !offer_rents_shape(c.price, per_node, nodes)) continue;
      if (best == nullptr ||
          price_better(c.price, c.price.usd_per_hour, best->price, best->price.usd_per_hour))
        best = &c;
    }
  if (best == nullptr) return;
  e.chosen = *best;
  e.has_price = true;
  const PriceChoice& p = e.chosen.price;
  if (!offer_rents_shape(p, per_node, nodes)) {
    e.chosen.price.basis = "per-gpu";
    const int gpus = per_node * nodes;
    e.warnings.push_back("no " + (nodes > 1 ? std::to_string(nodes) + " networked " : std::string()) +
                         std::to_string(per_node) + "-GPU instance" + (nodes > 1 ? "s" : "") + " of " +
                         in.gpu.id + " in the price database" +
                         (in.provider.empty() ? std::string() : " from " + in.provider) + ": priced as " +
                         std::to_string(gpus) + " x the per-GPU price of " + p.provider + "'s " +
                         std::to_string(p.gpu_count) + "-GPU offer");
  }
  if (p.date.empty())
    e.warnings.push_back("the price used (" + p.provider + ") has no date in its source");
  else if (p.stale)
    e.warnings.push_back("the price used (" + p.provider + ", " + p.date + ") is older than " +
                         std::to_string(in.stale_days) + " days");
}

// Costs: every provider offer for this GPU, and the headline price (your electricity, --price-per-hour, or
// the best offer).
void estimate_costs_impl(Estimate& e, const Database& db) {
  const Inputs& in = e.in;
  offer_costs(e, db);
  if (in.electricity_usd_per_kwh >= 0) {
    // A GPU you own: its board power (TDP) at your electricity price.
    PriceChoice p;
    p.provider = "your GPU (electricity)";
    p.basis = "given";
    p.usd_per_hour = in.gpu.tdp_w / 1000.0 * in.electricity_usd_per_kwh;
    p.source =
        json(in.gpu.tdp_w).dump() + " W board power x $" + json(in.electricity_usd_per_kwh).dump() + "/kWh";
    e.chosen = cost_at(e, std::move(p));
    e.has_price = true;
  } else if (in.price_per_hour >= 0) {
    PriceChoice p;
    p.provider = in.price_per_hour == 0 ? "your GPU (no cost)" : "--price-per-hour";
    p.basis = "given";
    p.usd_per_hour = in.price_per_hour;
    e.chosen = cost_at(e, std::move(p));
    e.has_price = true;
  } else {
    headline_offer(e);
  }
  if (!e.has_price)
    e.warnings.push_back("no " + std::string(in.spot ? "spot " : "") + "price for " + in.gpu.id +
                         (in.provider.empty() ? std::string() : " from " + in.provider) +
                         " in the database: give --price-per-hour for a cost");
}

}  // namespace

void estimate_costs(Estimate& e, const Database& db) {
  e.costs.clear();
  e.has_price = false;
  estimate_costs_impl(e, db);
}

// The step model's range: the stack profile's fit residual (log-space RMS on the data it was fitted to),
// widened off the GPUs it was fitted on without a calibration, and a calibration's measurement spread;
// unfitted profiles get a wide default.
double step_range_fraction(const Inputs& in, std::string* dominant) {
  double fit_rel = constants::kUnfittedProfileUncertainty;
  std::string fit_note = "stack profile " + in.stack.id + " is not fitted to measurements";
  if (in.stack.fit.is_object() && in.stack.fit.contains("rms_log_residual") &&
      in.stack.fit["rms_log_residual"].is_number()) {
    fit_rel = std::exp(in.stack.fit["rms_log_residual"].get<double>()) - 1.0;
    fit_note = "fit residual of " + in.stack.id + " on its training data";
    // The GPUs the profile was fitted on (fit.gpus, written by fit-stack; fit.gpu for a user's run).
    const auto fit_gpus = stack_fit_gpus(in.stack);
    if (std::find(fit_gpus.begin(), fit_gpus.end(), in.gpu.id) == fit_gpus.end()) {
      // Transfer to another GPU adds the uncertainty of the default efficiency curves (no calibration).
      const double transfer = in.calibration ? 0.0 : constants::kSpecOnlyTransferUncertainty;
      fit_rel = std::sqrt(fit_rel * fit_rel + transfer * transfer);
      if (!in.calibration)
        fit_note += " + spec-only efficiencies on a GPU it was not fitted on (no calibration)";
    }
  }
  double cal_rel = 0;
  if (in.calibration) {
    for (const auto& g : in.calibration->measurements.gemm)
      if (g.tflops.median > 0)
        cal_rel = std::max(cal_rel, (g.tflops.p90 - g.tflops.p10) / (2 * g.tflops.median));
  }
  if (dominant != nullptr) *dominant = cal_rel > fit_rel ? "calibration spread" : fit_note;
  return std::sqrt(fit_rel * fit_rel + cal_rel * cal_rel);
}

int rented_gpus(const Inputs& in) {
  const ObjectiveConfig& c = in.workload.objective;
  return 1 + (c.grpo() && c.generation == Generation::vllm_server ? static_cast<int>(c.vllm_gpus) : 0);
}

namespace {

std::string gib_text(double bytes) { return gib1(bytes) + " GiB"; }

// GRPO with vLLM: its share of a GPU must hold the weights and at least one sequence's KV cache
// (vLLM refuses to start otherwise: "No available memory for the cache blocks").
Status check_vllm_share(const Inputs& in) {
  const ObjectiveConfig& c = in.workload.objective;
  if (!c.grpo() || c.generation == Generation::hf) return Ok{};
  const Workload& w = in.workload;
  const bool server = c.generation == Generation::vllm_server;
  const double frac = vllm_share(c);
  const VllmMemory vm = vllm_memory(in.model, w, in.gpu, frac, w.memory_seq_len());
  if (vm.max_sequences >= 1) return Ok{};
  const std::string field = server ? "--vllm-gpus" : "--vllm-gpu-memory-utilization";
  return make_error(
      Errc::does_not_fit, field,
      std::string(server ? "vLLM's server" : "vLLM's colocated share") + " of " + in.gpu.id + " (" +
          json(frac).dump() + " x the GPU: " + gib_text(vm.pool) + ") cannot hold the model's weights (" +
          gib_text(vm.weights) + ") and its buffers (" + gib_text(vm.overhead) +
          ") with one sequence's KV cache of " + std::to_string(std::llround(w.memory_seq_len())) +
          " tokens" +
          (server ? ": use a GPU with more memory for the server (tensor parallelism is not modelled)"
                  : ": raise --vllm-gpu-memory-utilization, or use --generation vllm-server or hf"));
}

// GRPO: the completions of a step (micro-batch x grad-accum) must be a multiple of num_generations
// (GRPOConfig.__post_init__ checks that the generation batch divides into whole groups). A chosen batch is
// lowered to the largest such one that fits; a given one is refused.
Status grpo_batch(Estimate& e) {
  const ObjectiveConfig& c = e.in.workload.objective;
  Workload& w = e.in.workload;
  if (!c.grpo() || e.batch <= 0) return Ok{};
  const std::int64_t G = c.generations;
  const std::int64_t ga = std::max<std::int64_t>(1, w.grad_accum);
  if ((e.batch * ga) % G == 0) return Ok{};
  if (w.batch > 0)
    return make_error(Errc::invalid_value, "--batch",
                      std::to_string(e.batch) + " x --grad-accum " + std::to_string(ga) +
                          " completions per step is not a multiple of --num-generations " +
                          std::to_string(G) +
                          " (GRPOConfig requires the generation batch to hold whole groups)");
  std::int64_t b = e.batch;
  while (b > 0 && (b * ga) % G != 0) --b;
  if (b == 0) {  // no micro-batch up to the largest makes whole groups at this grad-accum: accumulate more
    b = e.batch;
    const std::int64_t need = G / std::gcd(b, G);
    w.grad_accum = need * ((ga + need - 1) / need);
    e.batch_choice.grad_accum = w.grad_accum;
    e.batch_choice.reason += "; grad-accum " + std::to_string(w.grad_accum) +
                             " so that a step holds whole groups of " + std::to_string(G) + " generations";
  } else {
    e.batch_choice.reason += "; lowered to " + std::to_string(b) +
                             " so that batch x grad-accum holds whole groups of " + std::to_string(G) +
                             " generations";
    e.batch = b;
  }
  set_memory_at_batch(e);  // the lowered batch, or the larger grad-accum's gradients kept
  return Ok{};
}

}  // namespace

// Memory first (does it fit, at which batch), then the step time and throughput, then hours and costs.
Result<Estimate> estimate(const Inputs& given, const Database& db) {
  if (given.workload.seq_max) return estimate_at_longest_seq(given, db);
  if (auto st = check_vllm_share(given); !st.ok()) return st.error();
  Estimate e;
  e.in = given;
  e.warnings = given.warnings;
  if (!estimate_memory(e)) return e;
  if (auto st = grpo_batch(e); !st.ok()) return st.error();
  const Inputs& in = e.in;  // with the grad-accum an --effective-batch chose
  plain_trainer_loss_warning(e, db);
  const Workload& w = in.workload;
  e.padded_len = w.mean_padded_len(e.batch);
  const double qpr = w.queries_per_row();
  if (in.model_kind == "paper") {
    if (auto st = paper_step(e); !st.ok()) return st.error();
  } else {
    e.step = job_step(in, in.workload, in.stack, e.batch, e.padded_len);
    e.throughput_qps = static_cast<double>(e.batch) * qpr / e.step.total_s;
    step_range(e);
    if (e.step.paging_s > 0)
      e.warnings.push_back("paged optimizer: " + gib1(e.memory.paged_out(in.gpu.usable_bytes())) + " of " +
                           gib1(e.memory.optimizer_states) +
                           " GiB of optimizer states do not fit next to the rest and are paged " +
                           "to host RAM and back every optimizer step (" +
                           json(std::round(e.step.paging_s * 100) / 100).dump() +
                           " s of PCIe per step, in the step time)");
  }
  e.throughput_tps = e.throughput_qps / qpr * e.padded_len;
  e.throughput_data_tps = e.throughput_qps * w.mean_data_len();
  e.throughput_low = e.throughput_qps / (1.0 + e.step.range_fraction);
  e.throughput_high = e.throughput_qps * (1.0 + e.step.range_fraction);
  e.time_hours = paper::hours(w.queries, w.epochs, e.throughput_qps);
  if (in.model_kind != "paper") {
    // DPO/KTO precompute_ref_log_probs: one reference pass over the dataset before training.
    e.precompute_hours = reference_precompute_s(in.model, w, in.stack, in.gpu, in.calibration.get(), e.batch,
                                                e.padded_len, in.expert_shares, w.rows_per_epoch()) /
                         3600.0;
    e.time_hours += e.precompute_hours;
  }
  host_bound_advice(e, db);
  estimate_costs_impl(e, db);
  return e;
}

}  // namespace ftcost
