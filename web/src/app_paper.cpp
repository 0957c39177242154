// The paper's analytical model (arXiv 2408.04693, §V), reproduced by the core: Table IV, Eq. (1) maximum
// batch size against sequence length, Eq. (2) throughput against batch size fitted to the A40 sweeps.
#include "app.hpp"
#include "ftcost/database.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/validate.hpp"
#include "imgui.h"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::web {

namespace {

// Eq. (2): throughput against batch size, fitted to the A40 sweeps (points measured, lines fitted).
void draw_eq2(float pw) {
  const float fh = ImGui::GetFontSize();
  // ---- Eq. (2) ----
  ImGui::BeginGroup();
  section_title("Eq. (2): throughput vs batch size, fitted to the A40 sweeps");
  tip("throughput = C2 x ln(bsz^(1/(sparsity x C3))) + C4; C3 fixed per model (1.8 Mixtral, 2.5 BlackMamba), "
      "C2 and C4 by least squares");
  {
    std::vector<plot::Series> series;
    double ymax = 1, xmax = 1;
    int ci = 0;
    std::string fits_text;
    for (const auto& sw : paper::a40_sweeps()) {
      auto fit = paper::fit_eq2(sw.points, sw.c3);
      plot::Series pts;
      pts.name = sw.id;
      pts.color = plot::color(ci);
      pts.line = false;
      pts.markers = true;
      pts.unit = "queries/s";
      for (const auto& p : sw.points) {
        if (p.sparsity >= 0.99) continue;  // sparse points: the fitted curve below is for sparsity 0.25
        pts.x.push_back(p.batch);
        pts.y.push_back(p.throughput);
        ymax = std::max(ymax, p.throughput);
        xmax = std::max(xmax, p.batch);
      }
      series.push_back(pts);
      if (fit.ok()) {
        const auto& f = fit.value();
        plot::Series curve;
        curve.color = plot::color(ci, 0.8f);
        curve.unit = "queries/s (Eq. 2)";
        for (double b = 1; b <= xmax + 0.5; b += 0.5) {
          curve.x.push_back(b);
          curve.y.push_back(paper::eq2_throughput(f.c2, f.c3, f.c4, 0.25, b));
        }
        series.push_back(curve);
        fits_text += sw.id + std::string(": C2=") + plot::fmt(f.c2) + ", C4=" + plot::fmt(f.c4) + ", RMSE " +
                     plot::fmt(f.rmse) + " q/s\n";
      }
      ++ci;
    }
    plot::line_plot("eq2", ImVec2(pw, fh * 17), plot::Axis{"batch size (samples)", 0, xmax + 1, false, true},
                    plot::Axis{"queries/s", 0, ymax * 1.1, false, false}, series);
    ImGui::TextDisabled("%s", fits_text.c_str());
    ImGui::TextDisabled("points: measured (sparse); lines: Eq. (2) fitted by ftcost's fit_eq2");
  }
  ImGui::EndGroup();
}

}  // namespace

void App::draw_paper_view() {
  const float fh = ImGui::GetFontSize();
  const float avail = ImGui::GetContentRegionAvail().x;
  ImGui::PushTextWrapPos(std::min(avail, fh * 60));
  section_title(
      "The paper's model: \"Understanding the performance and estimating the cost of LLM "
      "fine-tuning\" (arXiv 2408.04693)");
  ImGui::TextWrapped(
      "The paper fits two formulas to fine-tuning sweeps on an A40: Eq. (1) for the maximum batch size and "
      "Eq. (2) for "
      "throughput, then prices the job (Table IV). ftcost reproduces them here, next to its own "
      "first-principles model "
      "(the Calculator page), which needs no sweep per GPU.");
  ImGui::PopTextWrapPos();

  draw_paper_table4();

  const bool two = avail > fh * 48;
  const float pw = two ? (avail - ImGui::GetStyle().ItemSpacing.x) * 0.5f : avail;
  draw_paper_eq1(pw);
  if (two) ImGui::SameLine();
  mark("paper_eq2");
  draw_eq2(pw);
}

// Table IV: the paper's costs recomputed, with ftcost's own prediction beside them.
void App::draw_paper_table4() {
  const float fh = ImGui::GetFontSize();
  // ---- Table IV ----
  mark("paper_table4");
  ImGui::Spacing();
  section_title("Table IV: cost of fine-tuning Mixtral-8x7B (QLoRA, sparse, math data)");
  ImGui::SetNextItemWidth(fh * 8);
  ImGui::InputDouble("queries##p", &paper_queries_, 1000, 10000, "%.0f");
  tip("Dataset size used for the cost (the paper uses 15,000 queries)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fh * 6);
  ImGui::InputDouble("epochs##p", &paper_epochs_, 1, 5, "%.3g");
  tip("Epochs (the paper uses 10)");
  // Out-of-range values are not clamped: the table keeps the last valid job and says what is wrong.
  const bool queries_ok = paper_queries_ >= 1 && paper_queries_ <= 1e12;
  const bool epochs_ok = paper_epochs_ >= 0.001 && paper_epochs_ <= 1e6;
  if (queries_ok && epochs_ok) {
    table4_queries_ = paper_queries_;
    table4_epochs_ = paper_epochs_;
  } else {
    ImGui::TextColored(style::kBad, "%s",
                       !queries_ok
                           ? "queries: must be between 1 and 1e12; the table shows the last valid value"
                           : "epochs: must be between 0.001 and 1e6; the table shows the last valid value");
  }
  const auto rows = paper::table4(table4_queries_, table4_epochs_);
  const auto pred = paper_table4_predictions(Database::embedded(), table4_queries_, table4_epochs_);
  if (begin_table("t4", {"GPU", "Memory", "Max batch", "Throughput (q/s)", "$/GPU-h (CUDO, 2024)", "Hours",
                         "Cost (ours)", "Cost (paper)", "ftcost: max batch, q/s", "ftcost: cost"})) {
    double cheapest = 1e300;
    for (const auto& r : rows) cheapest = std::min(cheapest, r.cost);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      ImGui::TableNextRow();
      if (r.cost == cheapest) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(40, 120, 70, 150));
      table_cell(r.gpu);
      ImGui::TableNextColumn();
      ImGui::Text("%s GB", plot::fmt(r.memory_gb).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%ld", r.max_batch);
      table_cell(plot::fmt(r.throughput_qps));
      table_cell(plot::fmt_usd(r.usd_per_hour));
      table_cell(plot::fmt(r.hours));
      table_cell(plot::fmt_usd(r.cost));
      ImGui::TableNextColumn();
      const bool default_size = table4_queries_ == 15000 && table4_epochs_ == 10;
      if (default_size) {
        const bool same = std::fabs(std::round(r.cost * 10) / 10 - r.published_cost) < 0.051;
        ImGui::TextColored(same ? style::kGood : style::kBad, "%s %s",
                           plot::fmt_usd(r.published_cost).c_str(), same ? "(matches)" : "(differs)");
      } else {
        ImGui::TextDisabled("%s at 15,000 x 10", plot::fmt_usd(r.published_cost).c_str());
      }
      const auto& p = pred[i];
      ImGui::TableNextColumn();
      if (p.error.empty()) {
        ImGui::Text("%ld, %s", p.max_batch, plot::fmt(p.throughput_qps).c_str());
        table_cell(plot::fmt_usd(p.cost));
      } else {
        ImGui::TextColored(style::kBad, "error");
        tip(p.error.c_str());
        ImGui::TableNextColumn();
      }
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled(
      "ftcost columns: its own prediction (stack hf-transformers-2024, its predicted maximum batch, the same "
      "prices); the A40 was part of its fit, the A100 and H100 were not");
  ImGui::TextDisabled(
      "cost = queries x epochs / throughput / 3600 x price; throughputs measured at the maximum batch");
}

// Eq. (1): maximum batch size against sequence length for a few GPU memories.
void App::draw_paper_eq1(float pw) {
  const float fh = ImGui::GetFontSize();
  // ---- Eq. (1) ----
  mark("paper_eq1");
  ImGui::Spacing();
  ImGui::BeginGroup();
  section_title("Eq. (1): maximum batch size vs sequence length");
  tip("MaxBSZ = floor(C0 x (GPU_mem - model_mem) / (seq_len x ((1 - C1) + C1 x sparsity)))");
  const paper::Eq1Coeffs sets[] = {paper::kEq1MixtralPaper, paper::kEq1MixtralCode, paper::kEq1BlackMamba};
  ImGui::SetNextItemWidth(pw * 0.55f);
  if (ImGui::BeginCombo("##eq1", sets[eq1_coeffs_].label)) {
    for (int i = 0; i < 3; ++i)
      if (ImGui::Selectable(sets[i].label, i == eq1_coeffs_)) {
        eq1_coeffs_ = i;
        eq1_model_mem_gb_ =
            static_cast<float>(i == 2 ? paper::kBlackMambaModelMemGB : paper::kMixtralModelMemGB);
      }
    ImGui::EndCombo();
  }
  tip("Coefficients C0, C1 as published (two variants for Mixtral) or for BlackMamba");
  ImGui::SameLine();
  ImGui::Checkbox("dense", &eq1_dense_);
  tip("Dense MoE (sparsity 1: every expert active) instead of sparse top-2 of 8 (sparsity 0.25)");
  ImGui::SetNextItemWidth(pw * 0.55f);
  ImGui::SliderFloat("model memory (GB)", &eq1_model_mem_gb_, 1.0f, 40.0f, "%.2f");
  tip("Memory of the model itself (Table I: 23.35 GB for Mixtral in 4 bits, 5.6 GB for BlackMamba)");
  {
    std::vector<plot::Series> series;
    std::vector<double> series_mem;  // the GPU memory of each series
    const double mems[] = {24, 40, 48, 80, 141};
    double ymax = 1;
    int ci = 0;
    std::string on_axis;  // memories whose curve lies on the axis: said in the legend and under the plot
    for (double mem : mems) {
      plot::Series s;
      s.name = plot::fmt(mem) + " GB";
      s.color = plot::color(ci++);
      s.unit = "samples";
      for (double L = 64; L <= 2048; L += 32) {
        auto r = paper::eq1_max_batch(sets[eq1_coeffs_], mem, static_cast<double>(eq1_model_mem_gb_), L,
                                      eq1_dense_ ? 1.0 : 0.25);
        if (!r.ok()) continue;
        s.x.push_back(L);
        s.y.push_back(static_cast<double>(std::max(0L, r.value().batch)));
        ymax = std::max(ymax, s.y.back());
      }
      if (!s.x.empty()) {
        series.push_back(s);
        series_mem.push_back(mem);
      }
    }
    ymax = std::min(ymax, 256.0);
    // a curve within 3% of the plot's height of the axis looks like the axis itself: say why it is there
    const double model_gb = static_cast<double>(eq1_model_mem_gb_);
    for (std::size_t i = 0; i < series.size(); ++i) {
      plot::Series& s = series[i];
      const double top = *std::max_element(s.y.begin(), s.y.end());
      if (top > std::max(1.0, 0.03 * ymax)) continue;
      const double mem = series_mem[i];
      const double left = mem - model_gb;
      double zero_from = 0;  // the shortest length from which Eq. (1) gives batch 0
      for (std::size_t k = 0; k < s.x.size() && zero_from == 0; ++k)
        if (s.y[k] <= 0) zero_from = s.x[k];
      s.name +=
          left > 0 ? " (near the axis: " + plot::fmt(left) + " GB left)" : " (on the axis: no memory left)";
      on_axis +=
          (on_axis.empty() ? "" : "; ") + plot::fmt(mem) + " GB: " +
          (left > 0 ? "only " + plot::fmt(left) + " GB above the model's " + plot::fmt(model_gb) +
                          " GB, so Eq. (1) gives at most batch " + plot::fmt_int(top) +
                          (zero_from > 0 ? " and 0 from " + plot::fmt_int(zero_from) + " tokens on" : "")
                    : "the model alone (" + plot::fmt(model_gb) + " GB) does not fit");
    }
    plot::line_plot("eq1", ImVec2(pw, fh * 17), plot::Axis{"sequence length (tokens)", 64, 2048, false, true},
                    plot::Axis{"max batch (samples)", 0, ymax * 1.08, false, true}, series);
    if (!on_axis.empty()) {
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + pw);
      ImGui::TextDisabled("Near the axis: %s.", on_axis.c_str());
      ImGui::PopTextWrapPos();
    }
    cards_["eq1.on_axis"] = {on_axis};
  }
  ImGui::EndGroup();
}

}  // namespace ftcost::web
