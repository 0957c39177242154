// The Plan view (#18), drawn: the plan's constraints as inputs, the Pareto front of time against cost as a
// scatter plot coloured by GPU type, the table of plans and the config export (app_plan.cpp: the controller).
#include "app.hpp"
#include "app_plan_text.hpp"
#include "ftcost/api.hpp"
#include "ftcost/plan.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>

namespace ftcost::web {

namespace {

const char* const kConfigStacks[] = {"trl", "torchtune", "axolotl", "llamafactory", "unsloth"};
constexpr int kConfigStackCount = 5;

// The plan view's tooltips are a little wider than the default.
constexpr float kPlanTipWrapEm = 28.0f;

}  // namespace

void App::draw_plan_view() {
  mark("plan_view");
  const float fh = ImGui::GetFontSize();
  // the search: on the frame after its request changed (this frame says so), then cached
  // Typing a number changes the request on every key: the search waits until the request has stayed the
  // same for a quarter of a second (the first search runs on the next frame).
  const std::string want = request_to_json_text(plan_request());
  if (want != plan_key_ || !plan_result_.is_object()) {
    const double now = ImGui::GetTime();
    if (!plan_pending_ || want != plan_pending_key_) {
      plan_pending_key_ = want;
      plan_pending_since_ = plan_result_.is_object() ? now : now - 1.0;
      plan_pending_ = true;
    } else if (now - plan_pending_since_ >= 0.25) {
      try {
        update_plan_now();
      } catch (const std::exception& ex) {
        plan_result_ = json{{"error", {{"code", "internal"}, {"field", ""}, {"message", ex.what()}}}};
        plan_pending_ = false;
      }
    }
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (two_panes_fit(avail)) {
    begin_right_pane("plan_inputs", "plan_results", avail, std::min(fh * 22.0f, avail.x * 0.3f),
                     [this] { draw_plan_constraints(); });
  } else {
    ImGui::BeginChild("plan_column", avail, false, ImGuiWindowFlags_AlwaysUseWindowPadding);
    draw_plan_constraints();
    ImGui::Separator();
  }
  if (plan_pending_) section_title("Searching GPU x shape x strategy x method x batch...");
  if (!plan_result_.is_object()) {
    // the first search is under way
  } else if (plan_result_.contains("error")) {
    const json& e = plan_result_["error"];
    ImGui::TextColored(style::kBad, "No plan for these settings (%s)", jstr(e, "field").c_str());
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(jstr(e, "message").c_str());
    ImGui::PopTextWrapPos();
  } else {
    draw_plan_front();
    ImGui::Spacing();
    draw_plan_table();
    ImGui::Spacing();
    draw_plan_export();
  }
  ImGui::EndChild();
}

void App::draw_plan_constraints() {
  mark("plan_constraints");
  const float fh = ImGui::GetFontSize();
  const auto& db = engine_.db();
  section_title("The job", "The job of the Calculator tab (model, method, data, epochs...). Change it there.",
                kPlanTipWrapEm);
  {
    const std::string job = plan_job_text();
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", job.c_str());
    ImGui::PopTextWrapPos();
    cards_["plan.job"] = {job};
  }
  ImGui::Spacing();
  section_title("Constraints");
  auto get = [this](const char* k) {
    auto it = state_.plan.find(k);
    return it == state_.plan.end() ? std::string() : it->second;
  };
  auto number = [&](const char* key, const char* label, const char* help, bool integer) {
    const std::string cur = get(key);
    double v = cur.empty() ? 0 : std::strtod(cur.c_str(), nullptr);
    ImGui::SetNextItemWidth(fh * 8);
    bool edited = false;
    if (integer) {
      int iv = static_cast<int>(v);
      edited = ImGui::InputInt(label, &iv, 1, 8);
      v = iv;
    } else {
      edited = ImGui::InputDouble(label, &v, 0, 0, "%.6g");
    }
    anchor((std::string("plan.") + key).c_str());
    tip(help, kPlanTipWrapEm);
    // 0 means "no constraint"; a negative value is passed on and the search names the flag
    if (edited) set_plan_constraint(key, v == 0 ? std::string() : number_text(v));
  };
  number("deadline", "deadline (h)", "Finish within this many hours (0: no deadline)", false);
  number("budget", "budget ($)", "Cost at most this much, in US dollars (0: no budget)", false);
  number("max-gpus", "max GPUs", "At most this many GPUs in the whole instance shape (0: no limit)", true);
  {
    bool spot = get("spot") == "on";
    if (ImGui::Checkbox("spot offers", &spot)) set_plan_constraint("spot", spot ? "on" : "");
    anchor("plan.spot");
    tip("Allow spot (interruptible) offers; cheaper, but the job may be stopped", kPlanTipWrapEm);
  }
  {
    const std::string m = get("minimize").empty() ? "cost" : get("minimize");
    ImGui::TextUnformatted("minimise");
    ImGui::SameLine();
    if (ImGui::RadioButton("cost", m == "cost")) set_plan_constraint("minimize", "");
    anchor("plan.minimize.cost");
    ImGui::SameLine();
    if (ImGui::RadioButton("time", m == "time")) set_plan_constraint("minimize", "time");
    anchor("plan.minimize.time");
  }
  {
    const std::string eb = get("effective-batch");
    bool keep = !eb.empty();
    if (ImGui::Checkbox("keep effective batch", &keep))
      set_plan_constraint("effective-batch", keep ? "16" : "");
    tip("Hold micro-batch x gradient accumulation x data-parallel GPUs at this number (the optimisation "
        "stays the same on every shape)",
        kPlanTipWrapEm);
    if (keep) {
      int v = std::atoi(eb.c_str());
      ImGui::SameLine();
      ImGui::SetNextItemWidth(fh * 6);
      if (ImGui::InputInt("##eb", &v, 1, 8)) set_plan_constraint("effective-batch", std::to_string(v));
    }
  }
  // lists: nothing ticked = no restriction (methods, stacks: the job's own)
  auto list = [&](const char* key, const char* title, const char* none_means,
                  const std::vector<std::pair<std::string, std::string>>& items, float height) {
    std::set<std::string> on = split_list(get(key));
    const std::string header = std::string(title) + (on.empty() ? std::string(" (") + none_means + ")"
                                                                : " (" + std::to_string(on.size()) + ")");
    if (!ImGui::TreeNodeEx((header + "###" + key).c_str(),
                           std::string(key) == "methods" ? ImGuiTreeNodeFlags_DefaultOpen : 0))
      return;
    const bool scroll = height > 0;
    if (scroll) ImGui::BeginChild((std::string("list_") + key).c_str(), ImVec2(0, height), true);
    for (const auto& [id, label] : items) {
      bool b = on.count(id) > 0;
      if (ImGui::Checkbox((label + "##" + id).c_str(), &b)) {
        if (b)
          on.insert(id);
        else
          on.erase(id);
        set_plan_constraint(key, join_list(on));
      }
      anchor((std::string("plan.") + key + "." + id).c_str());
    }
    if (scroll) ImGui::EndChild();
    ImGui::TreePop();
  };
  list("methods", "methods", "the job's", {{"full", "full"}, {"lora", "LoRA"}, {"qlora", "QLoRA"}}, 0);
  {
    std::vector<std::pair<std::string, std::string>> items;
    for (const auto& [id, g] : db.gpus()) items.emplace_back(id, g.name);
    list("gpu-types", "GPU types", "all", items, fh * 10);
  }
  {
    std::vector<std::pair<std::string, std::string>> items;
    for (const auto& p : db.providers()) items.emplace_back(p.id, p.name);
    list("providers", "providers", "all", items, fh * 8);
  }
  {
    std::vector<std::pair<std::string, std::string>> items;
    for (const auto& [id, s] : db.stacks())
      items.emplace_back(id, s.display_name.empty() ? id : s.display_name);
    list("stacks", "stacks", "the job's", items, fh * 8);
  }
  if (!calibrations_.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("The search uses the database's calibrations; yours apply in the Calculator.");
    ImGui::PopTextWrapPos();
  }
  ImGui::Spacing();
  if (ImGui::Button("Clear constraints")) {
    state_.plan.clear();
    changed();
  }
}

void App::draw_plan_front() {
  mark("plan_front");
  const float fh = ImGui::GetFontSize();
  const json& front = jat(plan_result_, "front");
  const int best = static_cast<int>(jnum(plan_result_, "best", -1));
  const std::string minimize = jstr(plan_result_, "minimize", "cost");
  section_title("Time against cost: the plans no other plan beats on both");
  tip("Each point is a plan on the Pareto front of the search. Colour: GPU type. Ringed: the best plan "
      "under the constraints. Click a point to open it in the Calculator.",
      kPlanTipWrapEm);
  ImGui::SameLine(0, fh);
  ImGui::TextDisabled("%s plans, %s configurations considered, %s ms here (%s ms in the core)",
                      plot::fmt_int(static_cast<double>(front.size())).c_str(),
                      plot::fmt_int(jnum(plan_result_, "considered")).c_str(), plot::fmt(plan_ms_).c_str(),
                      plot::fmt(jnum(plan_result_, "search_ms")).c_str());
  if (!front.is_array() || front.empty()) {
    ImGui::TextColored(style::kWarn, "No plan meets the constraints.");
    for (const auto& a : jat(plan_result_, "alternatives"))
      ImGui::BulletText("%s: %s", jstr(a, "what").c_str(), jstr(a, "why_not").c_str());
    return;
  }
  // the best plan, in words
  for (const auto& p : front) {
    if (static_cast<int>(jnum(p, "id", -1)) != best) continue;
    ImGui::Text("Best (minimum %s): %s on %s%s, %s, %s", minimize.c_str(), shape_text(p).c_str(),
                jstr(p, "provider").c_str(), jflag(p, "spot") ? " spot" : "",
                plot::fmt_hours(jnum(p, "hours")).c_str(), plot::fmt_usd(jnum(p, "cost_usd")).c_str());
    anchor("plan.best");
    tip(plan_note(p), kPlanTipWrapEm);
  }
  // one series per GPU type (colour), the front as a faint line, the best plan ringed on top
  std::vector<std::string> gpu_order;
  std::vector<plot::Series> series;
  std::vector<std::vector<int>> ids;  // per series, the plan id of each point
  plot::Series line;
  line.name = "";
  line.color = IM_COL32(160, 160, 170, 90);
  line.line = true;
  std::vector<std::pair<double, double>> pts;
  double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
  for (const auto& p : front) {
    const double h = jnum(p, "hours"), c = jnum(p, "cost_usd");
    pts.emplace_back(h, c);
    xlo = std::min(xlo, h);
    xhi = std::max(xhi, h);
    ylo = std::min(ylo, c);
    yhi = std::max(yhi, c);
  }
  std::sort(pts.begin(), pts.end());
  for (const auto& [h, c] : pts) {
    line.x.push_back(h);
    line.y.push_back(c);
  }
  series.push_back(line);
  ids.emplace_back(pts.size(), -1);
  for (const auto& p : front) {
    const std::string g = jstr(p, "gpu");
    auto it = std::find(gpu_order.begin(), gpu_order.end(), g);
    std::size_t si;
    if (it == gpu_order.end()) {
      gpu_order.push_back(g);
      plot::Series s;
      s.name = jstr(p, "gpu_name", g);
      s.color = plot::color(static_cast<int>(gpu_order.size() - 1));
      s.line = false;
      s.markers = true;
      s.marker_radius = 5.0f;
      s.unit = "USD";
      series.push_back(s);
      ids.emplace_back();
      si = series.size() - 1;
    } else {
      si = static_cast<std::size_t>(it - gpu_order.begin()) + 1;
    }
    series[si].x.push_back(jnum(p, "hours"));
    series[si].y.push_back(jnum(p, "cost_usd"));
    series[si].notes.push_back(plan_note(p));
    ids[si].push_back(static_cast<int>(jnum(p, "id", -1)));
  }
  for (const auto& p : front) {
    if (static_cast<int>(jnum(p, "id", -1)) != best) continue;
    plot::Series b;
    b.name = "best (minimum " + minimize + ")";
    b.color = IM_COL32(255, 255, 255, 255);
    b.line = false;
    b.markers = true;
    b.marker_radius = 8.0f;
    b.unit = "USD";
    b.x.push_back(jnum(p, "hours"));
    b.y.push_back(jnum(p, "cost_usd"));
    b.notes.push_back(plan_note(p));
    series.insert(series.begin() + 1, b);  // under the GPU's own point
    ids.insert(ids.begin() + 1, std::vector<int>{best});
  }
  // Both axes are always logarithmic (plans span hours to days and dollars to thousands; one scale from
  // search to search), at least a factor 4 wide so that a 1-2-5 tick falls inside.
  const bool xlog = xlo > 0, ylog = ylo > 0;
  plot::Axis xa{"time (hours, log scale)", xlog ? xlo / 2 : 0, xlog ? xhi * 2 : xhi * 1.1, xlog, false};
  // headroom above the points for the legend (drawn inside, in a top corner)
  plot::Axis ya{"cost (USD, log scale)", ylog ? ylo / 2 : 0, ylog ? yhi * 4 : yhi * 1.6, ylog, false};
  cards_["plan.axes"] = {xa.label, ya.label};
  if (!(xa.hi > xa.lo)) xa.hi = xa.lo + 1;
  if (!(ya.hi > ya.lo)) ya.hi = ya.lo + 1;
  plot::Hit hit;
  plot::line_plot("plan_front", ImVec2(0, fh * 18), xa, ya, series, {}, &hit);
  anchor("plan.plot");
  if (hit.clicked && hit.series >= 0 && hit.series < static_cast<int>(ids.size()) && hit.index >= 0 &&
      hit.index < static_cast<int>(ids[static_cast<std::size_t>(hit.series)].size())) {
    const int id = ids[static_cast<std::size_t>(hit.series)][static_cast<std::size_t>(hit.index)];
    if (id >= 0) load_plan(id);
  }
}

void App::draw_plan_table() {
  mark("plan_table");
  const json& front = jat(plan_result_, "front");
  const int best = static_cast<int>(jnum(plan_result_, "best", -1));
  const float fh = ImGui::GetFontSize();
  section_title("The plans (click a row to open it in the Calculator)");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit;
  const float h = std::min(fh * 1.6f * (static_cast<float>(front.size()) + 1.5f), fh * 20);
  if (!ImGui::BeginTable("plan_rows", 11, flags, ImVec2(0, h))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  double max_hours = 0;  // one time unit for the whole column
  for (const auto& p : front) max_hours = std::max(max_hours, jnum(p, "hours"));
  const std::string time_unit = plot::time_unit_for(max_hours);
  const std::string time_header = "time (" + time_unit + ")";
  std::vector<std::string>& columns = cards_["plan.columns"];
  for (const char* c : {"#", "GPUs", "provider", "method", "stack / parallel", "ckpt", "micro x accum",
                        time_header.c_str(), "cost", "peak / GPU", "bottleneck"}) {
    ImGui::TableSetupColumn(c);
    columns.emplace_back(c);
  }
  ImGui::TableHeadersRow();
  int row = 0;
  for (const auto& p : front) {
    const int id = static_cast<int>(jnum(p, "id", -1));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string label =
        (id == best ? "best " : "") + std::to_string(id) + "##plan" + std::to_string(id);
    if (ImGui::Selectable(label.c_str(), id == best, ImGuiSelectableFlags_SpanAllColumns)) load_plan(id);
    if (row < 12) anchor(("plan.row." + std::to_string(row)).c_str());
    tip(plan_note(p), kPlanTipWrapEm);
    table_cell(shape_text(p));
    ImGui::TableNextColumn();
    ImGui::Text("%s%s", jstr(p, "provider").c_str(), jflag(p, "spot") ? " (spot)" : "");
    table_cell(jstr(p, "method"));
    ImGui::TableNextColumn();
    ImGui::Text("%s / %s", jstr(p, "stack").c_str(), jstr(p, "parallel").c_str());
    table_cell(jstr(p, "checkpointing"));
    if (row == 0) cards_["plan.row0.ckpt"] = {jstr(p, "checkpointing")};
    ImGui::TableNextColumn();
    ImGui::Text("%s x %s", plot::fmt_int(jnum(p, "micro_batch")).c_str(),
                plot::fmt_int(jnum(p, "grad_accum")).c_str());
    table_cell(plot::fmt_hours_as(jnum(p, "hours"), time_unit));
    table_cell(plot::fmt_usd(jnum(p, "cost_usd")));
    ImGui::TableNextColumn();
    ImGui::Text("%s / %s GiB", plot::fmt(jnum(p, "peak_gib_per_gpu")).c_str(),
                plot::fmt(jnum(p, "memory_gib")).c_str());
    table_cell(jstr(p, "bottleneck"));
    ++row;
  }
  ImGui::EndTable();
  const json& alts = jat(plan_result_, "alternatives");
  if (alts.is_array() && !alts.empty() && ImGui::TreeNode("Why not the obvious alternatives")) {
    for (const auto& a : alts) {
      ImGui::PushTextWrapPos(0);
      ImGui::BulletText("%s: %s", jstr(a, "what").c_str(), jstr(a, "why_not").c_str());
      ImGui::PopTextWrapPos();
    }
    ImGui::TreePop();
  }
}

void App::draw_plan_export() {
  mark("plan_export");
  const json& front = jat(plan_result_, "front");
  if (!front.is_array() || front.empty()) return;
  const float fh = ImGui::GetFontSize();
  section_title("Runnable config");
  tip("The trainer's config file for a plan, generated from the same request (ftcost plan --config): "
      "expected memory, step time and cost as comments",
      kPlanTipWrapEm);
  bool known = false;
  for (const auto& p : front) known = known || static_cast<int>(jnum(p, "id", -1)) == plan_export_id_;
  if (!known) plan_export_id_ = static_cast<int>(jnum(front[0], "id", 0));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 7);
  const std::string cur = "plan #" + std::to_string(plan_export_id_);
  if (ImGui::BeginCombo("##plan_pick", cur.c_str())) {
    for (const auto& p : front) {
      const int id = static_cast<int>(jnum(p, "id", -1));
      if (ImGui::Selectable(("plan #" + std::to_string(id) + "  " + shape_text(p)).c_str(),
                            id == plan_export_id_))
        plan_export_id_ = id;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 8);
  ImGui::Combo("##plan_stack", &plan_stack_, kConfigStacks, kConfigStackCount);
  anchor("plan.export_stack");
  // the config's files, each a download button (the first is the main config)
  const std::string stack = kConfigStacks[std::max(0, std::min(plan_stack_, kConfigStackCount - 1))];
  const std::string for_key = std::to_string(plan_export_id_) + "|" + stack + "|" + plan_key_;
  if (plan_config_for_ != for_key) {
    for (const auto& p : front) {
      if (static_cast<int>(jnum(p, "id", -1)) != plan_export_id_) continue;
      plan_config_ = json::parse(api::plan_config_json(jat(p, "request").dump(), stack, engine_.reader()),
                                 nullptr, false);
      plan_config_for_ = for_key;
    }
  }
  if (plan_config_.is_discarded() || !plan_config_.is_object() || plan_config_.contains("error")) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(style::kWarn, "%s cannot run this plan: %s", stack.c_str(),
                       jstr(jat(plan_config_, "error"), "message", "no answer").c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  int i = 0;
  for (const auto& f : jat(plan_config_, "files")) {
    const std::string label = "Download " + jstr(f, "name") + "##cfg" + std::to_string(i);
    if (ImGui::Button(label.c_str())) export_plan_config(plan_export_id_, stack, i);
    anchor(("plan.export." + std::to_string(i)).c_str());
    tip(jstr(f, "role"), kPlanTipWrapEm);
    ImGui::SameLine();
    ++i;
  }
  ImGui::NewLine();
  const std::string cmd = jstr(plan_config_, "command");
  if (!cmd.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("run: %s", cmd.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace ftcost::web
