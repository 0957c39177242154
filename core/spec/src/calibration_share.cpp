#include "ftcost/calibration_share.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace ftcost {

namespace {

constexpr const char* kCompactSchema = "ftcost.calibration-link/1";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool says_synthetic(const std::string& text) {
  const std::string l = lower(text);
  return l.find("synthetic") != std::string::npos || l.find("fixture") != std::string::npos;
}

std::string quoted(const std::string& s) {
  return "\"" + (s.size() > 60 ? s.substr(0, 57) + "..." : s) + "\"";
}

// The measurement families the compact form keeps (the others are emptied), in to_json's key names.
constexpr const char* kKeptFamilies[] = {"gemm", "bandwidth", "nf4_dequant", "launch", "collectives"};

// Only what the estimator reads (see the header): every GEMM row, the best copy/triad row, the largest fused
// NF4 row, the async launch rows, the collectives; the device block; meta without the command line.
Calibration pruned(const Calibration& cal) {
  Calibration p;
  p.meta = cal.meta;
  p.meta.schema = kCalibrationSchema;
  p.meta.command_line.clear();
  p.meta.notes.clear();
  for (const auto& n : cal.meta.notes)
    if (says_synthetic(n)) p.meta.notes.push_back(n);
  p.device = cal.device;
  const CalMeasurements& m = cal.measurements;
  p.measurements.gemm = m.gemm;
  const BandwidthRow* best_bw = nullptr;
  for (const auto& r : m.bandwidth)
    if (best_bw == nullptr || r.gbps.median > best_bw->gbps.median) best_bw = &r;
  if (best_bw != nullptr) p.measurements.bandwidth.push_back(*best_bw);
  const Nf4Row* nf4 = nullptr;  // derive_calibration's pick: largest fused, then fastest
  for (const auto& r : m.nf4_dequant) {
    if (r.variant != "fused") continue;
    if (nf4 == nullptr || r.elements > nf4->elements ||
        (r.elements == nf4->elements && r.gbps.median > nf4->gbps.median))
      nf4 = &r;
  }
  if (nf4 != nullptr) p.measurements.nf4_dequant.push_back(*nf4);
  for (const auto& r : m.launch)
    if (r.kind == "async") p.measurements.launch.push_back(r);
  p.measurements.collectives = m.collectives;
  p.derived = derive_calibration(p.measurements);
  return p;
}

}  // namespace

CalibrationFlags calibration_flags(const Calibration& cal) {
  CalibrationFlags f;
  for (const auto& n : cal.meta.notes)
    if (says_synthetic(n)) {
      f.synthetic = true;
      f.reasons.push_back("meta.notes says " + quoted(n));
      break;
    }
  if (says_synthetic(cal.device.name)) {
    f.synthetic = true;
    f.reasons.push_back("device.name is " + quoted(cal.device.name));
  }
  if (cal.meta.tool != "ftcost-calibrate") {
    f.synthetic = true;
    f.reasons.push_back("meta.tool is " + quoted(cal.meta.tool) + ", not ftcost-calibrate");
  }
  const std::string& u = cal.device.uuid_hash;
  const std::string prefix = "sha256:";
  if (u.size() > prefix.size() + 1 && u.compare(0, prefix.size(), prefix) == 0 &&
      std::all_of(u.begin() + static_cast<std::ptrdiff_t>(prefix.size()), u.end(),
                  [&](char c) { return c == u[prefix.size()]; })) {
    f.synthetic = true;
    f.reasons.emplace_back("device.uuid_hash is a placeholder");
  }
  if (cal.meta.partial) {
    f.partial = true;
    f.reasons.emplace_back("meta.partial: the run was interrupted");
  }
  if (!cal.meta.only.empty()) {
    std::string fam;
    for (const auto& o : cal.meta.only) fam += (fam.empty() ? "" : ",") + o;
    f.partial = true;
    f.reasons.push_back("meta.only: " + fam + " only");
  }
  if (cal.meta.mode == "smoke") {
    f.partial = true;
    f.reasons.emplace_back("smoke mode (tiny sizes)");
  }
  const CalMeasurements& m = cal.measurements;
  auto missing = [&](const std::string& what) {
    f.partial = true;
    f.reasons.push_back("no " + what + " rows (spec sheet used)");
  };
  if (std::none_of(m.gemm.begin(), m.gemm.end(), [](const GemmRow& r) { return r.dtype == "bf16"; }))
    missing("bf16 GEMM");
  if (m.bandwidth.empty()) missing("memory bandwidth");
  if (std::none_of(m.nf4_dequant.begin(), m.nf4_dequant.end(),
                   [](const Nf4Row& r) { return r.variant == "fused"; }))
    missing("fused NF4 dequantization");
  if (std::none_of(m.launch.begin(), m.launch.end(), [](const LaunchRow& r) { return r.kind == "async"; }))
    missing("kernel launch");
  return f;
}

std::string calibration_flags_text(const CalibrationFlags& f) {
  // reasons are in order: synthetic ones first, then partial ones
  std::string syn;
  std::string part;
  for (const auto& r : f.reasons) {
    const bool is_partial = r.rfind("meta.partial", 0) == 0 || r.rfind("meta.only", 0) == 0 ||
                            r.rfind("smoke", 0) == 0 || r.rfind("no ", 0) == 0;
    std::string& s = is_partial ? part : syn;
    s += (s.empty() ? "" : "; ") + r;
  }
  std::string out;
  if (f.synthetic) out += "synthetic (" + syn + ")";
  if (f.partial) out += std::string(out.empty() ? "" : ", ") + "partial (" + part + ")";
  return out;
}

nlohmann::json calibration_compact(const Calibration& cal) {
  nlohmann::json full = to_json(pruned(cal));
  nlohmann::json c = nlohmann::json::object();
  c["schema"] = kCompactSchema;
  nlohmann::json meta = full.at("meta");
  meta.erase("schema");
  meta.erase("command_line");
  c["meta"] = meta;
  c["device"] = full.at("device");
  nlohmann::json ms = nlohmann::json::object();
  for (const char* fam : kKeptFamilies) {
    const nlohmann::json& rows = full.at("measurements").at(fam);
    if (rows.empty()) continue;
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& kv : rows.front().items()) keys.push_back(kv.key());
    nlohmann::json table = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json row = nlohmann::json::array();
      for (const auto& k : keys) row.push_back(r.at(k.get<std::string>()));
      table.push_back(row);
    }
    ms[fam] = nlohmann::json{{"keys", keys}, {"rows", table}};
  }
  c["measurements"] = ms;
  return c;
}

Result<Calibration> calibration_from_compact(const nlohmann::json& c, const std::string& source_name) {
  auto bad = [&](const std::string& field, const std::string& what) -> Error {
    return make_error(Errc::invalid_value, field, source_name + ": " + what);
  };
  if (!c.is_object()) return bad("", "the link's calibration is not a JSON object");
  if (!c.contains("schema") || c["schema"] != kCompactSchema)
    return make_error(Errc::schema_mismatch, "schema",
                      source_name + ": not a " + std::string(kCompactSchema) + " calibration");
  for (const auto& kv : c.items())
    if (kv.key() != "schema" && kv.key() != "meta" && kv.key() != "device" && kv.key() != "measurements")
      return make_error(Errc::unknown_key, kv.key(), source_name + ": unknown key");
  if (!c.contains("meta") || !c["meta"].is_object()) return bad("meta", "must be an object");
  if (!c.contains("device") || !c["device"].is_object()) return bad("device", "must be an object");
  if (!c.contains("measurements") || !c["measurements"].is_object())
    return bad("measurements", "must be an object");
  // the full document: the empty families and the default conditions of an empty calibration
  nlohmann::json doc = to_json(Calibration{});
  doc.erase("derived");
  nlohmann::json meta = c["meta"];
  meta["schema"] = kCalibrationSchema;
  meta["command_line"] = "(not carried by the link)";
  doc["meta"] = meta;
  doc["device"] = c["device"];
  for (const auto& kv : c["measurements"].items()) {
    const std::string& fam = kv.key();
    const std::string field = "measurements." + fam;
    if (std::find_if(std::begin(kKeptFamilies), std::end(kKeptFamilies),
                     [&](const char* k) { return fam == k; }) == std::end(kKeptFamilies))
      return make_error(Errc::unknown_key, field, source_name + ": not a family the compact form keeps");
    const nlohmann::json& t = kv.value();
    if (!t.is_object() || !t.contains("keys") || !t.contains("rows") || !t["keys"].is_array() ||
        !t["rows"].is_array())
      return bad(field, "must be {\"keys\": [...], \"rows\": [[...], ...]}");
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < t["rows"].size(); ++i) {
      const nlohmann::json& r = t["rows"][i];
      if (!r.is_array() || r.size() != t["keys"].size())
        return bad(field + ".rows[" + std::to_string(i) + "]", "must have one value per key");
      nlohmann::json o = nlohmann::json::object();
      for (std::size_t k = 0; k < r.size(); ++k) {
        if (!t["keys"][k].is_string()) return bad(field + ".keys", "must be strings");
        o[t["keys"][k].get<std::string>()] = r[k];
      }
      rows.push_back(o);
    }
    doc["measurements"][fam] = rows;
  }
  // the same checks as a file (every field, range, unit and consistency); derived is recomputed
  return parse_calibration_rederive(doc, source_name);
}

std::string calibration_fingerprint(const Calibration& cal) {
  const std::string text = calibration_compact(cal).dump();
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64: offset basis, prime 1099511628211
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  static const char* hex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = hex[h & 15];
    h >>= 4;
  }
  return out;
}

std::string base64url_encode(const std::string& bytes) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                            (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                            static_cast<unsigned char>(bytes[i + 2]);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += a[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
  } else if (i + 2 == bytes.size()) {
    const std::uint32_t v =
        (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
  }
  return out;
}

Result<std::string> base64url_decode(const std::string& text, const std::string& field) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  std::string t = text;
  while (!t.empty() && t.back() == '=') t.pop_back();
  if (t.size() % 4 == 1)
    return make_error(Errc::invalid_value, field, "is not base64url (its length cannot be)");
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const int v = val(t[i]);
    if (v < 0)
      return make_error(Errc::invalid_value, field,
                        "is not base64url (character " + std::to_string(i + 1) + " is not A-Z a-z 0-9 - _)");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace ftcost
