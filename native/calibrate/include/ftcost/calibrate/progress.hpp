// Progress bar with ETA on stderr (host-only). On a terminal one line is redrawn in place; otherwise
// (CI logs, redirected stderr) a plain line is printed when a family starts and every 10%.
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

namespace ftcost::calib {

// "0:07", "12:34", "1:02:03"; "--:--" for negative, NaN or absurd values.
std::string format_duration(double seconds);

// "[#########...........]  45%  gemm bf16 fwd m=4096 n=4096 k=4096  1:23 elapsed, ETA 1:40"
// `width` = characters inside the brackets. The label is cut to `max_label` characters.
std::string progress_line(double fraction, const std::string& label, double elapsed_s,
                          std::optional<double> eta_s, int width = 24, std::size_t max_label = 48);

// ETA from progress so far: elapsed * (1 - f) / f, blended with the plan's estimate while f is small.
std::optional<double> estimate_eta(double fraction, double elapsed_s, double planned_total_s);

class Progress {
 public:
  Progress(std::FILE* out, bool tty, double planned_total_s);
  void set_total_units(double units) { total_ = units; }
  void begin(const std::string& label);   // current item
  void advance(double units);             // item finished
  void message(const std::string& line);  // a note between redraws (clears the bar first)
  void finish();
  double elapsed() const;
  double fraction() const;

 private:
  void draw(bool force);
  std::FILE* out_;
  bool tty_;
  double planned_;
  double total_ = 1, done_ = 0;
  std::string label_;
  int last_decile_ = -1;
  bool bar_visible_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace ftcost::calib
