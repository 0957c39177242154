// gpu-db checker, calibrations (calibrations/<gpu-id>/<name>.json): the calibration loader, complete --quick
// or
// --full runs only; against the GPU file they are filed under: measurements not above the hardware ceiling
// (those above the datasheet's peak are listed for review, not rejected) and the device (name, form factor,
// memory, SMs, compute capability) matching it; no duplicate runs of one device.
#include "checks.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ftcost::dbcheck {

namespace {

std::vector<std::string> name_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : lower(s)) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// The model token of a product name: "h100" for "H100 SXM5 80GB", "4090" for "RTX 4090", "a6000" for
// "RTX A6000", "mi300x" for "MI300X".
std::string model_token(const std::string& name) {
  for (const auto& t : name_tokens(name)) {
    if (t == "nvidia" || t == "tesla" || t == "geforce" || t == "amd" || t == "instinct" || t == "intel" ||
        t == "quadro")
      continue;
    if (t.find_first_of("0123456789") != std::string::npos) return t;
  }
  return "";
}

bool has_token(const std::vector<std::string>& toks, const std::string& t) {
  return std::find(toks.begin(), toks.end(), t) != toks.end();
}

// Why the device does not look like `g` (empty when it does); `fieldname` gets the field.
std::string device_mismatch(const Calibration& cal, const GpuRef& g, std::string& fieldname) {
  const auto dev = name_tokens(cal.device.name);
  const std::string want = model_token(g.spec.name);
  if (!want.empty() && !has_token(dev, want)) {
    fieldname = "device.name";
    return in_quotes(cal.device.name) + " does not name a " + g.spec.name + " (no \"" + want + "\" in it)";
  }
  const std::string ff = lower(g.form_factor + " " + g.spec.name + " " + g.spec.id);
  bool sxm = false;
  for (const auto& t : dev) sxm = sxm || t.rfind("sxm", 0) == 0;
  if ((has_token(dev, "pcie") && !contains(ff, "pcie")) || (sxm && !contains(ff, "sxm")) ||
      (has_token(dev, "nvl") && !contains(ff, "nvl"))) {
    fieldname = "device.name";
    return in_quotes(cal.device.name) + " is another form factor than " + g.spec.name + " (" + g.form_factor +
           ")";
  }
  const double mib = static_cast<double>(cal.device.memory_bytes) / 1048576.0;
  if (g.spec.usable_memory_mib > 0) {
    if (std::fabs(mib - g.spec.usable_memory_mib) > 0.02 * g.spec.usable_memory_mib) {
      fieldname = "device.memory_bytes";
      return fmt_num(std::round(mib)) + " MiB does not match " + g.spec.name + " (" +
             fmt_num(g.spec.usable_memory_mib) + " MiB per nvidia-smi)";
    }
  } else if (g.spec.memory_gib > 0) {
    const double label = g.spec.memory_gib * 1024.0;
    if (mib < 0.88 * label || mib > 1.01 * label) {
      fieldname = "device.memory_bytes";
      return fmt_num(std::round(mib)) + " MiB does not match " + g.spec.name + " (" +
             fmt_num(g.spec.memory_gib) + " GiB)";
    }
  }
  if (g.spec.sm_count > 0 && static_cast<double>(cal.device.sm_count) != g.spec.sm_count) {
    fieldname = "device.sm_count";
    return std::to_string(cal.device.sm_count) + " SMs, but " + g.spec.name + " has " +
           fmt_num(g.spec.sm_count) + " (another SKU, or a MIG slice?)";
  }
  const std::string cc = std::to_string(cal.device.cc_major) + "." + std::to_string(cal.device.cc_minor);
  if (!g.spec.compute_capability.empty() && cc != g.spec.compute_capability) {
    fieldname = "device.compute_capability";
    return cc + " but " + g.spec.name + " is " + g.spec.compute_capability;
  }
  return "";
}

}  // namespace

void check_calibration_entry(Entry& e) {
  const auto parts = split_path(e.rel);
  e.cal_gpu = parts.size() == 3 ? parts[1] : std::string();
  const std::string base = parts.empty() ? std::string() : parts.back();
  if (base.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
      std::string::npos)
    e.sink.add(kWholeFile, Errc::invalid_value,
               "calibration file names use letters, digits, '.', '_' and '-' only");
  auto c = parse_calibration(e.doc, "");
  if (!c.ok()) {
    e.sink.add_loader_error(c.error());
    return;
  }
  e.cal = std::move(c).value();
  e.cal_ok = true;
  if (e.cal.meta.mode == "smoke")
    e.sink.add("meta.mode", Errc::invalid_value,
               "\"smoke\" runs use tiny sizes for device tests; gpu-db takes --quick or --full runs");
  if (e.cal.meta.partial)
    e.sink.add("meta.partial", Errc::invalid_value,
               "the run was interrupted (not every benchmark ran); contribute a complete run");
}

void check_calibration_refs(Entry& e, const std::map<std::string, GpuRef>& gpu_refs,
                            const std::set<std::string>& gpu_files,
                            std::map<std::string, const Entry*>& first_cal) {
  if (e.cal_gpu.empty()) return;
  auto g = gpu_refs.find(e.cal_gpu);
  if (g == gpu_refs.end()) {
    if (gpu_files.count(e.cal_gpu) != 0) return;  // the GPU file is there but broken: reported there
    e.sink.add(kWholeFile, Errc::unknown_id,
               "filed under calibrations/" + e.cal_gpu + "/ but there is no gpus/" + e.cal_gpu +
                   ".json: the folder is the id of the GPU measured");
    return;
  }
  if (!e.cal_ok || !g->second.spec_ok) return;
  const GpuSpec& spec = g->second.spec;
  const double peak = spec.bf16_tflops > 0 ? spec.bf16_tflops : spec.fp16_tflops;
  auto st = check_against_spec(e.cal, peak, spec.memory_bandwidth_gbps, &e.review);
  if (!st.ok()) e.sink.add_loader_error(st.error());
  std::string fieldname;
  const std::string why = device_mismatch(e.cal, g->second, fieldname);
  if (!why.empty()) {
    std::string suggestion;
    for (const auto& [id, ref] : gpu_refs) {
      std::string ignored;
      if (id != e.cal_gpu && ref.spec_ok && device_mismatch(e.cal, ref, ignored).empty()) {
        suggestion = "; it looks like calibrations/" + id + "/";
        break;
      }
    }
    e.sink.add(fieldname, Errc::invalid_value,
               "the device does not match the GPU file it is filed under (" + g->second.file + "): " + why +
                   suggestion);
  }
  if (!e.cal.device.uuid_hash.empty()) {
    auto [it, fresh] = first_cal.emplace(e.cal.device.uuid_hash + "|" + e.cal.meta.created_utc, &e);
    if (!fresh)
      e.sink.add("meta.created_utc", Errc::invalid_value,
                 "same device and creation time as " + it->second->path + ": a duplicate calibration");
  }
}

}  // namespace ftcost::dbcheck
