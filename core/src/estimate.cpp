#include "ftcost/estimate.hpp"

#include "ftcost/paper.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#if __has_include("ftcost/calibration.hpp")
#include "ftcost/calibration.hpp"
#define FTCOST_HAS_CALIBRATION 1
#endif

namespace ftcost {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Strict whole-number parse: digits only (no sign, unit, exponent or fraction), within [lo, hi].
Result<std::int64_t> parse_count(const std::string& text, const std::string& flag, std::int64_t lo,
                                 std::int64_t hi) {
  if (text.empty()) return make_error(Errc::invalid_value, flag, "needs a whole number");
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return make_error(Errc::invalid_value, flag,
                        "must be a whole number between " + std::to_string(lo) + " and " +
                            std::to_string(hi) + ", got \"" + text + "\"");
    if (v > hi) break;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi)
    return make_error(
        Errc::out_of_range, flag,
        "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + text);
  return v;
}

// Strict positive real parse (no NaN/inf, no units).
Result<double> parse_real(const std::string& text, const std::string& flag, double lo, double hi) {
  const char* s = text.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  bool bad = text.empty() || end == s || *end != '\0' || !std::isfinite(v);
  for (char c : text)
    if (!(c >= '0' && c <= '9') && c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+') bad = true;
  if (bad) return make_error(Errc::invalid_value, flag, "must be a number, got \"" + text + "\"");
  if (v < lo || v > hi)
    return make_error(Errc::out_of_range, flag,
                      "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", got " + text);
  return v;
}

Result<std::string> parse_choice(const std::string& text, const std::string& flag,
                                 const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (text == a) return text;
  return make_error(Errc::invalid_value, flag,
                    "must be one of " + join_ids(allowed) + ", got \"" + text + "\"");
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

std::string get(const Request& r, const std::string& key) {
  auto it = r.find(key);
  return it == r.end() ? std::string() : it->second;
}

}  // namespace

const std::vector<std::string>& request_keys() {
  static const std::vector<std::string> keys = {"model",
                                                "gpu",
                                                "method",
                                                "quant",
                                                "lora-rank",
                                                "lora-targets",
                                                "precision",
                                                "optimizer",
                                                "checkpointing",
                                                "attention",
                                                "moe",
                                                "top-k",
                                                "seq",
                                                "dataset",
                                                "padding",
                                                "max-length",
                                                "batch",
                                                "queries",
                                                "epochs",
                                                "price-per-hour",
                                                "provider",
                                                "spot",
                                                "stack",
                                                "calibration",
                                                "model-kind",
                                                "routing",
                                                "template-tokens",
                                                "stale-days"};
  return keys;
}

Result<Request> request_from_json(const json& obj) {
  if (!obj.is_object())
    return make_error(Errc::wrong_type, "request", "must be a JSON object of flag names to values");
  const auto& keys = request_keys();
  Request r;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
      return make_error(Errc::unknown_key, it.key(), "is not an estimate option; known: " + join_ids(keys));
    const json& v = it.value();
    if (v.is_null()) continue;
    if (v.is_string()) {
      r[it.key()] = v.get<std::string>();
    } else if (v.is_boolean()) {
      r[it.key()] = v.get<bool>() ? "on" : "off";
    } else if (v.is_number_integer() || v.is_number_unsigned()) {
      r[it.key()] = v.dump();
    } else if (v.is_number_float()) {
      double x = v.get<double>();
      if (!std::isfinite(x)) return make_error(Errc::invalid_value, it.key(), "must be finite");
      if (std::floor(x) == x && std::fabs(x) < 1e15)
        r[it.key()] = std::to_string(static_cast<long long>(x));
      else
        r[it.key()] = v.dump();
    } else {
      return make_error(Errc::wrong_type, it.key(), "must be a string or a number");
    }
  }
  return r;
}

Result<Inputs> resolve_request(const Request& req, const Database& db, const FileReader& reader,
                               long today_days) {
  for (const auto& [k, v] : req) {
    const auto& keys = request_keys();
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      return make_error(Errc::unknown_key, "--" + k, "is not an estimate option");
  }
  Inputs in;
  in.today_days = today_days;
  auto read_doc = [&](const std::string& path, const std::string& flag) -> Result<json> {
    if (!reader)
      return make_error(Errc::io_error, flag,
                        "file paths are not available here; give an id or paste the JSON");
    FTCOST_TRY(text, reader(path));
    return parse_json_text(text, path);
  };

  // --- model
  const std::string model_arg = get(req, "model");
  if (model_arg.empty())
    return make_error(Errc::missing_field, "--model",
                      "is required: a preset id (see `ftcost models`) or a config.json path");
  if (const ModelSpec* m = db.model(model_arg)) {
    in.model = *m;
  } else if (looks_like_path(model_arg)) {
    FTCOST_TRY(doc, read_doc(model_arg, "--model"));
    auto m2 = parse_model_file(doc, model_arg);
    if (!m2.ok()) {
      Error e = m2.error();
      e.field = model_arg + ": " + e.field;
      return e;
    }
    in.model = m2.value();
  } else {
    return make_error(Errc::unknown_id, "--model",
                      "unknown model \"" + model_arg + "\"; presets: " + join_ids(db.model_ids()) +
                          " (or a path to a config.json)");
  }
  for (const auto& wmsg : in.model.warnings) in.warnings.push_back(wmsg);

  // --- gpu
  const std::string gpu_arg = get(req, "gpu");
  if (gpu_arg.empty())
    return make_error(Errc::missing_field, "--gpu",
                      "is required: an id (see `ftcost gpus`) or a GPU spec JSON path");
  if (const GpuSpec* g = db.gpu(gpu_arg)) {
    in.gpu = *g;
  } else if (looks_like_path(gpu_arg)) {
    FTCOST_TRY(doc, read_doc(gpu_arg, "--gpu"));
    auto g2 = parse_gpu(doc, gpu_arg);
    if (!g2.ok()) {
      Error e = g2.error();
      e.field = gpu_arg + ": " + e.field;
      return e;
    }
    in.gpu = g2.value();
  } else {
    return make_error(
        Errc::unknown_id, "--gpu",
        "unknown GPU \"" + gpu_arg + "\"; known: " + join_ids(db.gpu_ids()) + " (or a path to a GPU JSON)");
  }

  Workload& w = in.workload;
  // --- method and its defaults
  std::string method = get(req, "method");
  if (method.empty()) return make_error(Errc::missing_field, "--method", "is required: full, lora or qlora");
  FTCOST_TRY(mth, parse_choice(method, "--method", {"full", "lora", "qlora"}));
  w.method = mth == "full" ? Method::full : mth == "lora" ? Method::lora : Method::qlora;

  std::string quant = get(req, "quant");
  if (w.method == Method::qlora) {
    if (quant.empty()) {
      quant = "nf4-dq";
      in.defaults.push_back("quant=nf4-dq (QLoRA default: NF4 with double quantization, bitsandbytes)");
    }
    FTCOST_TRY(q, parse_choice(quant, "--quant", {"nf4-dq", "nf4", "int8"}));
    w.quant = q == "nf4-dq" ? Quant::nf4_dq : q == "nf4" ? Quant::nf4 : Quant::int8;
  } else if (!quant.empty()) {
    return make_error(Errc::invalid_value, "--quant", "applies only to --method qlora");
  } else {
    w.quant = Quant::none;
  }

  if (w.method != Method::full) {
    std::string rank = get(req, "lora-rank");
    if (rank.empty()) {
      rank = "16";
      in.defaults.push_back("lora-rank=16");
    }
    FTCOST_TRY(r, parse_count(rank, "--lora-rank", 1, 65536));
    w.lora_rank = r;
    std::string targets = get(req, "lora-targets");
    if (targets.empty()) {
      targets = "all-linear";
      in.defaults.push_back("lora-targets=all-linear (every linear layer except lm_head)");
    }
    FTCOST_TRY(t, parse_lora_targets(targets, "--lora-targets"));
    w.lora_targets = t;
  } else {
    if (!get(req, "lora-rank").empty())
      return make_error(Errc::invalid_value, "--lora-rank", "applies only to --method lora or qlora");
    if (!get(req, "lora-targets").empty())
      return make_error(Errc::invalid_value, "--lora-targets", "applies only to --method lora or qlora");
  }

  std::string prec = get(req, "precision");
  if (prec.empty()) {
    prec = "bf16";
    in.defaults.push_back("precision=bf16");
  }
  FTCOST_TRY(pr, parse_choice(prec, "--precision", {"bf16", "fp16", "fp32"}));
  w.precision = pr;
  if (in.gpu.peak_tflops(pr == "fp32" ? "fp32" : pr) <= 0)
    in.warnings.push_back(in.gpu.id + " has no published dense " + pr +
                          " peak; step time uses what the spec gives");

  std::string opt = get(req, "optimizer");
  if (opt.empty()) {
    opt = "adamw";
    in.defaults.push_back("optimizer=adamw (torch AdamW, states in the parameter dtype)");
  }
  FTCOST_TRY(o,
             parse_choice(opt, "--optimizer", {"adamw", "adamw-mixed", "adamw-8bit", "sgd", "sgd-momentum"}));
  w.optimizer = o == "adamw"         ? Optimizer::adamw
                : o == "adamw-mixed" ? Optimizer::adamw_mixed
                : o == "adamw-8bit"  ? Optimizer::adamw_8bit
                : o == "sgd"         ? Optimizer::sgd
                                     : Optimizer::sgd_momentum;

  const bool mamba_only_code = in.model.family == "blackmamba" || in.model.family == "mamba";
  std::string gc = get(req, "checkpointing");
  if (gc.empty()) {
    gc = mamba_only_code ? "off" : "on";
    in.defaults.push_back(
        mamba_only_code ? "checkpointing=off (the BlackMamba/mamba_ssm training code has no checkpointing)"
                        : "checkpointing=on (LLaMA-Factory / common practice)");
  }
  FTCOST_TRY(gcv, parse_choice(gc, "--checkpointing", {"on", "off"}));
  w.checkpointing = gcv == "on";

  std::string att = get(req, "attention");
  if (att.empty()) {
    att = "flash";
    if (in.model.layers_with(Mixer::attention) > 0)
      in.defaults.push_back("attention=flash (FlashAttention-2)");
  }
  FTCOST_TRY(av, parse_choice(att, "--attention", {"flash", "eager"}));
  w.attention = av == "flash" ? Attention::flash : Attention::eager;

  std::string moe = get(req, "moe");
  if (!in.model.is_moe()) {
    if (!moe.empty() && moe != "sparse")
      in.warnings.push_back("--moe " + moe + " ignored: " + in.model.id + " has no experts");
    w.moe = MoeMode::sparse;
  } else {
    if (moe.empty()) {
      moe = "sparse";
      in.defaults.push_back("moe=sparse (top-" + std::to_string(in.model.moe.top_k) + " of " +
                            std::to_string(in.model.moe.experts) + " experts per token)");
    }
    FTCOST_TRY(mv, parse_choice(moe, "--moe", {"sparse", "dense"}));
    w.moe = mv == "sparse" ? MoeMode::sparse : MoeMode::dense;
  }
  std::string topk = get(req, "top-k");
  if (!topk.empty()) {
    if (!in.model.is_moe()) return make_error(Errc::invalid_value, "--top-k", "applies only to MoE models");
    FTCOST_TRY(k, parse_count(topk, "--top-k", 1, in.model.moe.experts));
    w.top_k_override = k;
  }

  // --- sequence lengths
  const std::string seq = get(req, "seq");
  const std::string ds = get(req, "dataset");
  if (!seq.empty() && !ds.empty())
    return make_error(Errc::invalid_value, "--seq", "give either --seq or --dataset, not both");
  std::string maxlen = get(req, "max-length");
  std::string padding = get(req, "padding");
  if (!seq.empty()) {
    FTCOST_TRY(s, parse_count(seq, "--seq", 1, 1 << 22));
    w.seq_len = static_cast<double>(s);
    w.lengths = LengthDistribution::fixed(w.seq_len);
    w.max_length = w.seq_len;
    if (!padding.empty())
      return make_error(Errc::invalid_value, "--padding",
                        "applies only with --dataset (a fixed --seq needs no padding)");
    if (!maxlen.empty())
      return make_error(Errc::invalid_value, "--max-length", "applies only with --dataset");
    if (!get(req, "template-tokens").empty())
      return make_error(Errc::invalid_value, "--template-tokens",
                        "applies only with --dataset (include it in --seq)");
  } else {
    std::string dsid = ds;
    if (dsid.empty()) {
      dsid = "cs15k";
      in.defaults.push_back("dataset=cs15k (no --seq or --dataset given)");
    }
    const Dataset* d = db.dataset(dsid);
    if (d == nullptr) {
      std::vector<std::string> ids;
      for (const auto& [id, x] : db.datasets()) ids.push_back(id);
      return make_error(Errc::unknown_id, "--dataset",
                        "unknown dataset \"" + dsid + "\"; known: " + join_ids(ids));
    }
    in.dataset_id = dsid;
    w.lengths = d->lengths;
    std::string tt = get(req, "template-tokens");
    if (tt.empty()) {
      w.template_tokens = d->template_tokens;
      if (d->template_tokens > 0)
        in.defaults.push_back("template-tokens=" + std::to_string(static_cast<long>(d->template_tokens)) +
                              " (prompt template, from the " + dsid + " preset)");
    } else {
      FTCOST_TRY(t, parse_count(tt, "--template-tokens", 0, 100000));
      w.template_tokens = static_cast<double>(t);
    }
    if (maxlen.empty()) {
      maxlen = "1024";
      in.defaults.push_back("max-length=1024 (LLaMA-Factory cutoff_len)");
    }
    FTCOST_TRY(ml, parse_count(maxlen, "--max-length", 8, 1 << 22));
    w.max_length = static_cast<double>(ml);
    if (padding.empty()) {
      padding = "longest";
      in.defaults.push_back(
          "padding=longest (pad each batch to its longest sample, the HF collator default)");
    }
    FTCOST_TRY(pv, parse_choice(padding, "--padding", {"longest", "max-length", "packing"}));
    w.padding = pv == "longest"      ? Padding::longest
                : pv == "max-length" ? Padding::max_length
                                     : Padding::packing;
    if (get(req, "queries").empty()) {
      w.queries = d->queries;
      in.defaults.push_back("queries=" + std::to_string(static_cast<long long>(d->queries)) + " (size of " +
                            dsid + ")");
    }
  }

  // --- batch, size, epochs
  std::string batch = get(req, "batch");
  if (batch.empty()) {
    batch = "max";
    in.defaults.push_back("batch=max (the largest batch that fits)");
  }
  if (batch == "max") {
    w.batch = 0;
  } else {
    FTCOST_TRY(b, parse_count(batch, "--batch", 1, 1 << 24));
    w.batch = b;
  }
  std::string queries = get(req, "queries");
  if (!queries.empty()) {
    FTCOST_TRY(q, parse_count(queries, "--queries", 1, std::int64_t{1} << 40));
    w.queries = static_cast<double>(q);
  } else if (w.queries <= 0) {
    w.queries = 1000;
    in.defaults.push_back("queries=1000");
  }
  std::string epochs = get(req, "epochs");
  if (epochs.empty()) {
    epochs = "1";
    in.defaults.push_back("epochs=1");
  }
  FTCOST_TRY(ep, parse_real(epochs, "--epochs", 0.001, 1e6));
  w.epochs = ep;

  // --- stack, model kind
  std::string stack = get(req, "stack");
  if (stack.empty()) {
    stack = "hf-transformers-2024";
    in.defaults.push_back("stack=hf-transformers-2024 (the paper's software stack)");
  }
  const StackProfile* sp = db.stack(stack);
  if (sp == nullptr) {
    std::vector<std::string> ids;
    for (const auto& [id, x] : db.stacks()) ids.push_back(id);
    return make_error(Errc::unknown_id, "--stack",
                      "unknown stack \"" + stack + "\"; known: " + join_ids(ids));
  }
  in.stack = *sp;
  const std::string vendor_warning = stack_vendor_warning(in.stack, in.gpu.id, in.gpu.vendor);
  if (!vendor_warning.empty()) in.warnings.push_back(vendor_warning);
  std::string kind = get(req, "model-kind");
  if (kind.empty()) kind = "step";
  FTCOST_TRY(kv, parse_choice(kind, "--model-kind", {"step", "paper"}));
  in.model_kind = kv;
  std::string routing = get(req, "routing");
  if (routing.empty()) {
    routing = "uniform";
    if (in.model.is_moe()) in.defaults.push_back("routing=uniform (tokens spread evenly over the experts)");
  }
  if (in.model.is_moe()) {
    FTCOST_TRY(shares, expert_shares(routing, in.model.moe.experts));
    in.expert_shares = shares;
  } else if (routing != "uniform") {
    return make_error(Errc::invalid_value, "--routing", "applies only to MoE models");
  }
  in.routing = routing;

  // --- prices
  std::string pph = get(req, "price-per-hour");
  if (!pph.empty()) {
    FTCOST_TRY(p, parse_real(pph, "--price-per-hour", 0.0001, 10000));
    in.price_per_hour = p;
  }
  std::string stale = get(req, "stale-days");
  if (!stale.empty()) {
    FTCOST_TRY(sd, parse_count(stale, "--stale-days", 1, 100000));
    in.stale_days = static_cast<long>(sd);
  }
  std::string calib = get(req, "calibration");
  if (!calib.empty()) {
#ifdef FTCOST_HAS_CALIBRATION
    if (!reader)
      return make_error(Errc::io_error, "--calibration",
                        "file paths are not available here; load the file in the UI");
    FTCOST_TRY(text, reader(calib));
    auto cal = parse_calibration(text, calib);
    if (!cal.ok()) return cal.error();
    FTCOST_TRY(spec_ok, check_against_spec(cal.value(), in.gpu.bf16_tflops, in.gpu.memory_bandwidth_gbps));
    (void)spec_ok;
    const double cal_gib = static_cast<double>(cal->device.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
    if (std::fabs(cal_gib - in.gpu.memory_gib) > 0.1 * in.gpu.memory_gib)
      in.warnings.push_back("calibration " + calib + " was measured on \"" + cal->device.name + "\" (" +
                            std::to_string(static_cast<int>(cal_gib)) + " GiB), which does not look like " +
                            in.gpu.id);
    in.calibration = std::make_shared<const Calibration>(std::move(cal).value());
    in.calibration_source = calib;
#else
    return make_error(Errc::invalid_value, "--calibration", "this build has no calibration support");
#endif
  }
  const std::string provider = get(req, "provider");
  in.provider = provider;
  std::string spot = get(req, "spot");
  if (!spot.empty()) {
    FTCOST_TRY(sv, parse_choice(spot, "--spot", {"on", "off"}));
    in.spot = sv == "on";
  }
  if (!provider.empty()) {
    bool found = false;
    for (const auto& p : db.providers()) found = found || p.id == provider;
    if (!found) {
      std::vector<std::string> ids;
      for (const auto& p : db.providers()) ids.push_back(p.id);
      return make_error(Errc::unknown_id, "--provider",
                        "unknown provider \"" + provider + "\"; known: " + join_ids(ids));
    }
  }
  return in;
}

Result<Estimate> estimate(const Inputs& in, const Database& db) {
  Estimate e;
  e.in = in;
  e.warnings = in.warnings;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  e.max_batch = max_batch_size(m, w, in.stack, in.gpu);
  e.params = param_breakdown(m, w);
  if (w.batch > 0) {
    e.batch = w.batch;
    if (w.batch > e.max_batch.batch)
      e.warnings.push_back("batch " + std::to_string(w.batch) + " does not fit: the maximum on " + in.gpu.id +
                           " is " + std::to_string(e.max_batch.batch));
  } else {
    e.batch = e.max_batch.batch;
  }
  e.memory = memory_for_batch(m, w, in.stack, std::max<std::int64_t>(e.batch, 0), e.max_batch.seq_len);
  if (e.batch <= 0) {
    e.warnings.push_back(
        "does not fit: even batch 1 needs " +
        json(std::round(memory_for_batch(m, w, in.stack, 1, e.max_batch.seq_len).total() / kGiB * 10) / 10)
            .dump() +
        " GiB; " + in.gpu.id + " has " + json(std::round(in.gpu.usable_bytes() / kGiB * 10) / 10).dump() +
        " GiB usable");
    return e;
  }
  if (in.gpu.usable_memory_estimated())
    e.warnings.push_back(
        in.gpu.id + ": usable memory estimated as 97.5% of the label (no nvidia-smi total in the database)");
  e.padded_len = w.mean_padded_len(e.batch);
  // samples per step: with packing a "sample" is a packed row of max-length tokens
  double queries_per_row = 1.0;
  if (w.seq_len <= 0 && w.padding == Padding::packing)
    queries_per_row = w.max_length / std::max(1.0, w.lengths.truncated_mean(w.max_length));
  if (in.model_kind == "paper") {
    double rmse = 0;
    const double sparsity =
        m.is_moe() ? static_cast<double>(w.active_experts(m)) / static_cast<double>(m.moe.experts) : 1.0;
    FTCOST_TRY(qps, paper_eq2_qps(m.id, in.dataset_id, in.gpu.id, sparsity, e.batch, &rmse));
    if (qps <= 0)
      return make_error(Errc::invalid_value, "--model-kind",
                        "Eq. (2) gives a non-positive throughput at this batch");
    e.throughput_qps = qps;
    e.step.model = "paper-eq2";
    e.step.total_s = static_cast<double>(e.batch) / qps;
    e.step.range_fraction = rmse / qps;
    e.step.range_note = "RMSE of the Eq. (2) fit on the paper's A40 sweep";
  } else {
    e.step =
        step_model(m, w, in.stack, in.gpu, in.calibration.get(), e.batch, e.padded_len, in.expert_shares);
    e.throughput_qps = static_cast<double>(e.batch) * queries_per_row / e.step.total_s;
    // Range: the stack profile's fit residual (log-space RMS on the data it was fitted to) and, with a
    // calibration, the spread of its measurements; unfitted profiles get a wide default.
    double fit_rel = 0.35;
    std::string fit_note = "stack profile " + in.stack.id + " is not fitted to measurements";
    if (in.stack.fit.is_object() && in.stack.fit.contains("rms_log_residual") &&
        in.stack.fit["rms_log_residual"].is_number()) {
      fit_rel = std::exp(in.stack.fit["rms_log_residual"].get<double>()) - 1.0;
      fit_note = "fit residual of " + in.stack.id + " on its training data";
      if (in.gpu.id != "a40") {
        // Transfer to another GPU adds the uncertainty of the default efficiency curves (no calibration).
        fit_rel = std::sqrt(fit_rel * fit_rel + (in.calibration ? 0.0 : 0.15 * 0.15));
        if (!in.calibration)
          fit_note += " + spec-only efficiencies on a GPU it was not fitted on (no calibration)";
      }
    }
    double cal_rel = 0;
#ifdef FTCOST_HAS_CALIBRATION
    if (in.calibration) {
      for (const auto& g : in.calibration->measurements.gemm)
        if (g.tflops.median > 0)
          cal_rel = std::max(cal_rel, (g.tflops.p90 - g.tflops.p10) / (2 * g.tflops.median));
    }
#endif
    e.step.range_fraction = std::sqrt(fit_rel * fit_rel + cal_rel * cal_rel);
    e.step.dominant_uncertainty = cal_rel > fit_rel ? "calibration spread" : fit_note;
    e.step.range_note = e.step.dominant_uncertainty;
  }
  e.throughput_tps = e.throughput_qps / queries_per_row * e.padded_len;
  e.throughput_low = e.throughput_qps / (1.0 + e.step.range_fraction);
  e.throughput_high = e.throughput_qps * (1.0 + e.step.range_fraction);
  e.time_hours = paper::hours(w.queries, w.epochs, e.throughput_qps);

  // Costs: --price-per-hour, and every provider offer for this GPU.
  auto make_cost = [&](const PriceChoice& p) {
    ProviderCost c;
    c.price = p;
    c.hours = e.time_hours;
    c.cost_usd = e.time_hours * p.usd_per_hour;
    c.cost_low = paper::hours(w.queries, w.epochs, e.throughput_high) * p.usd_per_hour;
    c.cost_high = paper::hours(w.queries, w.epochs, e.throughput_low) * p.usd_per_hour;
    return c;
  };
  for (const auto& o : db.offers_for(in.gpu.id)) {
    for (int spot = 0; spot < 2; ++spot) {
      double price = spot ? o.spot_usd_per_gpu_hour : o.on_demand_usd_per_gpu_hour;
      if (price <= 0) continue;
      PriceChoice p;
      p.provider = o.provider;
      p.provider_id = o.provider_id;
      p.usd_per_hour = price;
      p.date = o.date;
      p.spot = spot == 1;
      p.source = o.source;
      if (o.date_days >= 0 && in.today_days >= 0) {
        p.age_days = in.today_days - o.date_days;
        p.stale = p.age_days > in.stale_days;
      }
      e.costs.push_back(make_cost(p));
    }
  }
  std::sort(e.costs.begin(), e.costs.end(),
            [](const ProviderCost& a, const ProviderCost& b) { return a.cost_usd < b.cost_usd; });
  if (in.price_per_hour > 0) {
    PriceChoice p;
    p.provider = "--price-per-hour";
    p.usd_per_hour = in.price_per_hour;
    e.chosen = make_cost(p);
    e.has_price = true;
  } else {
    // Headline price: the cheapest matching offer, preferring dated and fresh ones (an undated or stale
    // price is only used when nothing better exists, and then with a warning).
    for (int pass = 0; pass < 3 && !e.has_price; ++pass) {
      for (const auto& c : e.costs) {
        if (c.price.spot != in.spot || (!in.provider.empty() && c.price.provider_id != in.provider)) continue;
        const bool dated = !c.price.date.empty();
        if ((pass == 0 && (!dated || c.price.stale)) || (pass == 1 && !dated)) continue;
        e.chosen = c;
        e.has_price = true;
        break;
      }
    }
    if (e.has_price && e.chosen.price.date.empty())
      e.warnings.push_back("the price used (" + e.chosen.price.provider + ") has no date in its source");
    else if (e.has_price && e.chosen.price.stale)
      e.warnings.push_back("the price used (" + e.chosen.price.provider + ", " + e.chosen.price.date +
                           ") is older than " + std::to_string(in.stale_days) + " days");
  }
  if (!e.has_price)
    e.warnings.push_back("no " + std::string(in.spot ? "spot " : "") + "price for " + in.gpu.id +
                         (in.provider.empty() ? std::string() : " from " + in.provider) +
                         " in the database: give --price-per-hour for a cost");
  return e;
}

json estimate_to_json(const Estimate& e) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  json inputs = {{"method", method_name(w.method)},
                 {"precision", w.precision},
                 {"optimizer", optimizer_name(w.optimizer)},
                 {"checkpointing", w.checkpointing},
                 {"attention", w.attention == Attention::flash ? "flash" : "eager"},
                 {"queries", w.queries},
                 {"epochs", w.epochs},
                 {"stack", in.stack.id},
                 {"routing", in.routing},
                 {"model_kind", in.model_kind}};
  if (w.method == Method::qlora) inputs["quant"] = quant_name(w.quant);
  if (w.method != Method::full) {
    inputs["lora_rank"] = w.lora_rank;
    inputs["lora_targets"] = w.lora_targets.names;
  }
  if (m.is_moe()) {
    inputs["moe"] = w.moe == MoeMode::sparse ? "sparse" : "dense";
    inputs["experts_per_token"] = w.active_experts(m);
  }
  if (in.dataset_id.empty()) {
    inputs["seq"] = w.seq_len;
  } else {
    inputs["dataset"] = in.dataset_id;
    inputs["padding"] = padding_name(w.padding);
    inputs["max_length"] = w.max_length;
    inputs["template_tokens"] = w.template_tokens;
  }
  ParamCounts pc = m.params();
  json j = {{"model",
             {{"id", m.id},
              {"name", m.display_name},
              {"kind", m.kind()},
              {"total_params", pc.total()},
              {"active_params", m.active_params(m.is_moe() ? w.active_experts(m) : 0)},
              {"trainable_params", e.params.trainable},
              {"params", pc.to_json()}}},
            {"gpu", in.gpu.to_json()},
            {"inputs", inputs},
            {"defaults_applied", in.defaults},
            {"max_batch_size", e.max_batch.batch},
            {"batch_size", e.batch},
            {"memory_seq_len", e.max_batch.seq_len},
            {"memory_gib", e.memory.to_json_gib()},
            {"memory_model",
             {{"usable_gib", e.max_batch.usable_bytes / kGiB},
              {"fixed_gib", e.max_batch.fixed_bytes / kGiB},
              {"per_sample_gib", e.max_batch.per_sample_bytes / kGiB},
              {"note",
               "first-principles components; the stack profile's gc_retained_fraction is fitted on the "
               "paper's A40 maxima"}}}};
  json warnings = e.warnings;
  j["warnings"] = warnings;
  if (e.batch <= 0) {
    j["fits"] = false;
    j["step_time_s"] = nullptr;
    j["throughput_queries_per_s"] = nullptr;
    j["throughput_tokens_per_s"] = nullptr;
    j["time_hours"] = nullptr;
    j["cost_usd"] = nullptr;
    return j;
  }
  j["fits"] = e.max_batch.batch >= e.batch;
  j["mean_padded_len"] = e.padded_len;
  j["step_time_s"] = e.step.total_s;
  j["step_model"] = {{"name", e.step.model},
                     {"range_fraction", e.step.range_fraction},
                     {"note", e.step.range_note},
                     {"dominant_uncertainty", e.step.dominant_uncertainty}};
  if (e.step.model == "step-model") {
    json st = json::object(), lt = json::object(), kc = json::object();
    for (int i = 0; i < kStages; ++i)
      st[stage_name(static_cast<Stage>(i))] = e.step.by_stage[static_cast<std::size_t>(i)];
    for (int i = 0; i < kLayerTypes; ++i)
      lt[layer_type_name(static_cast<LayerType>(i))] = e.step.by_layer[static_cast<std::size_t>(i)];
    for (int i = 0; i < kKernelClasses; ++i)
      kc[kernel_class_name(static_cast<KernelClass>(i))] = e.step.by_class[static_cast<std::size_t>(i)];
    j["step_breakdown_s"] = st;
    j["layer_breakdown_s"] = lt;
    j["kernel_classes_s"] = kc;
    // The ops as the step model sums them, one per (stage, layer type, kernel class, name): device time,
    // FLOPs, bytes, launches, bound. A linear layer's NF4 dequantization and its GEMM share a name and
    // stay two ops. Ordered by stage, then name, then class.
    json ops = json::array();
    std::map<std::tuple<int, std::string, int, int>, Op> merged;
    for (const auto& op : e.step.ops) {
      auto key = std::make_tuple(static_cast<int>(op.stage), std::string(op.name),
                                 static_cast<int>(op.kclass), static_cast<int>(op.layer));
      auto it = merged.find(key);
      if (it == merged.end()) {
        merged.emplace(key, op);
      } else {
        it->second.flops += op.flops;
        it->second.bytes += op.bytes;
        it->second.kernels += op.kernels;
        it->second.gpu_s += op.gpu_s;
        it->second.compute_bound = it->second.compute_bound || op.compute_bound;
      }
    }
    for (const auto& [key, op] : merged) {
      if (op.gpu_s <= 0 && op.kernels <= 0) continue;
      ops.push_back(json{{"stage", stage_name(op.stage)},
                         {"name", op.name},
                         {"layer", layer_type_name(op.layer)},
                         {"class", kernel_class_name(op.kclass)},
                         {"time_s", op.gpu_s},
                         {"flops", op.flops},
                         {"bytes", op.bytes},
                         {"kernels", op.kernels},
                         {"bound", op.compute_bound ? "compute" : "memory"}});
    }
    j["ops"] = ops;
    j["device_time_s"] = e.step.gpu_s;
    j["host_wait_s"] = e.step.host_s;
    j["kernels_per_step"] = e.step.kernels;
    j["calibrated"] = e.step.calibrated;
  }
  j["throughput_queries_per_s"] = e.throughput_qps;
  j["throughput_queries_per_s_range"] = {e.throughput_low, e.throughput_high};
  j["throughput_tokens_per_s"] = e.throughput_tps;
  j["time_hours"] = e.time_hours;
  if (e.has_price) {
    j["cost_usd"] = e.chosen.cost_usd;
    j["cost_usd_range"] = {e.chosen.cost_low, e.chosen.cost_high};
    j["price"] = {{"provider", e.chosen.price.provider},
                  {"usd_per_gpu_hour", e.chosen.price.usd_per_hour},
                  {"date", e.chosen.price.date},
                  {"stale", e.chosen.price.stale}};
  } else {
    j["cost_usd"] = nullptr;
  }
  json costs = json::array();
  for (const auto& c : e.costs) {
    json cj = {{"provider", c.price.provider},
               {"provider_id", c.price.provider_id},
               {"usd_per_gpu_hour", c.price.usd_per_hour},
               {"spot", c.price.spot},
               {"date", c.price.date.empty() ? json(nullptr) : json(c.price.date)},
               {"stale", c.price.stale},
               {"undated", c.price.date.empty()},
               {"hours", c.hours},
               {"cost_usd", c.cost_usd},
               {"cost_usd_range", {c.cost_low, c.cost_high}}};
    if (c.price.age_days >= 0) cj["age_days"] = c.price.age_days;
    costs.push_back(cj);
  }
  j["costs"] = costs;
  return j;
}

}  // namespace ftcost
