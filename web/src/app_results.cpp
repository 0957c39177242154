// The results: headline numbers, warnings, the memory breakdown against the GPU's capacity, step-time
// breakdowns, throughput against batch size, and every GPU x provider for the same job. Everything is
// read from the core's estimate JSON, so new fields of the core show up without changes here.
#include "app.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::web {

namespace {

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

// The memory components, typed: a renamed field of MemoryBreakdown fails to compile here.
struct MemInfo {
  double MemoryBreakdown::*field;
  const char* label;
  const char* tip;
};
constexpr MemInfo kMem[] = {
    {&MemoryBreakdown::weights, "weights",
     "Base model weights as stored: 16-bit, or NF4/int8 with block scales for QLoRA (parts that stay 16-bit "
     "included)."},
    {&MemoryBreakdown::trainable_params, "adapters",
     "Trainable parameters kept apart from the weights (LoRA adapters, fp32)."},
    {&MemoryBreakdown::gradients, "gradients", "Gradients of the trainable parameters."},
    {&MemoryBreakdown::optimizer_states, "optimizer",
     "Optimizer states of the trainable parameters (AdamW: two per parameter)."},
    {&MemoryBreakdown::autocast_copies, "autocast copies",
     "16-bit copies of fp32 trainable weights made by autocast."},
    {&MemoryBreakdown::activations, "activations",
     "Activations saved for the backward pass (with checkpointing: layer inputs + one layer's recompute "
     "peak), MoE routed copies and expert intermediates."},
    {&MemoryBreakdown::logits, "logits + loss",
     "Logits and loss over the vocabulary, often upcast to fp32: large for big vocabularies."},
    {&MemoryBreakdown::dequant_buffers, "dequant buffers", "QLoRA: temporary dequantized weights."},
    {&MemoryBreakdown::dora_weight_norm, "DoRA weight norm",
     "DoRA: the norm of W + s*BA computed every forward, a temporary the size of the largest adapted weight "
     "(QLoRA dequantizes it first)."},
    {&MemoryBreakdown::cuda_context, "CUDA context", "CUDA context and library workspaces (cuBLAS, ...)."},
    {&MemoryBreakdown::allocator_overhead, "allocator",
     "PyTorch caching-allocator fragmentation and reserve."},
    {&MemoryBreakdown::optimizer_step_temp, "step temporaries",
     "Foreach AdamW's temporary at the optimizer step (sqrt of every exp_avg_sq, one state-sized list): it "
     "exists beside every gradient once activations and logits are freed. Fused AdamW and 8-bit optimizers "
     "have none."},
};
// What sharding adds to each rank (more than one GPU).
struct RankInfo {
  double RankMemory::*field;
  const char* label;
  const char* tip;
};
constexpr RankInfo kRankMem[] = {
    {&RankMemory::fp32_grad_partition, "fp32 grad partition",
     "DeepSpeed ZeRO's fp32 gradient partition / FSDP's sharded fp32 gradients."},
    {&RankMemory::gather_buffers, "gather buffers",
     "FSDP unit all-gather and prefetch, ZeRO-3 live parameters."},
    {&RankMemory::bucket_buffers, "bucket buffers", "DDP gradient buckets, ZeRO reduce/all-gather buckets."},
    {&RankMemory::nccl_buffers, "NCCL buffers", "Communicator buffers."},
};

// The breakdown a memory view shows: the one GPU's, or one rank's base components.
const MemoryBreakdown& memory_of(const JobEstimate& e) {
  return e.pe.is_single ? e.pe.single.memory : e.pe.memory.base;
}
// What sharding adds on every rank at every moment (0 on one GPU).
double rank_extras(const JobEstimate& e) {
  if (e.pe.is_single) return 0;
  double x = 0;
  for (const auto& r : kRankMem) x += e.pe.memory.*r.field;
  return x;
}
// Paged optimizer states that do not fit beside the rest (in host RAM, not in the GPU's memory), GiB.
double paged_gib(const JobEstimate& e) {
  const double usable = e.answer.usable_gib * kGiB;
  return (e.pe.is_single ? e.pe.single.memory.paged_out(usable) : e.pe.memory.paged_out(usable)) / kGiB;
}

// "fresh", "stale" or "undated": a table row's price class (estimate.hpp's price_class).
std::string price_class_of(const CompareRow& c) { return price_class(c.date, c.stale); }

// "41,700 tokens/s of data (61,000 computed, padding included)": every place that shows a token rate.
std::string tokens_line(double data_tps, double computed_tps) {
  return plot::fmt(data_tps) + " tokens/s of data (" + plot::fmt(computed_tps) +
         " computed, padding included)";
}

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
  if (!p.is_object() || !has_est_) return;
  mark("parallel");
  const JobAnswer& a = est_.answer;
  ImGui::TextColored(
      style::kAccent,
      "%s on %d GPUs (%d per node x %d nodes): step %s s = compute %s + exposed communication %s",
      a.strategy.c_str(), a.gpus, a.gpus_per_node, a.nodes, plot::fmt(a.step_s).c_str(),
      plot::fmt(est_.pe.compute_s).c_str(), plot::fmt(est_.pe.comm_exposed_s).c_str());
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
  const bool fits = has_est_ && est_.answer.fits;
  // the batch sweep is the one-GPU estimate's (batch_sweep): drawn for a one-GPU job only
  const bool one_gpu = has_est_ && est_.pe.is_single;
  if (ImGui::GetContentRegionAvail().x > fh * 44) {
    if (ImGui::BeginTable("row2", 2, ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("left", ImGuiTableColumnFlags_WidthStretch, 1.35f);
      ImGui::TableSetupColumn("right", ImGuiTableColumnFlags_WidthStretch, 1.0f);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      draw_memory();
      ImGui::Spacing();
      ImGui::Spacing();
      if (fits && one_gpu) draw_throughput_plot();
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
    if (fits && one_gpu) draw_throughput_plot();
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
  if (!has_est_) return;
  const JobEstimate& e = est_;
  const JobAnswer& a = e.answer;
  const Inputs& in = e.job.in;
  const bool multi = a.gpus > 1;
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
  // a batch that does not fit has no time or cost to show (the memory card says why)
  const bool fits = a.fits;
  {
    // the answer to the question asked: the chosen (micro-)batch and why; the largest that fits beside it
    const BatchChoice& bc = a.batch_choice;
    std::vector<std::string> subs;
    if (a.max_batch <= 0)
      subs.push_back(multi ? "even 1 sample per GPU does not fit" : "even 1 sample does not fit");
    else if (a.batch > a.max_batch)
      subs.push_back("batch " + plot::fmt_int(static_cast<double>(a.batch)) + ": does NOT fit (max " +
                     plot::fmt_int(static_cast<double>(a.max_batch)) + ")");
    if (!bc.reason.empty() && a.max_batch > 0) subs.push_back(bc.reason);
    if (bc.largest > a.batch && a.max_batch > 0)
      subs.push_back(
          "largest that fits (upper end of the range): " + plot::fmt_int(static_cast<double>(bc.largest)) +
          (bc.largest_qps > 0 ? ", slower: " + plot::fmt(bc.largest_qps) + " samples/s" : std::string()));
    if (multi && a.max_batch > 0)
      subs.push_back("global batch " + plot::fmt_int(static_cast<double>(a.global_batch)) + " per step (" +
                     plot::fmt_int(static_cast<double>(a.batch)) + " x " + std::to_string(a.grad_accum) +
                     " accumulated x " + std::to_string(e.pe.dp) + " replicas)");
    // the longest padded sequence that fits at batch 1 (per GPU on several)
    subs.push_back(a.max_seq_len > 0 ? "longest context: " + plot::fmt_int(a.max_seq_len) + " tokens" +
                                           (multi ? " per GPU at batch 1" : "")
                                     : "no context length fits");
    const bool ok = a.max_batch > 0 && a.batch > 0 && a.batch <= a.max_batch;
    specs.push_back(make_card(
        "c_batch", multi ? "Batch per GPU" : "Batch size",
        a.batch > 0 ? plot::fmt_int(static_cast<double>(a.batch)) : "none",
        a.batch <= 0   ? ""
        : a.batch == 1 ? "sample"
                       : "samples",
        subs,
        "The batch the time and cost are for" + std::string(multi ? " (the micro-batch on each GPU)" : "") +
            ": by default the fastest whose memory range's upper end fits (--batch fastest); --batch max "
            "takes the largest, --batch N a given one. Largest that fits: " +
            plot::fmt_int(static_cast<double>(a.max_batch)) + " at the memory range's low end, " +
            plot::fmt_int(static_cast<double>(a.max_batch_range_fit)) +
            " at its upper end. Longest context: the longest padded sequence whose step fits at batch 1.",
        ok ? style::kAccent : style::kBad));
  }
  {
    const double paged = paged_gib(e);
    const double used = a.peak_gib - paged, usable = a.usable_gib;
    // The core's state: fits (green), tight (above 92% of usable: amber), does not fit (red, needed vs
    // available — at batch 1 when not even one sample fits).
    const std::string& state = a.memory_state;
    const bool no_fit = state == "does_not_fit";
    const bool may_not = state == "may_not_fit";  // per GPU: the range's upper end is above the usable
    // (the card is narrow: "May not fit per GPU", the peak below it)
    const std::string title = std::string(no_fit             ? "Does not fit"
                                          : may_not          ? "May not fit"
                                          : state == "tight" ? "Peak memory (tight)"
                                                             : "Peak memory") +
                              (multi ? " per GPU" : "");
    const std::string sub =
        no_fit ? "vs " + plot::fmt(usable) + " GiB usable" + std::string(a.max_batch > 0 ? "" : " (batch 1)")
               : "of " + plot::fmt(usable) + " GiB usable (" +
                     plot::fmt_int(usable > 0 ? used / usable * 100 : 0) + "%)";
    // the range from the stack's memory uncertainty (per GPU on several)
    const std::string range_line =
        a.memory_high_gib > a.memory_low_gib
            ? "range " + plot::fmt(a.memory_low_gib) + " to " + plot::fmt(a.memory_high_gib) + " GiB"
            : std::string();
    const std::string on = multi ? "each of " + std::to_string(a.gpus) + " x " + in.gpu.name + " (" +
                                       plot::fmt(in.gpu.memory_gib) + " GiB), " + a.strategy
                                 : "on " + in.gpu.name + " (" + plot::fmt(in.gpu.memory_gib) + " GiB)";
    specs.push_back(make_card(
        "c_mem", title, plot::fmt(used), "GiB",
        {sub, paged > 0 ? "+ " + plot::fmt(paged) + " GiB of optimizer states paged to host RAM" : range_line,
         on},
        "Peak memory of one training step" + std::string(multi ? " on each GPU (one rank)" : "") +
            " at the batch size shown: the largest of the step's moments, not the sum of every component "
            "(the bar below). Against what the GPU lets a process allocate. Tight: above 92% of the usable "
            "memory, where allocator fragmentation or a longer batch can run out of memory. May not fit "
            "(several GPUs): the range's upper end, with what depends on settings ftcost cannot see "
            "(ZeRO-3's "
            "prefetch look-ahead, a third FSDP unit in flight; the warnings name it), exceeds the usable "
            "memory.",
        no_fit                        ? style::kBad
        : may_not || state == "tight" ? style::kWarn
                                      : style::kGood));
  }
  // the numbers that use the step time carry the "calibrated" badge when a calibration is in use
  const YourCalibration* cal = jflag(result_, "calibrated", false) ? calibration_in_use() : nullptr;
  const Badge badge = cal != nullptr ? calibration_badge(*cal) : Badge{};
  const Badge* cal_badge = cal != nullptr ? &badge : nullptr;
  const std::string gpus_text = multi ? std::to_string(a.gpus) + " GPUs (" + std::to_string(a.gpus_per_node) +
                                            " per node x " + std::to_string(a.nodes) + ")"
                                      : std::string("one GPU");
  if (fits) {
    const StackProfile& stack = in.stack;
    // calibrated: the spec-sheet figure beside it ("spec sheet 4.05 -> 2.48 calibrated")
    std::string third = "stack " + stack.id;
    if (cal != nullptr)
      for (const auto& row : jat(calibration_comparison_, "rows"))
        if (jstr(row, "metric") == "throughput_queries_per_s" && jat(row, "a").is_number())
          third = "spec sheet " + plot::fmt(jnum(row, "a")) + " -> " + plot::fmt(a.qps) + " calibrated";
    specs.push_back(make_card(
        "c_tp", "Throughput", plot::fmt(a.qps), "queries/s",
        {tokens_line(a.data_tokens_per_s, a.tokens_per_s),
         a.qps_high > a.qps_low
             ? "range " + plot::fmt(a.qps_low) + " to " + plot::fmt(a.qps_high) + " queries/s"
             : std::string(),
         multi ? "all " + std::to_string(a.gpus) + " GPUs together, " + third : third},
        "Samples (queries) processed per second at this batch size" +
            std::string(multi ? ", by all the job's GPUs" : "") +
            ", with the model's uncertainty range. Tokens of data: the samples' own tokens; computed: the "
            "padded batch the GPUs run (padding included).\nSoftware stack: " +
            stack.display_name + (stack.version.empty() ? std::string() : "\nVersions: " + stack.version),
        style::kAccent, cal_badge));
    const double epochs = in.workload.epochs;
    specs.push_back(make_card(
        "c_time", "Training time", plot::fmt_hours(a.hours), "",
        {plot::fmt_int(in.workload.queries) + " queries",
         "x " + plot::fmt_compact(epochs) + (epochs == 1 ? " epoch" : " epochs") + ", " + gpus_text,
         a.hours_high > a.hours_low
             ? "range " + plot::fmt_hours(a.hours_low) + " to " + plot::fmt_hours(a.hours_high)
             : std::string()},
        "Queries x epochs / throughput (on several GPUs: whole optimizer steps x the step time); range from "
        "the throughput range.",
        style::kAccent, cal_badge));
    if (a.has_price) {
      const PriceChoice& p = a.price;
      const std::string cls = price_class(p);
      std::string line = (p.provider.empty() ? std::string("your price") : p.provider) + ", " +
                         plot::fmt_usd(p.usd_per_hour) + "/GPU-h";
      if (p.spot) line += " spot";
      if (cls != "fresh" && p.basis != "given") line += " (" + cls + ")";
      std::string shape;
      if (multi) shape = "x " + std::to_string(a.gpus) + " GPUs = " + plot::fmt_usd(a.usd_per_hour) + "/h";
      if (p.basis == "per-gpu")
        shape += std::string(shape.empty() ? "" : "; ") + "per-GPU price: no " +
                 std::to_string(a.gpus_per_node) + "-GPU instance is priced";
      specs.push_back(make_card(
          "c_cost", "Cost", plot::fmt_usd(a.cost), "",
          {line, shape,
           a.cost_high > a.cost_low
               ? "range " + plot::fmt_usd(a.cost_low) + " to " + plot::fmt_usd(a.cost_high)
               : std::string()},
          "Training time x price per GPU-hour x GPUs" +
              (p.date.empty() ? std::string(" (undated price)") : " (price dated " + p.date + ")") +
              "; basis " + p.basis +
              " (instance: an instance of the job's GPUs per node; per-gpu: another size's per-GPU price; "
              "given: your price); range from the throughput range.",
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
    // the software stack the numbers are for, with its versions
    const StackProfile& stack = in.stack;
    const std::string line =
        "Software stack: " + (stack.display_name.empty() ? stack.id : stack.display_name) + " [" + stack.id +
        "]" +
        (stack.version.empty() ? std::string("; versions not recorded") : "; versions: " + stack.version);
    muted_text_wrapped(line);
    cards_["stack"] = {line};
  }

  // warnings from the core (already about this shape), always visible
  if (!a.warnings.empty()) {
    mark("warnings");
    ImGui::PushStyleColor(ImGuiCol_ChildBg, style::kWarnBg);
    float hh = fh * 0.8f;
    const float wrap = ImGui::GetContentRegionAvail().x - fh * 1.6f;
    for (const auto& wmsg : a.warnings)
      hh += ImGui::CalcTextSize(("! " + wmsg).c_str(), nullptr, false, wrap).y + 4;
    ImGui::BeginChild("warnings", ImVec2(0, hh), false,
                      ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_NoScrollbar);
    ImGui::PushTextWrapPos(wrap);
    for (const auto& wmsg : a.warnings) ImGui::TextWrapped("! %s", wmsg.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
    cards_["warnings"] = a.warnings;
  }
  const json& defaults = jat(result_, "defaults_applied");
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
  if (!has_est_) return;
  const JobEstimate& e = est_;
  const JobAnswer& a = e.answer;
  const bool multi = a.gpus > 1;
  const MemoryBreakdown& mb = memory_of(e);
  std::string title = (a.batch > 0 ? "Memory at batch " + plot::fmt_int(static_cast<double>(a.batch))
                                   : std::string("Memory at batch 1")) +
                      (multi ? " per GPU (one rank)" : "");
  section_title(title.c_str(),
                "The components present at the step's peak moment, in GiB, against the GPU's usable memory: "
                "their sum is the peak. A component that exists only at another moment (the optimizer "
                "step's temporaries) is in the thin bar under it, not in the peak's bar.");
  // The bar stacks what exists at the peak moment (MemoryBreakdown::at_peak(): its plain sum is the peak);
  // what sharding adds on each rank exists at every moment.
  const MemoryBreakdown at = mb.at_peak();
  const double paged = paged_gib(e);
  std::vector<plot::Segment> segs;
  std::vector<std::string> shown;
  double sum = 0;
  int ci = 0;
  auto add = [&](const char* label, double gib, const char* tip) {
    if (gib > 0) {
      segs.push_back(plot::Segment{label, gib, plot::color(ci, 0.9f), tip});
      shown.push_back(std::string(label) + " " + plot::fmt(gib, 4));
      sum += gib;
    }
    ++ci;
  };
  for (const auto& m : kMem) {
    double v = at.*m.field / kGiB;
    // paged optimizer states: only what stays on the GPU is in the bar (the rest is in host RAM)
    if (m.field == &MemoryBreakdown::optimizer_states) v = std::max(0.0, v - paged);
    add(m.label, v, m.tip);
  }
  if (!e.pe.is_single)
    for (const auto& r : kRankMem) add(r.label, e.pe.memory.*r.field / kGiB, r.tip);
  const double usable = a.usable_gib;
  const MemoryBreakdown::Phases ph = mb.phases();
  const double extras = rank_extras(e);
  const MemoryBreakdown::Moment peak_at = mb.peak_moment();
  // the optimizer step is a moment of its own: drawn apart when it is not the peak and has a temporary
  const bool step_apart = mb.optimizer_step_temp > 0 && peak_at != MemoryBreakdown::Moment::optimizer_step;
  const double step_total = (ph.optimizer_step + extras) / kGiB;
  plot::BarOptions bo;
  bo.total_label = "peak (not the sum)";
  bo.scale_max = std::max({usable * 1.04, sum * 1.02, step_apart ? step_total * 1.02 : 0.0, 1e-9});
  plot::stacked_bar("mem", 0, segs, usable, "GiB", "usable", bo);
  shown.insert(shown.begin(), "peak (not the sum) " + plot::fmt(sum, 4) + " GiB");
  cards_["memory.bar"] = shown;
  if (step_apart) {
    // fixed + every gradient + the step's temporaries (activations and logits are freed by then)
    const double grads = mb.gradients / kGiB, temp = mb.optimizer_step_temp / kGiB;
    const double fixed = step_total - grads - temp;
    std::vector<plot::Segment> step{
        {"fixed (weights, optimizer, context...)", fixed, plot::color(0, 0.35f),
         "Everything that exists at every moment of the step."},
        {"gradients", grads, plot::color(2, 0.9f), "Every gradient exists at the optimizer step."},
        {"step temporaries", temp, plot::color(10, 0.9f), kMem[10].tip}};
    plot::BarOptions so = bo;
    so.total_label = "optimizer step (another moment, not the peak)";
    so.height = 0.7f;
    so.legend = false;
    plot::stacked_bar("mem_step", 0, step, usable, "GiB", "usable", so);
    cards_["memory.optimizer_step"] = {"optimizer step " + plot::fmt(step_total, 4) + " GiB",
                                       "step temporaries " + plot::fmt(temp, 4)};
  }
  if (mb.phased) {
    const std::string at_name = mb.peak_phase();
    auto star = [&](const char* k) { return at_name == k ? " (peak)" : ""; };
    ImGui::TextDisabled("end of forward + loss %s%s, start of backward %s%s, end of backward %s%s GiB",
                        plot::fmt((ph.forward_loss + extras) / kGiB).c_str(), star("forward_loss"),
                        plot::fmt((ph.backward_start + extras) / kGiB).c_str(), star("backward_start"),
                        plot::fmt((ph.backward_end + extras) / kGiB).c_str(), star("backward_end"));
    if (mb.optimizer_step_temp > 0)
      ImGui::TextDisabled("optimizer step %s%s GiB", plot::fmt(step_total).c_str(), star("optimizer_step"));
    tip("The peak of a step is the largest of its moments: gradients exist only after the forward (the "
        "optimizer frees them with zero_grad(set_to_none=True)), the loss's logits are freed before any "
        "layer is recomputed, and a foreach AdamW's temporary exists only at the step. The bar shows what "
        "exists at the peak moment.");
  } else if (peak_at == MemoryBreakdown::Moment::optimizer_step) {
    muted_text_wrapped(
        "peak at the optimizer step: foreach AdamW's temporary beside every gradient (the bar); "
        "activations and logits are freed by then");
  }
  // the one-GPU memory model's line (a rank's memory is not fixed + per sample of the one-GPU model)
  if (e.pe.is_single) {
    const MaxBatch& m = e.pe.single.max_batch;
    ImGui::TextDisabled("fixed %s GiB + %s GiB per sample", plot::fmt(m.fixed_bytes / kGiB).c_str(),
                        plot::fmt(m.per_sample_bytes / kGiB).c_str());
    const json& mm = jat(result_, "memory_model");
    if (mm.contains("note") && mm["note"].is_string()) tip(mm["note"].get<std::string>().c_str());
  }
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
  tip("Show tokens per second instead of queries (samples) per second: tokens of data (the samples' own) "
      "and tokens computed (the padded batch, padding included)");
  if (sweep_.points.empty()) {
    ImGui::TextDisabled("%s", sweep_.error.empty() ? "no points" : sweep_.error.c_str());
    return;
  }
  plot::Series model;
  model.name = jstr(jat(result_, "step_model"), "name", "model");
  model.color = plot::color(0);
  model.unit = plot_tokens_ ? "tokens/s of data" : "queries/s";
  // tokens of data per sample do not depend on the batch (the samples' own lengths); the tokens computed
  // do (a larger batch is padded to a longer sample)
  const JobAnswer& a = est_.answer;
  const double data_per_sample = a.qps > 0 ? a.data_tokens_per_s / a.qps : 0;
  plot::Series computed;
  computed.name = "tokens computed (padding included)";
  computed.color = plot::color(3, 0.7f);
  computed.unit = "tokens/s computed";
  double ymax = 0, xmax = 1;
  for (const auto& p : sweep_.points) {
    const double scale = plot_tokens_ ? data_per_sample : 1.0;
    model.x.push_back(p.batch);
    model.y.push_back(p.qps * scale);
    model.y_lo.push_back(p.qps_low * scale);
    model.y_hi.push_back(p.qps_high * scale);
    model.dim.push_back(p.fits ? 0 : 1);
    model.notes.push_back(tokens_line(p.qps * data_per_sample, p.tokens_per_s));
    computed.x.push_back(p.batch);
    computed.y.push_back(p.tokens_per_s);
    computed.dim.push_back(p.fits ? 0 : 1);
    ymax = std::max({ymax, p.qps_high * scale, plot_tokens_ ? p.tokens_per_s : 0.0});
    xmax = std::max(xmax, p.batch);
  }
  std::vector<plot::Series> series{model};
  if (plot_tokens_) series.push_back(computed);
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
  const double b = static_cast<double>(a.batch);
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
  // this job's own row (its GPU, shape and price): it shows the numbers of the cards above (recorded for
  // tests whether or not the table is scrolled into view)
  const JobAnswer* ans = has_est_ ? &est_.answer : nullptr;
  const double data_per_sample = ans != nullptr && ans->qps > 0 ? ans->data_tokens_per_s / ans->qps : 0;
  auto shape_of = [](const CompareRow& c) {
    return c.nodes > 1 ? std::to_string(c.nodes) + "x" + std::to_string(c.gpus_per_node)
                       : std::to_string(c.gpus());
  };
  int job_idx = -1;
  for (std::size_t i = 0; i < compare_.size() && ans != nullptr && job_idx < 0; ++i) {
    const CompareRow& c = compare_[i];
    if (c.gpu_id == est_.job.in.gpu.id && c.gpus_per_node == ans->gpus_per_node && c.nodes == ans->nodes &&
        c.has_price == ans->has_price &&
        (!c.has_price || (c.provider == ans->price.provider && c.spot == ans->price.spot &&
                          c.gpu_count == ans->price.gpu_count)))
      job_idx = static_cast<int>(i);
  }
  if (job_idx >= 0) {
    const CompareRow& c = compare_[static_cast<std::size_t>(job_idx)];
    cards_["compare.row"] = {c.gpu_id,
                             shape_of(c),
                             c.fits ? std::to_string(c.batch) : "-",
                             plot::fmt_int(c.max_batch),
                             plot::fmt(c.qps),
                             plot::fmt_hours_as(c.hours, time_unit) + " " + time_unit,
                             c.provider,
                             c.has_price ? price_class_of(c) : "",
                             c.price_basis,
                             plot::fmt_usd(c.usd_per_hour),
                             plot::fmt_usd(c.cost)};
  }
  if (!ImGui::BeginTable("compare", 10, flags, ImVec2(0, fh * 22))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  // numbers, providers and costs take their content's width (never cut off); the GPU name gets the rest (its
  // tooltip has the whole name)
  ImGui::TableSetupColumn("GPU", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("GPUs");
  ImGui::TableSetupColumn("Memory");
  ImGui::TableSetupColumn("Max batch");
  ImGui::TableSetupColumn("Queries/s");
  ImGui::TableSetupColumn(time_header.c_str());
  ImGui::TableSetupColumn("Provider");
  ImGui::TableSetupColumn("Price");
  ImGui::TableSetupColumn("$/GPU-h");
  ImGui::TableSetupColumn("Cost", ImGuiTableColumnFlags_DefaultSort);
  ImGui::TableHeadersRow();

  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
    if (specs->SpecsDirty || compare_sort_dirty_ || compare_order_.size() != compare_.size()) {
      compare_order_.resize(compare_.size());
      for (std::size_t i = 0; i < compare_.size(); ++i) compare_order_[i] = static_cast<int>(i);
      const int col = specs->SpecsCount > 0 ? specs->Specs[0].ColumnIndex : 9;
      const bool asc =
          specs->SpecsCount == 0 || specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
      auto key = [&](const CompareRow& c) -> double {
        switch (col) {
          case 1:
            return c.gpus();
          case 2:
            return c.memory_gib;
          case 3:
            return c.max_batch;
          case 4:
            return c.fits ? c.qps : -1;
          case 5:
            return c.fits ? c.hours : 1e300;
          case 7:
            return !c.has_price ? 3 : c.date.empty() ? 2 : c.stale ? 1 : 0;
          case 8:
            return c.has_price ? c.usd_per_hour : 1e300;
          case 9:
            return c.fits && c.has_price ? c.cost : c.fits ? 1e299 : 1e300;
          default:
            return 0;
        }
      };
      std::stable_sort(compare_order_.begin(), compare_order_.end(), [&](int a, int b) {
        const auto& x = compare_[static_cast<std::size_t>(a)];
        const auto& y = compare_[static_cast<std::size_t>(b)];
        if (col == 0) return asc ? x.gpu_name < y.gpu_name : x.gpu_name > y.gpu_name;
        if (col == 6) return asc ? x.provider < y.provider : x.provider > y.provider;
        // cost: the core's order (the one price rule; GPUs the stack does not run on after the usable ones)
        if (col == 9) return asc ? compare_row_before(x, y) : compare_row_before(y, x);
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
    const std::string shape = shape_of(c);
    const bool job_row = idx == job_idx;
    if (idx == cheapest)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(40, 120, 70, 150));
    else if (job_row)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(40, 80, 160, 170));
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
      if (c.error.empty())
        ImGui::Text("%d GPU%s (%d per node x %d), %s: %s GiB per GPU at batch %s per GPU", c.gpus(),
                    c.gpus() == 1 ? "" : "s", c.gpus_per_node, c.nodes, c.strategy.c_str(),
                    plot::fmt(c.per_rank_peak_gib).c_str(),
                    plot::fmt_int(static_cast<double>(c.batch)).c_str());
      if (c.fits && data_per_sample > 0) {
        // tokens of data per sample are the dataset's; the tokens computed (padding) only for this job's row
        if (job_row)
          ImGui::TextUnformatted(tokens_line(ans->data_tokens_per_s, ans->tokens_per_s).c_str());
        else
          ImGui::Text("%s tokens/s of data", plot::fmt(c.qps * data_per_sample).c_str());
      }
      if (c.has_price && c.price_basis == "per-gpu")
        ImGui::Text("priced per GPU: no %d-GPU instance of this provider is priced", c.gpus_per_node);
      if (c.has_price)
        ImGui::Text("cost range %s to %s%s", plot::fmt_usd(c.cost_low).c_str(),
                    plot::fmt_usd(c.cost_high).c_str(),
                    c.date.empty() ? "" : (", price dated " + c.date).c_str());
      ImGui::EndTooltip();
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(shape.c_str());
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
    } else {
      ImGui::TextColored(fade, c.fits ? "no price" : "-");
    }
    ImGui::TableNextColumn();
    if (c.has_price) {
      // the price's class (fresh / stale / undated); a per-GPU price of another instance size is noted
      const std::string cls = price_class_of(c);
      const std::string cell = cls + (c.price_basis == "per-gpu" ? ", per-gpu" : "");
      if (cls == "fresh" && c.price_basis != "per-gpu")
        ImGui::TextUnformatted(cell.c_str());
      else
        ImGui::TextColored(style::kWarn, "%s", cell.c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "%s%s", c.date.empty() ? "no date" : ("dated " + c.date).c_str(),
            c.price_basis == "per-gpu"
                ? "; per-gpu: no instance of this shape is priced, the GPUs at the per-GPU price "
                  "of another size"
                : "");
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
  // "A: 8× h100-sxm5-80gb / llama-3.1-8b / full [spec-only]": the GPU count first
  auto head = [](const json& s, const char* name) {
    if (s.contains("error")) return std::string(name) + ": no estimate";
    const bool cal = jflag(s, "calibrated", false);
    const int gpus = static_cast<int>(jnum(s, "gpus", 1));
    return std::string(name) + ": " + (gpus > 1 ? std::to_string(gpus) + "\xc3\x97 " : std::string()) +
           jstr(s, "gpu") + " / " + jstr(s, "model") + " / " + jstr(s, "method") +
           (cal ? " [calibrated]" : " [spec-only]");
  };
  std::vector<std::string> heads{head(a, "A"), head(b, "B")};
  cards_[std::string("pin.") + id] = heads;
  if (begin_table(id, {"", heads[0].c_str(), heads[1].c_str(), "B - A", "B / A"})) {
    for (const auto& r : jat(cmp, "rows")) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      // the time in one adaptive unit for the row (minutes when both are under an hour)
      const bool hours = jstr(r, "unit") == "h";
      const std::string unit =
          hours ? plot::time_unit_for(std::max(jnum(r, "a"), jnum(r, "b"))) : jstr(r, "unit");
      const std::string label = jstr(r, "label") + " (" + unit + ")";
      ImGui::TextUnformatted(label.c_str());
      std::vector<std::string> row{label};
      for (const char* k : {"a", "b", "difference"}) {
        ImGui::TableNextColumn();
        const json& v = jat(r, k);
        std::string text = "-";
        if (v.is_number()) {
          const double x = v.get<double>();
          text = hours                                      ? plot::fmt_hours_as(x, unit)
                 : x == std::floor(x) && std::fabs(x) < 1e9 ? plot::fmt_int(x)
                                                            : plot::fmt(x);
        }
        ImGui::TextUnformatted(text.c_str());
        row.push_back(text);
      }
      cards_[std::string("pin.") + id + "." + jstr(r, "metric")] = row;
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
