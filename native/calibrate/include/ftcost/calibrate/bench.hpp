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
// The device is in an unrecoverable state (a sticky CUDA error such as an illegal address): the run
// stops, what finished is written.
struct FatalDeviceError : DeviceError {
  using DeviceError::DeviceError;
};
// Out of device memory for this shape: skip it with a note, go on.
struct OutOfMemory : DeviceError {
  using DeviceError::DeviceError;
};
// The library does not support this shape/type here (cuBLAS NOT_SUPPORTED or ARCH_MISMATCH, a heuristic
// without a result): skip with a note. Every other library error is a failure of the item.
struct Unsupported : DeviceError {
  using DeviceError::DeviceError;
};
// A kernel's result differs from its reference: the row is not recorded, the run fails at the end.
struct ValidationFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a cuBLAS status means for the item (numbers of cublas_api.h, CUDA 13.0; checked against the header
// in kernels/cuda_libs.cpp): NOT_SUPPORTED (15) and ARCH_MISMATCH (8, "the function requires a feature
// absent from the device architecture") are skips; ALLOC_FAILED (3) is out of memory; everything else,
// INVALID_VALUE (7) included, is a failure: an argument bug must not look like an unsupported shape.
enum class StatusClass { skip, out_of_memory, failure };
StatusClass classify_cublas_status(int status);
// cudaError_t codes after which the CUDA context is unusable (driver_types.h: "the process must be
// terminated and relaunched"): 700 illegal address, 702 launch timeout, 710 assert, 714..719 hardware
// stack error, illegal instruction, misaligned/invalid address space, invalid PC, launch failure, 214 ECC
// uncorrectable, 999 unknown.
bool cuda_error_is_sticky(int code);

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

// The checks an MoE item needs before it is timed (issue 17 item 4), each run once and remembered: the
// small-layer CPU-reference check per implementation (once per run), the big-size loop reference per
// shape, and the grouped implementation's agreement with it per shape. A check that fails makes
// prepare() throw ValidationFailure for the items that depend on it and no others: a grouped failure
// never costs the loop rows. A check that throws anything else (out of memory, unsupported) is not
// remembered, so the next item tries again.
class MoeGate {
 public:
  struct Hooks {
    std::function<std::string(bool grouped)> small_check;  // "" when it passes
    std::function<std::string()> loop_reference;           // builds the reference; "" when it passes
    std::function<std::string()> grouped_agrees;           // "" when grouped matches the loop reference
  };
  void new_shape();  // a new MoE shape: forget the per-shape results
  void prepare(bool grouped, const Hooks& h);

 private:
  bool small_done_[2] = {false, false};
  std::string small_failure_[2];
  bool ref_done_ = false, agree_done_ = false;
  std::string ref_failure_, agree_failure_;
};

// Runs one measurement under `label`: OutOfMemory and Unsupported become a "skipped" note; a
// ValidationFailure or any other DeviceError a counted failure, reported with the label (shape, dtype,
// layout) and the call, after which the run goes on with the next item; a FatalDeviceError propagates
// (the run stops). Returns true when `fn` completed. Does nothing (returns false) once cancelled.
bool run_item(Env& env, const std::string& label, const std::function<void()>& fn);

}  // namespace ftcost::calib
