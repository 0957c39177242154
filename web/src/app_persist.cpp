// What the calculator keeps: the browser's storage (the user's calibrations, model config and length file)
// and the URL (the job, and with it the link's calibration, length file and pinned job).
#include "app.hpp"
#include "app_internal.hpp"
#include "calibration_check.hpp"
#include "ftcost/api.hpp"
#include "ftcost/calibration_share.hpp"
#include "ftcost/dataset.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/json_util.hpp"
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

void App::load_persisted() {
  // the user's calibrations
  std::string stored = host_.load(kStoreCalibrations);
  if (!stored.empty()) {
    auto doc = parse_json_text(stored, "stored calibrations");
    if (doc.ok() && doc.value().is_array()) {
      for (const auto& c : doc.value()) {
        if (!c.is_object()) continue;
        YourCalibration y;
        y.name = jstr(c, "name");
        y.gpu = jstr(c, "gpu");
        y.device = jstr(c, "device");
        y.added = jstr(c, "added");
        y.enabled = jflag(c, "enabled", true);
        y.text = jstr(c, "text");
        if (y.name.empty() || y.text.empty()) continue;
        // checked again: a stored file is trusted no more than an uploaded one
        CalibrationCheck chk = check_calibration(y.text, y.name, engine_.db(), y.gpu);
        if (!chk.accepted) {
          notify(Notice::warning,
                 "Your stored calibration " + y.name + " is no longer accepted: " + chk.message,
                 "stored." + y.name);
          continue;
        }
        y.summary = chk.message;
        y.fingerprint = chk.fingerprint;
        y.link = chk.link;
        y.flags = chk.flags;
        calibrations_.push_back(y);
      }
    } else {
      notify(Notice::warning, "Stored calibrations could not be read and were ignored", "stored");
    }
  }
  // the last uploaded model config
  std::string model = host_.load(kStoreModelConfig);
  if (!model.empty()) {
    auto doc = parse_json_text(model, "stored model config");
    if (doc.ok() && doc.value().is_object() && doc.value().contains("name") && doc.value().contains("text") &&
        doc.value()["name"].is_string() && doc.value()["text"].is_string()) {
      model_config_name_ = doc.value()["name"].get<std::string>();
      model_config_text_ = doc.value()["text"].get<std::string>();
      engine_.put_file(std::string(kUploadedModelPrefix) + model_config_name_, model_config_text_);
    }
  }
  // the last loaded length file (checked again, like every stored file)
  std::string ds = host_.load(kStoreDataset);
  if (!ds.empty()) {
    auto doc = parse_json_text(ds, "stored length file");
    if (doc.ok() && doc.value().is_object() && doc.value().contains("name") && doc.value().contains("text") &&
        doc.value()["name"].is_string() && doc.value()["text"].is_string()) {
      const std::string name = doc.value()["name"].get<std::string>();
      const std::string text = doc.value()["text"].get<std::string>();
      if (parse_dataset_file(text, std::string(kUploadedDatasetPrefix) + name).ok()) {
        dataset_file_name_ = name;
        engine_.put_file(std::string(kUploadedDatasetPrefix) + name, text);
      }
    }
  }
  save_calibrations();  // also refreshes the engine's files
}

void App::save_calibrations() {
  json a = json::array();
  for (const auto& c : calibrations_)
    if (!c.from_link)  // a link's calibration is used while the page shows that link, not stored
      a.push_back(json_object({"name", c.name}, {"gpu", c.gpu}, {"device", c.device}, {"added", c.added},
                              {"enabled", c.enabled}, {"text", c.text}));
  host_.save(kStoreCalibrations, a.empty() ? std::string() : a.dump());
  for (const auto& [id, g] : engine_.db().gpus())
    engine_.remove_file(std::string(kYoursPrefix) + id + ".json");
  for (const auto& c : calibrations_)
    if (c.in_use()) engine_.put_file(std::string(kYoursPrefix) + c.gpu + ".json", c.text);
  dirty_ = true;
}

void App::sync_link_calibration() {
  state_.cal.clear();
  state_.cal_id.clear();
  if (const YourCalibration* c = calibration_in_use()) {
    if (!c->link.empty())
      state_.cal = c->link;
    else
      state_.cal_id = c->fingerprint;
  } else if (!missing_cal_id_.empty()) {
    auto g = state_.request.find("gpu");
    if (g != state_.request.end() && g->second == missing_cal_gpu_) state_.cal_id = missing_cal_id_;
  }
}

void App::apply_link_calibration() {
  // what an earlier link brought is gone with it
  calibrations_.erase(std::remove_if(calibrations_.begin(), calibrations_.end(),
                                     [](const YourCalibration& c) { return c.from_link; }),
                      calibrations_.end());
  for (auto& c : calibrations_) c.suspended = false;
  missing_cal_id_.clear();
  missing_cal_gpu_.clear();
  notices_.erase(std::remove_if(notices_.begin(), notices_.end(),
                                [](const Notice& n) { return n.subject == "link.calibration"; }),
                 notices_.end());
  const std::string cal = state_.cal, cal_id = state_.cal_id;
  state_.cal.clear();
  state_.cal_id.clear();
  if (cal.empty() && cal_id.empty()) {
    save_calibrations();
    return;
  }
  auto g = state_.request.find("gpu");
  const std::string gpu = g != state_.request.end() ? g->second : std::string();
  if (gpu.empty()) {
    notify(Notice::warning, "This link carries a calibration but names no GPU; showing spec-sheet numbers",
           "link.calibration");
    save_calibrations();
    return;
  }
  auto suspend_others = [&]() {
    for (auto& c : calibrations_)
      if (c.gpu == gpu && c.enabled) c.suspended = true;
  };
  if (!cal.empty()) {
    std::string why;
    auto bytes = base64url_decode(cal, "cal");
    if (!bytes.ok()) {
      why = bytes.error().to_string();
    } else {
      auto doc = parse_json_text(bytes.value(), "the link's calibration");
      auto rebuilt = doc.ok() ? calibration_from_compact(doc.value(), "the link's calibration")
                              : Result<Calibration>(doc.error());
      if (!rebuilt.ok()) {
        why = rebuilt.error().to_string();
      } else {
        const std::string text = to_json_text(rebuilt.value());
        CalibrationCheck chk = check_calibration(text, "the link's calibration", engine_.db(), gpu);
        const auto own = std::find_if(
            calibrations_.begin(), calibrations_.end(),
            [&](const YourCalibration& c) { return c.fingerprint == chk.fingerprint && c.gpu == gpu; });
        if (!chk.accepted) {
          why = chk.message;
        } else if (own != calibrations_.end()) {
          // this browser has the file already (the sender reloading the page): use it, store nothing new
          for (auto& o : calibrations_)
            if (&o != &*own && o.gpu == gpu && o.enabled) o.suspended = true;
          own->enabled = true;
        } else {
          suspend_others();
          YourCalibration y =
              calibration_entry(chk, "link-" + chk.fingerprint.substr(0, 8) + ".json", gpu, text);
          y.from_link = true;
          calibrations_.push_back(y);
          notify(y.flags.empty() ? Notice::info : Notice::warning,
                 "This link carries calibration " + chk.fingerprint.substr(0, 8) + " (" + y.device +
                     ") for " + gpu + ": the calibrated numbers are shown" +
                     (y.flags.empty() ? std::string() : "; the calibration is " + y.flags) +
                     ". It is not stored in this browser",
                 "link.calibration");
        }
      }
    }
    if (!why.empty())
      notify(Notice::warning,
             "This link's calibration for " + gpu + " could not be used (" + why +
                 "); showing spec-sheet numbers",
             "link.calibration");
    save_calibrations();
    return;
  }
  // a fingerprint only: the user's own file with that fingerprint, if this browser has it
  for (auto& c : calibrations_)
    if (c.fingerprint == cal_id && c.gpu == gpu) {
      for (auto& o : calibrations_)
        if (&o != &c && o.gpu == gpu && o.enabled) o.suspended = true;
      c.enabled = true;
      save_calibrations();
      return;
    }
  suspend_others();
  missing_cal_id_ = cal_id;
  missing_cal_gpu_ = gpu;
  notify(Notice::warning,
         "This link was made with calibration " + cal_id.substr(0, 8) + " for " + gpu +
             "; load that file (Calibrations page) to reproduce the calibrated numbers; showing spec-sheet "
             "numbers",
         "link.calibration");
  save_calibrations();
}

void App::write_hash() {
  sync_link_calibration();
  sync_link_pin();
  sync_link_data();
  std::string h = encode_hash(state_);
  if (h != last_hash_) {
    last_hash_ = h;
    host_.set_state_hash(h);
  }
}

void App::on_hash(const std::string& hash_in) {
  std::string hash = hash_in;
  if (!hash.empty() && hash[0] == '#') hash.erase(0, 1);
  if (hash == last_hash_) return;
  HashDecode d = decode_hash(hash);
  if (!d.present) return;
  state_ = d.state;
  apply_link_calibration();
  apply_link_data(d.problems);
  edits_.clear();
  field_errors_.clear();
  // values are checked by the core: a link whose settings do not give an estimate falls back to the defaults,
  // unless it names the user's own length file and the page does not have it: then every setting is kept and
  // the page waits for the file
  json probe = engine_.estimate(effective_request());
  const std::string waiting = missing_dataset_file();
  if (!waiting.empty()) {
    notify(Notice::warning,
           "Waiting for " + waiting +
               ": upload it to complete (\"Your lengths...\" beside Dataset, or drop it "
               "on the page). This link uses the sender's own length file without carrying it; every other "
               "setting is kept",
           "link.dataset");
  } else if (probe.contains("error")) {
    std::string msg = jstr(probe["error"], "message", "invalid settings");
    d.problems.push_back("its settings do not give an estimate (" + msg + ")");
    state_.request = default_request();
  }
  if (!d.problems.empty()) {
    std::string text = "This link could not be fully restored: ";
    for (std::size_t i = 0; i < d.problems.size(); ++i) text += (i ? "; " : "") + d.problems[i];
    const bool said = std::any_of(d.problems.begin(), d.problems.end(), [](const std::string& p) {
      return p.find("defaults") != std::string::npos;
    });
    if (state_.request == default_request() && !said) text += "; showing the default settings";
    notify(Notice::warning, text, "link");
  }
  apply_link_pin();
  last_hash_.clear();
  changed();
}

// ---- the length file and the pinned job in links ---------------------------------------------------

std::string App::own_dataset_path() const {
  auto it = state_.request.find("dataset");
  if (it == state_.request.end() || it->second.rfind(kUploadedDatasetPrefix, 0) != 0) return {};
  return it->second;
}

std::string App::missing_dataset_file() const {
  const std::string path = own_dataset_path();
  if (path.empty() || engine_.has_file(path)) return {};
  return path.substr(std::string(kUploadedDatasetPrefix).size());
}

void App::apply_link_data(std::vector<std::string>& problems) {
  notices_.erase(std::remove_if(notices_.begin(), notices_.end(),
                                [](const Notice& n) { return n.subject == "link.dataset"; }),
                 notices_.end());
  link_dataset_name_.clear();
  const std::string path = own_dataset_path();
  if (state_.data.empty()) return;
  if (path.empty()) {
    problems.emplace_back("the link carries a length file (data) but its dataset is not one; ignored");
    state_.data.clear();
    return;
  }
  auto text = dataset_link_decode(state_.data);
  auto d = text.ok() ? parse_dataset_file(text.value(), path) : Result<Dataset>(text.error());
  if (!d.ok()) {
    problems.push_back(d.error().to_string());
    return;  // the page waits for the file; the link keeps what it carried
  }
  engine_.put_file(path, text.value());
  link_dataset_name_ = path.substr(std::string(kUploadedDatasetPrefix).size());
  link_data_text_ = text.value();
  link_data_ = state_.data;  // the link goes on carrying what it carried
  notify(Notice::info,
         "This link carries the length file " + link_dataset_name_ + " (" + plot::fmt_int(d->queries) +
             " samples, longest " + plot::fmt_int(d->lengths.max()) + " tokens): used here, not stored",
         "link.dataset");
}

void App::sync_link_data() {
  const std::string path = own_dataset_path();
  if (path.empty()) {
    state_.data.clear();
    link_data_omitted_ = false;
    return;
  }
  if (!engine_.has_file(path)) return;  // waiting for the file: the link keeps what it carried
  const std::string text = engine_.reader()(path).value();
  if (text != link_data_text_ || state_.data.empty()) {
    auto d = parse_dataset_file(text, path);
    link_data_text_ = text;
    link_data_ = d.ok() ? dataset_link_encode(d.value(), text) : std::string();
  }
  state_.data.clear();
  const std::size_t without = encode_hash(state_).size();
  link_data_omitted_ = without + link_data_.size() + 6 > kMaxHashChars;
  if (!link_data_omitted_) state_.data = link_data_;
}

void App::sync_link_pin() {
  state_.pinned = pinned_;
  state_.pin.clear();
  if (!pinned_) return;
  for (const auto& [k, v] : pinned_request_) {
    auto it = state_.request.find(k);
    if (it == state_.request.end() || it->second != v) state_.pin[k] = v;
  }
  for (const auto& [k, v] : state_.request)
    if (pinned_request_.count(k) == 0) state_.pin[k] = "";
  state_.pin.erase("calibration");
}

void App::apply_link_pin() {
  pinned_ = state_.pinned;
  if (!pinned_) {
    comparison_ = json();
    return;
  }
  pinned_request_ = state_.request;
  for (const auto& [k, v] : state_.pin) {
    if (v.empty())
      pinned_request_.erase(k);
    else
      pinned_request_[k] = v;
  }
  pinned_result_ = engine_.estimate(effective_of(pinned_request_));
}

}  // namespace ftcost::web
