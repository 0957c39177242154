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

StatusClass classify_cublas_status(int status) {
  switch (status) {
    case 15:  // CUBLAS_STATUS_NOT_SUPPORTED
    case 8:   // CUBLAS_STATUS_ARCH_MISMATCH
      return StatusClass::skip;
    case 3:  // CUBLAS_STATUS_ALLOC_FAILED
      return StatusClass::out_of_memory;
    default:
      return StatusClass::failure;
  }
}

bool cuda_error_is_sticky(int code) {
  switch (code) {
    case 214:  // cudaErrorECCUncorrectable
    case 700:  // cudaErrorIllegalAddress
    case 702:  // cudaErrorLaunchTimeout
    case 710:  // cudaErrorAssert
    case 714:  // cudaErrorHardwareStackError
    case 715:  // cudaErrorIllegalInstruction
    case 716:  // cudaErrorMisalignedAddress
    case 717:  // cudaErrorInvalidAddressSpace
    case 718:  // cudaErrorInvalidPc
    case 719:  // cudaErrorLaunchFailure
    case 999:  // cudaErrorUnknown
      return true;
    default:
      return false;
  }
}

void MoeGate::new_shape() {
  ref_done_ = agree_done_ = false;
  ref_failure_.clear();
  agree_failure_.clear();
}

void MoeGate::prepare(bool grouped, const Hooks& h) {
  const int i = grouped ? 1 : 0;
  if (!small_done_[i]) {
    small_failure_[i] = h.small_check(grouped);
    small_done_[i] = true;
  }
  if (!small_failure_[i].empty())
    throw ValidationFailure("the MoE layer does not match its CPU reference: " + small_failure_[i]);
  if (!ref_done_) {
    ref_failure_ = h.loop_reference();
    ref_done_ = true;
  }
  if (!ref_failure_.empty()) throw ValidationFailure(ref_failure_);
  if (!grouped) return;
  if (!agree_done_) {
    agree_failure_ = h.grouped_agrees();
    agree_done_ = true;
  }
  if (!agree_failure_.empty()) throw ValidationFailure(agree_failure_);
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
  } catch (const FatalDeviceError&) {
    env.end();
    throw;
  } catch (const DeviceError& e) {
    env.fail(label + ": " + e.call + " failed: " + e.what());
  }
  env.end();
  return done;
}

}  // namespace ftcost::calib
