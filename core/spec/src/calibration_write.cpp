#include "ftcost/calibration.hpp"
#include "ftcost/fields.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace ftcost {

namespace {

using ojson = nlohmann::ordered_json;

void put_stat(ojson& o, const std::string& prefix, const CalStat& s) {
  o[prefix + "_median"] = s.median;
  o[prefix + "_p10"] = s.p10;
  o[prefix + "_p90"] = s.p90;
}

ojson opt(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }

// An object with its keys in its field list's order (fields.cpp). A key outside the list is kept, after the
// listed ones, so that the loader refuses it (the write/read round trip in tests/calibrate); a required key
// left out is refused the same way.
ojson in_list_order(const char* list, const ojson& values) {
  ojson out = ojson::object();
  const FieldList* l = field_list(list);
  if (l)
    for (const auto& f : l->fields)
      if (values.contains(f.key)) out[f.key] = values.at(f.key);
  for (const auto& [k, v] : values.items())
    if (!out.contains(k)) out[k] = v;
  return out;
}

// The rate columns of a schema-3 bandwidth-type row, after its own keys.
template <class Row>
ojson with_gbps(ojson o, const Row& r) {
  o["bytes_moved"] = r.bytes_moved;
  put_stat(o, "gbps", r.gbps);
  o["time_us_median"] = r.time_us_median;
  o["iterations"] = r.iterations;
  return o;
}

template <class Row, class F>
ojson rows_json(const std::vector<Row>& rows, const char* list, F&& to_obj) {
  ojson a = ojson::array();
  for (const auto& r : rows) a.push_back(in_list_order(list, to_obj(r)));
  return a;
}

void put_op_classes(ojson& meas, const CalMeasurements& ms) {
  meas["norm"] = rows_json(ms.norm, "calibration.measurements.norm[]", [](const NormRow& r) {
    return with_gbps(
        {{"op", r.op}, {"direction", r.direction}, {"dtype", r.dtype}, {"rows", r.rows}, {"cols", r.cols}},
        r);
  });
  meas["cast"] = rows_json(ms.cast, "calibration.measurements.cast[]", [](const CastRow& r) {
    return with_gbps({{"src_dtype", r.src_dtype}, {"dst_dtype", r.dst_dtype}, {"elements", r.elements}}, r);
  });
  meas["pointwise"] =
      rows_json(ms.pointwise, "calibration.measurements.pointwise[]", [](const PointwiseRow& r) {
        return with_gbps({{"op", r.op}, {"dtype", r.dtype}, {"elements", r.elements}}, r);
      });
  meas["cross_entropy"] =
      rows_json(ms.cross_entropy, "calibration.measurements.cross_entropy[]", [](const CrossEntropyRow& r) {
        return with_gbps({{"direction", r.direction},
                          {"logits_dtype", r.logits_dtype},
                          {"rows", r.rows},
                          {"vocab", r.vocab}},
                         r);
      });
  meas["lora_gemm"] =
      rows_json(ms.lora_gemm, "calibration.measurements.lora_gemm[]", [](const LoraGemmRow& r) {
        ojson o = {{"shape", r.shape},   {"side", r.side},
                   {"rank", r.rank},     {"dtype", r.dtype},
                   {"pass", r.pass},     {"transa", r.transa},
                   {"transb", r.transb}, {"tokens", r.tokens},
                   {"in", r.in},         {"out", r.out},
                   {"m", r.m},           {"n", r.n},
                   {"k", r.k},           {"bytes_moved", r.bytes_moved}};
        put_stat(o, "tflops", r.tflops);
        o["time_us_median"] = r.time_us_median;
        o["iterations"] = r.iterations;
        o["algos_tried"] = r.algos_tried;
        return o;
      });
  meas["attention"] =
      rows_json(ms.attention, "calibration.measurements.attention[]", [](const AttentionRow& r) {
        ojson o = {{"direction", r.direction}, {"impl", r.impl},         {"dtype", r.dtype},
                   {"causal", r.causal},       {"model", r.model},       {"batch", r.batch},
                   {"heads", r.heads},         {"kv_heads", r.kv_heads}, {"head_dim", r.head_dim},
                   {"seq_len", r.seq_len},     {"flops", r.flops}};
        put_stat(o, "tflops", r.tflops);
        o["time_us_median"] = r.time_us_median;
        o["iterations"] = r.iterations;
        return o;
      });
}

ojson meta_json(const CalMeta& m) {
  return in_list_order("calibration.meta", {{"schema", m.schema},
                                            {"tool", m.tool},
                                            {"tool_version", m.tool_version},
                                            {"git_revision", m.git_revision},
                                            {"git_dirty", m.git_dirty},
                                            {"created_utc", m.created_utc},
                                            {"command_line", m.command_line},
                                            {"mode", m.mode},
                                            {"only", m.only},
                                            {"partial", m.partial},
                                            {"duration_s", m.duration_s},
                                            {"notes", m.notes}});
}

ojson device_json(const CalDevice& d) {
  return in_list_order("calibration.device",
                       {{"name", d.name},
                        {"pci_device_id", d.pci_device_id ? ojson(*d.pci_device_id) : ojson(nullptr)},
                        {"uuid_hash", d.uuid_hash},
                        {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                        {"sm_count", d.sm_count},
                        {"memory_bytes", d.memory_bytes},
                        {"memory_bus_width_bits", d.memory_bus_width_bits},
                        {"l2_cache_bytes", d.l2_cache_bytes},
                        {"sm_clock_max_mhz", opt(d.sm_clock_max_mhz)},
                        {"memory_clock_max_mhz", opt(d.memory_clock_max_mhz)},
                        {"power_limit_w", opt(d.power_limit_w)},
                        {"driver_version", d.driver_version},
                        {"cuda_runtime_version", d.cuda_runtime_version},
                        {"cublas_version", d.cublas_version},
                        {"host_cpu", d.host_cpu}});
}

ojson conditions_json(const CalConditions& k) {
  auto sample = [](const CalClockSample& s) {
    return in_list_order("calibration.conditions.sample", {{"sm_clock_mhz", opt(s.sm_clock_mhz)},
                                                           {"memory_clock_mhz", opt(s.memory_clock_mhz)},
                                                           {"temperature_c", opt(s.temperature_c)},
                                                           {"power_w", opt(s.power_w)}});
  };
  return in_list_order("calibration.conditions",
                       {{"nvml", k.nvml},
                        {"start", sample(k.start)},
                        {"end", sample(k.end)},
                        {"sm_clock_min_mhz", opt(k.sm_clock_min_mhz)},
                        {"sm_clock_max_mhz", opt(k.sm_clock_max_mhz)},
                        {"temperature_max_c", opt(k.temperature_max_c)},
                        {"power_max_w", opt(k.power_max_w)},
                        {"throttle_reasons_seen", k.throttle_reasons_seen},
                        {"other_processes", k.other_processes ? ojson(*k.other_processes) : ojson(nullptr)}});
}

// The columns that expert_gemm and moe_layer rows share (in_list_order puts each key in its place).
template <class Row>
ojson routing_json(const Row& r) {
  return {
      {"model", r.model},     {"impl", r.impl},   {"routing", r.routing}, {"distribution", r.distribution},
      {"experts", r.experts}, {"top_k", r.top_k}, {"tokens", r.tokens}};
}

void put_gemm_rows(ojson& meas, const CalMeasurements& ms) {
  meas["gemm"] = rows_json(ms.gemm, "calibration.measurements.gemm[]", [](const GemmRow& r) {
    ojson o = {{"shape", r.shape},   {"dtype", r.dtype}, {"pass", r.pass}, {"transa", r.transa},
               {"transb", r.transb}, {"m", r.m},         {"n", r.n},       {"k", r.k}};
    put_stat(o, "tflops", r.tflops);
    o["time_us_median"] = r.time_us_median;
    o["iterations"] = r.iterations;
    o["algos_tried"] = r.algos_tried;
    o["tflops_heuristic"] = opt(r.tflops_heuristic);
    o["fast_accum"] = r.fast_accum;
    return o;
  });
  meas["expert_gemm"] =
      rows_json(ms.expert_gemm, "calibration.measurements.expert_gemm[]", [](const ExpertGemmRow& r) {
        ojson o = routing_json(r);
        o.update(ojson{{"dtype", r.dtype},
                       {"proj", r.proj},
                       {"pass", r.pass},
                       {"n", r.n},
                       {"k", r.k},
                       {"tokens_per_expert", r.tokens_per_expert}});
        put_stat(o, "time_us", r.time_us);
        o["tflops_median"] = r.tflops_median;
        o["iterations"] = r.iterations;
        return o;
      });
  meas["moe_layer"] =
      rows_json(ms.moe_layer, "calibration.measurements.moe_layer[]", [](const MoeLayerRow& r) {
        ojson o = routing_json(r);
        o.update(ojson{{"direction", r.direction}, {"hidden", r.hidden}, {"ffn", r.ffn}});
        put_stat(o, "time_us", r.time_us);
        o["iterations"] = r.iterations;
        ojson st = ojson::object();
        for (const auto& kv : r.stages_us) st[kv.first] = kv.second;
        o["stages_us"] = st;
        return o;
      });
}

// A row's own keys, then its statistic `prefix` and its sample count.
ojson with_stat(ojson o, const char* prefix, const CalStat& s, int iterations) {
  put_stat(o, prefix, s);
  o["iterations"] = iterations;
  return o;
}

void put_rate_rows(ojson& meas, const CalMeasurements& ms) {
  meas["bandwidth"] =
      rows_json(ms.bandwidth, "calibration.measurements.bandwidth[]", [](const BandwidthRow& r) {
        return with_gbps({{"kernel", r.kernel}, {"array_bytes", r.array_bytes}}, r);
      });
  meas["nf4_dequant"] =
      rows_json(ms.nf4_dequant, "calibration.measurements.nf4_dequant[]", [](const Nf4Row& r) {
        return with_gbps({{"variant", r.variant},
                          {"elements", r.elements},
                          {"out_dtype", r.out_dtype},
                          {"double_quant", r.double_quant},
                          {"bytes_per_param", r.bytes_per_param}},
                         r);
      });
  meas["adamw"] = rows_json(ms.adamw, "calibration.measurements.adamw[]", [](const AdamwRow& r) {
    return with_gbps({{"impl", r.impl}, {"params", r.params}, {"bytes_per_param", r.bytes_per_param}}, r);
  });
  meas["elementwise"] =
      rows_json(ms.elementwise, "calibration.measurements.elementwise[]", [](const ElementwiseRow& r) {
        return with_gbps({{"op", r.op}, {"dtype", r.dtype}, {"elements", r.elements}}, r);
      });
  meas["launch"] = rows_json(ms.launch, "calibration.measurements.launch[]", [](const LaunchRow& r) {
    return with_stat({{"kind", r.kind}}, "us", r.us, r.iterations);
  });
  meas["host"] = rows_json(ms.host, "calibration.measurements.host[]", [](const HostRow& r) {
    return with_stat({{"kind", r.kind}, {"ops_per_sample", r.ops_per_sample}, {"sync_every", r.sync_every}},
                     "us", r.us, r.iterations);
  });
  meas["cpu"] = rows_json(ms.cpu, "calibration.measurements.cpu[]", [](const CpuRow& r) {
    return with_stat({{"kind", r.kind}}, "score", r.score, r.iterations);
  });
}

void put_link_rows(ojson& meas, const CalMeasurements& ms) {
  meas["collectives"] =
      rows_json(ms.collectives, "calibration.measurements.collectives[]", [](const CollectiveRow& r) {
        return ojson({{"op", r.op},
                      {"ranks", r.ranks},
                      {"bytes", r.bytes},
                      {"time_us", r.time_us},
                      {"algbw_gbps", r.algbw_gbps},
                      {"busbw_gbps", r.busbw_gbps}});
      });
  meas["p2p"] = rows_json(ms.p2p, "calibration.measurements.p2p[]", [](const P2pRow& r) {
    return ojson({{"src", r.src},
                  {"dst", r.dst},
                  {"peer_access", r.peer_access},
                  {"bytes", r.bytes},
                  {"time_us", r.time_us},
                  {"gbps", r.gbps}});
  });
}

ojson derived_json(const CalDerived& dv) {
  ojson curves = ojson::array();
  for (const auto& cv : dv.gemm_efficiency) {
    ojson pts = ojson::array();
    for (const auto& p : cv.points)
      pts.push_back(in_list_order("calibration.derived.gemm_efficiency[].points[]",
                                  {{"flops", p.flops}, {"efficiency", p.efficiency}}));
    curves.push_back(in_list_order(
        "calibration.derived.gemm_efficiency[]",
        {{"dtype", cv.dtype}, {"peak_measured_tflops", cv.peak_measured_tflops}, {"points", pts}}));
  }
  return in_list_order("calibration.derived",
                       {{"gemm_efficiency", curves},
                        {"memory_bandwidth_gbps", opt(dv.memory_bandwidth_gbps)},
                        {"nf4_dequant_gbps", opt(dv.nf4_dequant_gbps)},
                        {"adamw_fused_gbps", opt(dv.adamw_fused_gbps)},
                        {"adamw_unfused_gbps", opt(dv.adamw_unfused_gbps)},
                        {"elementwise_gbps", opt(dv.elementwise_gbps)},
                        {"launch_overhead_us", opt(dv.launch_overhead_us)},
                        {"host_op_overhead_us", opt(dv.host_op_overhead_us)},
                        {"cpu_score", opt(dv.cpu_score)},
                        {"grouped_over_loop_speedup", opt(dv.grouped_over_loop_speedup)},
                        {"norm_gbps", opt(dv.norm_gbps)},
                        {"cast_gbps", opt(dv.cast_gbps)},
                        {"pointwise_gbps", opt(dv.pointwise_gbps)},
                        {"cross_entropy_gbps", opt(dv.cross_entropy_gbps)},
                        {"attention_fwd_tflops", opt(dv.attention_fwd_tflops)},
                        {"attention_bwd_tflops", opt(dv.attention_bwd_tflops)},
                        {"lora_gemm_roofline_fraction", opt(dv.lora_gemm_roofline_fraction)}});
}

ojson build_json(const Calibration& c) {
  ojson j;
  j["meta"] = meta_json(c.meta);
  j["device"] = device_json(c.device);
  j["conditions"] = conditions_json(c.conditions);
  ojson meas = ojson::object();
  put_rate_rows(meas, c.measurements);
  put_gemm_rows(meas, c.measurements);
  put_link_rows(meas, c.measurements);
  put_op_classes(meas, c.measurements);
  j["measurements"] = in_list_order("calibration.measurements", meas);
  j["derived"] = derived_json(c.derived);
  return in_list_order("calibration", j);
}

}  // namespace

nlohmann::json to_json(const Calibration& cal) { return nlohmann::json::parse(build_json(cal).dump()); }

std::string to_json_text(const Calibration& cal) { return build_json(cal).dump(2) + "\n"; }

}  // namespace ftcost
