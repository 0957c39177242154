// The inputs panel: the job option table (core/app/src/options_table.cpp) drawn by kind — choices as combos
// or radio buttons, numbers as checked text fields, toggles as checkboxes, database ids as pickers — with the
// table's labels, tooltips, ranges and applicability. Only the model, GPU, length mode, batch and price
// source have hand-written widgets. Unset options show the value the core chose (its defaults), marked
// "default"; a value that fails the option's checks is shown in red with the reason and is not applied.
#include "app.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

namespace ftcost::web {

namespace {

struct Choice {
  std::string value;
  std::string label;
  std::string tip;
};

void section(const char* title) {
  ImGui::Spacing();
  section_title(title);
  ImGui::Separator();
}

std::string params_text(double n) {
  if (n >= 1e9) return plot::fmt(n / 1e9, 3) + "B";
  if (n >= 1e6) return plot::fmt(n / 1e6, 3) + "M";
  return plot::fmt_int(n);
}

// Combo over choices. Returns the chosen value when the user picks one. filters: the type-ahead text of
// each combo by id (the panel's state).
bool combo(const char* id, const std::string& current, const std::vector<Choice>& choices, std::string* out,
           const char* tooltip, bool is_default, std::map<std::string, std::string>* filters) {
  std::string preview = current;
  for (const auto& c : choices)
    if (c.value == current) preview = c.label;
  // the selected GPU's "[calibrated]" is said on the line under the field (the closed field would cut it off)
  const std::string cal_suffix = "  [calibrated]";
  if (preview.size() > cal_suffix.size() &&
      preview.compare(preview.size() - cal_suffix.size(), cal_suffix.size(), cal_suffix) == 0)
    preview.resize(preview.size() - cal_suffix.size());
  if (is_default) preview += "  (default)";
  bool picked = false;
  if (ImGui::BeginCombo(id, preview.c_str(), ImGuiComboFlags_HeightLarge)) {
    // Long lists (models, GPUs) get type-ahead search: the filter keeps the entries whose label or id
    // contains every typed word (case-insensitive). When the list opens the last query is selected (typing
    // replaces it); Enter picks the first entry shown.
    std::string& filter = (*filters)[id];
    bool enter = false;
    if (choices.size() > 8) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s", filter.c_str());
      if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
      ImGui::SetNextItemWidth(-1);
      enter =
          ImGui::InputTextWithHint("##search", "type to search", buf, sizeof buf,
                                   ImGuiInputTextFlags_AutoSelectAll | ImGuiInputTextFlags_EnterReturnsTrue);
      filter = buf;
    }
    auto lower = [](std::string t) {
      for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return t;
    };
    const std::string f = lower(choices.size() > 8 ? filter : std::string());
    for (const auto& c : choices) {
      if (!f.empty()) {
        const std::string hay = lower(c.label + " " + c.value);
        bool all = true;
        std::size_t start = 0;
        while (start < f.size()) {
          std::size_t end = f.find(' ', start);
          if (end == std::string::npos) end = f.size();
          if (end > start && hay.find(f.substr(start, end - start)) == std::string::npos) all = false;
          start = end + 1;
        }
        if (!all) continue;
      }
      if (ImGui::Selectable(c.label.c_str(), c.value == current) || (enter && !picked)) {
        *out = c.value;
        picked = true;
        if (enter) ImGui::CloseCurrentPopup();
      }
      if (!c.tip.empty()) tip(c.tip.c_str());
    }
    ImGui::EndCombo();
  }
  tip(tooltip);
  return picked;
}

// The calculator's text for an option's tooltip: the table's details, unit, range and default.
std::string option_tooltip(const Option& o) {
  std::string t = o.details;
  if (o.kind == OptionKind::count || o.kind == OptionKind::real) {
    t += "\nRange: " + plot::fmt(o.lo) + (o.hi_rule ? " or more" : " to " + plot::fmt(o.hi));
    if (!o.unit.empty()) t += " " + o.unit;
    t += ".";
  } else if (!o.unit.empty()) {
    t += "\nUnit: " + o.unit + ".";
  }
  if (!o.default_help.empty()) t += "\nDefault: " + o.default_help + ".";
  return t;
}

// Pickers for a database list, with labels and tooltips.
std::vector<Choice> id_choices(const std::string& list, const Database& db) {
  std::vector<Choice> out;
  if (list == "datasets")
    for (const auto& [id, d] : db.datasets())
      out.push_back(Choice{
          id, d.display_name.empty() ? id : d.display_name + " (" + id + ")",
          plot::fmt_int(d.queries) + " queries, median " + plot::fmt_int(d.median) + " tokens. " + d.source});
  if (list == "stacks")
    for (const auto& [id, sp] : db.stacks())
      out.push_back(Choice{id, sp.display_name.empty() ? id : sp.display_name,
                           sp.description + "\n\n" + sp.to_json().dump(1)});
  if (list == "providers")
    for (const auto& p : db.providers()) out.push_back(Choice{p.id, p.name.empty() ? p.id : p.name, ""});
  if (list == "models")
    for (const auto& id : db.model_ids()) out.push_back(Choice{id, id, ""});
  if (list == "gpus")
    for (const auto& id : db.gpu_ids()) out.push_back(Choice{id, id, ""});
  return out;
}

std::vector<Choice> value_choices(const Option& o) {
  std::vector<Choice> out;
  for (const auto& v : o.values) out.push_back(Choice{v.value, v.label.empty() ? v.value : v.label, v.help});
  return out;
}

bool short_labels(const Option& o) {
  if (o.values.size() > 3) return false;
  for (const auto& v : o.values)
    if ((v.label.empty() ? v.value : v.label).size() > 6) return false;
  return true;
}

}  // namespace

void App::label(const char* text, const char* tooltip, bool is_default) const {
  ImGui::AlignTextToFramePadding();
  if (is_default)
    ImGui::TextDisabled("%s", text);
  else
    ImGui::TextUnformatted(text);
  tip(tooltip);
  ImGui::SameLine(label_w_);
  ImGui::SetNextItemWidth(-1);
}

void App::indent_to_field() const {
  ImGui::Dummy(ImVec2(label_w_ - ImGui::GetStyle().ItemSpacing.x, 0));
  ImGui::SameLine();
}

bool App::option_shown(const Option& o) const {
  const Request& rq = state_.request;
  if (o.key == "seq") return rq.count("seq") > 0;  // the length mode chooses between --seq and --dataset
  if (option_applies(o, resolution_, rq, engine_.db())) return true;
  return rq.count(o.key) > 0;  // a value that does not apply stays visible, with the core's message
}

void App::check_number_edit(const Option& o, const std::string& text) {
  Inputs in = resolution_.in;
  const FileReader none;
  const ResolveState st{in, state_.request, engine_.db(), none};
  const Status ok = text.empty() ? Status(make_error(Errc::invalid_value, o.flag(), "needs a value"))
                                 : check_option_value(o, st, text);
  if (ok.ok())
    field_errors_.erase(o.key);
  else
    field_errors_[o.key] = ok.error().message;
}

void App::apply_number_edit(const Option& o, bool field_left) {
  const auto edit = edits_.find(o.key);
  if (edit == edits_.end() || field_errors_.count(o.key) > 0) return;
  const auto typed = edit_times_.find(o.key);
  const bool paused = typed == edit_times_.end() || ImGui::GetTime() - typed->second >= kEditPauseSeconds;
  if (!field_left && !paused) return;
  const std::string text = edit->second;
  edits_.erase(edit);
  edit_times_.erase(o.key);
  set_key(o.key, text);
}

void App::draw_number_field(const Option& o) {
  // (the error as the frame began: the field's colours and the message under it stay paired)
  const auto err = field_errors_.find(o.key);
  const bool bad = err != field_errors_.end();
  const std::string error = bad ? err->second : std::string();
  const auto edit = edits_.find(o.key);
  const std::string shown = edit != edits_.end() ? edit->second : effective(o.key);
  fields_[o.key] = shown;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s", shown.c_str());
  if (bad) {
    ImGui::PushStyleColor(ImGuiCol_FrameBg, style::kErrorBg);
    ImGui::PushStyleColor(ImGuiCol_Border, style::kBad);
    ImGui::PushStyleVar(ImGuiStyleVar_FrameBorderSize, 1.0f);
  }
  const std::string id = "##" + o.key;
  if (ImGui::InputText(id.c_str(), buf, sizeof buf, ImGuiInputTextFlags_CharsNoBlank)) {
    edits_[o.key] = buf;
    edit_times_[o.key] = ImGui::GetTime();
    check_number_edit(o, buf);
  }
  // Enter, Tab or a click elsewhere applies at once; while the field has focus, a pause does
  apply_number_edit(o, ImGui::IsItemDeactivated());
  if (bad) {
    ImGui::PopStyleVar();
    ImGui::PopStyleColor(2);
  }
  anchor(("input." + o.key).c_str());
  tip(option_tooltip(o).c_str());
  if (bad) {
    indent_to_field();
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(style::kBad, "%s (not applied)", error.c_str());
    ImGui::PopTextWrapPos();
  }
}

// An option drawn by its kind, from the table.
void App::draw_generic(const Option& o) {
  const Request& rq = state_.request;
  const bool is_default = rq.find(o.key) == rq.end();
  const std::string tooltip = option_tooltip(o);
  label(o.label.c_str(), tooltip.c_str(), is_default && !o.required);
  const std::string cur = effective(o.key);
  std::string v;
  const std::string id = "##" + o.key;
  switch (o.kind) {
    case OptionKind::choice:
      if (short_labels(o)) {
        int idx = 0;
        for (std::size_t i = 0; i < o.values.size(); ++i)
          if (o.values[i].value == cur) idx = static_cast<int>(i);
        const int before = idx;
        for (std::size_t i = 0; i < o.values.size(); ++i) {
          if (i > 0) ImGui::SameLine();
          const auto& val = o.values[i];
          const std::string text = (val.label.empty() ? val.value : val.label) + "##" + o.key;
          ImGui::RadioButton(text.c_str(), &idx, static_cast<int>(i));
          anchor((o.key + "." + val.value).c_str());
          tip(val.help.empty() ? tooltip.c_str() : val.help.c_str());
        }
        if (idx != before) set_key(o.key, o.values[static_cast<std::size_t>(idx)].value);
      } else if (combo(id.c_str(), cur, value_choices(o), &v, tooltip.c_str(), is_default, &combo_filters_)) {
        set_key(o.key, v);
      }
      break;
    case OptionKind::toggle: {
      bool on = cur == "on";
      const std::string text = std::string(is_default ? "on/off  (default)" : "on/off") + id;
      if (ImGui::Checkbox(text.c_str(), &on)) set_key(o.key, on ? "on" : "off");
      anchor(("input." + o.key).c_str());
      tip(tooltip.c_str());
      break;
    }
    case OptionKind::count:
    case OptionKind::real:
      draw_number_field(o);
      break;
    case OptionKind::text: {
      std::vector<Choice> tc = value_choices(o);
      const std::string c = cur.empty() && !o.values.empty() ? o.values.front().value : cur;
      if (std::none_of(tc.begin(), tc.end(), [&](const Choice& x) { return x.value == c; }))
        tc.push_back(Choice{c, c, ""});
      if (combo(id.c_str(), c, tc, &v, tooltip.c_str(), is_default, &combo_filters_)) set_key(o.key, v);
      break;
    }
    case OptionKind::id_or_path:
      if (combo(id.c_str(), cur, id_choices(o.id_list, engine_.db()), &v, tooltip.c_str(), is_default,
                &combo_filters_))
        set_key(o.key, v);
      break;
  }
}

// The dataset picker: the presets, the user's own length file once loaded, and the button that loads one.
void App::draw_dataset_input() {
  const Option& o = *find_option("dataset");
  const bool is_default = state_.request.count("dataset") == 0;
  const std::string tooltip = option_tooltip(o);
  label(o.label.c_str(), tooltip.c_str(), is_default);
  std::vector<Choice> choices = id_choices("datasets", engine_.db());
  if (!dataset_file_name_.empty())
    choices.push_back(Choice{std::string(kUploadedDatasetPrefix) + dataset_file_name_,
                             "Your lengths: " + dataset_file_name_,
                             "The token-length file you gave this page"});
  if (!link_dataset_name_.empty() && link_dataset_name_ != dataset_file_name_)
    choices.push_back(Choice{std::string(kUploadedDatasetPrefix) + link_dataset_name_,
                             "From the link: " + link_dataset_name_,
                             "The token lengths the link carried (used in this page, not stored)"});
  std::string v;
  if (combo("##dataset", effective("dataset"), choices, &v, tooltip.c_str(), is_default, &combo_filters_))
    set_key("dataset", v);
  indent_to_field();
  if (ImGui::SmallButton("Your lengths...")) host_.open_file_picker("dataset");
  anchor("dataset.upload");
  tip("Your own data: the token length of every sample: one per line, a CSV with a length column, or the "
      "ftcost.dataset/1 JSON that tools/dataset_lengths.py writes from a Hugging Face dataset and tokenizer. "
      "No prompt-template tokens are added to your lengths. You can also drop the file onto the page.");
}

void App::draw_option(const Option& o) {
  if (!option_shown(o)) return;
  if (o.key == "model") return draw_model_input();
  if (o.key == "gpu") return draw_gpu_input();
  if (o.key == "dataset") return draw_dataset_input();
  if (o.key == "batch") return draw_batch_input();
  if (o.key == "price-per-hour") return draw_price_input();  // the price source: offers, provider or yours
  if (o.key == "provider" || o.key == "spot") return;        // part of the price source
  if (o.key == "calibration") return;                        // the Calibrations page
  draw_generic(o);
}

void App::draw_model_input() {
  const Database& db = engine_.db();
  const float fh = ImGui::GetFontSize();
  std::string v;
  std::vector<Choice> models;
  for (const auto& [id, m] : db.models()) {
    ParamCounts pc = m.params();
    models.push_back(Choice{
        id, m.display_name + "  (" + m.kind() + ", " + params_text(static_cast<double>(pc.total())) + ")",
        m.hf_repo.empty() ? std::string() : "Hugging Face: " + m.hf_repo});
  }
  if (!model_config_name_.empty())
    models.push_back(Choice{std::string(kUploadedModelPrefix) + model_config_name_,
                            "Your config: " + model_config_name_,
                            "The Hugging Face config.json you gave this page"});
  const Option& opt = *find_option("model");
  label(opt.label.c_str(), opt.details.c_str());
  const std::string cur = effective("model");
  const bool picked =
      combo("##model", cur, models, &v, "Model preset, or your uploaded config.json", false, &combo_filters_);
  anchor("input.model");
  if (picked) set_key("model", v);
  indent_to_field();
  if (ImGui::SmallButton("Your config.json...")) host_.open_file_picker("model");
  anchor("model.upload");
  tip("Use your own model: a Hugging Face config.json (Llama/Mistral/Qwen2, Mixtral, Qwen-MoE, "
      "DeepSeek-MoE, OLMoE, "
      "Phi-3.5-MoE, gpt-oss, Mamba, BlackMamba, Jamba). You can also drop the file onto the page.");
  ImGui::SameLine();
  if (ImGui::SmallButton("Paste...")) {
    show_paste_ = true;
    host_.request_clipboard_text();
  }
  tip("Paste the text of a config.json");
  if (show_paste_) {
    mark("paste_config");
    ImGui::TextDisabled("Paste a config.json here (Ctrl+V), then Use:");
    if (paste_text_.empty()) paste_text_.assign(kPasteBytes, '\0');
    if (!paste_buffer_.empty()) {
      std::snprintf(paste_text_.data(), paste_text_.size(), "%s", paste_buffer_.c_str());
      paste_buffer_.clear();
    }
    ImGui::InputTextMultiline("##paste", paste_text_.data(), paste_text_.size(), ImVec2(-1, fh * 8));
    if (ImGui::Button("Use")) {
      on_file("model", "pasted-config.json", paste_text_.data());
      show_paste_ = false;
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) show_paste_ = false;
  }
  // a model by its Hugging Face id: the page fetches its config.json from the Hub when asked
  indent_to_field();
  const float fetch_w = ImGui::CalcTextSize("Fetch").x + ImGui::GetStyle().FramePadding.x * 2;
  ImGui::SetNextItemWidth(
      std::max(fh * 6, ImGui::GetContentRegionAvail().x - fetch_w - ImGui::GetStyle().ItemSpacing.x));
  const bool enter =
      ImGui::InputTextWithHint("##hubid", "HF id, e.g. Qwen/Qwen3-8B", hub_id_, sizeof hub_id_,
                               ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CharsNoBlank);
  anchor("hub.id");
  const char* hub_tip =
      "A Hugging Face model id (owner/name). Fetch downloads "
      "https://huggingface.co/ID/resolve/main/config.json "
      "from your browser: this one request leaves your machine (nothing about your job is sent). Gated "
      "models "
      "need the config.json pasted or uploaded.";
  tip(hub_tip);
  ImGui::SameLine();
  if (ImGui::SmallButton("Fetch") || enter) fetch_hub_config(hub_id_);
  anchor("hub.fetch");
  tip(hub_tip);
  if (!hub_status_.empty()) {
    muted_text_wrapped(hub_status_);
  }
  if (result_.is_object() && result_.contains("model")) {
    const json& m = result_["model"];
    std::string line = jstr(m, "kind") + ", " + params_text(jnum(m, "total_params", 0.0)) + " parameters";
    if (jnum(m, "active_params", 0.0) > 0 && jnum(m, "active_params", 0.0) < jnum(m, "total_params", 0.0))
      line += ", " + params_text(jnum(m, "active_params", 0.0)) + " active per token";
    line += ", " + params_text(jnum(m, "trainable_params", 0.0)) + " trained";
    muted_text_wrapped(line);
  }
}

void App::draw_gpu_input() {
  const Database& db = engine_.db();
  std::string v;
  std::vector<Choice> gpus;
  for (const auto& [gpu_id, g] : db.gpus()) {
    const std::string id = gpu_id;  // (clang 14 cannot capture a structured binding)
    bool yours = std::any_of(calibrations_.begin(), calibrations_.end(),
                             [&](const YourCalibration& c) { return c.gpu == id && c.in_use(); });
    gpus.push_back(
        Choice{id, g.name + "  (" + plot::fmt(g.memory_gib) + " GiB)" + (yours ? "  [calibrated]" : ""),
               g.vendor + " " + g.name + ", " + g.architecture + ": " + plot::fmt(g.memory_gib) + " GiB, " +
                   plot::fmt(g.memory_bandwidth_gbps) + " GB/s, " + plot::fmt(g.bf16_tflops) +
                   " bf16 TFLOP/s dense" +
                   (yours ? "\nA calibration (measured kernel speeds) is in use for this GPU."
                          : "\nSpec sheet only (no calibration loaded).")});
  }
  const Option& opt = *find_option("gpu");
  label(opt.label.c_str(),
        (opt.details + " [calibrated] = a calibration (measured speeds) is in use for it.").c_str());
  if (combo("##gpu", effective("gpu"), gpus, &v, "GPU", false, &combo_filters_)) set_key("gpu", v);
  const std::string gid = effective("gpu");
  for (const auto& c : calibrations_)
    if (c.gpu == gid) {
      indent_to_field();
      ImGui::TextColored(c.in_use() && c.flags.empty() ? style::kGood : style::kWarn,
                         c.in_use() ? "calibrated: %s" : "calibration %s (not used)", c.name.c_str());
      tip((c.summary + (c.from_link ? "\nFrom the link (not stored)." : "")).c_str());
    }
}

void App::draw_lengths_mode() {
  const Request& rq = state_.request;
  const bool fixed = rq.count("seq") > 0;
  label("Lengths",
        "Sequence lengths: from a dataset preset (a measured length distribution; batches are padded as "
        "chosen below) or one fixed length for every sample.");
  int mode = fixed ? 1 : 0;
  ImGui::RadioButton("Dataset", &mode, 0);
  tip("Lengths drawn from a dataset's measured distribution");
  ImGui::SameLine();
  ImGui::RadioButton("Fixed length", &mode, 1);
  tip("Every sample has the same number of tokens");
  if (mode != (fixed ? 1 : 0)) {
    Request r = rq;
    if (mode == 1) {
      // the dataset's size stays the job's size: switching the length mode never changes Queries silently
      if (r.count("queries") == 0 && !effective("queries").empty()) r["queries"] = effective("queries");
      for (const auto& k : find_option("seq")->invalidates) r.erase(k);
      r["seq"] = "512";
    } else {
      r.erase("seq");
    }
    set_request(r);
  }
}

void App::draw_batch_input() {
  const Option& o = *find_option("batch");
  label(o.label.c_str(), option_tooltip(o).c_str(), state_.request.count("batch") == 0);
  bool maxb = effective("batch") == "max" || effective("batch").empty();
  if (ImGui::Checkbox("largest that fits", &maxb))
    set_key(
        "batch",
        maxb ? "max" : std::to_string(std::max<long long>(1, std::llround(jnum(result_, "batch_size", 1)))));
  tip("Use the largest batch that fits in the GPU's memory");
  if (!maxb) {
    indent_to_field();
    ImGui::SetNextItemWidth(-1);
    draw_number_field(o);
  }
}

void App::draw_price_input() {
  const Request& rq = state_.request;
  const Database& db = engine_.db();
  const std::string gid = effective("gpu");
  std::string v;
  // price source
  label("Price",
        "Where the $/GPU-hour comes from: the cheapest dated offer in the database (on-demand or spot), one "
        "provider's offer, or your own price.");
  std::string price_mode = rq.count("price-per-hour") ? "custom"
                           : rq.count("provider")     ? "provider:" + rq.at("provider")
                                                      : "cheapest";
  if (price_mode == "cheapest" && effective("spot") == "on") price_mode = "cheapest-spot";
  std::vector<Choice> pc = {{"cheapest", "cheapest on-demand offer", ""},
                            {"cheapest-spot", "cheapest spot offer", ""}};
  std::set<std::string> seen;
  for (const auto& o : db.offers_for(gid))
    if (seen.insert(o.provider_id).second)
      pc.push_back(Choice{"provider:" + o.provider_id, o.provider,
                          o.date.empty() ? o.source : "dated " + o.date + ", " + o.source});
  pc.push_back(Choice{"custom", "my price ($/GPU-hour)", ""});
  if (combo("##price", price_mode, pc, &v, "Price source", false, &combo_filters_)) {
    Request r = rq;
    r.erase("price-per-hour");
    r.erase("provider");
    r.erase("spot");
    if (v == "cheapest-spot")
      r["spot"] = "on";
    else if (v == "custom")
      r["price-per-hour"] = "1.00";
    else if (v.rfind("provider:", 0) == 0)
      r["provider"] = v.substr(9);
    set_request(r);
  }
  if (price_mode == "custom") {
    draw_generic(*find_option("price-per-hour"));
  } else if (price_mode.rfind("provider:", 0) == 0) {
    draw_generic(*find_option("spot"));
  }
}

void App::draw_inputs() {
  mark("inputs");
  const float fh = ImGui::GetFontSize();
  // the label column fits the table's longest label (labels are short by convention; capped so that the
  // widgets keep their room)
  float widest = ImGui::CalcTextSize("Checkpointing").x;
  for (const auto& o : job_options()) widest = std::max(widest, ImGui::CalcTextSize(o.label.c_str()).x);
  label_w_ = std::min(widest, fh * 8.5f) + fh * 1.0f;
  struct Section {
    const char* title;
    std::vector<const char*> groups;
  };
  const Section sections[] = {{"Model", {"model"}},
                              {"Fine-tuning", {"method"}},
                              {"Data", {"data"}},
                              {"GPU and price", {"gpu", "price"}},
                              {"More than one GPU", {"multi-gpu"}}};
  for (const auto& sec : sections) {
    section(sec.title);
    if (std::string(sec.title) == "Data") draw_lengths_mode();
    for (const char* g : sec.groups)
      for (const auto& o : job_options())
        if (o.group == g) draw_option(o);
  }
  ImGui::Spacing();
  ImGui::Separator();
  if (ImGui::Button("Reset to the paper's setup")) set_request(default_request());
  tip("Mixtral-8x7B, QLoRA, sparse MoE, MATH14K, largest batch, on the A40 (the paper's headline "
      "configuration)");
  ImGui::Spacing();
  const char* where = host_.storage_description().find("browser") != std::string::npos ? "browser" : "app";
  if (updating())
    ImGui::TextDisabled("Updating... (computed in this %s; nothing leaves your machine)", where);
  else
    ImGui::TextDisabled("Computed in this %s in %.1f ms. Nothing leaves your machine.", where,
                        last_compute_ms_);
}

}  // namespace ftcost::web
