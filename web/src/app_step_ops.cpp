// Where the step goes: the step model's top ops by device time and, per stage, the device's time against
// the host's launch time (issue 38: "a per-op breakdown ... in the calculator's step chart"). It draws the
// estimate JSON's `step_top_ops` (core/predict/src/estimate_json.cpp top_ops_json), the same object
// `ftcost estimate --json` prints, so the page and the CLI name the same ops.
#include "app.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "widgets.hpp"

#include <string>
#include <vector>

namespace ftcost::web {

namespace {

// "0.0183 s" / "412 us": a device or host time as the step chart writes it.
std::string seconds_text(double s) {
  if (s > 0 && s < 1e-3) return plot::fmt(s * 1e6, 3) + " us";
  return plot::fmt(s, 3) + " s";
}

}  // namespace

void App::draw_step_ops() {
  const json& top = jat(jat(result_, "step_top_ops"), "top");
  const json& stages = jat(jat(result_, "step_top_ops"), "stages");
  if (!top.is_array() || top.empty()) return;
  ImGui::TextDisabled("Top ops by device time (of %s s on the device)",
                      plot::fmt(jnum(result_, "device_time_s"), 3).c_str());
  tip("Each op summed over the layers and its repetitions in one stage (forward, recompute, backward, "
      "optimizer), as the step model counts it: the same list as `ftcost estimate --json` step_top_ops.");
  std::vector<plot::Segment> items;
  std::vector<std::string> card;
  int ci = 0;
  for (const auto& o : top) {
    const std::string label = jstr(o, "name") + " (" + jstr(o, "stage") + ")";
    const double s = jnum(o, "device_s");
    const double share = jnum(o, "share");
    items.push_back(
        plot::Segment{label, s, plot::color(ci++), plot::fmt(100.0 * share, 3) + "% of the device time"});
    card.push_back(label + " " + seconds_text(s));
  }
  plot::bar_list("step_top_ops", 0, items, "s");
  cards_["step.top_ops"] = card;
  if (!stages.is_array()) return;
  // device vs host per stage: a stage is host-bound when launching its kernels takes longer than running them
  std::vector<std::string> lines;
  for (const auto& st : stages) {
    const double dev = jnum(st, "device_s");
    const double host = jnum(st, "host_s");
    if (dev <= 0 && host <= 0) continue;
    lines.push_back(jstr(st, "stage") + ": device " + seconds_text(dev) + ", host " + seconds_text(host) +
                    " (" + jstr(st, "bound") + "-bound)");
  }
  if (lines.empty()) return;
  ImGui::TextDisabled("Device vs host per stage");
  tip("The host launches every kernel (Python, the dispatcher, the launch); the device runs them. Where the "
      "host's time is the larger, the GPU waits on it: small models and short sequences on fast GPUs.");
  for (const auto& l : lines) muted_text_wrapped(l);
  cards_["step.device_host"] = lines;
}

}  // namespace ftcost::web
