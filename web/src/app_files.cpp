// Files given to the page (picker, drop, paste, the Hub's config.json): calibrations, recorded runs, model
// configs and length files, each checked by the core's own reader before it is used.
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

std::string today_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
#if defined(_WIN32)
  gmtime_s(&tm, &t);
#else
  gmtime_r(&t, &tm);
#endif
  char b[16];
  std::strftime(b, sizeof b, "%Y-%m-%d", &tm);
  return b;
}

std::string base_name(const std::string& name, bool json_suffix = true) {
  auto p = name.find_last_of("/\\");
  std::string b = p == std::string::npos ? name : name.substr(p + 1);
  // keep the names the core sees simple (they are also shown in messages)
  std::string out;
  for (char c : b) out += (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 32) ? '_' : c;
  if (out.empty()) out = "file.json";
  if (json_suffix && (out.size() < 5 || out.substr(out.size() - 5) != ".json")) out += ".json";
  return out;
}

}  // namespace

// A calibration entry from an accepted check: what the file says, named and assigned to a GPU.
YourCalibration calibration_entry(const CalibrationCheck& chk, const std::string& name,
                                  const std::string& gpu, const std::string& text) {
  YourCalibration y;
  y.name = name;
  y.gpu = gpu;
  y.device = chk.device_name;
  y.summary = chk.message;
  y.added = today_text();
  y.text = text;
  y.fingerprint = chk.fingerprint;
  y.link = chk.link;
  y.flags = chk.flags;
  return y;
}

// "owner/name" with the characters the Hub allows in repository ids.
bool valid_hub_id(const std::string& id) {
  const auto slash = id.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= id.size() ||
      id.find('/', slash + 1) != std::string::npos || id.size() > 96)
    return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

void App::fetch_hub_config(const std::string& model_id) {
  if (!valid_hub_id(model_id)) {
    hub_status_ = "\"" + model_id + "\" is not a Hugging Face model id (owner/name, e.g. Qwen/Qwen3-8B)";
    notify(Notice::error, "Hub id: " + hub_status_, "hub");
    return;
  }
  if (!host_.fetch_hub_config(model_id)) {
    hub_status_ = "fetching from the Hub needs the browser page; paste or upload the config.json instead";
    notify(Notice::warning, "Hub id: " + hub_status_, "hub");
    return;
  }
  hub_status_ = "fetching https://huggingface.co/" + model_id + "/resolve/main/config.json ...";
}

void App::on_hub_config(const std::string& model_id, int status, const std::string& text) {
  const std::string url = "https://huggingface.co/" + model_id + "/resolve/main/config.json";
  std::string why;
  if (status == 200) {
    std::string name = model_id;
    std::replace(name.begin(), name.end(), '/', '_');
    hub_status_ = "fetched " + url;
    notices_.erase(
        std::remove_if(notices_.begin(), notices_.end(), [](const Notice& n) { return n.subject == "hub"; }),
        notices_.end());
    set_model_config(name + ".json", text);
    return;
  }
  if (status == 401 || status == 403)
    why = "the Hub refused it (HTTP " + std::to_string(status) +
          "): a gated or private model. Accept its license on huggingface.co, download config.json there and "
          "load it with \"Your config.json...\" or \"Paste...\"";
  else if (status == 404)
    why = "not found on the Hub (HTTP 404): check the id (owner/name, case matters)";
  else if (status == 0)
    why =
        "no answer from huggingface.co (offline, or blocked by the network): paste or upload the config.json "
        "instead";
  else
    why = "the Hub answered HTTP " + std::to_string(status) + ": paste or upload the config.json instead";
  hub_status_ = model_id + ": " + why;
  notify(Notice::error, "Hub: " + model_id + ": " + why, "hub");
}

void App::on_clipboard_text(const std::string& text) {
  paste_buffer_ = text;
  show_paste_ = true;
}

void App::on_file(const std::string& purpose_in, const std::string& name_in, const std::string& text) {
  std::string name = base_name(name_in);
  std::string purpose = purpose_in;
  if (purpose.empty()) {
    std::size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    // not JSON: a list of token lengths (one per line, or CSV); a file named .json is JSON, broken or not
    const bool json_name = name_in.size() >= 5 && name_in.compare(name_in.size() - 5, 5, ".json") == 0;
    if (!json_name && i < text.size() && text[i] != '{' && text[i] != '[')
      return set_dataset_file(base_name(name_in, false), text);
    auto doc = parse_json_text(text, name);
    if (!doc.ok()) {
      calibration_error_ = doc.error().to_string();
      notify(Notice::error, "Could not read " + name + ": " + doc.error().to_string(), "file");
      return;
    }
    const json& j = doc.value();
    if (j.is_object() && j.contains("schema") && j["schema"].is_string() &&
        j["schema"].get<std::string>().rfind("ftcost.run/", 0) == 0)
      purpose = "run";
    else if (j.is_object() && j.contains("schema") && j["schema"] == "ftcost.dataset/1")
      purpose = "dataset";
    else if (j.is_object() && (j.contains("measurements") || j.contains("meta") || j.contains("device")))
      purpose = "calibration";
    else if (j.is_object() && (j.contains("model_type") || j.contains("architectures") ||
                               j.contains("hidden_size") || j.contains("d_model")))
      purpose = "model";
    else {
      notify(Notice::error,
             name +
                 " is neither a calibration (ftcost-calibrate output), a recorded run "
                 "(tools/ftcost_probe.py), a length file (ftcost.dataset/1) nor a Hugging Face "
                 "config.json",
             "file");
      return;
    }
  }
  // a file that is read replaces the notice about an unreadable one
  notices_.erase(
      std::remove_if(notices_.begin(), notices_.end(), [](const Notice& n) { return n.subject == "file"; }),
      notices_.end());
  if (purpose == "calibration")
    add_calibration(name, text);
  else if (purpose == "run")
    add_run(name, text);
  else if (purpose == "dataset")
    set_dataset_file(base_name(name_in, false), text);
  else
    set_model_config(name, text);
}

void App::add_run(const std::string& name, const std::string& text) {
  auto run = parse_run(text, name, engine_.db());
  if (!run.ok()) {
    run_error_ = run.error().to_string();
    notify(Notice::error, "Your run " + name + " was not used: " + run_error_, "run");
    return;
  }
  const std::string stack = effective("stack").empty() ? std::string(kDefaultStackId) : effective("stack");
  json fit = json::parse(api::fit_run_json(text, stack));
  if (fit.contains("error")) {
    run_error_ = jstr(fit["error"], "message");
    notify(Notice::error, "Your run " + name + " could not be fitted: " + run_error_, "run");
    return;
  }
  run_error_.clear();
  run_name_ = name;
  run_gpu_ = run.value().gpu_id;
  run_fit_ = fit;
  run_enabled_ = true;
  engine_.put_file("run/" + name, text);
  // the job becomes the run's job (model, GPU, method, ... as recorded), so the estimate is for what was run
  Request r;
  for (const auto& [k, v] : run.value().request)
    if (find_option(k) != nullptr && find_option(k)->in_url) r[k] = v;
  const json& err = jat(fit, "step_time_rms_log_error");
  notify(Notice::info,
         "Using your run " + name + " on " + run_gpu_ + ": step-time error on the run " +
             plot::fmt(jnum(err, "before") * 100) + "% before, " + plot::fmt(jnum(err, "after") * 100) +
             "% after refitting " + stack,
         "run");
  set_request(r);
}

void App::add_calibration(const std::string& name, const std::string& text) {
  CalibrationCheck chk = check_calibration(text, name, engine_.db(), "");
  if (!chk.accepted) {
    calibration_error_ = chk.message;
    notify(Notice::error, "Calibration rejected: " + chk.message, "calibration");
    return;
  }
  calibration_error_.clear();
  YourCalibration y = calibration_entry(chk, name, chk.suggested_gpu, text);
  const bool flagged = !y.flags.empty();
  // the file a link asked for: its calibrated numbers replace the spec-sheet ones
  if (!missing_cal_id_.empty() && y.fingerprint == missing_cal_id_) {
    y.gpu = missing_cal_gpu_;
    missing_cal_id_.clear();
    missing_cal_gpu_.clear();
    notices_.erase(std::remove_if(notices_.begin(), notices_.end(),
                                  [](const Notice& n) { return n.subject == "link.calibration"; }),
                   notices_.end());
  }
  if (y.gpu.empty()) {
    y.enabled = false;
    notify(Notice::warning,
           "Calibration " + name + " accepted, but its device (" + y.device +
               ") matches no GPU of the database: pick one on the Calibrations page",
           "calibration");
  } else {
    for (auto& c : calibrations_)
      if (c.gpu == y.gpu) {
        c.enabled = false;
        c.suspended = false;
      }
    // a link's calibration for this GPU gives way to the file the user loads
    calibrations_.erase(
        std::remove_if(calibrations_.begin(), calibrations_.end(),
                       [&](const YourCalibration& c) { return c.from_link && c.gpu == y.gpu; }),
        calibrations_.end());
    notify(flagged ? Notice::warning : Notice::info,
           "Calibration " + name + " accepted for " + y.gpu + " (fingerprint " + y.fingerprint.substr(0, 8) +
               "; numbers that use it are marked \"calibrated\")" +
               (flagged ? ". Note: it is " + y.flags : std::string()),
           "calibration");
  }
  calibrations_.push_back(y);
  save_calibrations();
  changed();
}

void App::set_dataset_file(const std::string& name, const std::string& text) {
  const std::string path = std::string(kUploadedDatasetPrefix) + name;
  auto d = parse_dataset_file(text, path);
  if (!d.ok()) {
    notify(Notice::error, "Your length file was not used: " + d.error().to_string());
    return;
  }
  if (!dataset_file_name_.empty())
    engine_.remove_file(std::string(kUploadedDatasetPrefix) + dataset_file_name_);
  dataset_file_name_ = name;
  // the compact histogram, not the raw list: every resolve (sweep, GPU table) reads the file again (a
  // quantile table has no histogram: its own text)
  const std::string compact = d->histogram.empty() ? text : d->to_file_json().dump();
  notices_.erase(std::remove_if(notices_.begin(), notices_.end(),
                                [](const Notice& n) { return n.subject == "link.dataset"; }),
                 notices_.end());
  engine_.put_file(path, compact);
  host_.save(kStoreDataset, json{{"name", name}, {"text", compact}}.dump());
  Request r = state_.request;
  r.erase("seq");
  r.erase("queries");     // the file's size
  r.erase("max-length");  // the file's longest sample
  r.erase("template-tokens");
  r["dataset"] = path;
  set_request(r);
  notify(Notice::info, "Your lengths " + name + ": " + std::to_string(static_cast<long long>(d->queries)) +
                           " samples, median " + std::to_string(std::lround(d->median)) + ", mean " +
                           std::to_string(std::lround(d->lengths.mean())) + ", longest " +
                           std::to_string(std::lround(d->lengths.max())) +
                           " tokens (no prompt-template tokens are added to your own lengths)");
}

void App::set_model_config(const std::string& name, const std::string& text) {
  auto doc = parse_json_text(text, name);
  if (!doc.ok()) {
    notify(Notice::error, "Model config rejected: " + doc.error().to_string(), "model");
    return;
  }
  auto m = parse_model_file(doc.value(), name);
  if (!m.ok()) {
    notify(Notice::error, "Model config rejected: " + m.error().to_string(), "model");
    return;
  }
  model_config_name_ = name;
  model_config_text_ = text;
  engine_.put_file(std::string(kUploadedModelPrefix) + name, text);
  host_.save(kStoreModelConfig, json{{"name", name}, {"text", text}}.dump());
  Request r = state_.request;
  r["model"] = std::string(kUploadedModelPrefix) + name;
  if (!m.value().is_moe()) {
    r.erase("moe");
    r.erase("top-k");
    r.erase("routing");
  }
  notify(Notice::info,
         "Using your model config " + name + " (" + m.value().display_name + ", " + m.value().kind() + ")",
         "model");
  set_request(r);
}

}  // namespace ftcost::web
