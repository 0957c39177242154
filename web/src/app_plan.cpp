// The Plan view's controller (#18): the plan's job and constraints as a request, the search (core/plan.hpp,
// the same search as `ftcost plan`) run once per change of its request and cached (it runs on the frame after
// the change, so the page first says that it is searching), loading a plan into the calculator and
// downloading its runnable config (api::plan_config_json, as `ftcost plan --config`). The drawing is in
// app_plan_view.cpp.
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

std::set<std::string> split_list(const std::string& text) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.insert(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string join_list(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

std::string number_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return number_text(v.get<double>());
  return v.dump();
}

std::string shape_text(const json& p) {
  const int g = static_cast<int>(jnum(p, "gpus_per_node", 1)), n = static_cast<int>(jnum(p, "nodes", 1));
  std::string s = std::to_string(g) + "x " + jstr(p, "gpu_name", jstr(p, "gpu"));
  if (n > 1) s += " x " + std::to_string(n) + " nodes";
  return s;
}

std::string plan_note(const json& p) {
  std::string s =
      "#" + std::to_string(static_cast<int>(jnum(p, "id", -1))) + "  " + shape_text(p) + "\n" +
      jstr(p, "provider") + (jstr(p, "instance_type").empty() ? "" : " " + jstr(p, "instance_type")) +
      (jflag(p, "spot") ? " (spot)" : "") + ", " + plot::fmt_usd(jnum(p, "usd_per_hour")) + "/h\n" +
      jstr(p, "method") + ", " + jstr(p, "stack") + ", " + jstr(p, "parallel") + ", micro-batch " +
      plot::fmt_int(jnum(p, "micro_batch")) + " x accumulation " + plot::fmt_int(jnum(p, "grad_accum")) +
      "\n" + plot::fmt(jnum(p, "peak_gib_per_gpu")) + " of " + plot::fmt(jnum(p, "memory_gib")) +
      " GiB per GPU; bottleneck: " + jstr(p, "bottleneck");
  const std::string why = jstr(p, "why");
  if (!why.empty()) s += "\n" + why;
  return s;
}

namespace {

// The job's method when `methods` ("lora,qlora") lists it, else the first method listed in the order full,
// lora, qlora.
std::string method_in_list(const std::string& methods, const std::string& job_method) {
  const std::set<std::string> listed = split_list(methods);
  if (listed.count(job_method) != 0) return job_method;
  for (const char* m : {"full", "lora", "qlora"})
    if (listed.count(m) != 0) return m;
  return *listed.begin();  // an unknown name: the search names it (--methods)
}

// After `key` of the plan's job `r` changed: the keys its option invalidates that no longer apply (as the
// calculator's inputs drop them). The job is resolved on `gpu` (the plan's job has none; the resolution stops
// at a missing GPU).
void drop_inapplicable(Request& r, const std::string& key, const std::string& gpu, const Engine& engine) {
  const Option* o = find_option(key);
  if (o == nullptr || o->invalidates.empty()) return;
  Request probe = r;
  probe["gpu"] = gpu;
  const Resolution res = engine.resolve_partial(probe);
  for (const auto& k : o->invalidates) {
    const Option* x = find_option(k);
    if (x != nullptr && r.count(k) > 0 && !option_applies(*x, res, r, engine.db())) r.erase(k);
  }
}

}  // namespace

Request App::plan_request() const {
  Request all = state_.request;
  for (const auto& k : plan_chosen_keys()) all.erase(k);
  // the plan chooses the GPU count ("gpus"); "spot" is the plan's constraint (spot offers), not the job's
  all.erase("gpus");
  all.erase("spot");
  auto has = [this](const char* k) {
    auto it = state_.plan.find(k);
    return it != state_.plan.end() && !it->second.empty();
  };
  // The plan chooses among the methods given; the job keeps a method of the list (its own when listed, else
  // the list's first), since the search resolves the job once with it (the CLI's --method with --methods).
  if (has("methods")) {
    const std::string m = method_in_list(state_.plan.at("methods"), effective("method"));
    if (all["method"] != m) {
      all["method"] = m;
      auto g = state_.request.find("gpu");
      const auto ids = engine_.db().gpu_ids();
      drop_inapplicable(all, "method",
                        g != state_.request.end() ? g->second
                        : ids.empty()             ? std::string()
                                                  : ids.front(),
                        engine_);  // e.g. the LoRA keys of a LoRA job planned as full only
    }
  }
  if (has("stacks")) all.erase("stack");
  for (const auto& [k, v] : state_.plan)
    if (!v.empty()) all[k] = v;
  return all;
}

void App::set_plan_constraint(const std::string& key, const std::string& value) {
  auto it = state_.plan.find(key);
  const std::string old = it == state_.plan.end() ? std::string() : it->second;
  if (old == value) return;
  if (value.empty())
    state_.plan.erase(key);
  else
    state_.plan[key] = value;
  plan_pending_ = true;  // the view starts the search's wait on its next frame
  changed();
}

void App::update_plan_now() {
  const Request req = plan_request();
  const std::string key = request_to_json_text(req);
  plan_pending_ = false;
  if (key == plan_key_ && plan_result_.is_object()) return;
  auto t0 = std::chrono::steady_clock::now();
  plan_result_ = engine_.plan(req);
  plan_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  plan_key_ = key;
  plan_export_id_ = static_cast<int>(jnum(plan_result_, "best", -1));
  plan_config_ = json();
  plan_config_for_.clear();
}

bool App::load_plan(int id) {
  for (const auto& p : jat(plan_result_, "front")) {
    if (static_cast<int>(jnum(p, "id", -1)) != id) continue;
    Request r;
    const json& req = jat(p, "request");
    if (!req.is_object()) return false;
    for (auto it = req.begin(); it != req.end(); ++it) r[it.key()] = value_text(it.value());
    notify(Notice::info, "Plan #" + std::to_string(id) + " loaded: " + shape_text(p) + ", " +
                             jstr(p, "provider") + ", " + plot::fmt_hours(jnum(p, "hours")) + ", " +
                             plot::fmt_usd(jnum(p, "cost_usd")));
    // the search uses the database's calibrations; the calculator uses the user's for this GPU when enabled
    for (const auto& c : calibrations_)
      if (c.in_use() && c.gpu == jstr(p, "gpu"))
        notify(Notice::warning,
               "The Calculator uses your calibration " + c.name + " for " + c.gpu +
                   "; the plan was searched with the database's, so its hours and cost differ");
    set_request(r);
    set_view(View::calculator);
    return true;
  }
  return false;
}

bool App::export_plan_config(int id, const std::string& stack, int file) {
  const json* plan_entry = nullptr;
  for (const auto& p : jat(plan_result_, "front"))
    if (static_cast<int>(jnum(p, "id", -1)) == id) plan_entry = &p;
  if (plan_entry == nullptr) return false;
  const std::string req_text = jat(*plan_entry, "request").dump();
  const std::string for_key = std::to_string(id) + "|" + stack + "|" + plan_key_;
  if (plan_config_for_ != for_key) {
    plan_config_ = json::parse(api::plan_config_json(req_text, stack, engine_.reader()), nullptr, false);
    plan_config_for_ = for_key;
  }
  if (plan_config_.is_discarded() || plan_config_.contains("error")) {
    notify(Notice::error, "No " + stack + " config for plan #" + std::to_string(id) + ": " +
                              jstr(jat(plan_config_, "error"), "message", "unreadable answer"));
    return false;
  }
  const json& files = jat(plan_config_, "files");
  if (!files.is_array() || file < 0 || file >= static_cast<int>(files.size())) return false;
  const json& f = files[static_cast<std::size_t>(file)];
  const std::string fmt = jstr(f, "format");
  const std::string mime = fmt == "json"   ? "application/json"
                           : fmt == "yaml" ? "application/yaml"
                                           : "text/plain";
  host_.download(jstr(f, "name", "ftcost-plan.txt"), mime, jstr(f, "text"));
  return true;
}

// "llama-3.3-70b, lora, 2,048 tokens x 50,000 samples, 1 epoch": the job as the estimate resolved it (the
// data: its fixed length or the data set's name, and the sample count).
std::string App::plan_job_text() const {
  const json& in = jat(result_, "inputs");
  const json& ds = jat(result_, "dataset");
  std::string data;
  if (jnum(in, "seq", 0) > 0)
    data = plot::fmt_int(jnum(in, "seq")) + " tokens";
  else
    data = jstr(ds, "name", effective("dataset"));
  const double queries = jnum(in, "queries", jnum(ds, "queries", 0));
  if (queries > 0) data += " x " + plot::fmt_int(queries) + " samples";
  const double epochs = jnum(in, "epochs", 1);
  const std::string model = state_.request.count("model") != 0 ? state_.request.at("model") : "?";
  return model + ", " + effective("method") + ", " + data + ", " +
         (epochs == std::floor(epochs) ? plot::fmt_int(epochs) : plot::fmt(epochs)) +
         (epochs == 1 ? " epoch" : " epochs");
}

}  // namespace ftcost::web
