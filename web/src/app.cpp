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

namespace {

constexpr const char* kStoreCalibrations = "ftcost.calibrations";
constexpr const char* kStoreModelConfig = "ftcost.model_config";
constexpr const char* kStoreDataset = "ftcost.dataset_file";
// docs/calibrate.md as the static site serves it (web/CMakeLists.txt copies it; site/calibrate.html shows it)
constexpr const char* kCalibrateDocs = "calibrate.html";

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
      a.push_back(json{{"name", c.name},
                       {"gpu", c.gpu},
                       {"device", c.device},
                       {"added", c.added},
                       {"enabled", c.enabled},
                       {"text", c.text}});
  host_.save(kStoreCalibrations, a.empty() ? std::string() : a.dump());
  for (const auto& [id, g] : engine_.db().gpus())
    engine_.remove_file(std::string(kYoursPrefix) + id + ".json");
  for (const auto& c : calibrations_)
    if (c.in_use()) engine_.put_file(std::string(kYoursPrefix) + c.gpu + ".json", c.text);
  dirty_ = true;
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

void App::changed() {
  dirty_ = true;
  write_hash();
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
                          "cost_usd", "error", "fits", "warnings", "memory_state"})
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

// ---- frame ------------------------------------------------------------------------------------------

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
