#include "ftcost/gpu.hpp"

#include "ftcost/model_constants.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace ftcost {

std::optional<std::pair<int, int>> parse_compute_capability(const std::string& cc) {
  const std::size_t dot = cc.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= cc.size() || cc.size() > 6) return std::nullopt;
  int major = 0;
  int minor = 0;
  for (std::size_t i = 0; i < cc.size(); ++i) {
    if (i == dot) continue;
    if (cc[i] < '0' || cc[i] > '9') return std::nullopt;
    int& part = i < dot ? major : minor;
    part = part * 10 + (cc[i] - '0');
  }
  return std::make_pair(major, minor);
}

double GpuSpec::usable_bytes() const {
  const double mib = 1024.0 * 1024.0;
  const double total = usable_memory_mib > 0 ? usable_memory_mib * mib
                                             : memory_gib * 1024.0 * mib * constants::kUnlistedUsableFraction;
  return std::max(0.0, total - reserved_mib * mib);
}

double GpuSpec::peak_tflops(const std::string& precision) const {
  if (precision == "bf16") return bf16_tflops;
  if (precision == "fp16") return fp16_tflops;
  if (precision == "fp32") return fp32_tflops;
  if (precision == "tf32") return tf32_tflops;
  if (precision == "fp8") return fp8_tflops;
  return 0;
}

json GpuSpec::to_json() const {
  return json{{"id", id},
              {"name", name},
              {"vendor", vendor},
              {"architecture", architecture},
              {"memory_gib", memory_gib},
              {"usable_memory_gib", usable_bytes() / (1024.0 * 1024.0 * 1024.0)},
              {"usable_memory_estimated", usable_memory_estimated()},
              {"memory_bandwidth_gbps", memory_bandwidth_gbps},
              {"bf16_dense_tflops", bf16_tflops},
              {"fp16_dense_tflops", fp16_tflops},
              {"fp32_tflops", fp32_tflops},
              {"sm_count", sm_count}};
}

namespace {

// A number that may be null (unsupported): null -> 0; otherwise must be a finite number in [lo, hi].
Result<double> spec_number(const json& obj, const std::string& key, const std::string& path, double lo,
                           double hi, bool required) {
  if (!has(obj, key)) {
    if (required) return make_error(Errc::missing_field, join_path(path, key), "required number is missing");
    return 0.0;
  }
  return get_number_in(obj, key, path, lo, hi);
}

// The id rule of `ftcost db check` and gpu-db/schema/gpu.schema.json: ^[a-z0-9][a-z0-9.-]*$, at most 128.
Status check_gpu_id(const std::string& id) {
  if (id.empty()) return make_error(Errc::invalid_value, "id", "must not be empty");
  bool ok = id.size() <= 128;
  for (std::size_t i = 0; ok && i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    ok = alnum || (i > 0 && (c == '.' || c == '-'));
  }
  if (!ok)
    return make_error(Errc::invalid_value, "id",
                      "must be 1 to 128 lower-case letters, digits, '.' and '-', starting with a letter or "
                      "digit (got " +
                          std::to_string(id.size()) + " characters)");
  return Ok{};
}

// Text shown to the user (name, vendor, ...): no control characters (C0, DEL, C1), at most `max_len` bytes.
Status check_text(const std::string& key, const std::string& v, std::size_t max_len, bool required) {
  if (required && v.find_first_not_of(" \t") == std::string::npos)
    return make_error(Errc::invalid_value, key, "must not be empty");
  if (v.size() > max_len)
    return make_error(Errc::out_of_range, key,
                      "is " + std::to_string(v.size()) + " bytes; at most " + std::to_string(max_len));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto c = static_cast<unsigned char>(v[i]);
    const bool c1 = c == 0xC2 && i + 1 < v.size() && static_cast<unsigned char>(v[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(v[i + 1]) <= 0x9F;
    if (c < 0x20 || c == 0x7F || c1)
      return make_error(Errc::invalid_value, key,
                        "must be printable text: control character at byte " + std::to_string(i));
  }
  return Ok{};
}

// The interconnect object of a GPU file (NVLink and PCIe).
Result<GpuInterconnect> parse_interconnect(const json& ic) {
  if (!ic.is_object()) return make_error(Errc::wrong_type, "interconnect", "must be an object");
  const std::string ip = "interconnect";
  FTCOST_TRY(nv, spec_number(ic, "nvlink_gbps_bidirectional", ip, 0, 20000, false));
  FTCOST_TRY(nvgen, spec_number(ic, "nvlink_generation", ip, 1, 9, false));
  FTCOST_TRY(nvmax, spec_number(ic, "nvlink_max_gpus", ip, 2, 576, false));
  FTCOST_TRY(pgen, spec_number(ic, "pcie_gen", ip, 1, 7, false));
  FTCOST_TRY(lanes, spec_number(ic, "pcie_lanes", ip, 1, 32, false));
  FTCOST_TRY(topo, opt_string(ic, "nvlink_topology", ip, ""));
  if (!topo.empty() && topo != "switch" && topo != "bridge" && topo != "mesh")
    return make_error(Errc::invalid_value, "interconnect.nvlink_topology",
                      "must be \"switch\", \"mesh\" or \"bridge\", got \"" + topo + "\"");
  if (nv > 0 && (topo.empty() || nvmax <= 0))
    return make_error(Errc::missing_field, "interconnect.nvlink_topology",
                      "an NVLink bandwidth needs nvlink_topology and nvlink_max_gpus");
  GpuInterconnect x;
  x.nvlink_gbps_bidirectional = nv;
  x.nvlink_generation = static_cast<int>(nvgen);
  x.nvlink_topology = nv > 0 ? topo : std::string();
  x.nvlink_max_gpus = static_cast<int>(nvmax);
  x.pcie_gen = static_cast<int>(pgen);
  x.pcie_lanes = lanes > 0 ? static_cast<int>(lanes) : 16;
  if (has(ic, "pcie_p2p") && !ic.at("pcie_p2p").is_null()) {
    if (!ic.at("pcie_p2p").is_boolean())
      return make_error(Errc::wrong_type, "interconnect.pcie_p2p", "must be true, false or null");
    x.pcie_p2p = ic.at("pcie_p2p").get<bool>() ? 1 : 0;
  }
  FTCOST_TRY(other, opt_string(ic, "other", ip, ""));
  x.other = other;
  return x;
}

}  // namespace

Result<GpuSpec> parse_gpu(const json& doc, const std::string& source) {
  if (!doc.is_object()) return make_error(Errc::wrong_type, source, "must be a JSON object");
  const std::string p;
  GpuSpec g;
  FTCOST_TRY(schema, opt_string(doc, "schema", p, "ftcost.gpu/1"));
  if (schema != "ftcost.gpu/1")
    return make_error(Errc::schema_mismatch, source + ": schema",
                      "expected \"ftcost.gpu/1\", got \"" + schema + "\"");
  FTCOST_TRY(id, get_string(doc, "id", p));
  FTCOST_TRY(name, get_string(doc, "name", p));
  FTCOST_TRY(vendor, opt_string(doc, "vendor", p, ""));
  FTCOST_TRY(arch, opt_string(doc, "architecture", p, ""));
  FTCOST_TRY(cc, opt_string(doc, "compute_capability", p, ""));
  FTCOST_TRY(id_ok, check_gpu_id(id));
  (void)id_ok;
  FTCOST_TRY(name_ok, check_text("name", name, 200, true));
  (void)name_ok;
  for (const auto& [key, text] : {std::pair<const char*, const std::string*>{"vendor", &vendor},
                                  {"architecture", &arch},
                                  {"compute_capability", &cc}}) {
    FTCOST_TRY(t_ok, check_text(key, *text, 200, false));
    (void)t_ok;
  }
  g.id = id;
  g.name = name;
  g.vendor = vendor;
  g.architecture = arch;
  g.compute_capability = cc;
  FTCOST_TRY(mem, spec_number(doc, "memory_gib", p, 1, 4096, true));
  FTCOST_TRY(usable, spec_number(doc, "usable_memory_mib_nvidia_smi", p, 512, 4096.0 * 1024, false));
  FTCOST_TRY(bw, spec_number(doc, "memory_bandwidth_gbps", p, 10, 100000, true));
  g.memory_gib = mem;
  g.usable_memory_mib = usable;
  g.memory_bandwidth_gbps = bw;
  if (usable > mem * 1024.0 * 1.001) {
    return make_error(Errc::out_of_range, "usable_memory_mib_nvidia_smi",
                      "is larger than memory_gib (" + json(mem).dump() + " GiB)");
  }
  if (!has(doc, "dense_tflops") || !doc.at("dense_tflops").is_object())
    return make_error(Errc::missing_field, "dense_tflops",
                      "required object with fp32/tf32/fp16/bf16/fp8 peaks");
  const json& t = doc.at("dense_tflops");
  FTCOST_TRY(fp32, spec_number(t, "fp32", "dense_tflops", 0.1, 1000, false));
  FTCOST_TRY(tf32, spec_number(t, "tf32", "dense_tflops", 0.1, 10000, false));
  FTCOST_TRY(fp16, spec_number(t, "fp16", "dense_tflops", 0.1, 20000, false));
  FTCOST_TRY(bf16, spec_number(t, "bf16", "dense_tflops", 0.1, 20000, false));
  FTCOST_TRY(fp8, spec_number(t, "fp8", "dense_tflops", 0.1, 40000, false));
  g.fp32_tflops = fp32;
  g.tf32_tflops = tf32;
  g.fp16_tflops = fp16;
  g.bf16_tflops = bf16;
  g.fp8_tflops = fp8;
  if (fp16 <= 0 && bf16 <= 0 && fp32 <= 0)
    return make_error(Errc::missing_field, "dense_tflops", "needs at least one of fp32, fp16, bf16");
  FTCOST_TRY(sms, spec_number(doc, "sm_count", p, 1, 10000, false));
  FTCOST_TRY(clk, spec_number(doc, "boost_clock_mhz", p, 100, 10000, false));
  FTCOST_TRY(l2, spec_number(doc, "l2_cache_mb", p, 0.1, 4096, false));
  FTCOST_TRY(tdp, spec_number(doc, "tdp_w", p, 1, 10000, false));
  g.sm_count = sms;
  g.boost_clock_mhz = clk;
  g.l2_cache_mb = l2;
  g.tdp_w = tdp;
  if (!has(doc, "sources") || !doc.at("sources").is_array() || doc.at("sources").empty())
    return make_error(Errc::missing_field, "sources", "every GPU needs at least one source");
  for (const auto& s : doc.at("sources")) {
    if (!s.is_string() || s.get<std::string>().empty())
      return make_error(Errc::wrong_type, "sources", "must be non-empty strings");
    FTCOST_TRY(s_ok, check_text("sources", s.get<std::string>(), 2000, true));
    (void)s_ok;
    g.sources.push_back(s.get<std::string>());
  }
  if (has(doc, "interconnect") && !doc.at("interconnect").is_null()) {
    FTCOST_TRY(ic, parse_interconnect(doc.at("interconnect")));
    g.interconnect = ic;
  }
  FTCOST_TRY(notes, opt_string(doc, "notes", p, ""));
  // notes may hold line breaks; other control characters are refused
  for (char ch : notes) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
      return make_error(Errc::invalid_value, "notes", "must be printable text (a control character)");
  }
  g.notes = notes;
  return g;
}

}  // namespace ftcost
