#include "ftcost/calibrate/progress.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::calib {

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "--:--";
  long long s = static_cast<long long>(std::llround(seconds));
  long long h = s / 3600, m = (s / 60) % 60, sec = s % 60;
  char buf[32];
  if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, sec);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", m, sec);
  }
  return buf;
}

std::string progress_line(double fraction, const std::string& label, double elapsed_s,
                          std::optional<double> eta_s, int width, std::size_t max_label) {
  fraction = std::min(1.0, std::max(0.0, std::isnan(fraction) ? 0.0 : fraction));
  int filled = static_cast<int>(std::floor(fraction * width + 1e-9));
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(width - filled), '.') + "]";
  char pct[16];
  std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(std::floor(fraction * 100 + 1e-9)));
  std::string l = label.size() > max_label ? label.substr(0, max_label - 3) + "..." : label;
  std::string s = bar + " " + pct + "  " + l + "  " + format_duration(elapsed_s) + " elapsed";
  s += eta_s ? ", ETA " + format_duration(*eta_s) : std::string(", ETA --:--");
  return s;
}

std::optional<double> estimate_eta(double fraction, double elapsed_s, double planned_total_s) {
  if (fraction >= 1) return 0.0;
  if (fraction <= 0 || elapsed_s <= 0) {
    if (planned_total_s > 0) return std::max(0.0, planned_total_s - elapsed_s);
    return std::nullopt;
  }
  double measured = elapsed_s * (1 - fraction) / fraction;
  if (planned_total_s <= 0) return measured;
  // trust the measurement more as the run goes on
  double planned = std::max(0.0, planned_total_s * (1 - fraction));
  double wgt = std::min(1.0, fraction * 5);
  return wgt * measured + (1 - wgt) * planned;
}

Progress::Progress(std::FILE* out, bool tty, double planned_total_s)
    : out_(out),
      tty_(tty),
      planned_(planned_total_s),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}
double Progress::fraction() const { return total_ > 0 ? std::min(1.0, done_ / total_) : 0; }

void Progress::begin(const std::string& label) {
  label_ = label;
  draw(false);
}

void Progress::advance(double units) {
  done_ += units;
  draw(false);
}

void Progress::message(const std::string& line) {
  if (!out_) return;
  if (tty_ && bar_visible_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "%s\n", line.c_str());
  bar_visible_ = false;
  if (tty_) draw(true);
}

void Progress::finish() {
  if (!out_) return;
  draw(true);
  if (tty_ && bar_visible_) std::fputs("\n", out_);
  bar_visible_ = false;
  std::fflush(out_);
}

void Progress::draw(bool force) {
  if (!out_) return;
  auto now = std::chrono::steady_clock::now();
  double f = fraction();
  auto eta = estimate_eta(f, elapsed(), planned_);
  if (tty_) {
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
    std::fprintf(out_, "\r\033[K%s", progress_line(f, label_, elapsed(), eta).c_str());
    std::fflush(out_);
    bar_visible_ = true;
  } else {
    int decile = static_cast<int>(std::floor(f * 10));
    if (!force && decile == last_decile_) return;
    last_decile_ = decile;
    std::fprintf(out_, "%s\n", progress_line(f, label_, elapsed(), eta).c_str());
    std::fflush(out_);
  }
  last_draw_ = now;
}

}  // namespace ftcost::calib
