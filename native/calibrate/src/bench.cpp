#include "ftcost/calibrate/bench.hpp"

#include <cstdio>

namespace ftcost::calib {

void Env::set_family(const std::string& f) {
  family_ = f;
  int n = plan_.items(f);
  double total = plan_.estimate_seconds();
  unit_ = n > 0 && total > 0 ? plan_.estimate_seconds(f) / total / n : 0;
}

void Env::begin(const std::string& label) {
  label_ = label;
  if (progress_) progress_->begin(label);
}

void Env::end() {
  if (progress_) progress_->advance(unit_);
}

void Env::note(const std::string& text) {
  cal_.meta.notes.push_back(text);
  log("note: " + text);
}

void Env::fail(const std::string& text) {
  ++failures_;
  cal_.meta.notes.push_back("FAILED: " + text);
  log("FAILED: " + text);
}

void Env::log(const std::string& text) {
  if (progress_) {
    progress_->message("ftcost-calibrate: " + text);
  } else {
    std::fprintf(stderr, "ftcost-calibrate: %s\n", text.c_str());
  }
}

bool run_item(Env& env, const std::string& label, const std::function<void()>& fn) {
  if (env.cancelled()) return false;
  env.begin(label);
  bool done = false;
  try {
    fn();
    done = true;
  } catch (const OutOfMemory& e) {
    env.note(label + ": skipped: out of device memory (" + e.call + ")");
  } catch (const Unsupported& e) {
    env.note(label + ": skipped: not supported on this device/library (" + e.call + ": " + e.what() + ")");
  } catch (const ValidationFailure& e) {
    env.fail(label + ": " + e.what());
  }
  env.end();
  return done;
}

}  // namespace ftcost::calib
