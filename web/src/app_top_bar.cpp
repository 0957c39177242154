// The top bar (views, Export menu) and the notice strip.
#include "app.hpp"
#include "app_internal.hpp"
#include "calibration_check.hpp"
#include "ftcost/api.hpp"
#include "ftcost/calibration_share.hpp"
#include "ftcost/dataset.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/model.hpp"
#include "ftcost/run.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>

namespace ftcost::web {

void App::draw_top_bar() {
  mark("top_bar");
  const float fh = ImGui::GetFontSize();
  ImGui::PushStyleColor(ImGuiCol_ChildBg, style::kTopBar);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(fh * 0.8f, fh * 0.45f));
  ImGui::BeginChild("top", ImVec2(0, fh * 2.4f), false,
                    ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_NoScrollbar);
  ImGui::AlignTextToFramePadding();
  auto tab = [&](const char* label, View v, const char* tip) {
    const bool on = state_.view == v;
    ImGui::PushStyleColor(ImGuiCol_Button, on ? style::kTabActive : style::kTab);
    if (ImGui::Button(label)) set_view(v);
    anchor((std::string("tab.") + view_name(v)).c_str());
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
    ImGui::SameLine();
  };
  const bool narrow_tabs = ImGui::GetContentRegionAvail().x < fh * 30;
  tab(narrow_tabs ? "Calc###calc" : "Calculator###calc", View::calculator,
      "Memory, maximum batch, throughput, time and cost of one fine-tuning job");
  tab("Plan", View::plan,
      "Plan the job: the cheapest and the fastest GPU x instance x strategy x batch under your deadline and "
      "budget, and the trainer config that runs it");
  tab("Paper", View::paper,
      "The paper's analytical model (arXiv 2408.04693): Table IV and the Eq. (1)/(2) curves");
  std::string cal_label = narrow_tabs ? "Calib." : "Calibrations";
  if (!calibrations_.empty()) cal_label += " (" + std::to_string(calibrations_.size()) + ")";
  cal_label += "###cal";
  tab(cal_label.c_str(), View::calibrations, "Load the JSON that ftcost-calibrate measured on your GPU");

  // right-aligned actions (short labels when the window is narrow)
  const bool short_labels = ImGui::GetWindowContentRegionMax().x - ImGui::GetCursorPosX() <
                            ImGui::CalcTextSize("Copy link  Export JSON  Export CSV").x + fh * 3.5f;
  const char* l_copy = short_labels ? "Link" : "Copy link";
  const char* l_json = short_labels ? "JSON" : "Export JSON";
  const char* l_csv = short_labels ? "CSV" : "Export CSV";
  const float bw = ImGui::CalcTextSize(l_copy).x + ImGui::CalcTextSize(l_json).x +
                   ImGui::CalcTextSize(l_csv).x + ImGui::GetStyle().FramePadding.x * 6 +
                   ImGui::GetStyle().ItemSpacing.x * 2 + 2;
  float x = ImGui::GetWindowContentRegionMax().x - bw;
  if (x > ImGui::GetCursorPosX()) ImGui::SetCursorPosX(x);
  const bool copy = ImGui::Button(l_copy);
  anchor("copy_link");
  if (copy) {
    std::string url = host_.share_url(encode_hash(state_));
    host_.copy_to_clipboard(url);
    const std::string own = own_dataset_path();
    const std::string file = own.empty() ? own : own.substr(std::string(kUploadedDatasetPrefix).size());
    notify(link_data_omitted_ ? Notice::warning : Notice::info,
           "Link copied: " + url +
               (own.empty()          ? std::string()
                : link_data_omitted_ ? "\nYour length file " + file +
                                           " is too large for a link: whoever opens it is asked to load it"
                : state_.data.empty() ? std::string()
                                      : "\nIt carries your length file " + file + " (as its histogram)"),
           "copy");
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Copy a link that opens the calculator with these inputs, the pinned job, your length file (as its "
        "histogram) and your calibration in use.\nOther uploaded files (model config, run) stay in this "
        "browser.");
  ImGui::SameLine();
  const bool has_result = result_.is_object() && !result_.contains("error");
  ImGui::BeginDisabled(!has_result);
  if (ImGui::Button(l_json))
    host_.download("ftcost-estimate.json", "application/json", result_.dump(2) + "\n");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Download this estimate as JSON: the same document as `ftcost estimate --json`");
  ImGui::SameLine();
  if (ImGui::Button(l_csv)) ImGui::OpenPopup("csv");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Download as CSV: this estimate, or the all-GPU comparison table");
  ImGui::EndDisabled();
  if (ImGui::BeginPopup("csv")) {
    if (ImGui::MenuItem("This estimate (field,value)"))
      host_.download("ftcost-estimate.csv", "text/csv", estimate_to_csv(result_));
    if (ImGui::MenuItem("All GPUs x providers"))
      host_.download("ftcost-compare.csv", "text/csv", compare_to_csv(compare_));
    if (ImGui::MenuItem("This job (request JSON + link + CLI command)")) export_job();
    ImGui::EndPopup();
  }
  ImGui::EndChild();
  ImGui::PopStyleVar();
  ImGui::PopStyleColor();
}

// One strip of fixed height under the top bar, drawn whether or not there is a notice, so that a notice
// never moves the controls under it: the newest notice on one line (the whole text in its tooltip), the
// count, "all" (the list, newest first, over the page), dismiss and clear.
void App::export_job() {
  const std::string hash = encode_hash(state_);
  std::string cmd = "ftcost estimate";
  for (const auto& o : job_options()) {
    auto it = state_.request.find(o.key);
    if (it == state_.request.end() || !o.in_url) continue;
    const bool plain = it->second.find_first_of(" '\"$`\\") == std::string::npos && !it->second.empty();
    cmd += " " + o.flag() + " " + (plain ? it->second : "'" + it->second + "'");
  }
  json request = json::object();
  for (const auto& [k, v] : state_.request) request[k] = v;
  json doc = {{"schema", "ftcost.job/1"},
              {"request", request},
              {"link", host_.share_url(hash)},
              {"cli", cmd},
              {"note",
               "request: the keys of window.ftcost.estimate and ftcost estimate's flags; calibration: the "
               "one in use, in the compact form the link carries (ftcost.calibration-link/1: every row the "
               "estimator reads); a recorded run stays in this browser"}};
  if (const YourCalibration* c = calibration_in_use()) {
    json cal = {
        {"file", c->name},     {"gpu", c->gpu},
        {"device", c->device}, {"fingerprint", c->fingerprint},
        {"flags", c->flags},   {"in_link", c->link.empty() ? "fingerprint only (cal-id)" : "embedded (cal)"}};
    auto parsed = parse_calibration(c->text, c->name);
    if (parsed.ok()) cal["compact"] = calibration_compact(parsed.value());
    doc["calibration"] = cal;
    cmd += " --calibration " + c->name;
    doc["cli"] = cmd;
  }
  if (result_.is_object()) doc["estimate"] = result_;
  host_.download("ftcost-job.json", "application/json", doc.dump(2) + "\n");
}

void App::draw_notices() {
  const float fh = ImGui::GetFontSize();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float strip_h = ImGui::GetFrameHeight() + fh * 0.4f;
  const Notice* top = notices_.empty() ? nullptr : &notices_.front();
  auto bg_of = [](Notice::Level l) {
    return l == Notice::error ? style::kErrorBg : l == Notice::warning ? style::kWarnBg : style::kInfoBg;
  };
  auto level_name = [](Notice::Level l) {
    return l == Notice::error ? "error" : l == Notice::warning ? "warning" : "note";
  };
  ImGui::PushStyleColor(ImGuiCol_ChildBg, top != nullptr ? bg_of(top->level) : style::kTopBar);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(fh * 0.8f, fh * 0.2f));
  ImGui::BeginChild("notices", ImVec2(0, strip_h), false,
                    ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_NoScrollbar);
  anchor("notices.strip");
  int remove = -1;
  bool clear = false;
  if (top == nullptr) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("No notices");
  } else {
    mark("notices");
    const std::string count = std::to_string(notices_.size());
    const char* all_label = notices_open_ ? "hide" : "all";
    const float buttons_w = ImGui::CalcTextSize(("(" + count + ") ").c_str()).x +
                            ImGui::CalcTextSize(all_label).x + ImGui::CalcTextSize("dismiss").x +
                            ImGui::CalcTextSize("clear").x + st.FramePadding.x * 6 + st.ItemSpacing.x * 4;
    const float text_w = ImGui::GetContentRegionAvail().x - buttons_w;
    std::string line = std::string(level_name(top->level)) + ": " + top->text;
    if (ImGui::CalcTextSize(line.c_str()).x > text_w) {
      while (!line.empty() && ImGui::CalcTextSize((line + "...").c_str()).x > text_w) line.pop_back();
      line += "...";
    }
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(line.c_str());
    tip(top->text, 36.0f);
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x - buttons_w));
    ImGui::TextDisabled("(%s)", count.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton(all_label)) notices_open_ = !notices_open_;
    anchor("notices.all");
    ImGui::SameLine();
    if (ImGui::SmallButton("dismiss")) remove = 0;
    anchor("notices.dismiss");
    ImGui::SameLine();
    if (ImGui::SmallButton("clear")) clear = true;
    anchor("notices.clear");
  }
  const ImVec2 below(ImGui::GetWindowPos().x, ImGui::GetWindowPos().y + ImGui::GetWindowHeight());
  const float width = ImGui::GetWindowWidth();
  ImGui::EndChild();
  ImGui::PopStyleVar();
  ImGui::PopStyleColor();
  // the list of all notices, newest first, drawn over the page (it moves nothing)
  if (notices_open_ && notices_.size() > 0) {
    ImGui::SetNextWindowPos(ImVec2(below.x + width - std::min(width, fh * 40), below.y));
    ImGui::SetNextWindowSize(ImVec2(std::min(width, fh * 40), 0));
    ImGui::SetNextWindowBgAlpha(0.97f);
    ImGui::Begin("All notices", &notices_open_,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings);
    mark("notices_list");
    for (std::size_t i = 0; i < notices_.size(); ++i) {
      const Notice& n = notices_[i];
      ImGui::PushID(static_cast<int>(i));
      ImGui::PushStyleColor(ImGuiCol_Text, n.level == Notice::error ? style::kBad
                                           : n.level == Notice::warning
                                               ? style::kWarn
                                               : ImGui::GetStyle().Colors[ImGuiCol_Text]);
      ImGui::PushTextWrapPos(fh * 34);
      ImGui::TextWrapped("%s: %s", level_name(n.level), n.text.c_str());
      ImGui::PopTextWrapPos();
      ImGui::PopStyleColor();
      if (ImGui::SmallButton("dismiss")) remove = static_cast<int>(i);
      anchor(("notices.dismiss." + std::to_string(i)).c_str());
      ImGui::Separator();
      ImGui::PopID();
    }
    ImGui::End();
  }
  if (clear) {
    notices_.clear();
    notices_open_ = false;
  } else if (remove >= 0 && static_cast<std::size_t>(remove) < notices_.size()) {
    notices_.erase(notices_.begin() + remove);
  }
  if (notices_.empty()) notices_open_ = false;
}

}  // namespace ftcost::web
