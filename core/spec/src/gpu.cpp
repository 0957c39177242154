#include "ftcost/gpu.hpp"

#include "ftcost/fields.hpp"
#include "ftcost/model_constants.hpp"
#include "ftcost/units.hpp"

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
  const double total = usable_memory_mib > 0 ? usable_memory_mib * kMiB
                                             : memory_gib * kGiB * constants::kUnlistedUsableFraction;
  return std::max(0.0, total - reserved_mib * kMiB);
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
  json j =
      json_object({"id", id}, {"name", name}, {"vendor", vendor}, {"architecture", architecture},
                  {"memory_gib", memory_gib}, {"usable_memory_gib", usable_bytes() / kGiB},
                  {"usable_memory_estimated", usable_memory_estimated()},
                  {"memory_bandwidth_gbps", memory_bandwidth_gbps}, {"bf16_dense_tflops", bf16_tflops},
                  {"fp16_dense_tflops", fp16_tflops}, {"fp32_tflops", fp32_tflops}, {"sm_count", sm_count});
  if (!variant_of.empty()) j["variant_of"] = variant_of;
  return j;
}

namespace {

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

// The interconnect object of a GPU file (NVLink and PCIe), read through its field list (fields.cpp).
Result<GpuInterconnect> parse_interconnect(const json& ic) {
  const FieldReader r(ic, *field_list("gpu.interconnect"), "interconnect");
  FTCOST_CHECK(r.check_object());
  FTCOST_TRY(nv, r.number("nvlink_gbps_bidirectional"));
  FTCOST_TRY(nvgen, r.integer("nvlink_generation"));
  FTCOST_TRY(nvmax, r.integer("nvlink_max_gpus"));
  FTCOST_TRY(pgen, r.integer("pcie_gen"));
  FTCOST_TRY(lanes, r.integer("pcie_lanes", 16));
  FTCOST_TRY(topo, r.choice("nvlink_topology"));
  if (nv > 0 && (topo.empty() || nvmax <= 0))
    return make_error(Errc::missing_field, "interconnect.nvlink_topology",
                      "an NVLink bandwidth needs nvlink_topology and nvlink_max_gpus");
  FTCOST_TRY(p2p, r.boolean("pcie_p2p", -1));
  FTCOST_TRY(other, r.string("other"));
  GpuInterconnect x;
  x.nvlink_gbps_bidirectional = nv;
  x.nvlink_generation = static_cast<int>(nvgen);
  x.nvlink_topology = nv > 0 ? topo : std::string();
  x.nvlink_max_gpus = static_cast<int>(nvmax);
  x.pcie_gen = static_cast<int>(pgen);
  x.pcie_lanes = static_cast<int>(lanes);
  x.pcie_p2p = p2p;
  x.other = other;
  return x;
}

// The dense peaks (dense_tflops): null = unsupported = 0.
Status parse_peaks(const json& t, GpuSpec& g) {
  const FieldReader r(t, *field_list("gpu.dense_tflops"), "dense_tflops");
  FTCOST_CHECK(r.check_object());
  g.fp32_tflops = g.tf32_tflops = g.fp16_tflops = g.bf16_tflops = g.fp8_tflops = 0;  // null = unsupported
  FTCOST_CHECK(r.numbers({{"fp32", &g.fp32_tflops},
                          {"tf32", &g.tf32_tflops},
                          {"fp16", &g.fp16_tflops},
                          {"bf16", &g.bf16_tflops},
                          {"fp8", &g.fp8_tflops}}));
  if (g.fp16_tflops <= 0 && g.bf16_tflops <= 0 && g.fp32_tflops <= 0)
    return make_error(Errc::missing_field, "dense_tflops", "needs at least one of fp32, fp16, bf16");
  return Ok{};
}

// Names and text fields: the id rule, printable text.
Status parse_names(const FieldReader& r, GpuSpec& g) {
  FTCOST_CHECK(r.texts({{"id", &g.id},
                        {"name", &g.name},
                        {"vendor", &g.vendor},
                        {"architecture", &g.architecture},
                        {"compute_capability", &g.compute_capability}}));
  FTCOST_CHECK(check_gpu_id(g.id));
  FTCOST_CHECK(check_text("name", g.name, 200, true));
  for (const auto& [key, text] : {std::pair<const char*, const std::string*>{"vendor", &g.vendor},
                                  {"architecture", &g.architecture},
                                  {"compute_capability", &g.compute_capability}}) {
    FTCOST_CHECK(check_text(key, *text, 200, false));
  }
  return Ok{};
}

// variant_of: a GPU id (the id rule), not the file's own; "" when absent or null.
Result<std::string> parse_variant_of(const FieldReader& r, const std::string& id) {
  FTCOST_TRY(parent, r.string("variant_of"));
  if (parent.empty()) return parent;
  const Status id_ok = check_gpu_id(parent);
  if (!id_ok.ok()) return make_error(Errc::invalid_value, "variant_of", id_ok.error().message);
  if (parent == id) return make_error(Errc::invalid_value, "variant_of", "names the file's own id " + id);
  return parent;
}

}  // namespace

// A GPU file read through its field list (fields.cpp: keys, kinds, ranges); the rules between fields here.
Result<GpuSpec> parse_gpu(const json& doc, const std::string& source) {
  FTCOST_TRY(r, FieldReader::file(doc, "gpu", source));
  GpuSpec g;
  FTCOST_CHECK(parse_names(r, g));
  FTCOST_TRY(mem, r.number("memory_gib"));
  FTCOST_TRY(usable, r.integer("usable_memory_mib_nvidia_smi"));
  FTCOST_TRY(bw, r.number("memory_bandwidth_gbps"));
  FTCOST_CHECK(r.texts({{"memory_type", &g.memory_type}}));
  FTCOST_TRY(bus, r.integer("memory_bus_bits"));
  g.memory_gib = mem;
  g.usable_memory_mib = static_cast<double>(usable);
  g.memory_bandwidth_gbps = bw;
  g.memory_bus_bits = static_cast<int>(bus);
  if (g.usable_memory_mib > mem * 1024.0 * 1.001) {
    return make_error(Errc::out_of_range, "usable_memory_mib_nvidia_smi",
                      "is larger than memory_gib (" + json(mem).dump() + " GiB)");
  }
  FTCOST_TRY(peaks, r.member("dense_tflops"));
  FTCOST_CHECK(parse_peaks(*peaks, g));
  FTCOST_TRY(sms, r.integer("sm_count"));
  g.sm_count = static_cast<double>(sms);
  FTCOST_CHECK(r.numbers(
      {{"boost_clock_mhz", &g.boost_clock_mhz}, {"l2_cache_mb", &g.l2_cache_mb}, {"tdp_w", &g.tdp_w}}));
  FTCOST_TRY(sources, r.strings("sources"));
  for (std::size_t i = 0; i < sources.size(); ++i) {
    FTCOST_CHECK(check_text(r.path_of("sources") + "[" + std::to_string(i) + "]", sources[i], 2000, true));
  }
  g.sources = sources;
  FTCOST_TRY(ic, r.member("interconnect"));
  if (ic) {
    FTCOST_TRY(x, parse_interconnect(*ic));
    g.interconnect = x;
  }
  FTCOST_TRY(notes, r.string("notes"));
  // notes may hold line breaks; other control characters are refused
  for (char ch : notes) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
      return make_error(Errc::invalid_value, "notes", "must be printable text (a control character)");
  }
  g.notes = notes;
  FTCOST_TRY(parent, parse_variant_of(r, g.id));
  g.variant_of = parent;
  return g;
}

}  // namespace ftcost
