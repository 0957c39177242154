// The headline: the answer's cards (batch, peak memory, throughput, time, cost), the software stack, the
// core's warnings and the defaults it applied.
#include "app.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "result_cards.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::web {

namespace {

// What one sample of the job is, in the CLI's words (Objective::sample_noun): samples, pairs or prompts.
std::string noun(const JobEstimate& e) { return e.job.in.workload.objective.sample_noun(); }
std::string noun_one(const JobEstimate& e) {
  const std::string n = noun(e);
  return n.substr(0, n.size() - 1);
}

// The answer to the question asked: the chosen (micro-)batch and why; the largest that fits beside it.
CardSpec batch_card(const JobEstimate& e) {
  const JobAnswer& a = e.answer;
  const bool multi = a.gpus > 1;
  const BatchChoice& bc = a.batch_choice;
  std::vector<std::string> subs;
  if (a.max_batch <= 0)
    subs.push_back("even 1 " + noun_one(e) + (multi ? " per GPU does not fit" : " does not fit"));
  else if (a.batch > a.max_batch)
    subs.push_back("batch " + plot::fmt_int(static_cast<double>(a.batch)) + ": does NOT fit (max " +
                   plot::fmt_int(static_cast<double>(a.max_batch)) + ")");
  if (!bc.reason.empty() && a.max_batch > 0) subs.push_back(bc.reason);
  if (bc.largest > a.batch && a.max_batch > 0)
    subs.push_back(
        "largest that fits (upper end of the range): " + plot::fmt_int(static_cast<double>(bc.largest)) +
        (bc.largest_qps > 0 ? ", slower: " + plot::fmt(bc.largest_qps) + " " + noun(e) + "/s"
                            : std::string()));
  if (multi && a.max_batch > 0)
    subs.push_back("global batch " + plot::fmt_int(static_cast<double>(a.global_batch)) + " per step (" +
                   plot::fmt_int(static_cast<double>(a.batch)) + " x " + std::to_string(a.grad_accum) +
                   " accumulated x " + std::to_string(e.pe.dp) + " replicas)");
  // the longest padded sequence that fits at batch 1 (per GPU on several)
  subs.push_back(a.max_seq_len > 0 ? "longest context: " + plot::fmt_int(a.max_seq_len) + " tokens" +
                                         (multi ? " per GPU at batch 1" : "")
                                   : "no context length fits");
  const bool ok = a.max_batch > 0 && a.batch > 0 && a.batch <= a.max_batch;
  return make_card(
      "c_batch", multi ? "Batch per GPU" : "Batch size",
      a.batch > 0 ? plot::fmt_int(static_cast<double>(a.batch)) : "none",
      a.batch <= 0   ? ""
      : a.batch == 1 ? noun_one(e)
                     : noun(e),
      subs,
      "The batch the time and cost are for" + std::string(multi ? " (the micro-batch on each GPU)" : "") +
          ": by default the fastest whose memory range's upper end fits (--batch fastest); --batch max "
          "takes the largest, --batch N a given one. Largest that fits: " +
          plot::fmt_int(static_cast<double>(a.max_batch)) + " at the memory range's low end, " +
          plot::fmt_int(static_cast<double>(a.max_batch_range_fit)) +
          " at its upper end. Longest context: the longest padded sequence whose step fits at batch 1.",
      ok ? style::kAccent : style::kBad);
}

// Peak memory against the usable memory, with its range and where it is.
CardSpec memory_card(const JobEstimate& e) {
  const JobAnswer& a = e.answer;
  const Inputs& in = e.job.in;
  const bool multi = a.gpus > 1;
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
  return make_card(
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
                                    : style::kGood);
}

// Throughput, with the spec-sheet figure beside it when a calibration is in use (`comparison`).
CardSpec throughput_card(const JobEstimate& e, const json* comparison, const Badge* cal_badge) {
  const JobAnswer& a = e.answer;
  const Inputs& in = e.job.in;
  const bool multi = a.gpus > 1;
  const StackProfile& stack = in.stack;
  // calibrated: the spec-sheet figure beside it ("spec sheet 4.05 -> 2.48 calibrated")
  std::string third = "stack " + stack.id;
  if (comparison != nullptr)
    for (const auto& row : jat(*comparison, "rows"))
      if (jstr(row, "metric") == "throughput_queries_per_s" && jat(row, "a").is_number())
        third = "spec sheet " + plot::fmt(jnum(row, "a")) + " -> " + plot::fmt(a.qps) + " calibrated";
  return make_card(
      "c_tp", "Throughput", plot::fmt(a.qps), noun(e) + "/s",
      {tokens_line(a.data_tokens_per_s, a.tokens_per_s),
       a.qps_high > a.qps_low
           ? "range " + plot::fmt(a.qps_low) + " to " + plot::fmt(a.qps_high) + " " + noun(e) + "/s"
           : std::string(),
       multi ? "all " + std::to_string(a.gpus) + " GPUs together, " + third : third},
      "Samples processed per second at this batch size (a preference pair counts as one, a GRPO prompt "
      "with all its completions as one)" +
          std::string(multi ? ", by all the job's GPUs" : "") +
          ", with the model's uncertainty range. Tokens of data: the samples' own tokens; computed: the "
          "padded batch the GPUs run (padding included).\nSoftware stack: " +
          stack.display_name + (stack.version.empty() ? std::string() : "\nVersions: " + stack.version),
      style::kAccent, cal_badge);
}

// Training time: queries x epochs over the throughput.
CardSpec time_card(const JobEstimate& e, const std::string& gpus_text, const Badge* cal_badge) {
  const JobAnswer& a = e.answer;
  const Inputs& in = e.job.in;
  const double epochs = in.workload.epochs;
  return make_card(
      "c_time", "Training time", plot::fmt_hours(a.hours), "",
      {plot::fmt_int(in.workload.queries) + " " + noun(e),
       "x " + plot::fmt_compact(epochs) + (epochs == 1 ? " epoch" : " epochs") + ", " + gpus_text,
       a.hours_high > a.hours_low
           ? "range " + plot::fmt_hours(a.hours_low) + " to " + plot::fmt_hours(a.hours_high)
           : std::string()},
      "Samples x epochs / throughput (on several GPUs: whole optimizer steps x the step time); range from "
      "the throughput range.",
      style::kAccent, cal_badge);
}

// The cost at the chosen price, or why there is none.
CardSpec cost_card(const JobEstimate& e, const Badge* cal_badge) {
  const JobAnswer& a = e.answer;
  const bool multi = a.gpus > 1;
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
    return make_card(
        "c_cost", "Cost", plot::fmt_usd(a.cost), "",
        {line, shape,
         a.cost_high > a.cost_low ? "range " + plot::fmt_usd(a.cost_low) + " to " + plot::fmt_usd(a.cost_high)
                                  : std::string()},
        "Training time x price per GPU-hour x GPUs" +
            (p.date.empty() ? std::string(" (undated price)") : " (price dated " + p.date + ")") +
            "; basis " + p.basis +
            " (instance: an instance of the job's GPUs per node; per-gpu: another size's per-GPU price; "
            "given: your price); range from the throughput range.",
        style::kGood, cal_badge);
  }
  return make_card("c_cost", "Cost", "no price", "",
                   {"no dated offer for this GPU", "set \"my price\" under GPU and price"},
                   "No dated price for this GPU in the database.", style::kWarn);
}

}  // namespace

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
  specs.push_back(batch_card(e));
  specs.push_back(memory_card(e));
  // the numbers that use the step time carry the "calibrated" badge when a calibration is in use
  const YourCalibration* cal = jflag(result_, "calibrated", false) ? calibration_in_use() : nullptr;
  const Badge badge = cal != nullptr ? calibration_badge(*cal) : Badge{};
  const Badge* cal_badge = cal != nullptr ? &badge : nullptr;
  const std::string gpus_text = multi ? std::to_string(a.gpus) + " GPUs (" + std::to_string(a.gpus_per_node) +
                                            " per node x " + std::to_string(a.nodes) + ")"
                                      : std::string("one GPU");
  if (fits) {
    specs.push_back(throughput_card(e, cal != nullptr ? &calibration_comparison_ : nullptr, cal_badge));
    specs.push_back(time_card(e, gpus_text, cal_badge));
    specs.push_back(cost_card(e, cal_badge));
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

}  // namespace ftcost::web
