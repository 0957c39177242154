// Calibration files checked by the core's loader (the same code as `ftcost --calibration` and the
// gpu-db checks), then against the spec sheet of the GPU they are for.
#include "calibration_check.hpp"

#include "ftcost/calibration.hpp"
#include "ftcost/calibration_share.hpp"
#include "state.hpp"

#include <cmath>

namespace ftcost::web {

CalibrationCheck check_calibration(const std::string& text, const std::string& source, const Database& db,
                                   const std::string& gpu_id) {
  CalibrationCheck c;
  auto cal = parse_calibration(text, source);
  if (!cal.ok()) {
    c.field = cal.error().field;
    c.message = cal.error().to_string();
    return c;
  }
  const Calibration& k = cal.value();
  c.device_name = k.device.name;
  const double mem_gib = static_cast<double>(k.device.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  c.suggested_gpu = gpu_id.empty() ? guess_gpu(k.device.name, mem_gib, db) : gpu_id;
  if (const GpuSpec* g = db.gpu(c.suggested_gpu)) {
    Status s = check_against_spec(k, g->bf16_tflops, g->memory_bandwidth_gbps);
    if (!s.ok()) {
      c.field = s.error().field;
      c.message = s.error().to_string() + " (checked against the spec of " + g->id + ")";
      return c;
    }
  }
  c.accepted = true;
  c.fingerprint = calibration_fingerprint(k);
  c.link = base64url_encode(calibration_compact(k).dump());
  if (c.link.size() > kLinkCalMaxChars) c.link.clear();
  c.flags = calibration_flags_text(calibration_flags(k));
  std::size_t rows = k.measurements.gemm.size() + k.measurements.bandwidth.size() +
                     k.measurements.expert_gemm.size() + k.measurements.moe_layer.size() +
                     k.measurements.nf4_dequant.size() + k.measurements.adamw.size() +
                     k.measurements.elementwise.size() + k.measurements.launch.size() +
                     k.measurements.host.size() + k.measurements.cpu.size();
  c.message = k.device.name + ", " + std::to_string(rows) + " measurements (" + k.meta.mode + " run, " +
              k.meta.created_utc + "), fingerprint " + c.fingerprint.substr(0, 8) +
              (c.flags.empty() ? std::string() : "; " + c.flags);
  return c;
}

}  // namespace ftcost::web
