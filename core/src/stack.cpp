#include "ftcost/stack.hpp"

#include <initializer_list>

namespace ftcost {

json StackProfile::to_json() const {
  return json{{"id", id},
              {"name", display_name},
              {"moe_execution", moe_execution},
              {"version", version},
              {"loss_path", loss_path},
              {"offload_checkpoints", offload_checkpoints},
              {"peak_model", peak_model},
              {"memory",
               {{"cuda_context_gib", cuda_context_gib},
                {"allocator_overhead_fraction", allocator_overhead_fraction},
                {"logits_bytes_per_vocab_entry", logits_bytes_per_vocab_entry},
                {"gc_retained_fraction", gc_retained_fraction},
                {"gc_retained_provenance", gc_retained_provenance}}}};
}

namespace {
// A numeric field of a stack file with its allowed range. Required fields must be present; an optional one
// that is absent takes `fallback` (not range-checked: it comes from the code or from another field).
struct Field {
  const char* key;
  double* dst;
  double lo, hi;
  bool optional = false;
  double fallback = 0;
};
// An optional array of parameter names (fit_parameters): each must be a string.
Status read_name_list(const json& obj, const char* key, const std::string& path,
                      std::vector<std::string>& out) {
  if (!has(obj, key)) return Ok{};
  const json& v = obj.at(key);
  const std::string where = path + "." + key;
  if (!v.is_array()) return make_error(Errc::wrong_type, where, "must be an array of parameter names");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      return make_error(Errc::wrong_type, where + "[" + std::to_string(i) + "]", "must be a string");
    out.push_back(v[i].get<std::string>());
  }
  return Ok{};
}
Status read_fields(const json& obj, const std::string& path, std::initializer_list<Field> fields) {
  for (const auto& f : fields) {
    if (f.optional && !has(obj, f.key)) {
      *f.dst = f.fallback;
      continue;
    }
    FTCOST_TRY(v, get_number_in(obj, f.key, path, f.lo, f.hi));
    *f.dst = v;
  }
  return Ok{};
}
}  // namespace

Result<StackProfile> parse_stack(const json& doc, const std::string& source) {
  if (!doc.is_object()) return make_error(Errc::wrong_type, source, "must be a JSON object");
  FTCOST_TRY(schema, get_string(doc, "schema", ""));
  if (schema != "ftcost.stack/1")
    return make_error(Errc::schema_mismatch, "schema", "expected \"ftcost.stack/1\", got \"" + schema + "\"");
  StackProfile s;
  FTCOST_TRY(id, get_string(doc, "id", ""));
  FTCOST_TRY(name, get_string(doc, "display_name", ""));
  FTCOST_TRY(desc, opt_string(doc, "description", "", ""));
  FTCOST_TRY(exec, get_string(doc, "moe_execution", ""));
  if (exec != "loop" && exec != "grouped")
    return make_error(Errc::invalid_value, "moe_execution",
                      "must be \"loop\" or \"grouped\", got \"" + exec + "\"");
  s.id = id;
  s.display_name = name;
  s.description = desc;
  s.moe_execution = exec;
  if (has(doc, "vendors")) {
    const json& v = doc.at("vendors");
    if (!v.is_array() || v.empty())
      return make_error(Errc::wrong_type, "vendors", "must be a non-empty array of GPU vendor names");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get<std::string>().empty())
        return make_error(Errc::wrong_type, "vendors[" + std::to_string(i) + "]",
                          "must be a non-empty string (a GPU vendor, e.g. \"NVIDIA\")");
      s.vendors.push_back(v[i].get<std::string>());
    }
  }
  if (!has(doc, "memory") || !doc.at("memory").is_object())
    return make_error(Errc::missing_field, "memory", "required object");
  const json& m = doc.at("memory");
  const std::string p = "memory";
  FTCOST_TRY(mem1, read_fields(m, p,
                               {{"cuda_context_gib", &s.cuda_context_gib, 0, 16},
                                {"allocator_overhead_fraction", &s.allocator_overhead_fraction, 0, 1}}));
  (void)mem1;
  FTCOST_TRY(fp32norm, opt_bool(m, "norm_saves_fp32_input", p, true));
  s.norm_saves_fp32_input = fp32norm;
  FTCOST_TRY(
      mem2,
      read_fields(m, p,
                  {{"logits_bytes_per_vocab_entry", &s.logits_bytes_per_vocab_entry, 0, 64},
                   {"own_code_logits_bytes_per_vocab_entry", &s.own_code_logits_bytes_per_vocab_entry, 0, 64},
                   {"trainable_param_bytes", &s.trainable_param_bytes, 1, 8},
                   {"autocast_weight_copy_bytes", &s.autocast_weight_copy_bytes, 0, 8},
                   {"dequant_temp_bytes_per_param", &s.dequant_temp_bytes_per_param, 0, 16},
                   {"gc_retained_fraction", &s.gc_retained_fraction, 0, 1}}));
  (void)mem2;
  if (has(m, "fit")) s.memory_fit = m.at("fit");
  FTCOST_TRY(mfit, read_name_list(m, "fit_parameters", p, s.memory_fit_parameters));
  (void)mfit;
  FTCOST_TRY(prov, opt_string(m, "gc_retained_provenance", p, ""));
  FTCOST_TRY(resid, opt_number(m, "gc_retained_fit_residual_batches", p, 0));
  s.gc_retained_provenance = prov;
  s.gc_retained_fit_residual_batches = resid;
  FTCOST_TRY(loss_path, opt_string(m, "loss_path", p, "full"));
  if (loss_path != "full" && loss_path != "chunked" && loss_path != "fused_linear")
    return make_error(Errc::invalid_value, "memory.loss_path",
                      "must be \"full\", \"chunked\" or \"fused_linear\", got \"" + loss_path + "\"");
  s.loss_path = loss_path;
  FTCOST_TRY(
      mem3,
      read_fields(m, p,
                  {{"loss_chunk_tokens", &s.loss_chunk_tokens, 1, 1e7, true, 0.0},
                   {"fused_ce_bytes_per_hidden", &s.fused_ce_bytes_per_hidden, 0, 64, true, 6.0},
                   {"mlp_saved_intermediates", &s.mlp_saved_intermediates, 0, 8, true, 4.0},
                   {"memory_uncertainty_fraction", &s.memory_uncertainty_fraction, 0, 1, true, 0.0},
                   {"qlora_unquantized_param_bytes", &s.qlora_unquantized_param_bytes, 1, 8, true, 0.0}}));
  (void)mem3;
  if (s.loss_path == "chunked" && !(s.loss_chunk_tokens > 0))
    return make_error(Errc::missing_field, "memory.loss_chunk_tokens",
                      "required (tokens per chunk, > 0) when loss_path is \"chunked\"");
  FTCOST_TRY(offload, opt_bool(m, "offload_checkpoints", p, false));
  s.offload_checkpoints = offload;
  FTCOST_TRY(peak_model, opt_string(m, "peak_model", p, "phases"));
  if (peak_model != "phases" && peak_model != "sum")
    return make_error(Errc::invalid_value, "memory.peak_model",
                      "must be \"phases\" or \"sum\", got \"" + peak_model + "\"");
  s.peak_model = peak_model;
  FTCOST_TRY(version, opt_string(doc, "version", "", ""));
  s.version = version;
  if (!has(doc, "throughput") || !doc.at("throughput").is_object())
    return make_error(Errc::missing_field, "throughput", "required object");
  const json& t = doc.at("throughput");
  const std::string tp = "throughput";
  FTCOST_TRY(
      required,
      read_fields(t, tp,
                  {
                      {"host_us_per_kernel", &s.host_us_per_kernel, 0, 1000},
                      {"backward_host_factor", &s.backward_host_factor, 0, 4},
                      {"host_sync_us", &s.host_sync_us, 0, 10000},
                      {"kernel_floor_us", &s.kernel_floor_us, 0, 1000},
                      {"host_device_overlap", &s.host_device_overlap, 0, 1},
                      {"kernels_per_linear", &s.kernels_per_linear, 0, 100},
                      {"kernels_per_quantized_linear_extra", &s.kernels_per_quantized_linear_extra, 0, 100},
                      {"kernels_per_lora_module", &s.kernels_per_lora_module, 0, 100},
                      {"kernels_per_expert_overhead", &s.kernels_per_expert_overhead, 0, 1000},
                      {"kernels_per_attention_block", &s.kernels_per_attention_block, 0, 1000},
                      {"kernels_per_mamba_block", &s.kernels_per_mamba_block, 0, 1000},
                      {"kernels_per_router", &s.kernels_per_router, 0, 1000},
                      {"kernels_per_norm", &s.kernels_per_norm, 0, 100},
                      {"gemm_efficiency", &s.gemm_efficiency, 0.01, 1},
                      {"attention_efficiency_factor", &s.attention_efficiency_factor, 0.01, 1.5},
                      {"memory_efficiency", &s.memory_efficiency, 0.01, 1},
                      {"dequant_efficiency", &s.dequant_efficiency, 0.01, 1},
                      {"optimizer_efficiency", &s.optimizer_efficiency, 0.01, 1},
                      {"dequant_bytes_per_param", &s.dequant_bytes_per_param, 0, 64},
                      {"optimizer_bytes_per_param_fp32", &s.optimizer_bytes_per_param_fp32, 0, 512},
                      {"optimizer_bytes_per_param_16bit", &s.optimizer_bytes_per_param_16bit, 0, 512},
                      {"loss_bytes_per_vocab_entry", &s.loss_bytes_per_vocab_entry, 0, 512},
                  }));
  (void)required;
  // Optional throughput fields (older stack files do without them).
  FTCOST_TRY(
      optional,
      read_fields(
          t, tp,
          {{"kernels_per_gather_backward", &s.kernels_per_gather_backward, 0, 1000, true, 0.0},
           {"own_code_kernels_per_router", &s.own_code_kernels_per_router, 0, 1000, true,
            s.kernels_per_router},
           {"own_code_kernels_per_norm", &s.own_code_kernels_per_norm, 0, 1000, true, s.kernels_per_norm},
           {"own_code_kernels_per_expert_overhead", &s.own_code_kernels_per_expert_overhead, 0, 1000, true,
            s.kernels_per_expert_overhead},
           {"gemm_memory_efficiency", &s.gemm_memory_efficiency, 0.01, 1, true, s.memory_efficiency},
           {"hopper_tensor_peak_fraction", &s.hopper_tensor_peak_fraction, 0.05, 1, true, 1.0}}));
  (void)optional;
  FTCOST_TRY(hnote, opt_string(t, "hopper_tensor_note", tp, ""));
  s.hopper_tensor_note = hnote;
  FTCOST_TRY(note, opt_string(t, "note", tp, ""));
  if (has(t, "fit")) s.fit = t.at("fit");
  FTCOST_TRY(tfit, read_name_list(t, "fit_parameters", tp, s.fit_parameters));
  (void)tfit;
  s.throughput_note = note;
  return s;
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
