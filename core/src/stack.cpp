#include "ftcost/stack.hpp"

namespace ftcost {

json StackProfile::to_json() const {
  return json{{"id", id},
              {"name", display_name},
              {"moe_execution", moe_execution},
              {"memory",
               {{"cuda_context_gib", cuda_context_gib},
                {"allocator_overhead_fraction", allocator_overhead_fraction},
                {"logits_bytes_per_vocab_entry", logits_bytes_per_vocab_entry},
                {"gc_retained_fraction", gc_retained_fraction},
                {"gc_retained_provenance", gc_retained_provenance}}}};
}

namespace {
Result<double> check_range(double v, const std::string& path, const std::string& key, double lo, double hi) {
  if (!(v >= lo && v <= hi))
    return make_error(
        Errc::out_of_range, join_path(path, key),
        "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + json(v).dump());
  return v;
}
Result<double> bounded(const json& obj, const std::string& key, const std::string& path, double lo,
                       double hi) {
  FTCOST_TRY(v, get_number(obj, key, path));
  return check_range(v, path, key, lo, hi);
}
// Optional field: absent -> fallback (not range-checked: it comes from the code or another field).
Result<double> opt_bounded(const json& obj, const std::string& key, const std::string& path, double fallback,
                           double lo, double hi) {
  if (!has(obj, key)) return fallback;
  return bounded(obj, key, path, lo, hi);
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
  if (!has(doc, "memory") || !doc.at("memory").is_object())
    return make_error(Errc::missing_field, "memory", "required object");
  const json& m = doc.at("memory");
  const std::string p = "memory";
  FTCOST_TRY(ctx, bounded(m, "cuda_context_gib", p, 0, 16));
  FTCOST_TRY(alloc, bounded(m, "allocator_overhead_fraction", p, 0, 1));
  FTCOST_TRY(fp32norm, opt_bool(m, "norm_saves_fp32_input", p, true));
  FTCOST_TRY(logits, bounded(m, "logits_bytes_per_vocab_entry", p, 0, 64));
  FTCOST_TRY(own_logits, bounded(m, "own_code_logits_bytes_per_vocab_entry", p, 0, 64));
  s.own_code_logits_bytes_per_vocab_entry = own_logits;
  FTCOST_TRY(tpb, bounded(m, "trainable_param_bytes", p, 1, 8));
  FTCOST_TRY(acb, bounded(m, "autocast_weight_copy_bytes", p, 0, 8));
  FTCOST_TRY(dq, bounded(m, "dequant_temp_bytes_per_param", p, 0, 16));
  FTCOST_TRY(gcr, bounded(m, "gc_retained_fraction", p, 0, 1));
  FTCOST_TRY(prov, opt_string(m, "gc_retained_provenance", p, ""));
  FTCOST_TRY(resid, opt_number(m, "gc_retained_fit_residual_batches", p, 0));
  s.cuda_context_gib = ctx;
  s.allocator_overhead_fraction = alloc;
  s.norm_saves_fp32_input = fp32norm;
  s.logits_bytes_per_vocab_entry = logits;
  s.trainable_param_bytes = tpb;
  s.autocast_weight_copy_bytes = acb;
  s.dequant_temp_bytes_per_param = dq;
  s.gc_retained_fraction = gcr;
  s.gc_retained_provenance = prov;
  s.gc_retained_fit_residual_batches = resid;
  if (!has(doc, "throughput") || !doc.at("throughput").is_object())
    return make_error(Errc::missing_field, "throughput", "required object");
  const json& t = doc.at("throughput");
  const std::string tp = "throughput";
  struct Field {
    const char* key;
    double* dst;
    double lo, hi;
  };
  const Field fields[] = {
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
  };
  for (const auto& f : fields) {
    FTCOST_TRY(v, bounded(t, f.key, tp, f.lo, f.hi));
    *f.dst = v;
  }
  // Optional throughput fields (older stack files do without them).
  struct Optional {
    const char* key;
    double* dst;
    double fallback, lo, hi;
  };
  const Optional optional[] = {
      {"kernels_per_gather_backward", &s.kernels_per_gather_backward, 0.0, 0, 1000},
      {"own_code_kernels_per_router", &s.own_code_kernels_per_router, s.kernels_per_router, 0, 1000},
      {"own_code_kernels_per_norm", &s.own_code_kernels_per_norm, s.kernels_per_norm, 0, 1000},
      {"own_code_kernels_per_expert_overhead", &s.own_code_kernels_per_expert_overhead,
       s.kernels_per_expert_overhead, 0, 1000},
      {"gemm_memory_efficiency", &s.gemm_memory_efficiency, s.memory_efficiency, 0.01, 1},
      {"hopper_tensor_peak_fraction", &s.hopper_tensor_peak_fraction, 1.0, 0.05, 1},
  };
  for (const auto& f : optional) {
    FTCOST_TRY(v, opt_bounded(t, f.key, tp, f.fallback, f.lo, f.hi));
    *f.dst = v;
  }
  FTCOST_TRY(hnote, opt_string(t, "hopper_tensor_note", tp, ""));
  s.hopper_tensor_note = hnote;
  FTCOST_TRY(note, opt_string(t, "note", tp, ""));
  if (has(t, "fit")) s.fit = t.at("fit");
  s.throughput_note = note;
  return s;
}

}  // namespace ftcost
