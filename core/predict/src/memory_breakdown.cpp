// A memory breakdown's moments (the summed peak, the phases of a step, the optimizer step, GRPO's
// generation), its total, what must be resident, and its JSON: MemoryBreakdown's methods (memory.hpp). The
// components themselves are counted in memory.cpp.
#include "ftcost/enum_names.hpp"
#include "ftcost/memory.hpp"
#include "ftcost/units.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost {

namespace {
double fixed_part(const MemoryBreakdown& b) {
  return b.weights + b.trainable_params + b.optimizer_states + b.autocast_copies + b.dequant_buffers +
         b.dora_weight_norm + b.fp8_weight_copies + b.reference_weights + b.cuda_context +
         b.allocator_overhead;
}
}  // namespace

MemoryBreakdown::Phases MemoryBreakdown::phases() const {
  const double fixed = fixed_part(*this);
  const double kept = gradients_kept ? gradients : 0.0;
  Phases p;
  p.forward_loss = fixed + kept + (activations - activations_backward) + logits;
  p.backward_start = fixed + kept + activations;
  p.backward_end = fixed + gradients + activations_last_layer;
  p.optimizer_step = fixed + gradients + optimizer_step_temp;
  p.generation = generation_temp > 0 ? fixed + generation_temp : 0.0;
  return p;
}

namespace {
double all_at_once(const MemoryBreakdown& b) {
  return fixed_part(b) + b.gradients + b.activations + b.logits;
}
}  // namespace

MemoryBreakdown::Moment MemoryBreakdown::peak_moment() const {
  const Phases p = phases();
  // The step is the peak only when strictly larger: without a temporary it never is (backward_end and the
  // sum hold every gradient too).
  const Moment training = training_peak_moment(p);
  return p.generation > moment_bytes(p, training, *this) ? Moment::generation : training;
}

double MemoryBreakdown::moment_bytes(const Phases& p, Moment at, const MemoryBreakdown& b) {
  switch (at) {
    case Moment::forward_loss:
      return p.forward_loss;
    case Moment::backward_start:
      return p.backward_start;
    case Moment::backward_end:
      return p.backward_end;
    case Moment::optimizer_step:
      return p.optimizer_step;
    case Moment::generation:
      return p.generation;
    case Moment::sum:
      break;
  }
  return all_at_once(b);
}

MemoryBreakdown::Moment MemoryBreakdown::training_peak_moment(const Phases& p) const {
  if (!phased) return p.optimizer_step > all_at_once(*this) ? Moment::optimizer_step : Moment::sum;
  Moment at = Moment::backward_end;
  if (p.forward_loss >= p.backward_start && p.forward_loss >= p.backward_end)
    at = Moment::forward_loss;
  else if (p.backward_start >= p.backward_end)
    at = Moment::backward_start;
  const double best = at == Moment::forward_loss     ? p.forward_loss
                      : at == Moment::backward_start ? p.backward_start
                                                     : p.backward_end;
  return p.optimizer_step > best ? Moment::optimizer_step : at;
}

const char* MemoryBreakdown::peak_phase() const {
  constexpr EnumName<Moment> kPhases[] = {{Moment::forward_loss, "forward_loss"},
                                          {Moment::backward_start, "backward_start"},
                                          {Moment::backward_end, "backward_end"},
                                          {Moment::optimizer_step, "optimizer_step"},
                                          {Moment::generation, "generation"}};
  return enum_name(kPhases, peak_moment(), "sum");
}

MemoryBreakdown MemoryBreakdown::at_peak() const {
  MemoryBreakdown b = *this;
  b.phased = false;
  const Moment at = peak_moment();
  if (at != Moment::optimizer_step) b.optimizer_step_temp = 0;
  if (at != Moment::generation) b.generation_temp = 0;
  if (at == Moment::sum) return b;
  if (at == Moment::generation) {  // weights and states; no gradient, activation or logits
    b.gradients = 0;
    b.activations = 0;
    b.logits = 0;
    return b;
  }
  if (at == Moment::optimizer_step) {  // every gradient, no activations or logits
    b.activations = 0;
    b.logits = 0;
    return b;
  }
  if (at != Moment::backward_end && !gradients_kept) b.gradients = 0;
  if (at == Moment::forward_loss) b.activations = activations - activations_backward;
  if (at != Moment::forward_loss) b.logits = 0;
  if (at == Moment::backward_end) b.activations = activations_last_layer;
  return b;
}

double MemoryBreakdown::total() const {
  const Phases p = phases();
  if (!phased) return std::max({all_at_once(*this), p.optimizer_step, p.generation});
  return std::max({p.forward_loss, p.backward_start, p.backward_end, p.optimizer_step, p.generation});
}

double MemoryBreakdown::resident() const { return total() - (paged_optimizer ? optimizer_states : 0.0); }

double MemoryBreakdown::on_gpu(double usable) const {
  return paged_optimizer ? std::min(total(), std::max(resident(), usable)) : total();
}

double MemoryBreakdown::paged_out(double usable) const { return total() - on_gpu(usable); }

double MemoryBreakdown::variable() const {
  switch (peak_moment()) {
    case Moment::forward_loss:
      return activations - activations_backward + logits + allocator_overhead;
    case Moment::backward_start:
      return activations + allocator_overhead;
    case Moment::backward_end:
      return activations_last_layer + allocator_overhead;
    case Moment::optimizer_step:
      return allocator_overhead;
    case Moment::generation:
      return generation_temp + allocator_overhead;
    case Moment::sum:
      break;
  }
  return activations + logits + allocator_overhead;
}

json components_gib(const MemoryBreakdown& b) {
  json j{{"total", b.total() / kGiB},
         {"weights", b.weights / kGiB},
         {"trainable_params", b.trainable_params / kGiB},
         {"gradients", b.gradients / kGiB},
         {"optimizer_states", b.optimizer_states / kGiB},
         {"autocast_copies", b.autocast_copies / kGiB},
         {"activations", b.activations / kGiB},
         {"logits", b.logits / kGiB},
         {"dequant_buffers", b.dequant_buffers / kGiB},
         {"cuda_context", b.cuda_context / kGiB},
         {"allocator_overhead", b.allocator_overhead / kGiB},
         {"optimizer_step_temp", b.optimizer_step_temp / kGiB}};
  if (b.dora_weight_norm > 0) j["dora_weight_norm"] = b.dora_weight_norm / kGiB;
  if (b.fp8_weight_copies > 0) j["fp8_weight_copies"] = b.fp8_weight_copies / kGiB;
  if (b.reference_weights > 0) j["reference_weights"] = b.reference_weights / kGiB;
  if (b.generation_temp > 0) j["generation_temp"] = b.generation_temp / kGiB;
  if (b.paged_optimizer) j["optimizer_paged"] = true;
  return j;
}

json MemoryBreakdown::to_json_gib() const {
  json j = components_gib(*this);
  if (!phased && peak_moment() == Moment::sum) return j;
  const Phases p = phases();
  j["peak_phase"] = peak_phase();
  if (phased)
    j["phases"] = json{{"forward_loss", p.forward_loss / kGiB},
                       {"backward_start", p.backward_start / kGiB},
                       {"backward_end", p.backward_end / kGiB},
                       {"optimizer_step", p.optimizer_step / kGiB}};
  json at = components_gib(at_peak());
  at.erase("total");
  j["at_peak"] = at;
  return j;
}

}  // namespace ftcost
