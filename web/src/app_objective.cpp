// The objective panel (issue 42): what a preference or RL objective adds to the step — DPO/KTO's reference,
// GRPO's round split into generation, reference and old log-probs, reward and training, the decode rate and
// vLLM's memory share. Reads the estimate's "objective" block (estimate_to_json); absent for sft.
#include "app.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <string>
#include <vector>

namespace ftcost::web {

namespace {

// The positive numbers of a JSON object as bars, in seconds.
void seconds_bars(const char* id, const json& obj) {
  std::vector<plot::Segment> items;
  int ci = 0;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (it->is_number() && it->get<double>() > 0)
      items.push_back(plot::Segment{it.key(), it->get<double>(), plot::color(ci++), ""});
  if (!items.empty()) plot::bar_list(id, 0, items, "s");
}

const char* reference_text(const std::string& kind) {
  if (kind == "frozen_copy") return "a frozen copy of the model (full fine-tuning)";
  if (kind == "adapters_disabled") return "the base model with the adapters disabled (no copy)";
  if (kind == "precomputed") return "log-probs precomputed once before training (no model kept)";
  return "none";
}

}  // namespace

void App::draw_objective() {
  const json& ob = jat(result_, "objective");
  if (!ob.is_object()) return;
  mark("objective");
  const std::string name = jstr(ob, "name");
  const json& g = jat(ob, "grpo");
  if (!g.is_object()) {
    section_title(
        ("Objective: " + name + " (per " + jstr(ob, "sample") + ")").c_str(),
        "What the preference objective adds to a supervised step: both sequences of a pair through the "
        "model, and the reference's forward (docs/sources/trl-preference.md).");
    ImGui::Text("reference: %s", reference_text(jstr(ob, "reference")));
    if (jnum(ob, "precompute_hours") > 0)
      ImGui::Text("precomputing the reference log-probs: %s h before training",
                  plot::fmt(jnum(ob, "precompute_hours")).c_str());
    ImGui::TextDisabled("step split, per micro-batch");
    seconds_bars("objective.split", jat(ob, "step_split_s"));
    return;
  }
  const double prompts = jnum(g, "prompts_per_round");
  section_title(("GRPO round: " + plot::fmt_int(jnum(g, "completions_per_round")) + " completions of " +
                 plot::fmt_int(prompts) + " prompts in " + plot::fmt(jnum(g, "round_s")) + " s")
                    .c_str(),
                "One generation batch: its completions generated, scored and trained on (num_iterations "
                "passes, grad-accum micro-batches each). Generation is decode-bound: every step reads the "
                "weights and the KV cache (docs/sources/trl-preference.md).");
  seconds_bars("objective.round", jat(g, "round_split_s"));
  const json& dec = jat(g, "decode");
  ImGui::Text("generation (%s): %s tokens/s, %s ms device + %s ms host per step, %s-bound",
              jstr(g, "generation").c_str(), plot::fmt_int(jnum(dec, "tokens_per_s")).c_str(),
              plot::fmt(jnum(dec, "device_step_s") * 1e3).c_str(),
              plot::fmt(jnum(dec, "host_step_s") * 1e3).c_str(), jstr(dec, "bound").c_str());
  seconds_bars("objective.generation", jat(g, "generation_split_s"));
  const json& v = jat(g, "vllm");
  if (v.is_object()) {
    muted_text_wrapped("vLLM " + jstr(v, "mode") + ": " + plot::fmt(jnum(v, "pool_gib")) + " GiB (" +
                       plot::fmt(jnum(v, "gpu_memory_utilization")) + " of the GPU): weights " +
                       plot::fmt(jnum(v, "weights_gib")) + " GiB, buffers " +
                       plot::fmt(jnum(v, "buffers_gib")) + " GiB, KV cache " +
                       plot::fmt(jnum(v, "kv_cache_gib")) + " GiB for " +
                       plot::fmt_int(jnum(v, "max_sequences")) + " sequences at once");
  }
  ImGui::Spacing();
}

}  // namespace ftcost::web
