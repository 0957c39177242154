// Comparisons: every GPU x provider for the same job (sortable table), the pinned job against this one, and
// the calibrated estimate against the spec sheet's.
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
#include <cctype>
#include <cmath>

namespace ftcost::web {

namespace {

// "fresh", "stale" or "undated": a table row's price class (estimate.hpp's price_class).
std::string price_class_of(const CompareRow& c) { return price_class(c.date, c.stale); }

// "2x8" on several nodes, else the GPU count.
std::string shape_of(const CompareRow& c) {
  return c.nodes > 1 ? std::to_string(c.nodes) + "x" + std::to_string(c.gpus_per_node)
                     : std::to_string(c.gpus());
}

// This job's own row (its GPU, shape and price); -1 when the table has none.
int job_row_index(const std::vector<CompareRow>& rows, const JobEstimate& est) {
  const JobAnswer* ans = &est.answer;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const CompareRow& c = rows[i];
    if (c.gpu_id == est.job.in.gpu.id && c.gpus_per_node == ans->gpus_per_node && c.nodes == ans->nodes &&
        c.has_price == ans->has_price &&
        (!c.has_price || (c.provider == ans->price.provider && c.spot == ans->price.spot &&
                          c.gpu_count == ans->price.gpu_count)))
      return static_cast<int>(i);
  }
  return -1;
}

// Numbers, providers and costs take their content's width (never cut off); the GPU name gets the rest (its
// tooltip has the whole name).
void setup_compare_columns(const std::string& time_header, const std::string& rate_header) {
  ImGui::TableSetupColumn("GPU", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("GPUs");
  ImGui::TableSetupColumn("Memory");
  ImGui::TableSetupColumn("Max batch");
  ImGui::TableSetupColumn(rate_header.c_str());
  ImGui::TableSetupColumn(time_header.c_str());
  ImGui::TableSetupColumn("Provider");
  ImGui::TableSetupColumn("Price");
  ImGui::TableSetupColumn("$/GPU-h");
  ImGui::TableSetupColumn("Cost", ImGuiTableColumnFlags_DefaultSort);
}

// The rows' order for the table's sort column (cost: the core's order), when the sort or the rows changed.
void sort_compare_rows(const std::vector<CompareRow>& rows, ImGuiTableSortSpecs* specs,
                       std::vector<int>& order, bool& sort_dirty) {
  if (specs->SpecsDirty || sort_dirty || order.size() != rows.size()) {
    order.resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) order[i] = static_cast<int>(i);
    const int col = specs->SpecsCount > 0 ? specs->Specs[0].ColumnIndex : 9;
    const bool asc = specs->SpecsCount == 0 || specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
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
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const auto& x = rows[static_cast<std::size_t>(a)];
      const auto& y = rows[static_cast<std::size_t>(b)];
      if (col == 0) return asc ? x.gpu_name < y.gpu_name : x.gpu_name > y.gpu_name;
      if (col == 6) return asc ? x.provider < y.provider : x.provider > y.provider;
      // cost: the core's order (the one price rule; GPUs the stack does not run on after the usable ones)
      if (col == 9) return asc ? compare_row_before(x, y) : compare_row_before(y, x);
      double kx = key(x), ky = key(y);
      return asc ? kx < ky : kx > ky;
    });
    specs->SpecsDirty = false;
    sort_dirty = false;
  }
}

// A row's tooltip; `job_ans`: this job's answer when the row is the job's own.
void compare_row_tooltip(const CompareRow& c, const JobAnswer* job_ans, double data_per_sample) {
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
                plot::fmt(c.per_rank_peak_gib).c_str(), plot::fmt_int(static_cast<double>(c.batch)).c_str());
  if (c.fits && data_per_sample > 0) {
    // tokens of data per sample are the dataset's; the tokens computed (padding) only for this job's row
    if (job_ans != nullptr)
      ImGui::TextUnformatted(tokens_line(job_ans->data_tokens_per_s, job_ans->tokens_per_s).c_str());
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

// A row's cells after the GPU's: GPUs, memory, max batch, samples/s, time, provider, price, $/GPU-h, cost.
void compare_row_cells(const CompareRow& c, const std::string& shape, bool cheapest,
                       const std::string& time_unit, std::map<std::string, std::vector<std::string>>& cards) {
  const std::string time_header = "Time (" + time_unit + ")";
  const ImVec4 fade = ImGui::GetStyle().Colors[ImGuiCol_TextDisabled];
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
    auto& shown = cards["compare.time"];
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
      ImGui::SetTooltip("%s%s", c.date.empty() ? "no date" : ("dated " + c.date).c_str(),
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
    if (cheapest)
      ImGui::TextColored(style::kGood, "%s", s.c_str());  // the green row; "Cheapest: ..." above names it
    else
      ImGui::TextUnformatted(s.c_str());
  }
}

}  // namespace

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
  const int job_idx = has_est_ ? job_row_index(compare_, est_) : -1;
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
  // the job's unit of a sample (samples, preference pairs, GRPO prompts), capitalised as a header
  std::string rate_header = std::string(est_.job.in.workload.objective.sample_noun()) + "/s";
  rate_header[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rate_header[0])));
  setup_compare_columns(time_header, rate_header);
  ImGui::TableHeadersRow();

  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs())
    sort_compare_rows(compare_, specs, compare_order_, compare_sort_dirty_);
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
    if (hovered) compare_row_tooltip(c, job_row ? ans : nullptr, data_per_sample);
    compare_row_cells(c, shape, idx == cheapest, time_unit, cards_);
    ImGui::PopID();
  }
  ImGui::EndTable();
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
