// The results: headline numbers, warnings, the memory breakdown against the GPU's capacity, step-time
// breakdowns, throughput against batch size, and every GPU x provider for the same job. Everything is
// read from the core's estimate JSON, so new fields of the core show up without changes here.
#include "app.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/paper.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::web {

namespace {

bool range_of(const json& j, const std::string& key, double* lo, double* hi) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number())
    return false;
  *lo = (*it)[0].get<double>();
  *hi = (*it)[1].get<double>();
  return true;
}

// A headline card: title, big value with its unit, up to three short lines under it. `shown` records
// what it drew (title, value, unit, lines) for tests.
// A badge drawn after a card's title (the "calibrated" one): text, colour, and what its tooltip adds.
struct Badge {
  std::string text;
  ImVec4 color;
  std::string tooltip;
};

void card(const char* id, float w, float h, const char* title, const std::string& value, const char* unit,
          const std::vector<std::string>& subs, const std::string& tooltip, const ImVec4& value_color,
          std::map<std::string, std::vector<std::string>>* shown, const Badge* badge = nullptr) {
  ImGui::PushStyleColor(ImGuiCol_ChildBg, style::kCard);
  ImGui::BeginChild(id, ImVec2(w, h), false,
                    ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_NoScrollbar);
  ImGui::TextDisabled("%s", title);
  if (badge != nullptr) {
    // beside the title when both fit on the line, else under it (card_height counts that line)
    const std::string b = "[" + badge->text + "]";
    if (ImGui::CalcTextSize(title).x + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(b.c_str()).x <=
        ImGui::GetContentRegionAvail().x)
      ImGui::SameLine();
    ImGui::TextColored(badge->color, "%s", b.c_str());
  }
  ImFont* big = style::big_font();
  if (big != nullptr) ImGui::PushFont(big);
  ImGui::TextColored(value_color, "%s", value.c_str());
  const float big_h = ImGui::GetTextLineHeight();
  if (big != nullptr) ImGui::PopFont();
  if (unit != nullptr && *unit != 0) {
    ImGui::SameLine(0, 5);
    // align the unit's baseline with the big number's
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + big_h - ImGui::GetTextLineHeight() - 2);
    ImGui::TextColored(value_color, "%s", unit);
  }
  // sub lines wrap inside the card (never cut off); the row's height is the tallest card's (card_height)
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::PushTextWrapPos(0);
  for (const auto& sub : subs)
    if (!sub.empty()) ImGui::TextUnformatted(sub.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  // what was drawn below the card's bottom edge would be cut off (tests look for "clipped")
  const float bottom =
      ImGui::GetCursorPosY() - ImGui::GetStyle().ItemSpacing.y + ImGui::GetStyle().WindowPadding.y;
  const bool clipped = bottom > h + 1.0f;
  ImGui::EndChild();
  ImGui::PopStyleColor();
  if (badge != nullptr)
    tip((tooltip + (tooltip.empty() ? "" : "\n\n") + badge->tooltip).c_str());
  else if (!tooltip.empty())
    tip(tooltip.c_str());
  if (shown != nullptr) {
    std::vector<std::string> lines{title, value, unit != nullptr ? unit : ""};
    for (const auto& sub : subs)
      if (!sub.empty()) lines.push_back(sub);
    if (badge != nullptr) lines.push_back("badge: " + badge->text);
    if (clipped) lines.push_back("clipped");
    (*shown)[id] = lines;
  }
}

struct CardSpec {
  std::string id, title, value, unit;
  std::vector<std::string> subs;
  std::string tooltip;
  ImVec4 color;
  bool has_badge = false;
  Badge badge;
};

CardSpec make_card(const char* id, const std::string& title, const std::string& value, const char* unit,
                   const std::vector<std::string>& subs, const std::string& tooltip, const ImVec4& color,
                   const Badge* badge = nullptr) {
  CardSpec c{id, title, value, unit != nullptr ? unit : "", subs, tooltip, color, badge != nullptr, Badge{}};
  if (badge != nullptr) c.badge = *badge;
  return c;
}

// What a card of width w needs: padding, title, the big number, and its sub lines wrapped at the card's
// width.
float card_height(const CardSpec& c, float w, float big_line) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float inner = w - st.WindowPadding.x * 2;
  float h = st.WindowPadding.y * 2 + ImGui::GetTextLineHeight() + big_line + st.ItemSpacing.y * 2 + 2;
  if (c.has_badge && ImGui::CalcTextSize(c.title.c_str()).x + st.ItemSpacing.x +
                             ImGui::CalcTextSize(("[" + c.badge.text + "]").c_str()).x >
                         inner)
    h += ImGui::GetTextLineHeight() + st.ItemSpacing.y;
  for (const auto& sub : c.subs)
    if (!sub.empty()) h += ImGui::CalcTextSize(sub.c_str(), nullptr, false, inner).y + st.ItemSpacing.y;
  return h;
}

// The one "calibrated" badge: the text, its colour (amber when the file is synthetic or partial) and the
// tooltip naming the file, its device, the GPU and the fingerprint.
Badge calibration_badge(const YourCalibration& c) {
  Badge b;
  const bool syn = c.flags.find("synthetic") != std::string::npos;
  const bool part = c.flags.find("partial") != std::string::npos;
  b.text = std::string("calibrated") + (syn ? ", synthetic" : "") + (part ? ", partial" : "");
  b.color = c.flags.empty() ? style::kGood : style::kWarn;
  b.tooltip = "Calibrated: uses the measured kernel speeds of " + c.name + " (" + c.device + ") for " +
              c.gpu + ", fingerprint " + c.fingerprint.substr(0, 8) + (c.from_link ? ", from the link" : "") +
              "." + (c.flags.empty() ? std::string() : "\nThis calibration is " + c.flags + ".") +
              "\nSpec-sheet numbers: the Calibrations page (untick \"Use\").";
  return b;
}

struct MemInfo {
  const char* key;
  const char* label;
  const char* tip;
};
constexpr MemInfo kMem[] = {
    {"weights", "weights",
     "Base model weights as stored: 16-bit, or NF4/int8 with block scales for QLoRA (parts that stay 16-bit "
     "included)."},
    {"trainable_params", "adapters",
     "Trainable parameters kept apart from the weights (LoRA adapters, fp32)."},
    {"gradients", "gradients", "Gradients of the trainable parameters."},
    {"optimizer_states", "optimizer",
     "Optimizer states of the trainable parameters (AdamW: two per parameter)."},
    {"autocast_copies", "autocast copies", "16-bit copies of fp32 trainable weights made by autocast."},
    {"activations", "activations",
     "Activations saved for the backward pass (with checkpointing: layer inputs + one layer's recompute "
     "peak), MoE routed copies and expert intermediates."},
    {"logits", "logits + loss",
     "Logits and loss over the vocabulary, often upcast to fp32: large for big vocabularies."},
    {"dequant_buffers", "dequant buffers", "QLoRA: temporary dequantized weights."},
    {"cuda_context", "CUDA context", "CUDA context and library workspaces (cuBLAS, ...)."},
    {"allocator_overhead", "allocator", "PyTorch caching-allocator fragmentation and reserve."},
    {"optimizer_step_temp", "step temporaries",
     "Foreach AdamW's temporary at the optimizer step (sqrt of every exp_avg_sq, one state-sized list): it "
     "exists beside every gradient once activations and logits are freed. Fused AdamW and 8-bit optimizers "
     "have none."},
};

struct BreakdownInfo {
  const char* key;
  const char* title;
};
constexpr BreakdownInfo kBreakdowns[] = {
    {"step_breakdown_s", "By stage (the paper's Fig. 4)"},
    {"layer_breakdown_s", "By layer type (Fig. 5)"},
    {"kernel_classes_s", "By kernel class (Fig. 6)"},
};

std::string nice_key(std::string k) {
  if (k.size() > 2 && k.compare(k.size() - 2, 2, "_s") == 0) k.resize(k.size() - 2);
  std::replace(k.begin(), k.end(), '_', ' ');
  return k;
}

}  // namespace

// More than one GPU: the strategy, why it was chosen, and each collective's time (exposed vs overlapped).
void App::draw_parallel() {
  const json& p = jat(result_, "parallel");
  if (!p.is_object()) return;
  mark("parallel");
  ImGui::TextColored(
      style::kAccent,
      "%s on %d GPUs (%d per node x %d nodes): step %s s = compute %s + exposed communication %s",
      jstr(p, "strategy").c_str(), static_cast<int>(jnum(result_, "gpus")),
      static_cast<int>(jnum(p, "gpus_per_node")), static_cast<int>(jnum(p, "nodes")),
      plot::fmt(jnum(result_, "step_time_s")).c_str(), plot::fmt(jnum(p, "compute_s")).c_str(),
      plot::fmt(jnum(p, "communication_exposed_s")).c_str());
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
  const float fh = ImGui::GetFontSize();
  const bool fits =
      jnum(result_, "batch_size", 0.0) > 0 && jstr(result_, "memory_state", "fits") != "does_not_fit";
  if (ImGui::GetContentRegionAvail().x > fh * 44) {
    if (ImGui::BeginTable("row2", 2, ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("left", ImGuiTableColumnFlags_WidthStretch, 1.35f);
      ImGui::TableSetupColumn("right", ImGuiTableColumnFlags_WidthStretch, 1.0f);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      draw_memory();
      ImGui::Spacing();
      ImGui::Spacing();
      if (fits && !result_.contains("parallel")) draw_throughput_plot();
      if (result_.contains("parallel"))
        ImGui::TextDisabled("The batch sweep and the GPU x provider table cover one GPU for now.");
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
    if (fits && !result_.contains("parallel")) draw_throughput_plot();
  }
  ImGui::Spacing();
  draw_scaling();  // app_scaling.cpp
  ImGui::Spacing();
  draw_compare();
  ImGui::Spacing();
  draw_json();
}

void App::draw_headline() {
  mark("headline");
  const json& r = result_;
  const float fh = ImGui::GetFontSize();
  const float avail = ImGui::GetContentRegionAvail().x;
  const int per_row = avail > fh * 52 ? 5 : avail > fh * 30 ? 3 : 2;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float w = (avail - gap * static_cast<float>(per_row - 1)) / static_cast<float>(per_row);
  const ImGuiStyle& st = ImGui::GetStyle();
  const float big_line =
      style::big_font() != nullptr ? style::big_font()->FontSize * ImGui::GetIO().FontGlobalScale : fh * 1.6f;
  const float h =
      ImGui::GetTextLineHeight() * 4 + big_line + st.ItemSpacing.y * 4 + st.WindowPadding.y * 2 + 2;
  std::vector<CardSpec> specs;
  const json& gpu = jat(r, "gpu");
  const json& in = jat(r, "inputs");
  const double maxb = jnum(r, "max_batch_size");
  const double batch = jnum(r, "batch_size");
  // a batch that does not fit has no time or cost to show (the memory card says why)
  const bool fits = batch > 0 && jstr(r, "memory_state", "fits") != "does_not_fit";
  {
    std::string sub1 = maxb > 0 ? "of up to " + plot::fmt_int(jnum(r, "memory_seq_len")) + " tokens each"
                                : "even 1 sample does not fit";
    std::string sub2;
    if (fits && batch != maxb)
      sub2 = "running batch " + plot::fmt_int(batch) + (batch > maxb ? ": does NOT fit" : "");
    // the longest padded sequence that fits at batch 1 (the core's max_seq_len_batch1)
    const double max_ctx = jnum(r, "max_seq_len_batch1");
    const std::string sub3 =
        max_ctx > 0 ? "longest context: " + plot::fmt_int(max_ctx) + " tokens" : "no context length fits";
    specs.push_back(make_card(
        "c_batch", "Max batch size", maxb > 0 ? plot::fmt_int(maxb) : "none",
        maxb <= 0   ? ""
        : maxb == 1 ? "sample"
                    : "samples",
        {sub1, sub2, sub3},
        "The largest batch whose peak memory fits in the GPU's usable memory (first-principles memory "
        "model). Longest context: the longest padded sequence whose step fits at batch 1.",
        maxb > 0 ? style::kAccent : style::kBad));
  }
  {
    const json& mem = jat(r, "memory_gib");
    const json& mm = jat(r, "memory_model");
    // paged optimizer states that do not fit live in host RAM (paged_out_gib), not in the GPU's memory
    const double paged = jnum(r, "paged_out_gib");
    double used = jnum(mem, "total") - paged, usable = jnum(mm, "usable_gib");
    // The core's state: fits (green), tight (above 92% of usable: amber), does not fit (red, needed vs
    // available — at batch 1 when not even one sample fits).
    const std::string state = jstr(r, "memory_state", used <= usable ? "fits" : "does_not_fit");
    const bool no_fit = state == "does_not_fit";
    const std::string title = no_fit             ? "Does not fit"
                              : state == "tight" ? "Peak memory (tight)"
                                                 : "Peak memory";
    const std::string sub =
        no_fit ? "vs " + plot::fmt(usable) + " GiB usable" + std::string(maxb > 0 ? "" : " (batch 1)")
               : "of " + plot::fmt(usable) + " GiB usable (" +
                     plot::fmt_int(jnum(r, "memory_fraction") * 100) + "%)";
    // the range from the stack's memory uncertainty (memory_range_gib)
    const json& range = jat(r, "memory_range_gib");
    const std::string range_line = range.is_object() ? "range " + plot::fmt(jnum(range, "low")) + " to " +
                                                           plot::fmt(jnum(range, "high")) + " GiB"
                                                     : std::string();
    specs.push_back(make_card(
        "c_mem", title.c_str(), plot::fmt(used), "GiB",
        {sub, paged > 0 ? "+ " + plot::fmt(paged) + " GiB of optimizer states paged to host RAM" : range_line,
         "on " + jstr(gpu, "name", "the GPU") + " (" + plot::fmt(jnum(gpu, "memory_gib")) + " GiB)"},
        "Peak memory of one training step at the batch size shown, against what the GPU lets a process "
        "allocate. Tight: above 92% of the usable memory, where allocator fragmentation or a longer batch "
        "can run out of memory.",
        no_fit             ? style::kBad
        : state == "tight" ? style::kWarn
                           : style::kGood));
  }
  // the numbers that use the step time carry the "calibrated" badge when a calibration is in use
  const YourCalibration* cal = jflag(r, "calibrated", false) ? calibration_in_use() : nullptr;
  const Badge badge = cal != nullptr ? calibration_badge(*cal) : Badge{};
  const Badge* cal_badge = cal != nullptr ? &badge : nullptr;
  if (fits) {
    double q = jnum(r, "throughput_queries_per_s"), lo = q, hi = q;
    range_of(r, "throughput_queries_per_s_range", &lo, &hi);
    const json& stack = jat(r, "stack");
    const std::string stack_version = jstr(stack, "version");
    // calibrated: the spec-sheet figure beside it ("spec sheet 4.05 -> 2.48 calibrated")
    std::string third = "stack " + jstr(stack, "id");
    if (cal != nullptr)
      for (const auto& row : jat(calibration_comparison_, "rows"))
        if (jstr(row, "metric") == "throughput_queries_per_s" && jat(row, "a").is_number())
          third = "spec sheet " + plot::fmt(jnum(row, "a")) + " -> " + plot::fmt(q) + " calibrated";
    specs.push_back(make_card(
        "c_tp", "Throughput", plot::fmt(q), "queries/s",
        {plot::fmt(jnum(r, "throughput_tokens_per_s")) + " tokens/s",
         "range " + plot::fmt(lo) + " to " + plot::fmt(hi) + " queries/s", third},
        "Samples (queries) processed per second at this batch size, with the model's uncertainty range.\n"
        "Software stack: " +
            jstr(stack, "name") + (stack_version.empty() ? std::string() : "\nVersions: " + stack_version),
        style::kAccent, cal_badge));
    const double epochs = jnum(in, "epochs");
    specs.push_back(make_card(
        "c_time", "Training time", plot::fmt_hours(jnum(r, "time_hours")), "",
        {plot::fmt_int(jnum(in, "queries")) + " queries",
         "x " + plot::fmt_compact(epochs) + (epochs == 1 ? " epoch" : " epochs") + ", " +
             (jnum(r, "gpus") > 1 ? plot::fmt_int(jnum(r, "gpus")) + " GPUs" : std::string("one GPU"))},
        "Queries x epochs / throughput.", style::kAccent, cal_badge));
    if (r.contains("cost_usd") && r["cost_usd"].is_number()) {
      double c = jnum(r, "cost_usd"), clo = c, chi = c;
      range_of(r, "cost_usd_range", &clo, &chi);
      const json& price = jat(r, "price");
      std::string line =
          jstr(price, "provider") + ", " + plot::fmt_usd(jnum(price, "usd_per_gpu_hour")) + "/GPU-h";
      if (jstr(price, "kind") == "spot") line += " spot";
      if (jflag(price, "stale", false)) line += " (stale)";
      specs.push_back(make_card(
          "c_cost", "Cost", plot::fmt_usd(c), "",
          {line, "range " + plot::fmt_usd(clo) + " to " + plot::fmt_usd(chi)},
          "Training time x price per GPU-hour" +
              (jstr(price, "date").empty() ? std::string() : " (price dated " + jstr(price, "date") + ")") +
              "; range from the throughput range.",
          style::kGood, cal_badge));
    } else {
      specs.push_back(make_card("c_cost", "Cost", "no price", "",
                                {"no dated offer for this GPU", "set \"my price\" under GPU and price"},
                                "No dated price for this GPU in the database.", style::kWarn));
    }
  }
  // one height for all cards: the tallest one's, so that no line is cut off
  float card_h = h;
  for (const auto& c : specs) card_h = std::max(card_h, card_height(c, w, big_line));
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const CardSpec& c = specs[i];
    card(c.id.c_str(), w, card_h, c.title.c_str(), c.value, c.unit.c_str(), c.subs, c.tooltip, c.color,
         &cards_, c.has_badge ? &c.badge : nullptr);
    if ((i + 1) % static_cast<std::size_t>(per_row) != 0 && i + 1 < specs.size()) ImGui::SameLine();
  }
  {
    // the software stack the numbers are for, with its versions (the estimate's "stack")
    const json& stack = jat(r, "stack");
    const std::string version = jstr(stack, "version");
    const std::string line =
        "Software stack: " + jstr(stack, "name", jstr(stack, "id")) + " [" + jstr(stack, "id") + "]" +
        (version.empty() ? std::string("; versions not recorded") : "; versions: " + version);
    muted_text_wrapped(line);
    cards_["stack"] = {line};
  }

  // warnings from the core, always visible
  const json& warnings = jat(r, "warnings");
  if (warnings.is_array() && !warnings.empty()) {
    mark("warnings");
    ImGui::PushStyleColor(ImGuiCol_ChildBg, style::kWarnBg);
    float hh = fh * 0.8f;
    const float wrap = ImGui::GetContentRegionAvail().x - fh * 1.6f;
    for (const auto& wmsg : warnings)
      hh += ImGui::CalcTextSize(("! " + wmsg.get<std::string>()).c_str(), nullptr, false, wrap).y + 4;
    ImGui::BeginChild("warnings", ImVec2(0, hh), false,
                      ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_NoScrollbar);
    ImGui::PushTextWrapPos(wrap);
    for (const auto& wmsg : warnings) ImGui::TextWrapped("! %s", wmsg.get<std::string>().c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  const json& defaults = jat(r, "defaults_applied");
  if (defaults.is_array() && !defaults.empty()) {
    std::string title = "Defaults applied (" + std::to_string(defaults.size()) + ")";
    if (ImGui::TreeNode("defaults", "%s", title.c_str())) {
      for (const auto& d : defaults) ImGui::BulletText("%s", d.get<std::string>().c_str());
      ImGui::TreePop();
    }
    tip("Options you did not set and the values the core chose for them");
  }
}

void App::draw_memory() {
  mark("memory");
  const json& mem = jat(result_, "memory_gib");
  const json& mm = jat(result_, "memory_model");
  const double batch = jnum(result_, "batch_size");
  std::string title = batch > 0 ? "Memory at batch " + plot::fmt_int(batch) : "Memory at batch 1";
  section_title(title.c_str(),
                "Every component of the peak memory of one step, in GiB, against the GPU's usable memory");
  std::vector<plot::Segment> segs;
  std::set<std::string> known;
  int ci = 0;
  // A phase peak (stack profile peak_model "phases"): the bar stacks what exists at the peak moment, which
  // sums to the peak; the sizes of the others are in the tooltip.
  const json& at_peak = jat(mem, "at_peak");
  const json& parts = at_peak.is_object() ? at_peak : mem;
  for (const auto& m : kMem) {
    known.insert(m.key);
    if (parts.contains(m.key) && parts[m.key].is_number()) {
      double v = parts[m.key].get<double>();
      // paged optimizer states: only what stays on the GPU is in the bar (the rest is in host RAM)
      if (std::string(m.key) == "optimizer_states") v = std::max(0.0, v - jnum(result_, "paged_out_gib"));
      segs.push_back(plot::Segment{m.label, v, plot::color(ci, 0.9f), m.tip});
    }
    ++ci;
  }
  for (auto it = parts.begin(); it != parts.end(); ++it)
    if (it.key() != "total" && !known.count(it.key()) && it->is_number())
      segs.push_back(plot::Segment{nice_key(it.key()), it->get<double>(), plot::color(ci++, 0.9f), ""});
  plot::stacked_bar("mem", 0, segs, jnum(mm, "usable_gib"), "GiB", "usable");
  const json& ph = jat(mem, "phases");
  if (ph.is_object()) {
    const std::string at = jstr(mem, "peak_phase");
    auto star = [&](const char* k) { return at == k ? " (peak)" : ""; };
    ImGui::TextDisabled("end of forward + loss %s%s, start of backward %s%s, end of backward %s%s GiB",
                        plot::fmt(jnum(ph, "forward_loss")).c_str(), star("forward_loss"),
                        plot::fmt(jnum(ph, "backward_start")).c_str(), star("backward_start"),
                        plot::fmt(jnum(ph, "backward_end")).c_str(), star("backward_end"));
    if (jnum(mem, "optimizer_step_temp") > 0)
      ImGui::TextDisabled("optimizer step %s%s GiB", plot::fmt(jnum(ph, "optimizer_step")).c_str(),
                          star("optimizer_step"));
    tip("The peak of a step is the largest of its moments: gradients exist only after the forward (the "
        "optimizer frees them with zero_grad(set_to_none=True)), the loss's logits are freed before any "
        "layer is recomputed, and a foreach AdamW's temporary exists only at the step. The bar shows what "
        "exists at the peak moment.");
  } else if (jstr(mem, "peak_phase") == "optimizer_step") {
    muted_text_wrapped(
        "peak at the optimizer step: foreach AdamW's temporary beside every gradient (the bar); "
        "activations and logits are freed by then");
  }
  if (mm.contains("fixed_gib") && mm.contains("per_sample_gib"))
    ImGui::TextDisabled("fixed %s GiB + %s GiB per sample", plot::fmt(jnum(mm, "fixed_gib")).c_str(),
                        plot::fmt(jnum(mm, "per_sample_gib")).c_str());
  if (mm.contains("note") && mm["note"].is_string()) tip(mm["note"].get<std::string>().c_str());
}

void App::draw_step_time() {
  mark("step_time");
  const json& r = result_;
  std::string title = "Step time: " + plot::fmt(jnum(r, "step_time_s")) + " s per step";
  const json& sm = jat(r, "step_model");
  section_title(title.c_str(),
                "Time of one optimizer step (forward, recompute, backward, optimizer) at this batch size");
  calibrated_badge("step_time");
  if (sm.is_object() && sm.contains("name")) {
    std::string m = "model: " + jstr(sm, "name");
    if (sm.contains("range_fraction") && sm["range_fraction"].is_number())
      m += ", +/-" + plot::fmt(100.0 * sm["range_fraction"].get<double>(), 2) + "%";
    ImGui::TextDisabled("(%s)", m.c_str());  // its own line: beside the title it was cut off
    if (sm.contains("note") && sm["note"].is_string()) tip(sm["note"].get<std::string>().c_str());
  }
  const std::string dominant = jstr(sm, "dominant_uncertainty");
  if (!dominant.empty()) {
    muted_text_wrapped("uncertainty mostly from: " + dominant);
  }
  // every "<name>_s" object of numbers is a breakdown: known ones first, in the paper's order
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& b : kBreakdowns)
    if (r.contains(b.key) && r[b.key].is_object()) found.emplace_back(b.key, b.title);
  for (auto it = r.begin(); it != r.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() > 2 && k.compare(k.size() - 2, 2, "_s") == 0 && it->is_object() && k != "step_time_s" &&
        std::none_of(found.begin(), found.end(), [&](const auto& f) { return f.first == k; }))
      found.emplace_back(k, "By " + nice_key(k));
  }
  if (found.empty()) {
    ImGui::TextDisabled("The step model gives no breakdown for this configuration.");
    return;
  }
  int ci = 0;
  for (const auto& [key, t] : found) {
    std::vector<plot::Segment> items;
    for (auto it = r[key].begin(); it != r[key].end(); ++it)
      if (it->is_number() && it->get<double>() > 0)
        items.push_back(plot::Segment{nice_key(it.key()), it->get<double>(), plot::color(ci++), ""});
    if (items.empty()) continue;
    ImGui::TextDisabled("%s", t.c_str());
    plot::bar_list(key.c_str(), 0, items, "s");
  }
}

void App::draw_throughput_plot() {
  mark("throughput_plot");
  const float fh = ImGui::GetFontSize();
  section_title(
      "Throughput vs batch size",
      "Predicted throughput for every batch size up to beyond the maximum (faded: does not fit). "
      "Shaded: the model's uncertainty range. Points: measurements, when the GPU has them.\n\n"
      "Small steps in the curve are real, not noise: wave quantization. A GEMM is cut into tiles "
      "that run on the GPU's SMs in whole waves, so a batch whose tiles need one more (partly empty) "
      "wave takes nearly a full wave longer and the throughput drops a little before it climbs "
      "again (the step model's wave_efficiency, core/predict/src/throughput.cpp). Batches that fill the last "
      "wave are the efficient ones.");
  calibrated_badge("throughput_plot");
  ImGui::SameLine(0, fh * 1.5f);
  ImGui::Checkbox("tokens/s", &plot_tokens_);
  tip("Show tokens per second instead of queries (samples) per second");
  if (sweep_.points.empty()) {
    ImGui::TextDisabled("%s", sweep_.error.empty() ? "no points" : sweep_.error.c_str());
    return;
  }
  plot::Series model;
  model.name = jstr(jat(result_, "step_model"), "name", "model");
  model.color = plot::color(0);
  model.unit = plot_tokens_ ? "tokens/s" : "queries/s";
  double ymax = 0, xmax = 1;
  for (const auto& p : sweep_.points) {
    double scale = plot_tokens_ && p.qps > 0 ? p.tokens_per_s / p.qps : 1.0;
    model.x.push_back(p.batch);
    model.y.push_back(p.qps * scale);
    model.y_lo.push_back(p.qps_low * scale);
    model.y_hi.push_back(p.qps_high * scale);
    model.dim.push_back(p.fits ? 0 : 1);
    ymax = std::max(ymax, p.qps_high * scale);
    xmax = std::max(xmax, p.batch);
  }
  std::vector<plot::Series> series{model};
  // measured points: the paper's A40 sweeps for the same model and dataset (queries/s)
  const std::string gpu = effective("gpu"), model_id = effective("model"), dataset = effective("dataset");
  if (!plot_tokens_ && gpu == "a40") {
    const bool dense = effective("moe") == "dense";
    for (const auto& sw : paper::a40_sweeps()) {
      if (model_id != sw.model || dataset != sw.dataset) continue;
      plot::Series m;
      m.name = std::string("measured, paper A40 (") + (dense ? "dense" : "sparse") + ")";
      m.color = plot::color(1);
      m.line = false;
      m.markers = true;
      m.marker_radius = 4.5f;
      m.unit = "queries/s";
      for (const auto& p : sw.points) {
        if ((p.sparsity >= 0.99) != dense) continue;
        m.x.push_back(p.batch);
        m.y.push_back(p.throughput);
        ymax = std::max(ymax, p.throughput);
        xmax = std::max(xmax, p.batch);
      }
      if (!m.x.empty()) series.push_back(m);
    }
  }
  plot::Axis xa{"batch size (samples)", 1, xmax, xmax > 64, true};
  if (!xa.log) xa.lo = 0;
  plot::Axis ya{plot_tokens_ ? "tokens/s" : "queries/s", 0, ymax * 1.12, false, false};
  std::vector<plot::VLine> vl;
  if (sweep_.max_batch > 0)
    vl.push_back(plot::VLine{sweep_.max_batch, "max batch " + plot::fmt_int(sweep_.max_batch),
                             IM_COL32(255, 110, 110, 255)});
  const double b = jnum(result_, "batch_size");
  if (b > 0 && b != sweep_.max_batch)
    vl.push_back(plot::VLine{b, "batch " + plot::fmt_int(b), IM_COL32(200, 200, 200, 255)});
  plot::line_plot("tp", ImVec2(0, fh * 16), xa, ya, series, vl);
  // say what the wiggles are where they occur: a throughput that drops as the batch grows (a real step)
  int drops = 0;
  for (std::size_t i = 1; i < sweep_.points.size(); ++i)
    if (sweep_.points[i].fits && sweep_.points[i].qps < sweep_.points[i - 1].qps * 0.999) ++drops;
  if (drops > 0) {
    muted_text_wrapped(
        "Steps: GEMM wave quantization (tiles fill the SMs in whole waves; a batch that needs one more wave "
        "is briefly slower), real in measurements too. Hover the title for more.");
    cards_["throughput.steps"] = {std::to_string(drops)};
  }
}

void App::draw_compare() {
  mark("compare");
  const float fh = ImGui::GetFontSize();
  section_title("Every GPU x provider for this job",
                "The same job on every GPU of the database, with each dated price offer. "
                "Click a GPU to select it. Sort by clicking a column header.");
  ImGui::SameLine();
  ImGui::Checkbox("fits only", &compare_fits_only_);
  tip("Hide GPUs where the job does not fit");
  ImGui::SameLine();
  ImGui::Checkbox("spot prices", &compare_spot_);
  tip("Include spot (interruptible) offers");
  const int cheapest = cheapest_row(compare_, compare_spot_);
  if (cheapest >= 0) {
    const auto& c = compare_[static_cast<std::size_t>(cheapest)];
    ImGui::TextColored(style::kGood, "Cheapest: %s on %s%s, %s (%s)", c.gpu_name.c_str(), c.provider.c_str(),
                       c.spot ? " spot" : "", plot::fmt_usd(c.cost).c_str(),
                       plot::fmt_hours(c.hours).c_str());
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersOuterH |
                                ImGuiTableFlags_Hideable;
  // one time unit for the whole Time column
  double max_hours = 0;
  for (const auto& c : compare_)
    if (c.fits && std::isfinite(c.hours)) max_hours = std::max(max_hours, c.hours);
  const std::string time_unit = plot::time_unit_for(max_hours);
  const std::string time_header = "Time (" + time_unit + ")";
  if (!ImGui::BeginTable("compare", 8, flags, ImVec2(0, fh * 22))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  // numbers, providers and costs take their content's width (never cut off); the GPU name gets the rest (its
  // tooltip has the whole name)
  ImGui::TableSetupColumn("GPU", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("Memory");
  ImGui::TableSetupColumn("Max batch");
  ImGui::TableSetupColumn("Queries/s");
  ImGui::TableSetupColumn(time_header.c_str());
  ImGui::TableSetupColumn("Provider");
  ImGui::TableSetupColumn("$/GPU-h");
  ImGui::TableSetupColumn("Cost", ImGuiTableColumnFlags_DefaultSort);
  ImGui::TableHeadersRow();

  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
    if (specs->SpecsDirty || compare_sort_dirty_ || compare_order_.size() != compare_.size()) {
      compare_order_.resize(compare_.size());
      for (std::size_t i = 0; i < compare_.size(); ++i) compare_order_[i] = static_cast<int>(i);
      const int col = specs->SpecsCount > 0 ? specs->Specs[0].ColumnIndex : 7;
      const bool asc =
          specs->SpecsCount == 0 || specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
      auto key = [&](const CompareRow& c) -> double {
        switch (col) {
          case 1:
            return c.memory_gib;
          case 2:
            return c.max_batch;
          case 3:
            return c.fits ? c.qps : -1;
          case 4:
            return c.fits ? c.hours : 1e300;
          case 6:
            return c.has_price ? c.usd_per_hour : 1e300;
          case 7:
            return c.fits && c.has_price ? c.cost : c.fits ? 1e299 : 1e300;
          default:
            return 0;
        }
      };
      std::stable_sort(compare_order_.begin(), compare_order_.end(), [&](int a, int b) {
        const auto& x = compare_[static_cast<std::size_t>(a)];
        const auto& y = compare_[static_cast<std::size_t>(b)];
        if (col == 0) return asc ? x.gpu_name < y.gpu_name : x.gpu_name > y.gpu_name;
        if (col == 5) return asc ? x.provider < y.provider : x.provider > y.provider;
        // cost: the core's order (the one price rule; GPUs the stack does not run on after the usable ones)
        if (col == 7) return asc ? compare_row_before(x, y) : compare_row_before(y, x);
        double kx = key(x), ky = key(y);
        return asc ? kx < ky : kx > ky;
      });
      specs->SpecsDirty = false;
      compare_sort_dirty_ = false;
    }
  }
  const std::string selected = effective("gpu");
  for (int idx : compare_order_) {
    const auto& c = compare_[static_cast<std::size_t>(idx)];
    if (compare_fits_only_ && !c.fits) continue;
    if (!compare_spot_ && c.spot) continue;
    ImGui::PushID(idx);
    ImGui::TableNextRow();
    if (idx == cheapest)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(40, 120, 70, 150));
    else if (c.gpu_id == selected)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(40, 80, 130, 110));
    const ImVec4 fade = ImGui::GetStyle().Colors[ImGuiCol_TextDisabled];
    ImGui::TableNextColumn();
    if (ImGui::Selectable(c.gpu_name.c_str(), false,
                          ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
      set_key("gpu", c.gpu_id);
    const bool hovered = ImGui::IsItemHovered();
    if (c.calibrated) {
      const YourCalibration* yc = nullptr;
      for (const auto& y : calibrations_)
        if (y.in_use() && y.gpu == c.gpu_id) yc = &y;
      if (yc != nullptr) {
        const Badge bd = calibration_badge(*yc);
        ImGui::SameLine();
        ImGui::TextColored(bd.color, "[%s]", bd.text.c_str());
        if (ImGui::IsItemHovered()) tip(bd.tooltip.c_str());
        cards_["compare.calibrated"].push_back(c.gpu_id + ": " + bd.text);
      }
    }
    if (!c.stack_warning.empty()) {
      ImGui::SameLine();
      ImGui::TextColored(style::kWarn, "stack n/a");
    }
    if (hovered) {
      ImGui::BeginTooltip();
      ImGui::Text("%s (%s): click to select", c.gpu_name.c_str(), c.gpu_id.c_str());
      if (!c.stack_warning.empty()) {
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
        ImGui::TextColored(style::kWarn, "%s", c.stack_warning.c_str());
        ImGui::TextUnformatted("Not considered for \"cheapest\".");
        ImGui::PopTextWrapPos();
      }
      if (!c.error.empty()) ImGui::TextUnformatted(c.error.c_str());
      if (c.has_price)
        ImGui::Text("cost range %s to %s%s", plot::fmt_usd(c.cost_low).c_str(),
                    plot::fmt_usd(c.cost_high).c_str(),
                    c.date.empty() ? "" : (", price dated " + c.date).c_str());
      ImGui::EndTooltip();
    }
    ImGui::TableNextColumn();
    ImGui::Text("%s GiB", plot::fmt(c.memory_gib).c_str());
    ImGui::TableNextColumn();
    if (!c.error.empty())
      ImGui::TextColored(style::kBad, "error");
    else if (c.max_batch <= 0)
      ImGui::TextColored(style::kBad, "does not fit");
    else
      ImGui::TextColored(c.fits ? ImGui::GetStyle().Colors[ImGuiCol_Text] : style::kBad, "%s",
                         plot::fmt_int(c.max_batch).c_str());
    ImGui::TableNextColumn();
    if (c.fits)
      ImGui::TextUnformatted(plot::fmt(c.qps).c_str());
    else
      ImGui::TextColored(fade, "-");
    ImGui::TableNextColumn();
    if (c.fits) {
      const std::string t = plot::fmt_hours_as(c.hours, time_unit);
      ImGui::TextUnformatted(t.c_str());
      auto& shown = cards_["compare.time"];
      if (shown.empty()) shown.push_back(time_header);
      if (shown.size() < 40) shown.push_back(t);
    } else
      ImGui::TextColored(fade, "-");
    ImGui::TableNextColumn();
    if (c.has_price) {
      // what tells two offers of one provider apart: the instance's GPU count
      ImGui::TextUnformatted((c.provider + (c.spot ? " (spot)" : "") +
                              (c.gpu_count > 1 ? " x" + std::to_string(c.gpu_count) : std::string()))
                                 .c_str());
      if (ImGui::IsItemHovered() && !c.instance_type.empty())
        ImGui::SetTooltip("%s%s%s", c.instance_type.c_str(), c.region.empty() ? "" : ", ", c.region.c_str());
      if (c.stale || c.date.empty()) {
        ImGui::SameLine();
        ImGui::TextColored(style::kWarn, c.stale ? "stale" : "undated");
      }
    } else {
      ImGui::TextColored(fade, c.fits ? "no price" : "-");
    }
    ImGui::TableNextColumn();
    if (c.has_price) ImGui::TextUnformatted(plot::fmt_usd(c.usd_per_hour).c_str());
    ImGui::TableNextColumn();
    if (c.has_price) {
      std::string s = plot::fmt_usd(c.cost);
      if (c.cost_high > c.cost_low)
        s += "  (" + plot::fmt_usd(c.cost_low) + "-" + plot::fmt_usd(c.cost_high) + ")";
      if (idx == cheapest)
        ImGui::TextColored(style::kGood, "%s", s.c_str());  // the green row; "Cheapest: ..." above names it
      else
        ImGui::TextUnformatted(s.c_str());
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
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

}  // namespace ftcost::web

namespace ftcost::web {

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

void App::pin_current() {
  pinned_ = true;
  pinned_request_ = state_.request;
  pinned_result_ = result_;
  comparison_ = compare_jobs(pinned_request_, pinned_result_, state_.request, result_);
  write_hash();  // the link carries the pinned job (pin=)
}

// Pin this job, change the inputs, and see both side by side: the options that differ, memory, batch, time
// and cost with the difference, and whether each used a calibration (the same table as `ftcost estimate
// ... --vs KEY=VALUE`).
void App::draw_pinned() {
  if (!pinned_) {
    if (ImGui::SmallButton("Pin this job to compare")) pin_current();
    anchor("pin");
    tip("Keep this job's estimate, change the inputs, and see both side by side (memory, time, cost). The "
        "CLI prints the same comparison: ftcost estimate ... --vs KEY=VALUE[,KEY=VALUE]");
    return;
  }
  mark("pinned");
  const json& cmp = comparison_;
  section_title("Pinned job (A) vs this job (B)",
                "A is the job you pinned, B the current inputs. Calibrated: the step time uses your GPU's "
                "measured kernel speeds; spec-only: the spec sheet and the stack profile.");
  ImGui::SameLine();
  if (ImGui::SmallButton("unpin")) {
    pinned_ = false;
    comparison_ = json();
    write_hash();
    return;
  }
  anchor("unpin");
  ImGui::SameLine();
  if (ImGui::SmallButton("pin this instead")) pin_current();
  anchor("repin");
  std::string diff;
  for (const auto& d : jat(cmp, "inputs"))
    diff += (diff.empty() ? "" : "; ") + jstr(d, "key") + ": " + jstr(d, "a") + " -> " + jstr(d, "b");
  muted_text_wrapped("changed: " + (diff.empty() ? std::string("nothing yet (change an input)") : diff));
  draw_comparison_table("pinned", cmp);
  ImGui::Spacing();
}

// A compare_jobs table: each side's badge (calibrated / spec-only), every metric, B - A and B / A (green
// where B is better).
void App::draw_comparison_table(const char* id, const json& cmp) {
  const json& a = jat(cmp, "a");
  const json& b = jat(cmp, "b");
  auto head = [](const json& s, const char* name) {
    if (s.contains("error")) return std::string(name) + ": no estimate";
    const bool cal = jflag(s, "calibrated", false);
    return std::string(name) + ": " + jstr(s, "model") + " / " + jstr(s, "gpu") + " / " + jstr(s, "method") +
           (cal ? " [calibrated]" : " [spec-only]");
  };
  if (begin_table(id, {"", head(a, "A").c_str(), head(b, "B").c_str(), "B - A", "B / A"})) {
    for (const auto& r : jat(cmp, "rows")) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%s (%s)", jstr(r, "label").c_str(), jstr(r, "unit").c_str());
      for (const char* k : {"a", "b", "difference"}) {
        ImGui::TableNextColumn();
        const json& v = jat(r, k);
        if (!v.is_number()) {
          ImGui::TextUnformatted("-");
        } else {
          const double x = v.get<double>();
          ImGui::TextUnformatted(
              (x == std::floor(x) && std::fabs(x) < 1e9 ? plot::fmt_int(x) : plot::fmt(x)).c_str());
        }
      }
      ImGui::TableNextColumn();
      const json& ratio = jat(r, "ratio");
      if (ratio.is_number()) {
        const double x = ratio.get<double>();
        const bool lower_is_better = jstr(r, "metric") != "throughput_queries_per_s" &&
                                     jstr(r, "metric") != "max_batch_size" &&
                                     jstr(r, "metric") != "batch_size";
        const bool better = lower_is_better ? x < 1 : x > 1;
        ImGui::TextColored(x == 1   ? ImGui::GetStyle().Colors[ImGuiCol_Text]
                           : better ? style::kGood
                                    : style::kWarn,
                           "%sx", plot::fmt(x).c_str());
      } else {
        ImGui::TextDisabled("-");
      }
    }
    ImGui::EndTable();
  }
}

// Your calibration (or run) in use: the spec-only estimate next to the calibrated one.
void App::draw_calibrated_vs_spec() {
  if (!calibration_comparison_.is_object()) return;
  mark("calibrated_vs_spec");
  section_title(
      "Spec-only (A) vs calibrated (B)",
      "A: the GPU's spec sheet and the stack profile. B: the same job with your calibration (or your "
      "recorded run) in use. Turn it off on the Calibrations page.");
  draw_comparison_table("calvsspec", calibration_comparison_);
  ImGui::Spacing();
}

// The one "calibrated" badge after a panel title or a number (what is drawn: cards_["badge.<what>"]).
void App::calibrated_badge(const char* what) {
  if (!jflag(result_, "calibrated", false)) return;
  const YourCalibration* c = calibration_in_use();
  if (c == nullptr) return;
  const Badge b = calibration_badge(*c);
  ImGui::SameLine();
  ImGui::TextColored(b.color, "[%s]", b.text.c_str());
  tip(b.tooltip.c_str());
  cards_[std::string("badge.") + what] = {b.text};
}

}  // namespace ftcost::web
