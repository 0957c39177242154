#include "ftcost/stack.hpp"

#include "ftcost/fields.hpp"
#include "ftcost/model.hpp"

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>

namespace ftcost {

json StackProfile::to_json() const {
  return json_object({"id", id}, {"name", display_name}, {"moe_execution", moe_execution},
                     {"version", version}, {"loss_path", loss_path},
                     {"offload_checkpoints", offload_checkpoints}, {"peak_model", peak_model},
                     {"default_attention", default_attention}, {"adamw_implementation", adamw_implementation},
                     {"memory",
                      {{"cuda_context_gib", cuda_context_gib},
                       {"allocator_overhead_fraction", allocator_overhead_fraction},
                       {"logits_bytes_per_vocab_entry", logits_bytes_per_vocab_entry},
                       {"gc_retained_fraction", gc_retained_fraction},
                       {"gc_retained_provenance", gc_retained_provenance}}});
}

namespace {

// The memory object (fields.cpp: stack.memory).
Status parse_stack_memory(const json& m, StackProfile& s) {
  const FieldReader r(m, *field_list("stack.memory"), "memory");
  FTCOST_CHECK(r.check_object());
  // an absent field keeps StackProfile's default (parse_stack reads into a fresh profile): loss_path "full",
  // default_attention "flash", norm_saves_fp32_input true, ...
  FTCOST_CHECK(r.numbers({{"cuda_context_gib", &s.cuda_context_gib},
                          {"allocator_overhead_fraction", &s.allocator_overhead_fraction},
                          {"logits_bytes_per_vocab_entry", &s.logits_bytes_per_vocab_entry},
                          {"own_code_logits_bytes_per_vocab_entry", &s.own_code_logits_bytes_per_vocab_entry},
                          {"trainable_param_bytes", &s.trainable_param_bytes},
                          {"autocast_weight_copy_bytes", &s.autocast_weight_copy_bytes},
                          {"dequant_temp_bytes_per_param", &s.dequant_temp_bytes_per_param},
                          {"gc_retained_fraction", &s.gc_retained_fraction},
                          {"loss_chunk_tokens", &s.loss_chunk_tokens},
                          {"fused_ce_bytes_per_hidden", &s.fused_ce_bytes_per_hidden},
                          {"mlp_saved_intermediates", &s.mlp_saved_intermediates},
                          {"memory_uncertainty_fraction", &s.memory_uncertainty_fraction},
                          {"qlora_unquantized_param_bytes", &s.qlora_unquantized_param_bytes}}));
  FTCOST_CHECK(r.flags({{"norm_saves_fp32_input", &s.norm_saves_fp32_input}}));
  FTCOST_TRY(mfit, r.member("fit"));
  if (mfit) s.memory_fit = *mfit;
  FTCOST_TRY(mfit_parameters, r.strings("fit_parameters"));
  s.memory_fit_parameters = mfit_parameters;
  FTCOST_CHECK(r.texts({{"gc_retained_provenance", &s.gc_retained_provenance}}));
  FTCOST_CHECK(r.numbers({{"gc_retained_fit_residual_batches", &s.gc_retained_fit_residual_batches}}));
  FTCOST_CHECK(r.texts({{"loss_path", &s.loss_path}}));
  if (s.loss_path == "chunked" && !(s.loss_chunk_tokens > 0))
    return make_error(Errc::missing_field, "memory.loss_chunk_tokens",
                      "required (tokens per chunk, > 0) when loss_path is \"chunked\"");
  FTCOST_CHECK(r.flags({{"offload_checkpoints", &s.offload_checkpoints},
                        {"fused_lora_needs_zero_dropout", &s.fused_lora_needs_zero_dropout}}));
  return r.texts({{"default_attention", &s.default_attention},
                  {"adamw_implementation", &s.adamw_implementation},
                  {"peak_model", &s.peak_model}});
}

// The throughput.ops object (fields.cpp: stack.ops): the op inventory and what the stack fuses.
Status parse_stack_ops(const json& o, StackProfile& s) {
  const FieldReader r(o, *field_list("stack.ops"), "throughput.ops");
  FTCOST_CHECK(r.check_object());
  FTCOST_CHECK(r.texts({{"inventory", &s.ops_inventory}}));  // absent: "coarse" (StackProfile)
  FTCOST_TRY(fused, r.strings("fused"));
  for (const auto& g : fused)
    if (g != "rmsnorm" && g != "rope" && g != "swiglu" && g != "residual")
      return make_error(Errc::invalid_value, "throughput.ops.fused",
                        "\"" + g + "\" is not a kernel group (rmsnorm, rope, swiglu, residual)");
  s.ops_fused = fused;
  FTCOST_CHECK(r.numbers({{"python_us_per_op", &s.python_us_per_op},
                          {"dispatch_us_per_op", &s.dispatch_us_per_op},
                          {"optimizer_host_us_per_tensor", &s.optimizer_host_us_per_tensor},
                          {"bandwidth_fraction", &s.ops_bandwidth_fraction}}));
  return Ok{};
}

// The throughput object (fields.cpp: stack.throughput). Optional fields fall back to others, read first.
Status parse_stack_throughput(const json& t, StackProfile& s) {
  const FieldReader r(t, *field_list("stack.throughput"), "throughput");
  FTCOST_CHECK(r.check_object());
  FTCOST_CHECK(r.numbers({
      {"host_us_per_kernel", &s.host_us_per_kernel},
      {"backward_host_factor", &s.backward_host_factor},
      {"host_sync_us", &s.host_sync_us},
      {"kernel_floor_us", &s.kernel_floor_us},
      {"host_device_overlap", &s.host_device_overlap},
      {"kernels_per_linear", &s.kernels_per_linear},
      {"kernels_per_quantized_linear_extra", &s.kernels_per_quantized_linear_extra},
      {"kernels_per_lora_module", &s.kernels_per_lora_module},
      {"kernels_per_expert_overhead", &s.kernels_per_expert_overhead},
      {"kernels_per_attention_block", &s.kernels_per_attention_block},
      {"kernels_per_mamba_block", &s.kernels_per_mamba_block},
      {"kernels_per_router", &s.kernels_per_router},
      {"kernels_per_norm", &s.kernels_per_norm},
      {"gemm_efficiency", &s.gemm_efficiency},
      {"attention_efficiency_factor", &s.attention_efficiency_factor},
      {"memory_efficiency", &s.memory_efficiency},
      {"dequant_efficiency", &s.dequant_efficiency},
      {"optimizer_efficiency", &s.optimizer_efficiency},
      {"dequant_bytes_per_param", &s.dequant_bytes_per_param},
      {"optimizer_bytes_per_param_fp32", &s.optimizer_bytes_per_param_fp32},
      {"optimizer_bytes_per_param_16bit", &s.optimizer_bytes_per_param_16bit},
      {"loss_bytes_per_vocab_entry", &s.loss_bytes_per_vocab_entry},
  }));
  // Optional (older stack files do without them): the fallbacks are StackProfile's or another field's.
  s.own_code_kernels_per_router = s.kernels_per_router;
  s.own_code_kernels_per_norm = s.kernels_per_norm;
  s.own_code_kernels_per_expert_overhead = s.kernels_per_expert_overhead;
  s.gemm_memory_efficiency = s.memory_efficiency;
  FTCOST_CHECK(r.numbers({{"kernels_per_gather_backward", &s.kernels_per_gather_backward},
                          {"own_code_kernels_per_router", &s.own_code_kernels_per_router},
                          {"own_code_kernels_per_norm", &s.own_code_kernels_per_norm},
                          {"own_code_kernels_per_expert_overhead", &s.own_code_kernels_per_expert_overhead},
                          {"gemm_memory_efficiency", &s.gemm_memory_efficiency},
                          {"hopper_tensor_peak_fraction", &s.hopper_tensor_peak_fraction}}));
  FTCOST_CHECK(r.texts({{"hopper_tensor_note", &s.hopper_tensor_note}, {"note", &s.throughput_note}}));
  FTCOST_TRY(fit, r.member("fit"));
  if (fit) s.fit = *fit;
  FTCOST_TRY(fit_parameters, r.strings("fit_parameters"));
  s.fit_parameters = fit_parameters;
  FTCOST_TRY(ops, r.member("ops"));
  if (ops != nullptr) return parse_stack_ops(*ops, s);
  return Ok{};
}

// model_support versions: dotted numbers ("4.51.0", "2024.12"); the last part of a range's end may be "x"
// ("5.x": any 5.y). Empty parts or anything else is malformed.
bool version_parts(const std::string& v, bool allow_x, std::vector<long>& out) {
  out.clear();
  std::size_t start = 0;
  while (start <= v.size()) {
    const std::size_t dot = v.find('.', start);
    const std::string part = v.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool last = dot == std::string::npos;
    if (last && allow_x && part == "x" && !out.empty()) return true;
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out.push_back(std::stol(part));
    if (last) return true;
    start = dot + 1;
  }
  return false;
}

// A pinned range "lo-hi" (or one version, lo = hi): lo's missing parts are 0, hi's are open.
bool version_range(const std::string& v, std::vector<long>& lo, std::vector<long>& hi) {
  const std::size_t dash = v.find('-');
  const std::string a = v.substr(0, dash);
  const std::string b = dash == std::string::npos ? a : v.substr(dash + 1);
  return version_parts(a, a == b, lo) && version_parts(b, true, hi);
}

// Compares `v` with `bound` over bound's parts only (v's missing parts are 0): -1, 0 or 1.
int compare_prefix(const std::vector<long>& v, const std::vector<long>& bound) {
  for (std::size_t i = 0; i < bound.size(); ++i) {
    const long x = i < v.size() ? v[i] : 0;
    if (x != bound[i]) return x < bound[i] ? -1 : 1;
  }
  return 0;
}

// Compares two versions over all their parts (missing parts are 0): -1, 0 or 1.
int compare_full(const std::vector<long>& a, const std::vector<long>& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const long x = i < a.size() ? a[i] : 0;
    const long y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// One software's entry: {"versions": "...", "model_types": {type: first version | "none"}, "*_note": text}.
Result<SoftwareSupport> parse_software_support(const std::string& name, const json& v) {
  const std::string p = "model_support." + name;
  if (!v.is_object()) return make_error(Errc::wrong_type, p, "must be an object {versions, model_types}");
  SoftwareSupport out;
  out.software = name;
  for (const auto& [key, value] : v.items()) {
    if (key.size() > 5 && key.compare(key.size() - 5, 5, "_note") == 0) continue;
    if (key != "versions" && key != "model_types")
      return make_error(Errc::unknown_key, std::string(p).append(".").append(key),
                        "not a model_support field (versions, model_types)");
  }
  const json* versions = v.contains("versions") ? &v.at("versions") : nullptr;
  if (versions == nullptr || !versions->is_string())
    return make_error(Errc::missing_field, p + ".versions", "required: the versions the profile pins");
  out.versions = versions->get<std::string>();
  if (const std::string bad = model_support_version_problem(out.versions, true); !bad.empty())
    return make_error(Errc::invalid_value, p + ".versions", bad);
  if (!v.contains("model_types") || !v.at("model_types").is_object())
    return make_error(Errc::missing_field, p + ".model_types",
                      "required: an object of config model_type -> first version (or \"none\")");
  for (const auto& [type, first] : v.at("model_types").items()) {
    const std::string fp = std::string(p).append(".model_types.").append(type);
    if (!first.is_string()) return make_error(Errc::wrong_type, fp, "must be a version string or \"none\"");
    const std::string f = first.get<std::string>();
    if (const std::string bad = model_support_version_problem(f, false); f != "none" && !bad.empty())
      return make_error(Errc::invalid_value, fp, bad + " (or \"none\")");
    out.model_types[type] = f;
  }
  return out;
}

// The profile's model_support object (absent: none).
Status parse_model_support(const json& doc, StackProfile& s) {
  s.model_support.clear();
  if (!doc.contains("model_support") || doc.at("model_support").is_null()) return Ok{};
  const json& ms = doc.at("model_support");
  if (!ms.is_object())
    return make_error(Errc::wrong_type, "model_support",
                      "must be an object: software -> {versions, model_types}");
  for (const auto& [name, v] : ms.items()) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "_note") == 0) continue;
    FTCOST_TRY(entry, parse_software_support(name, v));
    s.model_support.push_back(entry);
  }
  return Ok{};
}

// One software's verdict on model_type `type` (see stack_supports).
StackSupport software_verdict(const SoftwareSupport& sw, const std::string& type, const std::string& who,
                              const std::string& stack_id) {
  const auto it = sw.model_types.find(type);
  if (it == sw.model_types.end()) return {};
  if (it->second == "none")
    return {false, who + " is not loaded by " + sw.software + " " + sw.versions +
                       ", the versions this profile (" + stack_id + ") pins: it cannot load this model"};
  std::vector<long> first;
  std::vector<long> lo;
  std::vector<long> hi;
  if (!version_parts(it->second, false, first) || !version_range(sw.versions, lo, hi)) return {};
  const std::string needs =
      who + " needs " + sw.software + " >= " + it->second + "; this profile (" + stack_id;
  if (compare_prefix(first, hi) > 0)
    return {false, needs + ") pins " + sw.versions + ": it cannot load this model"};
  if (compare_full(first, lo) > 0)
    return {true,
            needs + ") spans " + sw.versions + ": only its versions from " + it->second + " on load it"};
  return {};
}

}  // namespace

MajorMinor major_minor(const std::string& v) {
  int a = -1;
  int b = -1;
  std::istringstream in(v);
  char dot = 0;
  if (!(in >> a) || !(in >> dot) || dot != '.' || !(in >> b)) return {-1, -1};
  return {a, b};
}

namespace {

bool in_range(MajorMinor v, const std::optional<MajorMinor>& lo, const std::optional<MajorMinor>& hi) {
  return (!lo || v >= *lo) && (!hi || v < *hi);
}

// [lo1, hi1) and [lo2, hi2) share a version (absent bounds open).
bool ranges_meet(const std::optional<MajorMinor>& lo1, const std::optional<MajorMinor>& hi1,
                 const std::optional<MajorMinor>& lo2, const std::optional<MajorMinor>& hi2) {
  return (!lo1 || !hi2 || *lo1 < *hi2) && (!lo2 || !hi1 || *lo2 < *hi1);
}

std::string range_text(const std::optional<MajorMinor>& lo, const std::optional<MajorMinor>& hi) {
  auto mm = [](const MajorMinor& v) { return std::to_string(v.first) + "." + std::to_string(v.second); };
  return (lo ? mm(*lo) : "") + "-" + (hi ? mm(*hi) : "");
}

// A bound of software_versions[]: absent, or "MAJOR.MINOR".
Result<std::optional<MajorMinor>> version_bound(const FieldReader& r, const char* key) {
  FTCOST_TRY(text, r.string(key));
  if (text.empty()) return std::optional<MajorMinor>();
  const MajorMinor v = major_minor(text);
  if (v.first < 0 || v.second < 0 || text != std::to_string(v.first) + "." + std::to_string(v.second))
    return make_error(Errc::invalid_value, r.path_of(key),
                      "must be MAJOR.MINOR (e.g. \"4.49\"), got \"" + text + "\"");
  return std::optional<MajorMinor>(v);
}

Result<SoftwareRange> parse_software_range(const json& doc, const std::string& path) {
  const FieldReader r(doc, *field_list("stack.software_versions[]"), path);
  FTCOST_CHECK(r.check_object());
  FTCOST_TRY(package, r.choice("package"));
  FTCOST_TRY(from, version_bound(r, "from"));
  FTCOST_TRY(to, version_bound(r, "to"));
  FTCOST_TRY(tf_from, version_bound(r, "transformers_from"));
  FTCOST_TRY(tf_to, version_bound(r, "transformers_to"));
  FTCOST_TRY(note, r.string("note"));
  if (!ranges_meet(from, to, from, to) || !ranges_meet(tf_from, tf_to, tf_from, tf_to))
    return make_error(Errc::invalid_value, path, "a range ends before it starts");
  return SoftwareRange{package, from, to, tf_from, tf_to, note};
}

Status parse_software_versions(const FieldReader& r, StackProfile& s) {
  FTCOST_TRY(list, r.member("software_versions"));
  if (list == nullptr) return Ok{};
  for (std::size_t i = 0; i < list->size(); ++i) {
    FTCOST_TRY(range, parse_software_range((*list)[i],
                                           r.path_of("software_versions") + "[" + std::to_string(i) + "]"));
    s.software_versions.push_back(range);
  }
  return Ok{};
}

}  // namespace

bool SoftwareRange::covers(MajorMinor package_version, MajorMinor transformers) const {
  return in_range(package_version, from, to) && in_range(transformers, transformers_from, transformers_to);
}

bool SoftwareRange::overlaps(const SoftwareRange& o) const {
  return package == o.package && ranges_meet(from, to, o.from, o.to) &&
         ranges_meet(transformers_from, transformers_to, o.transformers_from, o.transformers_to);
}

std::string SoftwareRange::to_text() const {
  std::string text = package;
  if (from || to) text += " " + range_text(from, to);
  if (transformers_from || transformers_to)
    text += ", transformers " + range_text(transformers_from, transformers_to);
  return text;
}

// A stack profile read through its field lists (fields.cpp: stack, stack.memory, stack.throughput).
Result<StackProfile> parse_stack(const json& doc, const std::string& source) {
  FTCOST_TRY(r, FieldReader::file(doc, "stack", source));
  StackProfile s;
  FTCOST_CHECK(r.texts({{"id", &s.id},
                        {"display_name", &s.display_name},
                        {"description", &s.description},
                        {"moe_execution", &s.moe_execution}}));
  FTCOST_CHECK(r.flags({{"zero3_moe_leaf_modules", &s.zero3_moe_leaf_modules}}));
  FTCOST_TRY(vendors, r.strings("vendors"));
  s.vendors = vendors;
  FTCOST_TRY(m, r.member("memory"));
  FTCOST_CHECK(parse_stack_memory(*m, s));
  FTCOST_CHECK(r.texts({{"version", &s.version}}));
  FTCOST_TRY(t, r.member("throughput"));
  FTCOST_CHECK(parse_stack_throughput(*t, s));
  FTCOST_CHECK(parse_model_support(doc, s));
  FTCOST_CHECK(parse_software_versions(r, s));
  s.source_digest = 14695981039346656037ULL;  // FNV-1a offset basis
  for (const char c : doc.dump()) {
    s.source_digest ^= static_cast<unsigned char>(c);
    s.source_digest *= 1099511628211ULL;  // FNV prime
  }
  return s;
}

std::string model_support_version_problem(const std::string& v, bool range) {
  std::vector<long> lo;
  std::vector<long> hi;
  if (range ? version_range(v, lo, hi) : version_parts(v, false, lo)) {
    if (range && compare_prefix(lo, hi) > 0) return "\"" + v + "\": the range ends before it starts";
    return {};
  }
  return "\"" + v + "\" is not " +
         (range ? std::string("a version or range of dotted numbers (\"4.46-4.47\", \"5.x\", \"2024.12\")")
                : std::string("a version of dotted numbers (\"4.51.0\")"));
}

StackSupport stack_supports(const StackProfile& s, const ModelSpec& m) {
  if (m.own_training_code) return {};
  const std::string who = m.display_name + " (model_type " + m.family + ")";
  StackSupport out;
  for (const auto& sw : s.model_support) {
    const StackSupport v = software_verdict(sw, m.family, who, s.id);
    if (v.message.empty() || (!out.ok && v.ok)) continue;
    if (out.ok && !v.ok) out.message.clear();  // a software that cannot load it outranks a partial one
    // the model is named once: a second software's verdict follows as "...; and it <rest>"
    out.message += out.message.empty() ? v.message : "; and it" + v.message.substr(who.size());
    out.ok = out.ok && v.ok;
  }
  return out;
}

std::vector<std::string> stack_fit_gpus(const StackProfile& s) {
  std::vector<std::string> out;
  if (!s.fit.is_object()) return out;
  if (s.fit.contains("gpu") && s.fit["gpu"].is_string()) out.push_back(s.fit["gpu"].get<std::string>());
  if (s.fit.contains("gpus") && s.fit["gpus"].is_array())
    for (const auto& g : s.fit["gpus"])
      if (g.is_string()) out.push_back(g.get<std::string>());
  return out;
}

std::string stack_vendor_warning(const StackProfile& s, const std::string& gpu_id,
                                 const std::string& gpu_vendor) {
  if (s.vendors.empty()) return {};
  std::string list;
  for (const auto& v : s.vendors) {
    if (v == gpu_vendor) return {};
    list += (list.empty() ? "" : "/") + v;
  }
  return "stack " + s.id + " runs on " + list + " GPUs only; " + gpu_id + " is " +
         (gpu_vendor.empty() ? std::string("of another vendor") : gpu_vendor) +
         ": the estimate applies the stack's efficiencies to its specs, but the software it "
         "describes does not run there as is; read it as an extrapolation";
}

}  // namespace ftcost
