// A small plotting module drawn with ImGui's draw lists (no plotting library is packaged here):
// line/scatter plots with axes, ticks, labels, bands and error bars, vertical markers and hover
// read-outs; horizontal stacked bars against a capacity; labelled bar lists.
#pragma once

#include "imgui.h"

#include <string>
#include <vector>

namespace ftcost::web::plot {

// Categorical colours (colour-blind friendly, readable on the dark theme).
ImU32 color(int i, float alpha = 1.0f);
ImU32 with_alpha(ImU32 c, float alpha);

struct Axis {
  std::string label;  // with unit, e.g. "batch size (samples)"
  double lo = 0, hi = 1;
  bool log = false;
  bool integer = false;  // ticks and read-outs as whole numbers
};

struct Series {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> y_lo, y_hi;  // optional range: drawn as a band (line series) or error bars (markers)
  std::vector<char> dim;           // optional, per point: drawn faded (e.g. does not fit)
  ImU32 color = 0;
  bool line = true;
  bool markers = false;
  float marker_radius = 3.5f;
  std::string unit;                // for the hover read-out of y
  std::vector<std::string> notes;  // optional, per point: extra lines in the hover read-out
};

// Which point the mouse is on (hover read-out) and whether it was clicked, for plots whose points are items.
struct Hit {
  int series = -1, index = -1;
  bool clicked = false;
};

struct VLine {
  double x = 0;
  std::string label;
  ImU32 color = 0;
};

// Draws in a region of `size` (width <= 0: all available). Returns true when hovered.
bool line_plot(const char* id, ImVec2 size, const Axis& x, const Axis& y, const std::vector<Series>& series,
               const std::vector<VLine>& vlines = {}, Hit* hit = nullptr);

struct Segment {
  std::string label;
  double value = 0;
  ImU32 color = 0;
  std::string tooltip;  // extra line in the hover read-out
};

// How a stacked bar is drawn: the label before its total ("used 12 GiB"), its height in font sizes, the
// value of the right edge (0: the larger of the capacity and the total; two bars given the same value share
// a scale) and whether the legend is drawn.
struct BarOptions {
  const char* total_label = "used";
  float height = 2.0f;
  double scale_max = 0;
  bool legend = true;
};

// One horizontal bar made of segments, drawn against `capacity` (a marker line; the part beyond it is
// flagged), with a legend underneath. Width <= 0: all available.
void stacked_bar(const char* id, float width, const std::vector<Segment>& segments, double capacity,
                 const char* unit, const char* capacity_label, const BarOptions& options = BarOptions());

// One bar per item, scaled to the largest, value and share printed after the bar.
void bar_list(const char* id, float width, const std::vector<Segment>& items, const char* unit);

// "Nice" tick values (1, 2, 2.5, 5 x 10^k) covering [lo, hi], at most about `max_ticks` of them.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
// Tick values for a log axis: powers of ten, with 2 and 5 multiples when the range is short.
std::vector<double> log_ticks(double lo, double hi);

// Human number: 3 significant digits, thousands separators, no exponent for everyday magnitudes.
std::string fmt(double v, int significant = 3);
// Like fmt, without trailing zeros ("1", "2.5").
std::string fmt_compact(double v, int significant = 3);
// Whole number with thousands separators.
std::string fmt_int(double v);
// "$12.34" (cents shown below $1000).
std::string fmt_usd(double v);
// Hours as "3.8 h", "45 min" or "2.1 days".
std::string fmt_hours(double h);
// One time unit per table column: "min" when every row is under an hour, else "h" (the header says which).
std::string time_unit_for(double max_hours);
// A cell in that unit; in hours, 48 h and more add the days ("81.2 h (3.4 d)", the CLI's pair).
std::string fmt_hours_as(double h, const std::string& unit);

}  // namespace ftcost::web::plot
