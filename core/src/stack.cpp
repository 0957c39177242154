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
Result<double> bounded(const json& obj, const std::string& key, const std::string& path, double lo, double hi) {
  FTCOST_TRY(v, get_number(obj, key, path));
  if (v < lo || v > hi)
    return make_error(Errc::out_of_range, join_path(path, key),
                      "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + json(v).dump());
  return v;
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
    return make_error(Errc::invalid_value, "moe_execution", "must be \"loop\" or \"grouped\", got \"" + exec + "\"");
  s.id = id;
  s.display_name = name;
  s.description = desc;
  s.moe_execution = exec;
  if (!has(doc, "memory") || !doc.at("memory").is_object()) return make_error(Errc::missing_field, "memory", "required object");
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
  FTCOST_TRY(ge, bounded(t, "gemm_efficiency", tp, 0.01, 1));
  FTCOST_TRY(me, bounded(t, "memory_efficiency", tp, 0.01, 1));
  FTCOST_TRY(lo, bounded(t, "launch_overhead_us", tp, 0, 1000));
  FTCOST_TRY(kpe, bounded(t, "kernels_per_expert_per_pass", tp, 0, 10000));
  FTCOST_TRY(kpl, bounded(t, "kernels_per_layer_per_pass", tp, 0, 10000));
  FTCOST_TRY(dq2, bounded(t, "dequant_bytes_per_param", tp, 0, 64));
  FTCOST_TRY(opt, bounded(t, "optimizer_bytes_per_param", tp, 0, 256));
  FTCOST_TRY(note, opt_string(t, "note", tp, ""));
  s.gemm_efficiency = ge;
  s.memory_efficiency = me;
  s.launch_overhead_us = lo;
  s.kernels_per_expert_per_pass = kpe;
  s.kernels_per_layer_per_pass = kpl;
  s.dequant_bytes_per_param = dq2;
  s.optimizer_bytes_per_param = opt;
  s.throughput_note = note;
  return s;
}

}  // namespace ftcost
