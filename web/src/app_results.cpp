// The results column: the multi-GPU summary, the order of the result panels, the JSON panel, and the wait for
// a link's length file. The panels: app_headline.cpp (cards and warnings), app_memory.cpp (memory, step time,
// throughput), app_compare.cpp (every GPU x provider, the pinned job, calibrated vs spec sheet).
#include "app.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "result_cards.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::web {

// More than one GPU: the strategy, why it was chosen, and each collective's time (exposed vs overlapped).
void App::draw_parallel() {
  const json& p = jat(result_, "parallel");
  if (!p.is_object() || !has_est_) return;
  mark("parallel");
  const JobAnswer& a = est_.answer;
  ImGui::TextColored(
      style::kAccent,
      "%s on %d GPUs (%d per node x %d nodes): step %s s = compute %s + exposed communication %s",
      a.strategy.c_str(), a.gpus, a.gpus_per_node, a.nodes, plot::fmt(a.step_s).c_str(),
      plot::fmt(est_.pe.compute_s).c_str(), plot::fmt(est_.pe.comm_exposed_s).c_str());
  if (begin_table("comm", {"collective", "op", "where", "time s", "exposed s"})) {
    for (const auto& c : jat(p, "communication")) {
      ImGui::TableNextRow();
      table_cell(jstr(c, "name"));
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", jstr(c, "overlap").c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s x%d on %d", jstr(c, "op").c_str(), static_cast<int>(jnum(c, "calls")),
                  static_cast<int>(jnum(c, "ranks")));
      table_cell(jstr(c, "scope"));
      table_cell(plot::fmt(jnum(c, "time_s")));
      table_cell(plot::fmt(jnum(c, "exposed_s")));
    }
    ImGui::EndTable();
  }
  const json& why = jat(p, "why");
  if (why.is_array() && !why.empty() && ImGui::TreeNode("Why this strategy")) {
    for (const auto& w : why)
      if (w.is_string()) ImGui::BulletText("%s", w.get<std::string>().c_str());
    ImGui::TreePop();
  }
  ImGui::Spacing();
}

void App::draw_results() {
  mark("results");
  const bool skip_headline = skip_headline_;
  skip_headline_ = false;
  if (!result_.is_object()) {
    ImGui::TextDisabled("Computing...");
    return;
  }
  if (result_.contains("error") && !missing_dataset_file().empty()) {
    draw_waiting_for_dataset();
    return;
  }
  if (result_.contains("error")) {
    mark("error");
    const json& e = result_["error"];
    ImGui::PushStyleColor(ImGuiCol_ChildBg, style::kErrorBg);
    const float fh = ImGui::GetFontSize();
    std::string msg = jstr(e, "message", "error");
    const float h =
        ImGui::CalcTextSize(msg.c_str(), nullptr, false, ImGui::GetContentRegionAvail().x - fh).y + fh * 3.2f;
    ImGui::BeginChild("err", ImVec2(0, h), false, ImGuiWindowFlags_AlwaysUseWindowPadding);
    ImGui::Text("No estimate for these inputs (%s%s%s)", jstr(e, "code").c_str(),
                jstr(e, "field").empty() ? "" : ", ", jstr(e, "field").c_str());
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(msg.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
    if (ImGui::Button("Reset to the paper's setup")) set_request(default_request());
    return;
  }
  if (!skip_headline) draw_headline();
  draw_calibrated_vs_spec();
  draw_pinned();
  draw_parallel();
  draw_objective();
  const float fh = ImGui::GetFontSize();
  const bool fits = has_est_ && est_.answer.fits;
  // the batch sweep is the one-GPU estimate's (batch_sweep): drawn for a one-GPU job only
  const bool one_gpu = has_est_ && est_.pe.is_single;
  if (ImGui::GetContentRegionAvail().x > fh * 44) {
    if (ImGui::BeginTable("row2", 2, ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("left", ImGuiTableColumnFlags_WidthStretch, 1.35f);
      ImGui::TableSetupColumn("right", ImGuiTableColumnFlags_WidthStretch, 1.0f);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      draw_memory();
      ImGui::Spacing();
      ImGui::Spacing();
      if (fits && one_gpu) draw_throughput_plot();
      ImGui::TableNextColumn();
      ImGui::Indent(fh * 0.6f);
      if (fits) draw_step_time();
      ImGui::Unindent(fh * 0.6f);
      ImGui::EndTable();
    }
  } else {
    draw_memory();
    if (fits) draw_step_time();
    ImGui::Spacing();
    if (fits && one_gpu) draw_throughput_plot();
  }
  ImGui::Spacing();
  draw_scaling();  // app_scaling.cpp
  ImGui::Spacing();
  draw_compare();
  ImGui::Spacing();
  draw_json();
}

void App::draw_json() {
  mark("json");
  if (!ImGui::CollapsingHeader("Full estimate as JSON (what `ftcost estimate --json` prints)")) return;
  if (json_text_for_ != recompute_count_) {
    json_text_ = result_.dump(2);
    json_text_for_ = recompute_count_;
  }
  ImGui::InputTextMultiline("##json", json_text_.data(), json_text_.size() + 1,
                            ImVec2(-1, ImGui::GetFontSize() * 20), ImGuiInputTextFlags_ReadOnly);
}

// A link names the user's own length file without carrying it (or this page lost it): say which file the
// job waits for, with the button that loads it; every other setting stays as the link gave it.
void App::draw_waiting_for_dataset() {
  mark("waiting_dataset");
  const std::string name = missing_dataset_file();
  ImGui::TextColored(style::kWarn, "Waiting for %s: upload it to complete", name.c_str());
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled(
      "This job uses the length file %s, which this page does not have (a link that names it without "
      "carrying "
      "it). Load it with the button or drop it on the page; the other settings are kept.",
      name.c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::Button(("Load " + name + "...").c_str())) host_.open_file_picker("dataset");
  anchor("dataset.waiting_upload");
}

}  // namespace ftcost::web
