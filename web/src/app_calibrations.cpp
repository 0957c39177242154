// The Calibrations view: the user's calibration files and a recorded run, measured against predicted.
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

namespace {

// docs/calibrate.md as the static site serves it (web/CMakeLists.txt copies it; site/calibrate.html shows it)
constexpr const char* kCalibrateDocs = "calibrate.html";

}  // namespace

void App::draw_run_section() {
  mark("run");
  const float fh = ImGui::GetFontSize();
  section_title("Your own training run");
  ImGui::PushTextWrapPos(std::min(ImGui::GetContentRegionAvail().x, fh * 50));
  ImGui::TextWrapped(
      "A short run of your real job, recorded with tools/ftcost_probe.py (a Trainer callback or a hook in "
      "your loop) or imported from trainer_state.json: the stack profile is refitted to it, and estimates on "
      "the run's GPU use the refitted profile (marked \"+run\"). Nothing is uploaded anywhere.");
  ImGui::PopTextWrapPos();
  if (ImGui::Button("Load a run file...")) host_.open_file_picker("run");
  anchor("run.load");
  if (!run_error_.empty())
    ImGui::TextColored(style::kBad, "The last run was rejected: %s", run_error_.c_str());
  if (run_name_.empty() || !run_fit_.is_object()) return;
  if (ImGui::Checkbox(("use " + run_name_ + " for estimates on " + run_gpu_).c_str(), &run_enabled_))
    changed();
  const json& err = jat(run_fit_, "step_time_rms_log_error");
  std::string base = jstr(run_fit_, "stack");
  if (base.size() > 4 && base.compare(base.size() - 4, 4, "+run") == 0) base.erase(base.size() - 4);
  ImGui::Text("Step time on the run: %s%% RMS error with %s as shipped, %s%% refitted (%d timed steps)",
              plot::fmt(jnum(err, "before") * 100).c_str(), base.c_str(),
              plot::fmt(jnum(err, "after") * 100).c_str(), static_cast<int>(jnum(run_fit_, "time_points")));
  if (begin_table("runpts",
                  {"batch shape", "measured s", "predicted s (shipped)", "predicted s (refitted)"})) {
    int shown = 0;
    for (const auto& p : jat(run_fit_, "points")) {
      if (++shown > 24) break;
      ImGui::TableNextRow();
      table_cell(jstr(p, "shape"));
      table_cell(plot::fmt(jnum(p, "measured_s")));
      table_cell(plot::fmt(jnum(p, "predicted_before_s")));
      table_cell(plot::fmt(jnum(p, "predicted_after_s")));
    }
    ImGui::EndTable();
  }
  for (const auto& p : jat(run_fit_, "parameters")) {
    if (!jflag(p, "fitted", false)) continue;
    ImGui::BulletText("%s: %s -> %s", jstr(p, "name").c_str(), plot::fmt(jnum(p, "before")).c_str(),
                      plot::fmt(jnum(p, "value")).c_str());
  }
}

void App::draw_calibrations_view() {
  mark("calibrations");
  const float fh = ImGui::GetFontSize();
  ImGui::PushTextWrapPos(std::min(ImGui::GetContentRegionAvail().x, fh * 50));
  section_title("Your GPU's measured speeds");
  ImGui::TextWrapped(
      "ftcost-calibrate (native, CUDA) benchmarks the kernels fine-tuning spends its time in on your GPU and "
      "writes a "
      "calibration JSON. Load it here (button below, or drop the file anywhere on the page): it is checked "
      "by the same "
      "code as the command-line tool, kept in %s, and the GPU it belongs to is marked \"yours\" in the GPU "
      "list. "
      "Nothing is uploaded anywhere.",
      host_.storage_description().c_str());
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  if (ImGui::Button("Load a calibration file...")) host_.open_file_picker("calibration");
  anchor("calibration.load");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A JSON file written by ftcost-calibrate (schema ftcost.calibration/1)");
  ImGui::SameLine();
  ImGui::TextDisabled("or drag and drop it onto the page");
  // the calibrator's documentation, served with the page (docs/calibrate.md)
  if (ImGui::Button("How to calibrate your GPU (ftcost-calibrate)")) host_.open_url(kCalibrateDocs);
  anchor("calibration.docs");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Opens %s: building and running ftcost-calibrate, what it measures, the file format",
                      kCalibrateDocs);
  if (!calibration_error_.empty()) {
    mark("calibration_error");
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_ChildBg, style::kErrorBg);
    const float wrap_w = ImGui::GetContentRegionAvail().x - fh;
    const float h = ImGui::CalcTextSize(calibration_error_.c_str(), nullptr, false, wrap_w).y + fh * 2.2f;
    ImGui::BeginChild("calerr", ImVec2(0, h), false, ImGuiWindowFlags_AlwaysUseWindowPadding);
    ImGui::TextUnformatted("The last file was rejected:");
    ImGui::PushTextWrapPos(wrap_w);
    ImGui::TextUnformatted(calibration_error_.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  ImGui::Spacing();
  ImGui::Separator();
  draw_run_section();
  ImGui::Spacing();
  ImGui::Separator();
  if (calibrations_.empty()) {
    ImGui::TextDisabled(
        "No calibration loaded. Estimates use the GPUs' spec sheets and the software stack profile.");
    return;
  }
  int remove = -1;
  bool changed_any = false;
  if (ImGui::BeginTable(
          "yours", 6, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("Use", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("File");
    ImGui::TableSetupColumn("Device");
    ImGui::TableSetupColumn("For GPU");
    ImGui::TableSetupColumn("Check");
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (std::size_t i = 0; i < calibrations_.size(); ++i) {
      auto& c = calibrations_[i];
      ImGui::PushID(static_cast<int>(i));
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (ImGui::Checkbox("##use", &c.enabled)) {
        c.suspended = false;
        if (c.enabled)
          for (auto& o : calibrations_)
            if (&o != &c && o.gpu == c.gpu) o.enabled = false;
        changed_any = true;
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Use this calibration for estimates on %s", c.gpu.c_str());
      table_cell(c.name);
      if (c.from_link)
        ImGui::TextDisabled("from the link (not stored)");
      else if (c.suspended)
        ImGui::TextDisabled("set aside: the link's calibration is shown");
      else
        ImGui::TextDisabled("added %s", c.added.c_str());
      if (!c.flags.empty()) {
        const bool syn = c.flags.find("synthetic") != std::string::npos;
        const bool part = c.flags.find("partial") != std::string::npos;
        ImGui::TextColored(style::kWarn, "%s",
                           syn && part ? "synthetic, partial"
                           : syn       ? "synthetic"
                                       : "partial");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", c.flags.c_str());
      }
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", c.device.c_str());
      ImGui::TableNextColumn();
      ImGui::SetNextItemWidth(-1);
      if (ImGui::BeginCombo("##gpu", c.gpu.empty() ? "(choose)" : c.gpu.c_str())) {
        for (const auto& [id, g] : engine_.db().gpus()) {
          if (ImGui::Selectable(id.c_str(), id == c.gpu)) {
            CalibrationCheck chk = check_calibration(c.text, c.name, engine_.db(), id);
            if (chk.accepted) {
              c.gpu = id;
              c.summary = chk.message;
              changed_any = true;
            } else {
              notify(Notice::error, "Not valid for " + id + ": " + chk.message, "calibration");
            }
          }
        }
        ImGui::EndCombo();
      }
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", c.summary.c_str());
      ImGui::TableNextColumn();
      if (ImGui::SmallButton("remove")) remove = static_cast<int>(i);
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  if (remove >= 0) {
    calibrations_.erase(calibrations_.begin() + remove);
    changed_any = true;
  }
  if (changed_any) {
    save_calibrations();
    changed();
  }
}

}  // namespace ftcost::web
