#include "plot.hpp"

#include "ftcost/duration.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ftcost::web::plot {

namespace {

constexpr ImU32 kPalette[] = {
    IM_COL32(86, 180, 233, 255),   // sky blue
    IM_COL32(230, 159, 0, 255),    // orange
    IM_COL32(0, 158, 115, 255),    // green
    IM_COL32(204, 121, 167, 255),  // pink
    IM_COL32(240, 228, 66, 255),   // yellow
    IM_COL32(0, 114, 178, 255),    // blue
    IM_COL32(213, 94, 0, 255),     // vermillion
    IM_COL32(160, 160, 160, 255),  // grey
    IM_COL32(148, 103, 189, 255),  // purple
    IM_COL32(140, 86, 75, 255),    // brown
    IM_COL32(127, 219, 255, 255),  // light cyan
};

float f(double v) { return static_cast<float>(v); }

ImU32 text_col() { return ImGui::GetColorU32(ImGuiCol_Text); }
ImU32 dim_text_col() { return ImGui::GetColorU32(ImGuiCol_TextDisabled); }

std::string group_thousands(long long v) {
  bool neg = v < 0;
  unsigned long long u =
      neg ? static_cast<unsigned long long>(-(v + 1)) + 1 : static_cast<unsigned long long>(v);
  std::string digits = std::to_string(u);
  std::string out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n > 0 && n % 3 == 0) out += ',';
    out += *it;
    ++n;
  }
  if (neg) out += '-';
  std::reverse(out.begin(), out.end());
  return out;
}

struct Mapper {
  Axis ax;
  float p0, p1;  // screen coordinates of lo and hi
  double t(double v) const { return ax.log ? std::log10(std::max(v, 1e-300)) : v; }
  float map(double v) const {
    double a = t(ax.lo), b = t(ax.hi);
    if (b == a) return p0;
    return p0 + f((t(v) - a) / (b - a)) * (p1 - p0);
  }
  double unmap(float s) const {
    double a = t(ax.lo), b = t(ax.hi);
    double u = a + static_cast<double>((s - p0) / (p1 - p0)) * (b - a);
    return ax.log ? std::pow(10.0, u) : u;
  }
};

std::string tick_label(double v, bool integer) {
  if (integer) return fmt_int(v);
  return fmt(v, 3);
}

void dashed_vline(ImDrawList* dl, float x, float y0, float y1, ImU32 c, float thickness) {
  for (float y = y0; y < y1; y += 8.0f)
    dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(y + 4.0f, y1)), c, thickness);
}

}  // namespace

ImU32 color(int i, float alpha) {
  const int n = static_cast<int>(sizeof(kPalette) / sizeof(kPalette[0]));
  return with_alpha(kPalette[((i % n) + n) % n], alpha);
}

ImU32 with_alpha(ImU32 c, float alpha) {
  ImU32 a = static_cast<ImU32>(std::clamp(alpha, 0.0f, 1.0f) * 255.0f + 0.5f);
  return (c & ~IM_COL32_A_MASK) | (a << IM_COL32_A_SHIFT);
}

std::string fmt(double v, int significant) {
  if (!std::isfinite(v)) return "n/a";
  double a = std::fabs(v);
  if (a >= 1e15) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2e", v);
    return b;
  }
  if (a >= 1000) return group_thousands(std::llround(v));
  if (a == 0) return "0";
  int digits = significant - 1 - static_cast<int>(std::floor(std::log10(a)));
  digits = std::clamp(digits, 0, 6);
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string fmt_compact(double v, int significant) {
  std::string s = fmt(v, significant);
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

std::string fmt_int(double v) {
  if (!std::isfinite(v)) return "n/a";
  return group_thousands(std::llround(v));
}

std::string fmt_usd(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (std::fabs(v) >= 1000) return "$" + group_thousands(std::llround(v));
  char b[32];
  std::snprintf(b, sizeof b, "$%.2f", v);
  return b;
}

// The CLI's rule (core/base/include/ftcost/duration.hpp): "45 min", "3.3 h", "3.4 d (81 h)".
std::string fmt_hours(double h) { return duration_text(h); }

std::string time_unit_for(double max_hours) { return max_hours < 1.0 ? "min" : "h"; }

std::string fmt_hours_as(double h, const std::string& unit) {
  if (!std::isfinite(h)) return "n/a";
  if (unit == "min") return fmt(h * 60.0, 3);
  std::string s = fmt(h, 3);
  if (h >= 48.0) s += " (" + fmt(h / 24.0, 2) + " d)";
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  std::vector<double> out;
  if (!(hi > lo) || max_ticks < 2) {
    out.push_back(lo);
    return out;
  }
  double raw = (hi - lo) / max_ticks;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  double start = std::ceil(lo / step - 1e-9) * step;
  for (double v = start; v <= hi + step * 1e-9 && out.size() < 64; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  int e0 = static_cast<int>(std::floor(std::log10(lo)));
  int e1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool fine = e1 - e0 <= 2;
  for (int e = e0; e <= e1; ++e) {
    double p = std::pow(10.0, e);
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      double v = m * p;
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  }
  return out;
}

namespace {

// A line plot's frame on screen: the plot area, both axes' mappings and where it draws.
struct Frame {
  ImDrawList* dl;
  float fh;  // font height
  float left, right, top, bottom;
  Mapper mx, my;
  ImVec2 at(double x, double y) const { return ImVec2(mx.map(x), my.map(y)); }
};

// One axis's ticks: a grid line across the plot area and a label beside it. `along_x` says which axis.
void draw_ticks(const Frame& fr, const std::vector<double>& ticks, bool integer, bool along_x, ImU32 grid) {
  for (double v : ticks) {
    const float c = along_x ? fr.mx.map(v) : fr.my.map(v);
    const float lo = along_x ? fr.left : fr.top, hi = along_x ? fr.right : fr.bottom;
    if (c < lo - 1 || c > hi + 1) continue;
    std::string s = tick_label(v, integer);
    ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    if (along_x) {
      fr.dl->AddLine(ImVec2(c, fr.top), ImVec2(c, fr.bottom), grid);
      fr.dl->AddText(ImVec2(c - ts.x * 0.5f, fr.bottom + 4), dim_text_col(), s.c_str());
    } else {
      fr.dl->AddLine(ImVec2(fr.left, c), ImVec2(fr.right, c), grid);
      fr.dl->AddText(ImVec2(fr.left - 6 - ts.x, c - ts.y * 0.5f), dim_text_col(), s.c_str());
    }
  }
}

// The x axis's ticks: log or nice, spaced by the plot's width; whole numbers only on an integer axis.
std::vector<double> x_ticks(const Frame& fr, const Axis& xa) {
  std::vector<double> xt =
      xa.log ? log_ticks(xa.lo, xa.hi)
             : nice_ticks(xa.lo, xa.hi, std::max(2, static_cast<int>((fr.right - fr.left) / (fr.fh * 5.0f))));
  if (xa.integer)
    xt.erase(std::remove_if(xt.begin(), xt.end(), [](double v) { return std::floor(v) != v; }), xt.end());
  return xt;
}

// The plot area's grid, tick labels, axis labels and border.
void draw_axes(const Frame& fr, ImVec2 p, const Axis& xa, const Axis& ya, const std::vector<double>& yt) {
  ImDrawList* dl = fr.dl;
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.45f);
  draw_ticks(fr, yt, ya.integer, false, grid);
  draw_ticks(fr, x_ticks(fr, xa), xa.integer, true, grid);
  ImVec2 ts = ImGui::CalcTextSize(xa.label.c_str());
  dl->AddText(ImVec2((fr.left + fr.right - ts.x) * 0.5f, fr.bottom + fr.fh + 8), text_col(),
              xa.label.c_str());
  dl->AddText(ImVec2(p.x, p.y), text_col(), ya.label.c_str());
  dl->AddRect(ImVec2(fr.left, fr.top), ImVec2(fr.right, fr.bottom), ImGui::GetColorU32(ImGuiCol_Border),
              3.0f);
}

// Range bands of the line series, below everything else.
void draw_bands(const Frame& fr, const std::vector<Series>& series) {
  for (const auto& s : series) {
    if (!s.line || s.y_lo.size() != s.x.size() || s.y_hi.size() != s.x.size()) continue;
    for (std::size_t i = 0; i + 1 < s.x.size(); ++i) {
      ImVec2 a = fr.at(s.x[i], s.y_hi[i]), b = fr.at(s.x[i + 1], s.y_hi[i + 1]);
      ImVec2 c = fr.at(s.x[i + 1], s.y_lo[i + 1]), d = fr.at(s.x[i], s.y_lo[i]);
      fr.dl->AddQuadFilled(a, b, c, d, with_alpha(s.color, 0.18f));
    }
  }
}

void draw_lines(const Frame& fr, const std::vector<Series>& series) {
  for (const auto& s : series) {
    if (!s.line || s.x.size() < 2) continue;
    for (std::size_t i = 0; i + 1 < s.x.size() && i + 1 < s.y.size(); ++i) {
      bool faded = (i + 1 < s.dim.size() && s.dim[i + 1]) || (i < s.dim.size() && s.dim[i]);
      fr.dl->AddLine(fr.at(s.x[i], s.y[i]), fr.at(s.x[i + 1], s.y[i + 1]),
                     faded ? with_alpha(s.color, 0.35f) : s.color, 2.2f);
    }
  }
}

// Markers, with error bars on marker-only series that have a range.
void draw_markers(const Frame& fr, const std::vector<Series>& series) {
  ImDrawList* dl = fr.dl;
  for (const auto& s : series) {
    if (!s.markers) continue;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      bool faded = i < s.dim.size() && s.dim[i];
      ImU32 c = faded ? with_alpha(s.color, 0.35f) : s.color;
      ImVec2 q = fr.at(s.x[i], s.y[i]);
      if (!s.line && s.y_lo.size() == s.x.size() && s.y_hi.size() == s.x.size()) {
        float y0 = fr.my.map(s.y_lo[i]), y1 = fr.my.map(s.y_hi[i]);
        dl->AddLine(ImVec2(q.x, y0), ImVec2(q.x, y1), c, 1.5f);
        dl->AddLine(ImVec2(q.x - 3, y0), ImVec2(q.x + 3, y0), c, 1.5f);
        dl->AddLine(ImVec2(q.x - 3, y1), ImVec2(q.x + 3, y1), c, 1.5f);
      }
      dl->AddCircleFilled(q, s.marker_radius, c);
      dl->AddCircle(q, s.marker_radius, IM_COL32(20, 20, 20, 200));
    }
  }
}

// Vertical lines' labels (above the plot area, inside the frame).
void draw_vline_labels(const Frame& fr, const std::vector<VLine>& vlines) {
  for (const auto& v : vlines) {
    float x = fr.mx.map(v.x);
    if (x < fr.left || x > fr.right || v.label.empty()) continue;
    ImVec2 ts = ImGui::CalcTextSize(v.label.c_str());
    float tx = std::min(std::max(x + 4, fr.left + 2), fr.right - ts.x - 2);
    fr.dl->AddText(ImVec2(tx, fr.top + 2), v.color, v.label.c_str());
  }
}

// How many data points fall in the box [x0, x0 + w] x [y0, y1].
int points_in(const Frame& fr, const std::vector<Series>& series, float x0, float w, float y0, float y1) {
  int c = 0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      float px = fr.mx.map(s.x[i]), py = fr.my.map(s.y[i]);
      if (px >= x0 && px <= x0 + w && py >= y0 && py <= y1) ++c;
    }
  return c;
}

// The legend: inside, in the top corner (left or right) that covers fewer data points.
void draw_legend(const Frame& fr, const std::vector<Series>& series, bool has_vlines) {
  float w = 0;
  int n = 0;
  for (const auto& s : series)
    if (!s.name.empty()) {
      w = std::max(w, ImGui::CalcTextSize(s.name.c_str()).x);
      ++n;
    }
  if (n == 0) return;
  const float fh = fr.fh;
  const float box_w = w + 36, box_h = static_cast<float>(n) * (fh + 3) + 6;
  const float top_y = fr.top + 6 + (has_vlines ? fh + 2 : 0.0f);
  const float left_x = fr.left + 8, right_x = fr.right - 8 - box_w;
  const float bx = points_in(fr, series, right_x, box_w, top_y - 4, top_y + box_h) <
                           points_in(fr, series, left_x, box_w, top_y - 4, top_y + box_h)
                       ? right_x
                       : left_x;
  fr.dl->AddRectFilled(ImVec2(bx, top_y - 4), ImVec2(bx + box_w, top_y + box_h - 4),
                       ImGui::GetColorU32(ImGuiCol_WindowBg, 0.88f), 4.0f);
  float yy = top_y;
  const float bx0 = bx + 6;
  for (const auto& s : series) {
    if (s.name.empty()) continue;
    if (s.line) fr.dl->AddLine(ImVec2(bx0, yy + fh * 0.5f), ImVec2(bx0 + 16, yy + fh * 0.5f), s.color, 2.5f);
    if (s.markers) fr.dl->AddCircleFilled(ImVec2(bx0 + 8, yy + fh * 0.5f), 3.5f, s.color);
    fr.dl->AddText(ImVec2(bx0 + 22, yy), text_col(), s.name.c_str());
    yy += fh + 3;
  }
}

// The tooltip of one point: series, x, y with its range, and the point's notes.
void point_tooltip(const Series& s, std::size_t i, const Axis& xa, const Axis& ya, float fh) {
  ImGui::BeginTooltip();
  if (!s.name.empty()) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(s.color), "%s", s.name.c_str());
  ImGui::Text("%s: %s", xa.label.c_str(), tick_label(s.x[i], xa.integer).c_str());
  std::string yv = fmt(s.y[i], 4);
  if (i < s.y_lo.size() && i < s.y_hi.size())
    yv += "  (" + fmt(s.y_lo[i], 3) + " to " + fmt(s.y_hi[i], 3) + ")";
  ImGui::Text("%s: %s %s", ya.label.c_str(), yv.c_str(), s.unit.c_str());
  if (i < s.dim.size() && s.dim[i]) ImGui::TextColored(ImVec4(1, 0.5f, 0.4f, 1), "does not fit in memory");
  if (i < s.notes.size() && !s.notes[i].empty()) {
    ImGui::PushTextWrapPos(fh * 28);
    ImGui::TextUnformatted(s.notes[i].c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::EndTooltip();
}

// The hover read-out: a cursor line and the nearest point (screen distance) of any series, with its tooltip.
void hover_readout(const Frame& fr, const Axis& xa, const Axis& ya, const std::vector<Series>& series,
                   Hit* hit) {
  ImVec2 m = ImGui::GetIO().MousePos;
  const Series* best_s = nullptr;
  std::size_t best_i = 0;
  float best_d = 1e30f;
  for (const auto& s : series) {
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      float dx = fr.mx.map(s.x[i]) - m.x, dy = fr.my.map(s.y[i]) - m.y;
      float d = dx * dx + dy * dy * 0.25f;  // favour the point under the cursor's x
      if (d < best_d) {
        best_d = d;
        best_s = &s;
        best_i = i;
      }
    }
  }
  if (m.x >= fr.left && m.x <= fr.right && m.y >= fr.top && m.y <= fr.bottom)
    fr.dl->AddLine(ImVec2(m.x, fr.top), ImVec2(m.x, fr.bottom), ImGui::GetColorU32(ImGuiCol_Text, 0.25f));
  if (best_s == nullptr || best_d >= 60.0f * 60.0f) return;
  fr.dl->AddCircle(fr.at(best_s->x[best_i], best_s->y[best_i]), 6.0f, ImGui::GetColorU32(ImGuiCol_Text), 0,
                   2.0f);
  point_tooltip(*best_s, best_i, xa, ya, fr.fh);
  if (hit != nullptr) {
    hit->series = static_cast<int>(best_s - series.data());
    hit->index = static_cast<int>(best_i);
    hit->clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  }
}

}  // namespace

bool line_plot(const char* id, ImVec2 size, const Axis& xa, const Axis& ya, const std::vector<Series>& series,
               const std::vector<VLine>& vlines, Hit* hit) {
  ImGui::PushID(id);
  if (hit != nullptr) *hit = Hit{};
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  if (size.y <= 0) size.y = 240;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##plot", size);
  const bool hovered = ImGui::IsItemHovered();
  const float fh = ImGui::GetFontSize();

  // y tick labels decide the left margin
  std::vector<double> yt =
      ya.log ? log_ticks(ya.lo, ya.hi)
             : nice_ticks(ya.lo, ya.hi, std::max(2, static_cast<int>(size.y / (fh * 2.6f))));
  float label_w = 0;
  for (double v : yt) label_w = std::max(label_w, ImGui::CalcTextSize(tick_label(v, ya.integer).c_str()).x);
  const float left = p.x + label_w + 10.0f;
  const float right = p.x + size.x - 10.0f;
  const float top = p.y + fh + 8.0f;  // room for the y axis label
  const float bottom = p.y + size.y - fh * 2.0f - 10.0f;
  if (right - left < 40 || bottom - top < 30) {
    ImGui::PopID();
    return hovered;
  }
  const Frame fr{ImGui::GetWindowDrawList(), fh, left, right, top, bottom, Mapper{xa, left, right},
                 Mapper{ya, bottom, top}};
  ImDrawList* dl = fr.dl;
  dl->AddRectFilled(ImVec2(left, top), ImVec2(right, bottom), ImGui::GetColorU32(ImGuiCol_FrameBg), 3.0f);
  dl->PushClipRect(ImVec2(p.x, p.y), ImVec2(p.x + size.x, p.y + size.y), true);
  draw_axes(fr, p, xa, ya, yt);
  dl->PushClipRect(ImVec2(left, top), ImVec2(right, bottom), true);
  for (const auto& v : vlines) dashed_vline(dl, fr.mx.map(v.x), top, bottom, v.color, 1.5f);
  // bands first, then lines, then markers
  draw_bands(fr, series);
  draw_lines(fr, series);
  draw_markers(fr, series);
  dl->PopClipRect();
  draw_vline_labels(fr, vlines);
  draw_legend(fr, series, !vlines.empty());
  dl->PopClipRect();

  if (hovered) hover_readout(fr, xa, ya, series, hit);
  ImGui::PopID();
  return hovered;
}

void stacked_bar(const char* id, float width, const std::vector<Segment>& segs, double capacity,
                 const char* unit, const char* capacity_label, const BarOptions& options) {
  ImGui::PushID(id);
  if (width <= 0) width = ImGui::GetContentRegionAvail().x;
  const float fh = ImGui::GetFontSize();
  const float bar_h = fh * options.height;
  double total = 0;
  for (const auto& s : segs) total += std::max(0.0, s.value);
  const double scale_max =
      options.scale_max > 0 ? options.scale_max : std::max({capacity * 1.04, total * 1.02, 1e-9});
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float top = p.y + fh + 4;  // capacity label row
  ImGui::InvisibleButton("##bar", ImVec2(width, bar_h + fh + 8));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto X = [&](double v) { return p.x + f(v / scale_max) * width; };
  dl->AddRectFilled(ImVec2(p.x, top), ImVec2(p.x + width, top + bar_h), ImGui::GetColorU32(ImGuiCol_FrameBg),
                    3.0f);
  double acc = 0;
  const Segment* hov = nullptr;
  const ImVec2 m = ImGui::GetIO().MousePos;
  for (const auto& s : segs) {
    if (s.value <= 0) continue;
    float x0 = X(acc), x1 = X(acc + s.value);
    dl->AddRectFilled(ImVec2(x0, top), ImVec2(std::max(x1, x0 + 1), top + bar_h), s.color);
    if (x1 - x0 > 3) dl->AddLine(ImVec2(x1, top), ImVec2(x1, top + bar_h), IM_COL32(20, 20, 20, 160));
    if (hovered && m.x >= x0 && m.x < x1 && m.y >= top && m.y <= top + bar_h) hov = &s;
    acc += s.value;
  }
  const std::string used_label = std::string(options.total_label) + " " + fmt(total) + " " + unit +
                                 (capacity > 0 ? " (" + fmt(100.0 * total / capacity, 3) + "%)" : "");
  const float used_w = ImGui::CalcTextSize(used_label.c_str()).x;
  if (capacity > 0) {
    float cx = X(capacity);
    if (total > capacity) {
      dl->AddRectFilled(ImVec2(cx, top), ImVec2(X(total), top + bar_h), IM_COL32(255, 60, 60, 90));
    }
    dl->AddLine(ImVec2(cx, top - 3), ImVec2(cx, top + bar_h + 3), IM_COL32(255, 90, 90, 255), 2.5f);
    std::string lbl = std::string(capacity_label) + " " + fmt(capacity) + " " + unit;
    ImVec2 ts = ImGui::CalcTextSize(lbl.c_str());
    // ends at the capacity line, but never over the "used" label (a capacity near the left edge: a job that
    // does not fit)
    float lx = std::max(p.x, cx - ts.x);
    if (lx < p.x + used_w + fh) lx = std::min(p.x + used_w + fh, p.x + width - ts.x);
    dl->AddText(ImVec2(lx, p.y), IM_COL32(255, 130, 130, 255), lbl.c_str());
  }
  dl->AddText(ImVec2(p.x, p.y), text_col(), used_label.c_str());
  if (hov != nullptr) {
    ImGui::BeginTooltip();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(hov->color), "%s", hov->label.c_str());
    ImGui::Text("%s %s  (%s%% of the total)", fmt(hov->value, 4).c_str(), unit,
                fmt(100.0 * hov->value / std::max(total, 1e-12), 3).c_str());
    if (!hov->tooltip.empty()) {
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 24);
      ImGui::TextUnformatted(hov->tooltip.c_str());
      ImGui::PopTextWrapPos();
    }
    ImGui::EndTooltip();
  }
  // legend: wrapped items
  float x = 0;
  for (const auto& s : segs) {
    if (!options.legend) break;
    if (s.value <= 0) continue;
    std::string t = s.label + " " + fmt(s.value) + " " + unit;
    float w = fh + 6 + ImGui::CalcTextSize(t.c_str()).x + 14;
    if (x > 0 && x + w > width) x = 0;
    if (x > 0) ImGui::SameLine(0, 0);
    ImVec2 c = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(c.x + 2, c.y + 3), ImVec2(c.x + fh - 1, c.y + fh),
                                              s.color, 2.0f);
    ImGui::Dummy(ImVec2(fh + 4, fh));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(t.c_str());
    if (!s.tooltip.empty()) tip(s.tooltip, 24.0f);
    ImGui::SameLine(0, 14);
    ImGui::Dummy(ImVec2(0, 0));
    x += w;
  }
  ImGui::PopID();
}

void bar_list(const char* id, float width, const std::vector<Segment>& items, const char* unit) {
  ImGui::PushID(id);
  if (width <= 0) width = ImGui::GetContentRegionAvail().x;
  const float fh = ImGui::GetFontSize();
  double maxv = 0, total = 0;
  float label_w = 0;
  for (const auto& s : items) {
    maxv = std::max(maxv, s.value);
    total += std::max(0.0, s.value);
    label_w = std::max(label_w, ImGui::CalcTextSize(s.label.c_str()).x);
  }
  float value_w = 0;
  for (const auto& it : items) {
    std::string v =
        fmt(it.value) + " " + unit + "  (" + fmt(total > 0 ? 100.0 * it.value / total : 0, 2) + "%)";
    value_w = std::max(value_w, ImGui::CalcTextSize(v.c_str()).x);
  }
  value_w += 8;
  const float bar_w = std::max(20.0f, width - label_w - value_w - 16);
  for (const auto& s : items) {
    ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton(s.label.c_str(), ImVec2(width, fh + 6));
    bool hov = ImGui::IsItemHovered();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddText(ImVec2(p.x, p.y + 3), text_col(), s.label.c_str());
    float x0 = p.x + label_w + 8;
    float w = maxv > 0 ? f(std::max(0.0, s.value) / maxv) * bar_w : 0;
    dl->AddRectFilled(ImVec2(x0, p.y + 2), ImVec2(x0 + bar_w, p.y + fh + 4),
                      ImGui::GetColorU32(ImGuiCol_FrameBg), 2.0f);
    dl->AddRectFilled(ImVec2(x0, p.y + 2), ImVec2(x0 + std::max(w, 1.0f), p.y + fh + 4),
                      hov ? with_alpha(s.color, 1.0f) : with_alpha(s.color, 0.85f), 2.0f);
    std::string v =
        fmt(s.value) + " " + unit + "  (" + fmt(total > 0 ? 100.0 * s.value / total : 0, 2) + "%)";
    dl->AddText(ImVec2(x0 + bar_w + 8, p.y + 3), dim_text_col(), v.c_str());
    if (hov) {
      ImGui::BeginTooltip();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(s.color), "%s", s.label.c_str());
      ImGui::Text("%s %s, %s%% of %s %s", fmt(s.value, 4).c_str(), unit,
                  fmt(total > 0 ? 100.0 * s.value / total : 0, 3).c_str(), fmt(total, 4).c_str(), unit);
      if (!s.tooltip.empty()) {
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 24);
        ImGui::TextUnformatted(s.tooltip.c_str());
        ImGui::PopTextWrapPos();
      }
      ImGui::EndTooltip();
    }
  }
  ImGui::PopID();
}

}  // namespace ftcost::web::plot
