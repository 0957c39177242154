// What a benchmark family sees while it runs (host-only; the CUDA families use it through this header):
// the plan, the calibration being filled, progress, notes, cancellation, and the error types that the
// CUDA side throws.
#pragma once

#include "ftcost/calibrate/plan.hpp"
#include "ftcost/calibrate/progress.hpp"
#include "ftcost/calibration.hpp"

#include <csignal>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ftcost::calib {

// A CUDA runtime / cuBLAS call failed. `call` is the call as written ("cublasLtMatmul(...)").
struct DeviceError : std::runtime_error {
  DeviceError(std::string call_, const std::string& what)
      : std::runtime_error(what), call(std::move(call_)) {}
  std::string call;
};
// Out of device memory for this shape: skip it with a note, go on.
struct OutOfMemory : DeviceError {
  using DeviceError::DeviceError;
};
// The library does not support this shape/type here (e.g. cuBLAS NOT_SUPPORTED): skip with a note.
struct Unsupported : DeviceError {
  using DeviceError::DeviceError;
};
// A kernel's result differs from its reference: the row is not recorded, the run fails at the end.
struct ValidationFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Env {
 public:
  Env(const Plan& plan, Calibration& cal, Progress* progress, const volatile std::sig_atomic_t* cancel_flag)
      : plan_(plan), cal_(cal), progress_(progress), cancel_(cancel_flag) {}

  const Plan& plan() const { return plan_; }
  Calibration& cal() { return cal_; }
  CalMeasurements& rows() { return cal_.measurements; }

  bool cancelled() const { return cancel_ && *cancel_ != 0; }
  void set_family(const std::string& f);
  const std::string& family() const { return family_; }
  void begin(const std::string& label);  // a measurement starts (progress label, error context)
  void end();                            // it is finished (progress advances by one item of the family)
  const std::string& label() const { return label_; }

  void note(const std::string& text);  // recorded in meta.notes and printed
  void fail(const std::string& text);  // a validation failure: noted, counted
  int failures() const { return failures_; }
  void log(const std::string& text);  // printed only
  bool verbose = false;

 private:
  const Plan& plan_;
  Calibration& cal_;
  Progress* progress_;
  const volatile std::sig_atomic_t* cancel_;
  std::string family_, label_;
  double unit_ = 0;
  int failures_ = 0;
};

// Runs one measurement under `label`: OutOfMemory and Unsupported become a "skipped" note,
// ValidationFailure a counted failure; any other DeviceError propagates (the run stops). Returns true
// when `fn` completed. Does nothing (returns false) once the run is cancelled.
bool run_item(Env& env, const std::string& label, const std::function<void()>& fn);

}  // namespace ftcost::calib
