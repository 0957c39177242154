// The scaling plot in the results (#14): the same job on 1, 2, 4, 8... GPUs of its GPU (Engine::scaling, the
// series of `ftcost scale`): time and cost against the GPU count, with the scaling efficiency of each count.
#include "app.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace ftcost::web {

namespace {

constexpr const char* kAboveOne =
    "Above 100%: sharding frees memory on each GPU for a larger micro-batch, which runs faster per GPU than "
    "the one-GPU job's batch.";

// The row of GPU counts and their scaling efficiency under the plots: a count whose point has an error (a
// one-GPU stack on several GPUs, ...) is greyed out, with the reason in its tooltip.
void efficiency_row(const json& pts, std::map<std::string, std::vector<std::string>>* shown) {
  if (!ImGui::BeginTable("scaling_eff", static_cast<int>(pts.size()) + 1,
                         ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerV))
    return;
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("GPUs");
  for (const auto& p : pts) {
    ImGui::TableNextColumn();
    const std::string err = jstr(p, "error");
    if (err.empty()) {
      ImGui::Text("%d", static_cast<int>(jnum(p, "gpus")));
    } else {
      ImGui::TextDisabled("%d", static_cast<int>(jnum(p, "gpus")));
      tip(err.c_str());
    }
  }
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("efficiency");
  for (const auto& p : pts) {
    ImGui::TableNextColumn();
    const std::string g = std::to_string(static_cast<int>(jnum(p, "gpus")));
    const std::string err = jstr(p, "error");
    if (!err.empty()) {
      ImGui::TextDisabled("n/a");
      tip(err.c_str());
      (*shown)["scaling." + g] = {"n/a", err};
    } else if (!jflag(p, "fits")) {
      ImGui::TextColored(style::kBad, "no fit");
      (*shown)["scaling." + g] = {"no fit"};
    } else {
      const double e = jnum(p, "scaling_efficiency");
      const std::string text = plot::fmt(e * 100) + "%";
      ImGui::TextColored(e >= 0.85  ? style::kGood
                         : e >= 0.6 ? style::kWarn
                                    : style::kBad,
                         "%s", text.c_str());
      std::vector<std::string> lines{text};
      if (e > 1.0) {
        tip(kAboveOne);
        lines.emplace_back(kAboveOne);
      }
      (*shown)["scaling." + g] = lines;
    }
  }
  ImGui::EndTable();
}

}  // namespace

void App::draw_scaling() {
  if (!scaling_.is_object()) return;
  const float fh = ImGui::GetFontSize();
  if (scaling_.contains("error")) return;  // the estimate above shows what is wrong with the request
  const json& pts = jat(scaling_, "points");
  // only worth a plot when the job runs on more than one GPU count
  int estimated = 0;
  for (const auto& p : pts)
    if (jflag(p, "fits") && jat(p, "error").is_null()) ++estimated;
  mark("scaling");
  section_title("Time and cost against the number of GPUs",
                "The same job on 1, 2, 4, 8... GPUs of this type (ftcost scale): the strategy as chosen "
                "(--parallel, default auto), priced per GPU-hour. Scaling efficiency: throughput per GPU "
                "against the smallest count where the job fits.",
                28.0f);
  if (estimated < 2) {
    std::string why;
    for (const auto& p : pts)
      if (!jstr(p, "error").empty()) why = jstr(p, "error");
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("This job is estimated on %d GPU count%s only%s%s", estimated,
                        estimated == 1 ? "" : "s", why.empty() ? "" : ": ", why.c_str());
    ImGui::PopTextWrapPos();
    efficiency_row(pts, &cards_);
    return;
  }
  plot::Series time_s, cost_s;
  time_s.name = "time";
  time_s.color = plot::color(0);
  time_s.markers = true;
  time_s.unit = "h";
  cost_s.name = "cost";
  cost_s.color = plot::color(2);
  cost_s.markers = true;
  cost_s.unit = "USD";
  double tmax = 0, cmax = 0, gmax = 1;
  bool priced = false;
  for (const auto& p : pts) {
    if (!jflag(p, "fits") || !jat(p, "error").is_null()) continue;
    const double g = jnum(p, "gpus");
    const std::string note =
        jstr(p, "strategy") + ", " + std::to_string(static_cast<int>(jnum(p, "gpus_per_node"))) +
        " GPU(s) x " + std::to_string(static_cast<int>(jnum(p, "nodes"))) + " node(s)\n" +
        "scaling efficiency " + plot::fmt(jnum(p, "scaling_efficiency") * 100) + "%, speedup " +
        plot::fmt(jnum(p, "speedup")) + "x\nper-GPU peak " + plot::fmt(jnum(p, "per_rank_peak_gib")) +
        " GiB at micro-batch " + plot::fmt_int(jnum(p, "micro_batch_size")) +
        " per GPU, exposed communication " + plot::fmt(jnum(p, "comm_exposed_s")) + " s/step\n" +
        plot::fmt(jnum(p, "throughput_data_tokens_per_s")) + " tokens/s of data (" +
        plot::fmt(jnum(p, "throughput_tokens_per_s")) + " computed, padding included)" +
        (jnum(p, "scaling_efficiency") > 1.0 ? std::string("\n") + kAboveOne : "");
    time_s.x.push_back(g);
    time_s.y.push_back(jnum(p, "time_hours"));
    time_s.notes.push_back(note);
    tmax = std::max(tmax, jnum(p, "time_hours"));
    gmax = std::max(gmax, g);
    if (jat(p, "cost_usd").is_number()) {
      priced = true;
      cost_s.x.push_back(g);
      cost_s.y.push_back(jnum(p, "cost_usd"));
      cost_s.notes.push_back(note);
      cmax = std::max(cmax, jnum(p, "cost_usd"));
    }
  }
  // the counts with an error: a grey line on the plots (the reason: the row below, when hovered)
  std::vector<plot::VLine> greyed;
  for (const auto& p : pts)
    if (!jstr(p, "error").empty()) {
      greyed.push_back(plot::VLine{jnum(p, "gpus"), "n/a", IM_COL32(130, 130, 130, 200)});
      gmax = std::max(gmax, jnum(p, "gpus"));
    }
  plot::Axis xa{"GPUs", 1, gmax * 1.15, gmax >= 8, true};
  if (!xa.log) xa.lo = 0;
  const float w = ImGui::GetContentRegionAvail().x;
  const bool two = priced && w > fh * 30;
  plot::line_plot("scaling_time", ImVec2(two ? w * 0.5f - fh * 0.3f : 0, fh * 12), xa,
                  plot::Axis{"time (hours)", 0, tmax * 1.45, false, false}, {time_s}, greyed);
  if (priced) {
    if (two) ImGui::SameLine();
    plot::line_plot("scaling_cost", ImVec2(two ? w * 0.5f - fh * 0.3f : 0, fh * 12), xa,
                    plot::Axis{"cost (USD)", 0, cmax * 1.45, false, false}, {cost_s}, greyed);
  } else {
    ImGui::TextDisabled("No price for this GPU: time only");
  }
  // the efficiency per count, in a row; the counts with an error greyed out (the reason in the tooltip)
  efficiency_row(pts, &cards_);
}

}  // namespace ftcost::web
