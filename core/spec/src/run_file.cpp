#include "ftcost/run_file.hpp"

#include "ftcost/model.hpp"
#include "ftcost/units.hpp"
#include "ftcost/workload.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace ftcost {

namespace {

std::string idx(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

Result<std::string> opt_choice(const json& obj, const std::string& key, const std::string& path,
                               const std::vector<std::string>& allowed) {
  if (!has(obj, key)) return std::string();
  const json& v = obj.at(key);
  if (!v.is_string())
    return make_error(Errc::wrong_type, join_path(path, key),
                      "must be a string: one of " + join_ids(allowed));
  const std::string s = v.get<std::string>();
  for (const auto& a : allowed)
    if (s == a) return s;
  return make_error(Errc::invalid_value, join_path(path, key),
                    "must be one of " + join_ids(allowed) + ", got \"" + s + "\"");
}

double opt_bytes(const json& obj, const std::string& key) {
  return has(obj, key) && obj.at(key).is_number() ? obj.at(key).get<double>() : -1.0;
}

// recorder.source (what fit-stack reports), with the recorder's other fields checked against the schema.
Result<std::string> recorder_source(const json& doc) {
  if (!has(doc, "recorder")) return std::string();
  const json& rec = doc.at("recorder");
  if (!rec.is_object()) return make_error(Errc::wrong_type, "recorder", "must be an object");
  for (const char* k : {"tool", "version", "created_utc"}) {
    FTCOST_CHECK(opt_string(rec, k, "recorder", ""));
  }
  FTCOST_CHECK(opt_count(rec, "warmup_steps", "recorder", 0, 0, 1 << 30));
  return opt_choice(rec, "source", "recorder",
                    {"hook", "trainer-callback", "trainer_state", "torchtune-log"});
}

// --- GPU: an ftcost id, or the name nvidia-smi prints (parse_run matches it against the database)
Status read_gpu(const json& doc, RunGpuRecord& gpu) {
  if (!has(doc, "gpu")) {
    std::string why = "not recorded";
    if (has(doc, "gpu_null_reason") && doc.at("gpu_null_reason").is_string())
      why = doc.at("gpu_null_reason").get<std::string>();
    return make_error(Errc::missing_field, "gpu",
                      "the run names no GPU (" + why + "); a step time needs the GPU it was measured on");
  }
  const json& g = doc.at("gpu");
  if (!g.is_object()) return make_error(Errc::wrong_type, "gpu", "must be an object");
  FTCOST_TRY(gname, opt_string(g, "name", "gpu", ""));
  FTCOST_TRY(gid, opt_string(g, "id", "gpu", ""));
  if (gid.empty() && gname.empty())
    return make_error(Errc::missing_field, "gpu",
                      "needs id (an ftcost GPU id) or name (as nvidia-smi prints it)");
  gpu.id = gid;
  gpu.name = gname;
  if (has(g, "memory_bytes")) gpu.memory_bytes = g.at("memory_bytes");
  FTCOST_TRY(gcount, opt_count(g, "count", "gpu", 1, 1, 1 << 20));
  gpu.count = gcount;
  return Ok{};
}

// --- model: a preset id, or the model's own config.json (which ftcost must be able to read)
Status read_model(const json& doc, RunRecord& run) {
  if (!has(doc, "model") || !doc.at("model").is_object())
    return make_error(Errc::missing_field, "model", "required object: preset (an ftcost id) or config");
  const json& m = doc.at("model");
  FTCOST_TRY(preset, opt_string(m, "preset", "model", ""));
  if (!preset.empty()) {
    run.model_preset = preset;
    return Ok{};
  }
  if (!has(m, "config") || !m.at("config").is_object())
    return make_error(Errc::missing_field, "model.config",
                      "the run carries neither a preset nor the model's config.json");
  auto spec = parse_model_file(m.at("config"), "model.config");
  if (!spec.ok()) {
    Error e = spec.error();
    e.field = "model.config" + (e.field.empty() ? std::string() : "." + e.field);
    e.message = "ftcost cannot read this config.json: " + e.message;
    return e;
  }
  run.model_config = m.at("config");
  return Ok{};
}

// software: the recorded package versions (string values; others are not versions).
void read_software(const json& doc, RunRecord& run) {
  if (!has(doc, "software") || !doc.at("software").is_object()) return;
  for (const auto& [package, version] : doc.at("software").items())
    if (version.is_string()) run.software[package] = version.get<std::string>();
}

// --- training arguments (ftcost's names)

// torch AdamW's implementation of a run: recorded (training.adamw_impl), or read off the Trainer's own optim
// name in training_raw (adamw_torch is foreach, adamw_torch_fused fused: transformers' OptimizerNames), which
// recordings made before adamw_impl existed carry. Empty: not known (the stack's default applies) or not
// torch's AdamW (the recorded optimizer is another one).
Result<std::string> recorded_adamw_impl(const json& doc, const json& training, const std::string& path,
                                        const std::string& optimizer) {
  FTCOST_TRY(impl, opt_choice(training, "adamw_impl", path, {"foreach", "fused"}));
  if (!optimizer.empty() && optimizer != "adamw" && optimizer != "adamw-mixed") return std::string();
  if (!impl.empty() || !has(doc, "training_raw") || !doc.at("training_raw").is_object()) return impl;
  const json& raw = doc.at("training_raw");
  if (!has(raw, "optim") || !raw.at("optim").is_string()) return impl;
  const std::string o = raw.at("optim").get<std::string>();
  return std::string(o == "adamw_torch" ? "foreach" : o == "adamw_torch_fused" ? "fused" : "");
}

// training.optimizer and torch AdamW's implementation.
Status read_optimizer(const json& doc, const json& t, const std::string& path, RunTraining& out) {
  FTCOST_TRY(opt, opt_choice(t, "optimizer", path,
                             {"adamw", "adamw-mixed", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "sgd",
                              "sgd-momentum"}));
  out.optimizer = opt;
  FTCOST_TRY(impl, recorded_adamw_impl(doc, t, path, opt));
  out.adamw_impl = impl;
  return Ok{};
}

// training.lora_targets: a comma-separated string or a list of PEFT module names.
Result<std::string> read_lora_targets(const json& lt) {
  std::string list;
  if (lt.is_string()) {
    list = lt.get<std::string>();
  } else if (lt.is_array()) {
    for (std::size_t i = 0; i < lt.size(); ++i) {
      if (!lt[i].is_string())
        return make_error(Errc::wrong_type, idx("training.lora_targets", i), "must be a module name");
      list += (list.empty() ? "" : ",") + lt[i].get<std::string>();
    }
  } else {
    return make_error(Errc::wrong_type, "training.lora_targets", "must be a list of PEFT module names");
  }
  FTCOST_CHECK(parse_lora_targets(list, "training.lora_targets"));
  return list;
}

// training.lora_rank, lora_targets and lora_dropout (PEFT LoraConfig.lora_dropout, as ftcost_probe.py
// records it).
Status read_lora(const json& t, const std::string& tp, RunTraining& out) {
  if (has(t, "lora_rank")) {
    FTCOST_TRY(r, get_count(t, "lora_rank", tp, 1, 65536));
    out.lora_rank = r;
  }
  if (has(t, "lora_targets")) {
    FTCOST_TRY(list, read_lora_targets(t.at("lora_targets")));
    out.lora_targets = list;
  }
  if (!has(t, "lora_dropout")) return Ok{};
  FTCOST_TRY(p, opt_number(t, "lora_dropout", "training", 0));
  if (!(p >= 0 && p <= 1))
    return make_error(Errc::out_of_range, "training.lora_dropout",
                      "must be in [0, 1], got " + json(p).dump());
  out.lora_dropout = p;
  return Ok{};
}

// The training arguments recorded for the record (the steps carry the shapes the fit uses), checked
// against the schema all the same: a batch of 0 or a negative length is not a run.
Status read_recorded_shape(const json& t, RunTraining& out) {
  for (auto [k, member] :
       {std::make_pair("batch_size", &RunTraining::batch_size),
        std::make_pair("gradient_accumulation_steps", &RunTraining::gradient_accumulation_steps),
        std::make_pair("max_length", &RunTraining::max_length)}) {
    FTCOST_TRY(v, opt_count(t, k, "training", 0, 1, std::int64_t{1} << 40));
    out.*member = v;
  }
  FTCOST_TRY(packing, opt_bool(t, "packing", "training", false));
  if (has(t, "packing")) out.packing = packing;
  return Ok{};
}

Status read_training(const json& doc, RunTraining& out) {
  if (!has(doc, "training") || !doc.at("training").is_object())
    return make_error(Errc::missing_field, "training", "required object (method, precision, ...)");
  const json& t = doc.at("training");
  const std::string tp = "training";
  FTCOST_TRY(method, opt_choice(t, "method", tp, {"full", "lora", "qlora"}));
  if (method.empty())
    return make_error(Errc::missing_field, "training.method", "required: full, lora or qlora");
  out.method = method;
  FTCOST_TRY(quant, opt_choice(t, "quant", tp, {"nf4-dq", "nf4", "int8"}));
  out.quant = quant;
  FTCOST_TRY(prec, opt_choice(t, "precision", tp, {"bf16", "fp16", "fp32"}));
  out.precision = prec;
  FTCOST_CHECK(read_optimizer(doc, t, tp, out));
  FTCOST_TRY(att, opt_choice(t, "attention", tp, {"flash", "sdpa", "eager", "xformers"}));
  out.attention = att;
  if (has(t, "checkpointing")) {
    if (!t.at("checkpointing").is_boolean())
      return make_error(Errc::wrong_type, "training.checkpointing", "must be true or false");
    out.checkpointing = t.at("checkpointing").get<bool>();
  }
  if (method != "full") FTCOST_CHECK(read_lora(t, tp, out));
  return read_recorded_shape(t, out);
}

// --- steps

// One micro-batch record; nullopt when the callback could not see the batch (no seq_len or batch_size).
Result<std::optional<RunMicroBatch>> read_micro_batch(const json& mb, const std::string& q) {
  if (!mb.is_object()) return make_error(Errc::wrong_type, q, "must be an object");
  if (!has(mb, "seq_len") || !has(mb, "batch_size")) return std::optional<RunMicroBatch>();
  RunMicroBatch b;
  FTCOST_TRY(bs, get_count(mb, "batch_size", q, 1, 1 << 24));
  FTCOST_TRY(sl, get_count(mb, "seq_len", q, 1, 1 << 22));
  b.batch = bs;
  b.seq_len = static_cast<double>(sl);
  FTCOST_TRY(tok, opt_number(mb, "tokens", q, -1));
  if (has(mb, "tokens") && (tok < 0 || tok > static_cast<double>(bs) * static_cast<double>(sl)))
    return make_error(Errc::out_of_range, q + ".tokens",
                      "must be between 0 and batch_size x seq_len = " + std::to_string(bs * sl) + ", got " +
                          json(tok).dump());
  b.tokens = tok;
  FTCOST_CHECK(opt_count(mb, "label_tokens", q, 0, 0, bs * sl));
  FTCOST_TRY(as, opt_bool(mb, "assumed", q, false));
  b.assumed = as;
  return std::optional<RunMicroBatch>(b);
}

// A step's micro-batches; empty when any lacks its shape (time and memory unusable).
Status read_micro_batches(const json& s, const std::string& p, RunStep& st) {
  if (!has(s, "micro_batches") || !s.at("micro_batches").is_array())
    return make_error(Errc::missing_field, p + ".micro_batches", "required list of {batch_size, seq_len}");
  const json& mbs = s.at("micro_batches");
  bool complete = !mbs.empty();
  for (std::size_t j = 0; j < mbs.size(); ++j) {
    FTCOST_TRY(b, read_micro_batch(mbs[j], idx(p + ".micro_batches", j)));
    if (b)
      st.micro.push_back(*b);
    else
      complete = false;
  }
  if (!complete) st.micro.clear();
  return Ok{};
}

// The step's peak memory figures: numbers of bytes, or null. Their range (above 0, within the GPU's memory,
// reserved >= allocated) is check_run_memory's, once the GPU is known.
Status read_step_memory(const json& s, const std::string& p, RunStep& st) {
  st.max_allocated_bytes = opt_bytes(s, "max_memory_allocated_bytes");
  st.max_reserved_bytes = opt_bytes(s, "max_memory_reserved_bytes");
  st.allocated_recorded = has(s, "max_memory_allocated_bytes");
  st.reserved_recorded = has(s, "max_memory_reserved_bytes");
  for (const char* key : {"max_memory_allocated_bytes", "max_memory_reserved_bytes"})
    if (has(s, key) && !s.at(key).is_number())
      return make_error(Errc::wrong_type, p + "." + key, "must be a number of bytes or null");
  return Ok{};
}

Result<RunStep> read_step(const json& s, std::size_t i) {
  const std::string p = idx("steps", i);
  if (!s.is_object()) return make_error(Errc::wrong_type, p, "must be an object");
  RunStep st;
  FTCOST_TRY(sn, opt_count(s, "step", p, static_cast<std::int64_t>(i + 1), 0));
  FTCOST_TRY(cnt, opt_count(s, "count", p, 1, 1));
  FTCOST_TRY(warm, opt_bool(s, "warmup", p, false));
  st.step = sn;
  st.count = cnt;
  st.warmup = warm;
  FTCOST_TRY(wall, get_number(s, "wall_s", p));
  if (!std::isfinite(wall) || wall < 0 || (!warm && wall <= 0))
    return make_error(Errc::out_of_range, p + ".wall_s",
                      "must be a positive number of seconds, got " + json(wall).dump());
  if (wall / static_cast<double>(cnt) > 86400.0)
    return make_error(Errc::out_of_range, p + ".wall_s",
                      "more than a day per step (" + json(wall / static_cast<double>(cnt)).dump() +
                          " s): not a step time in seconds");
  st.wall_s = wall;
  FTCOST_CHECK(read_micro_batches(s, p, st));
  FTCOST_CHECK(read_step_memory(s, p, st));
  return st;
}

Status read_steps(const json& doc, RunRecord& run) {
  if (!has(doc, "steps") || !doc.at("steps").is_array() || doc.at("steps").empty())
    return make_error(Errc::missing_field, "steps", "required non-empty list of step records");
  const json& steps = doc.at("steps");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    FTCOST_TRY(st, read_step(steps[i], i));
    run.steps.push_back(st);
  }
  if (run.timed_steps() == 0)
    return make_error(Errc::invalid_value, "steps",
                      "no step outside the warm-up has both a wall time and a batch shape: nothing to fit");
  return Ok{};
}

// gpu.memory_bytes as torch reports it (total_memory): a little below the label, less on a MIG slice,
// never far more.
Status check_gpu_memory(const json& v, const GpuSpec& gpu) {
  if (v.is_null()) return Ok{};
  const double bytes = v.is_number() ? v.get<double>() : -1;
  if (bytes > 0 && bytes <= 1.5 * gpu.memory_gib * kGiB) return Ok{};
  return make_error(Errc::out_of_range, "gpu.memory_bytes",
                    "must be the GPU's memory in bytes, above 0 and at most 1.5 x the " +
                        json(gpu.memory_gib).dump() + " GiB of " + gpu.id + ", got " + v.dump());
}

// A step's peak memory figures, where recorded: above 0 and within the GPU's memory, reserved >= allocated.
Status check_step_memory(const RunStep& st, std::size_t i, const GpuSpec& gpu) {
  const std::string p = idx("steps", i);
  const double gpu_bytes = gpu.memory_gib * kGiB;
  for (auto [key, recorded, v] :
       {std::make_tuple("max_memory_allocated_bytes", st.allocated_recorded, st.max_allocated_bytes),
        std::make_tuple("max_memory_reserved_bytes", st.reserved_recorded, st.max_reserved_bytes)})
    if (recorded && (v <= 0 || v > gpu_bytes * 1.001))
      return make_error(Errc::out_of_range, p + "." + key,
                        "must be > 0 and at most the memory of " + gpu.id + " (" +
                            json(std::round(gpu.memory_gib * 10) / 10).dump() + " GiB), got " +
                            json(v / kGiB).dump() + " GiB");
  if (st.max_allocated_bytes > 0 && st.max_reserved_bytes > 0 &&
      st.max_reserved_bytes < st.max_allocated_bytes * 0.999)
    return make_error(
        Errc::out_of_range, p + ".max_memory_reserved_bytes",
        "is below max_memory_allocated_bytes: the allocator reserves at least what it hands out");
  return Ok{};
}

}  // namespace

bool RunRecord::has_memory() const {
  return std::any_of(steps.begin(), steps.end(),
                     [](const RunStep& s) { return !s.warmup && s.max_allocated_bytes >= 0; });
}

std::size_t RunRecord::timed_steps() const {
  std::size_t n = 0;
  for (const auto& s : steps) n += (!s.warmup && s.wall_s > 0 && !s.micro.empty()) ? 1 : 0;
  return n;
}

Result<RunRecord> parse_run_record(const std::string& text, const std::string& source) {
  FTCOST_TRY(doc, parse_json_text(text, source));
  if (!doc.is_object()) return make_error(Errc::wrong_type, "(top level)", "must be a JSON object");
  FTCOST_TRY(schema, get_string(doc, "schema", ""));
  if (schema != kRunSchema)
    return make_error(Errc::schema_mismatch, "schema", "expected \"ftcost.run/1\", got \"" + schema + "\"");
  RunRecord run;
  run.source = source;
  FTCOST_TRY(rs, recorder_source(doc));
  run.recorder_source = rs;
  if (has(doc, "lacks") && doc.at("lacks").is_array())
    for (const auto& v : doc.at("lacks"))
      if (v.is_string()) run.lacks.push_back(v.get<std::string>());
  FTCOST_CHECK(read_gpu(doc, run.gpu));
  read_software(doc, run);
  FTCOST_CHECK(read_model(doc, run));
  FTCOST_CHECK(read_training(doc, run.training));
  FTCOST_CHECK(read_steps(doc, run));
  return run;
}

Status check_run_memory(const RunRecord& run, const GpuSpec& gpu) {
  FTCOST_CHECK(check_gpu_memory(run.gpu.memory_bytes, gpu));
  for (std::size_t i = 0; i < run.steps.size(); ++i) FTCOST_CHECK(check_step_memory(run.steps[i], i, gpu));
  return Ok{};
}

}  // namespace ftcost
