// The calculator's state and controller: notices, the request and its edits, the estimate and its tables
// computed a change at a time (one table per frame), the test summary, and the frame that lays out the views.
// Beside it: app_persist.cpp (the URL and the browser's storage), app_files.cpp (files given to the page),
// app_top_bar.cpp and app_calibrations.cpp (views), app_inputs.cpp, app_results.cpp and the other views.
#include "app.hpp"

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

App::App(Host& host) : host_(host) {
  state_.request = default_request();
  load_persisted();
}

void App::notify(Notice::Level level, std::string text, const std::string& subject) {
  // one copy of a message is enough, and one notice per subject: the newer one replaces the older
  notices_.erase(std::remove_if(notices_.begin(), notices_.end(),
                                [&](const Notice& n) {
                                  return n.text == text || (!subject.empty() && n.subject == subject);
                                }),
                 notices_.end());
  const double now = ImGui::GetCurrentContext() != nullptr ? ImGui::GetTime() : 0.0;
  notices_.insert(notices_.begin(), Notice{level, std::move(text), subject, now});
  // never more than kMaxNotices: the oldest that is not an error goes first
  while (notices_.size() > kMaxNotices) {
    auto it = std::find_if(notices_.rbegin(), notices_.rend(),
                           [](const Notice& n) { return n.level != Notice::error; });
    if (it == notices_.rend()) it = notices_.rbegin();
    notices_.erase(std::next(it).base());
  }
}

void App::expire_notices() {
  const double now = ImGui::GetTime();
  notices_.erase(
      std::remove_if(notices_.begin(), notices_.end(),
                     [&](const Notice& n) { return n.level == Notice::info && now - n.at > kInfoSeconds; }),
      notices_.end());
}

Request App::effective_request() const { return effective_of(state_.request); }

Request App::effective_of(Request r) const {
  r.erase("calibration");
  r.erase("run");
  auto g = r.find("gpu");
  if (g != r.end()) {
    for (const auto& c : calibrations_)
      if (c.in_use() && c.gpu == g->second) r["calibration"] = std::string(kYoursPrefix) + c.gpu + ".json";
    if (run_enabled_ && !run_name_.empty() && run_gpu_ == g->second) r["run"] = "run/" + run_name_;
  }
  return r;
}

void App::set_request(const Request& r) {
  state_.request = r;
  state_.request.erase("calibration");
  edits_.clear();
  field_errors_.clear();
  changed();
}

void App::set_view(View v) {
  if (state_.view == v) return;
  state_.view = v;
  changed();
}

const YourCalibration* App::calibration_in_use() const {
  auto g = state_.request.find("gpu");
  if (g == state_.request.end()) return nullptr;
  const YourCalibration* found = nullptr;  // the last one wins, as in effective_request()
  for (const auto& c : calibrations_)
    if (c.in_use() && c.gpu == g->second) found = &c;
  return found;
}

void App::changed() {
  dirty_ = true;
  write_hash();
}

void App::set_key(const std::string& key, const std::string& value) {
  auto it = state_.request.find(key);
  if (it != state_.request.end() && it->second == value) return;
  state_.request[key] = value;
  drop_invalidated(key);
  changed();
}

void App::drop_invalidated(const std::string& key) {
  const Option* o = find_option(key);
  if (o == nullptr || o->invalidates.empty()) return;
  const Resolution r = engine_.resolve_partial(effective_request());
  for (const auto& k : o->invalidates) {
    const Option* x = find_option(k);
    if (x != nullptr && state_.request.count(k) > 0 && !option_applies(*x, r, state_.request, engine_.db())) {
      state_.request.erase(k);
      edits_.erase(k);
      field_errors_.erase(k);
    }
  }
}

void App::erase_key(const std::string& key) {
  if (state_.request.erase(key) > 0) changed();
}

// An option the estimate's inputs leave out (e.g. lora-dropout at its default): the value its default rule
// gave for the resolved request (recompute), so the field shows what was applied instead of an empty box.
std::string App::table_default(const std::string& key) const {
  auto it = table_defaults_.find(key);
  return it == table_defaults_.end() ? std::string() : it->second;
}

std::string App::effective(const std::string& key) const {
  auto it = state_.request.find(key);
  if (it != state_.request.end()) return it->second;
  if (!result_.is_object()) return {};
  auto in = result_.find("inputs");
  if (in == result_.end() || !in->is_object()) return {};
  std::string k = key;
  std::replace(k.begin(), k.end(), '-', '_');
  // the estimate's inputs name a few options differently from their flag
  if (k == "top_k") k = "experts_per_token";
  auto v = in->find(k);
  if (v == in->end()) return table_default(key);
  if (v->is_boolean()) return v->get<bool>() ? "on" : "off";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number()) {
    double d = v->get<double>();
    if (d == static_cast<double>(static_cast<long long>(d))) return std::to_string(static_cast<long long>(d));
    return v->dump();
  }
  if (v->is_array()) {
    std::string s;
    for (const auto& x : *v) s += (s.empty() ? "" : ",") + (x.is_string() ? x.get<std::string>() : x.dump());
    return s;
  }
  return {};
}

void App::recompute() {
  auto t0 = std::chrono::steady_clock::now();
  Request eff = effective_request();
  resolution_ = engine_.resolve_partial(eff);
  // The default rules' values for the options not given, once per change rather than per drawn field and
  // frame (a rule needs a copy of the inputs).
  table_defaults_.clear();
  if (resolution_.ok) {
    Inputs in = resolution_.in;
    const FileReader none;
    const ResolveState st{in, eff, engine_.db(), none};
    for (const auto& o : job_options())
      if (o.default_rule && eff.count(o.key) == 0) table_defaults_[o.key] = o.default_rule(st).value;
  }
  has_est_ = false;
  result_ = engine_.estimate(eff, &est_);
  has_est_ = !result_.contains("error");
  tables_request_ = eff;
  tables_pending_ = 0;
  if (!result_.contains("error")) {
    sweep_ = engine_.sweep(eff);
    // the scaling series and the comparison over every instance shape follow on the next frames
    tables_pending_ = 2;
  } else {
    sweep_ = Sweep{};
    compare_.clear();
    scaling_ = json();
  }
  calibration_comparison_ = json();
  if (eff.count("calibration") > 0 || eff.count("run") > 0) {
    Request spec = eff;
    spec.erase("calibration");
    spec.erase("run");
    calibration_comparison_ = compare_jobs(spec, engine_.estimate(spec), eff, result_);
  }
  comparison_ = pinned_ ? compare_jobs(pinned_request_, pinned_result_, state_.request, result_) : json();
  compare_sort_dirty_ = true;
  dirty_ = false;
  compute_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  longest_compute_ms_ = compute_ms_;
  if (tables_pending_ == 0) recompute_done();
}

// One of the tables the estimate left for later frames (issue 36: no frame waits for all of them): the
// scaling series, then the comparison over every instance shape.
void App::compute_table() {
  auto t0 = std::chrono::steady_clock::now();
  if (tables_pending_ == 2) {
    scaling_ = engine_.scaling(tables_request_);
  } else {
    std::map<std::string, std::string> cal;
    for (const auto& c : calibrations_)
      if (c.in_use()) cal[c.gpu] = std::string(kYoursPrefix) + c.gpu + ".json";
    compare_ = engine_.compare(tables_request_, cal);
    compare_sort_dirty_ = true;
  }
  --tables_pending_;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  compute_ms_ += ms;
  longest_compute_ms_ = std::max(longest_compute_ms_, ms);
  if (tables_pending_ == 0) recompute_done();
}

void App::recompute_done() {
  ++recompute_count_;
  last_compute_ms_ = compute_ms_;
  last_longest_compute_ms_ = longest_compute_ms_;
}

std::string App::debug_json() const {
  json j;
  j["request"] = json::object();
  for (const auto& [k, v] : state_.request) j["request"][k] = v;
  j["effective_request"] = json::object();
  for (const auto& [k, v] : effective_request()) j["effective_request"][k] = v;
  j["view"] = view_name(state_.view);
  // a text field has the keyboard (tests type only then)
  j["text_input"] = ImGui::GetCurrentContext() != nullptr && ImGui::GetIO().WantTextInput;
  j["hash"] = encode_hash(state_);
  j["notices"] = json::array();
  for (const auto& n : notices_)
    j["notices"].push_back(json{{"level", n.level == Notice::error     ? "error"
                                          : n.level == Notice::warning ? "warning"
                                                                       : "info"},
                                {"text", n.text}});
  j["calibration_error"] = calibration_error_;
  j["calibrations"] = json::array();
  for (const auto& c : calibrations_)
    j["calibrations"].push_back(json{{"name", c.name},
                                     {"gpu", c.gpu},
                                     {"enabled", c.enabled},
                                     {"in_use", c.in_use()},
                                     {"from_link", c.from_link},
                                     {"fingerprint", c.fingerprint},
                                     {"flags", c.flags},
                                     {"summary", c.summary}});
  j["missing_calibration"] = missing_cal_id_;
  json r = json::object();
  if (result_.is_object()) {
    for (const char* k : {"max_batch_size", "batch_size", "throughput_queries_per_s", "time_hours",
                          "cost_usd", "error", "fits", "warnings", "memory_state", "objective"})
      if (result_.contains(k)) r[k] = result_[k];
  }
  j["result"] = r;
  // the typed answer the cards were drawn from (answer_to_json: the "answer" of `ftcost estimate --json`)
  j["answer"] = has_est_ ? answer_to_json(est_.answer) : json();
  json plan = json::object();
  plan["constraints"] = state_.plan;
  plan["pending"] = plan_pending_;
  plan["current"] = plan_result_.is_object() && plan_key_ == request_to_json_text(plan_request());
  plan["ms"] = plan_ms_;
  plan["request"] = json::parse(request_to_json_text(plan_request()));
  if (plan_config_.is_object()) plan["config_error"] = jat(plan_config_, "error");
  if (plan_result_.is_object()) {
    if (plan_result_.contains("error")) plan["error"] = plan_result_["error"];
    const json& front = jat(plan_result_, "front");
    plan["count"] = front.is_array() ? front.size() : 0;
    plan["best"] = jnum(plan_result_, "best", -1);
    plan["search_ms"] = jnum(plan_result_, "search_ms");
    plan["ids"] = json::array();
    if (front.is_array())
      for (const auto& p : front) plan["ids"].push_back(jnum(p, "id", -1));
  }
  j["plan"] = plan;
  json sc = json::object();
  if (scaling_.is_object() && scaling_.contains("points"))
    for (const auto& p : scaling_["points"])
      if (jflag(p, "fits"))
        sc[std::to_string(static_cast<int>(jnum(p, "gpus")))] = jnum(p, "scaling_efficiency");
  j["scaling"] = sc;
  j["recomputes"] = recompute_count_;
  j["compute_ms"] = last_compute_ms_;
  j["compute_frame_ms"] = last_longest_compute_ms_;  // the longest part computed in one frame
  j["updating"] = updating();
  j["panels"] = panels_;
  j["anchors"] = anchors_;
  j["fields"] = fields_;
  j["comparison"] = comparison_;
  j["calibration_comparison"] = calibration_comparison_;
  j["cards"] = cards_;
  return j.dump();
}

void App::anchor(const char* name) {
  ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  anchors_[name] = {a.x, a.y, b.x, b.y};
}

void App::frame() {
  panels_.clear();
  anchors_.clear();
  fields_.clear();
  cards_.clear();
  // The first frame shows the page at once; the first estimate (and the code paths it takes for the
  // first time, compiled lazily by the browser) follows on the next frame.
  const bool first_frame = frames_++ == 0;
  expire_notices();
  if (dirty_ && !first_frame) {
    try {
      recompute();
    } catch (const std::exception& ex) {
      result_ = json{{"error", {{"code", "internal"}, {"field", ""}, {"message", ex.what()}}}};
      has_est_ = false;
      dirty_ = false;
      tables_pending_ = 0;
    }
  } else if (tables_pending_ > 0) {
    try {
      compute_table();
    } catch (const std::exception&) {
      tables_pending_ = 0;
      recompute_done();
    }
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("ftcost", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollbar);
  ImGui::PopStyleVar(2);
  draw_top_bar();
  draw_notices();
  const float fh = ImGui::GetFontSize();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(fh * 0.8f, fh * 0.6f));
  if (state_.view == View::calculator) {
    if (two_panes_fit(avail)) {
      begin_right_pane("inputs", "results", avail, std::min(fh * 25.0f, avail.x * 0.34f),
                       [this] { draw_inputs(); });
      draw_results();
      ImGui::EndChild();
    } else {
      // narrow screens (phones), one scrolling column: the answer first, then the inputs, then the details
      ImGui::BeginChild("column", avail, false, ImGuiWindowFlags_AlwaysUseWindowPadding);
      const bool ok = result_.is_object() && !result_.contains("error");
      if (ok) {
        draw_headline();
        ImGui::Separator();
      }
      draw_inputs();
      ImGui::Separator();
      skip_headline_ = ok;
      draw_results();
      ImGui::EndChild();
    }
  } else if (state_.view == View::plan) {
    draw_plan_view();
  } else if (state_.view == View::paper) {
    ImGui::BeginChild("paper", avail, false, ImGuiWindowFlags_AlwaysUseWindowPadding);
    draw_paper_view();
    ImGui::EndChild();
  } else {
    ImGui::BeginChild("calibrations", avail, false, ImGuiWindowFlags_AlwaysUseWindowPadding);
    draw_calibrations_view();
    ImGui::EndChild();
  }
  ImGui::PopStyleVar();
  ImGui::End();
}

}  // namespace ftcost::web
