#include "ftcost/calibrate/plan.hpp"

#include "ftcost/enum_names.hpp"

#include <algorithm>
#include <set>

namespace ftcost::calib {

constexpr EnumName<Mode> kModeNames[] = {
    {Mode::quick, "quick"}, {Mode::full, "full"}, {Mode::smoke, "smoke"}};
const char* mode_name(Mode m) { return enum_name(kModeNames, m, "quick"); }

const std::vector<std::string>& all_families() {
  // the op classes between the GEMMs (issue 38) come last, so that a time-limited run has the older rows
  static const std::vector<std::string> f = {
      "launch", "host", "bandwidth", "elementwise", "adamw",         "nf4",  "gemm",
      "moe",    "norm", "cast",      "pointwise",   "cross_entropy", "lora", "attention"};
  return f;
}

Result<std::vector<std::string>> parse_only(const std::vector<std::string>& items) {
  std::set<std::string> want;
  for (const auto& raw : items) {
    std::string s;
    for (char c : raw) {
      if (c != ' ') s += c;
    }
    if (s.empty()) continue;
    const auto& all = all_families();
    if (std::find(all.begin(), all.end(), s) == all.end()) {
      std::string names;
      for (const auto& a : all) names += (names.empty() ? "" : ", ") + a;
      return make_error(Errc::invalid_value, "--only",
                        "unknown benchmark family \"" + s + "\" (known: " + names + ")");
    }
    want.insert(s);
  }
  std::vector<std::string> out;
  for (const auto& f : all_families()) {
    if (want.count(f)) out.push_back(f);
  }
  return out;
}

GemmRow GemmSpec::row() const {
  GemmRow r;
  r.shape = shape;
  r.dtype = dtype;
  r.pass = pass;
  r.transa = std::string(1, transa);
  r.transb = std::string(1, transb);
  r.m = m;
  r.n = n;
  r.k = k;
  r.fast_accum = fast_accum;
  return r;
}

std::string GemmSpec::label() const {
  return "gemm " + dtype + (fast_accum ? " fast_accum" : "") + " " + shape + " " + pass + " " +
         std::string(1, transa) + std::string(1, transb) + " m=" + std::to_string(m) +
         " n=" + std::to_string(n) + " k=" + std::to_string(k);
}

GemmSpec make_gemm(const std::string& shape, const std::string& dtype, const std::string& pass,
                   std::int64_t tokens, std::int64_t in, std::int64_t out) {
  GemmSpec g{shape, dtype, pass, tokens, in, out};  // the layer; its cuBLAS view below
  if (pass == "fwd") {                              // y = x W^T
    g.transa = 'T';
    g.transb = 'N';
    g.m = out;
    g.n = tokens;
    g.k = in;
  } else if (pass == "dgrad") {  // dx = dy W
    g.transa = 'N';
    g.transb = 'N';
    g.m = in;
    g.n = tokens;
    g.k = out;
  } else {  // wgrad: dW = dy^T x
    g.transa = 'N';
    g.transb = 'T';
    g.m = in;
    g.n = out;
    g.k = tokens;
  }
  return g;
}

std::size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "tf32") return 4;
  if (dtype == "fp8_e4m3") return 1;
  return 2;
}
std::size_t dtype_out_bytes(const std::string& dtype) { return dtype == "tf32" ? 4 : 2; }

std::string MoeSpec::label() const {
  return "moe " + model.name + " T=" + std::to_string(tokens) + " " + routing + " " + distribution;
}

std::uint64_t MoeSpec::bytes_needed() const {
  const double T = static_cast<double>(tokens);
  const double R = T * active();
  const double H = model.hidden, F = model.ffn, E = model.experts;
  double elems = 4 * T * H + 4 * R * H + 6 * R * F + 6 * E * F * H + 4 * T * E;
  return static_cast<std::uint64_t>(elems * 2 + 64.0 * 1024 * 1024);
}

bool Plan::runs(const std::string& family) const {
  return std::find(families.begin(), families.end(), family) != families.end();
}

int Plan::items(const std::string& f) const {
  if (!runs(f)) return 0;
  if (f == "bandwidth") return static_cast<int>(2 * bandwidth_array_bytes.size());
  if (f == "gemm") return static_cast<int>(gemm.size());
  if (f == "moe") return static_cast<int>(moe.size() * 4);  // layer, expert GEMMs; each loop and grouped
  if (f == "nf4") return static_cast<int>(2 * nf4_elements.size());
  if (f == "adamw") return static_cast<int>(2 * adamw_params.size());
  if (f == "elementwise") return static_cast<int>(4 * elementwise_tokens.size());
  if (f == "launch") return 2;
  if (f == "host") return 2;
  if (f == "norm") return static_cast<int>(2 * norm.size());
  if (f == "cast") return static_cast<int>(2 * cast_elements.size());
  if (f == "pointwise") return static_cast<int>(pointwise.size());
  if (f == "cross_entropy") return static_cast<int>(2 * cross_entropy.size());
  if (f == "lora") return static_cast<int>(lora.size());
  if (f == "attention") return static_cast<int>(2 * attention.size());
  return 0;
}

std::uint64_t LoraSpec::bytes_moved() const {
  const auto m = static_cast<std::uint64_t>(gemm.m), n = static_cast<std::uint64_t>(gemm.n),
             k = static_cast<std::uint64_t>(gemm.k);
  return 2 * (m * k + k * n + m * n);
}

std::string AttentionSpec::label() const {
  return "attention " + model + " b=" + std::to_string(batch) + " L=" + std::to_string(seq_len) +
         " h=" + std::to_string(heads) + "/" + std::to_string(kv_heads) + " d=" + std::to_string(head_dim);
}

std::uint64_t AttentionSpec::bytes_needed() const {
  const double t = static_cast<double>(batch) * static_cast<double>(seq_len);
  const double q = t * heads * head_dim, kv = t * kv_heads * head_dim;
  // bf16 Q, O, dO, dQ (4 q) and fp32 dQ accumulator (2 q); bf16 K, V, dK, dV (4 kv); LSE and D fp32
  return static_cast<std::uint64_t>(2 * (6 * q + 4 * kv) + 8 * t * heads + 64.0 * 1024 * 1024);
}

double Plan::estimate_seconds(const std::string& f) const {
  if (!runs(f)) return 0;
  const double cap = timing.max_seconds;
  const double rate = 300e12;  // a mid-range GPU's bf16 rate: only the ETA's first guess depends on it
  if (f == "gemm") {
    double s = 0;
    for (const auto& g : gemm) {
      double t = g.flops() / (g.dtype == "tf32" ? rate / 2 : rate);
      s += 0.03 + std::min(cap, t * timing.max_iters) + t * (gemm_algo_candidates * 4 + timing.warmup);
    }
    return s;
  }
  if (f == "moe") {
    double s = 0;
    for (const auto& m : moe) {
      double flops = 2.0 * 3 * static_cast<double>(m.tokens) * m.active() * m.model.hidden * m.model.ffn;
      double t = flops / rate;
      // expert rows: 6 passes x 2 impls; layer: fwd + bwd (3x) x 2 impls; plus validation
      s += 1.0 + 12 * std::min(cap, t * timing.max_iters / 3) + 2 * std::min(cap, 4 * t * timing.max_iters);
    }
    return s;
  }
  return items(f) * (cap * 0.8 + 0.1);
}

double Plan::estimate_seconds() const {
  double s = 0;
  for (const auto& f : families) s += estimate_seconds(f);
  return s;
}

namespace {

// The adapter GEMMs of LoRA rank r on a `in` x `out` layer: A (in -> r) and B (r -> out), three passes each.
void add_lora(std::vector<LoraSpec>& v, const std::string& layer, std::int64_t tokens, std::int64_t in,
              std::int64_t out, int rank) {
  for (const char* side : {"A", "B"}) {
    const bool a = side[0] == 'A';
    for (const char* pass : {"fwd", "dgrad", "wgrad"}) {
      LoraSpec s;
      s.gemm = make_gemm(layer, "bf16", pass, tokens, a ? in : rank, a ? rank : out);
      s.side = side;
      s.rank = rank;
      v.push_back(s);
    }
  }
}

AttentionSpec attention_of(const std::string& model, int heads, int kv_heads, int batch, std::int64_t seq) {
  AttentionSpec a;
  a.model = model;
  a.batch = batch;
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.head_dim = 128;
  a.seq_len = seq;
  return a;
}

// Sizes of the op classes between the GEMMs (issue 38): what the step model needs for Llama-3-8B / Qwen2.5-7B
// layers at 1k-8k tokens; --quick keeps one or two sizes per op.
void plan_op_classes(Plan& p, Mode mode) {
  const std::int64_t H = 4096, F = 14336, Hq = 3584;
  const std::int64_t llama_vocab = 128256, qwen_vocab = 152064, mistral_vocab = 32000;
  if (mode == Mode::smoke) {
    p.norm = {{64, H}};
    p.cast_elements = {std::int64_t{1} << 20};
    p.pointwise = {{"mul", std::int64_t{1} << 20}, {"add", std::int64_t{1} << 20}};
    p.cross_entropy = {{64, mistral_vocab}};
    add_lora(p.lora, "llama-3-8b.q", 256, H, H, 16);
    p.attention = {attention_of("llama-3-8b", 32, 8, 1, 256)};
  } else if (mode == Mode::quick) {
    p.norm = {{4096, H}};
    p.cast_elements = {4096 * H};
    p.pointwise = {{"mul", 4096 * F}, {"add", 4096 * H}};
    for (std::int64_t v : {mistral_vocab, llama_vocab, qwen_vocab}) p.cross_entropy.push_back({2048, v});
    for (int r : {8, 16, 64}) add_lora(p.lora, "llama-3-8b.q", 4096, H, H, r);
    p.attention = {attention_of("llama-3-8b", 32, 8, 8, 1024), attention_of("llama-3-8b", 32, 8, 2, 4096)};
  } else {
    for (std::int64_t t : {1024, 4096, 8192})
      for (std::int64_t c : {H, Hq}) p.norm.push_back({t, c});
    p.cast_elements = {4096 * H, 8192 * F};
    for (std::int64_t t : {4096, 8192}) {
      p.pointwise.push_back({"mul", t * F});
      p.pointwise.push_back({"add", t * H});
    }
    for (std::int64_t rows : {2048, 8192})
      for (std::int64_t v : {mistral_vocab, llama_vocab, qwen_vocab}) p.cross_entropy.push_back({rows, v});
    for (std::int64_t t : {1024, 4096, 8192})
      for (int r : {8, 16, 64}) {
        add_lora(p.lora, "llama-3-8b.q", t, H, H, r);
        add_lora(p.lora, "llama-3-8b.gate", t, H, F, r);  // B side: rank -> FFN
        add_lora(p.lora, "llama-3-8b.down", t, F, H, r);  // A side: FFN -> rank
      }
    for (const auto& bs : {std::pair<int, std::int64_t>{8, 1024}, {4, 2048}, {2, 4096}, {1, 8192}})
      p.attention.push_back(attention_of("llama-3-8b", 32, 8, bs.first, bs.second));
    p.attention.push_back(attention_of("qwen2.5-7b", 28, 4, 2, 4096));
  }
}

// Drops what does not fit in `budget` bytes of device memory, with a note.
void fit_op_classes(Plan& p, double budget) {
  auto drop = [&](auto& v, auto bytes, const std::string& family) {
    const std::size_t before = v.size();
    v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& s) { return bytes(s) > budget; }), v.end());
    if (v.size() < before)
      p.notes.push_back(family + ": " + std::to_string(before - v.size()) + " sizes skipped (device memory)");
  };
  drop(
      p.norm, [](const NormSpec& s) { return 10.0 * static_cast<double>(s.rows * s.cols); }, "norm");
  drop(
      p.cast_elements, [](std::int64_t n) { return 6.0 * static_cast<double>(n); }, "cast");
  drop(
      p.pointwise, [](const PointwiseSpec& s) { return 6.0 * static_cast<double>(s.elements); }, "pointwise");
  drop(
      p.cross_entropy, [](const CrossEntropySpec& s) { return 8.0 * static_cast<double>(s.rows * s.vocab); },
      "cross_entropy");
  drop(
      p.attention, [](const AttentionSpec& s) { return static_cast<double>(s.bytes_needed()); }, "attention");
}

std::string mib(double b) { return std::to_string(static_cast<long long>(b / 1048576.0)) + " MiB"; }

// Bandwidth: arrays >= 4x L2 (so the flush-less steady state streams from DRAM).
void plan_bandwidth(Plan& p, const DeviceFacts& dev, double budget) {
  const Mode mode = p.mode;
  const bool smoke = mode == Mode::smoke;
  auto fits = [&](double bytes) { return bytes <= budget; };
  const std::uint64_t MiB = 1024 * 1024;
  std::vector<std::uint64_t> sizes =
      smoke ? std::vector<std::uint64_t>{64 * MiB}
            : std::vector<std::uint64_t>{64 * MiB, 128 * MiB, 256 * MiB, 512 * MiB, 1024 * MiB, 2048 * MiB};
  std::vector<std::uint64_t> keep;
  for (auto s : sizes) {
    if (!smoke && static_cast<double>(s) < 4.0 * static_cast<double>(dev.l2_bytes)) continue;
    if (!fits(3.0 * static_cast<double>(s))) {
      p.notes.push_back("bandwidth: " + mib(static_cast<double>(s)) + " arrays skipped (device memory)");
      continue;
    }
    keep.push_back(s);
  }
  if (mode == Mode::quick) {
    std::vector<std::uint64_t> q;
    for (auto s : keep) {
      if (s <= 1024 * MiB) q.push_back(s);
    }
    if (q.size() > 2) q.erase(q.begin(), q.end() - 2);
    keep = q;
  }
  p.bandwidth_array_bytes = keep;
}

// GEMMs: squares per dtype and the model's linear layers per pass.
void plan_gemm(Plan& p, const DeviceFacts& dev, double budget) {
  const Mode mode = p.mode;
  const bool full = mode == Mode::full;
  const bool smoke = mode == Mode::smoke;
  auto fits = [&](double bytes) { return bytes <= budget; };
  const MoeModel& mx = p.model;
  struct Lin {
    const char* name;
    int in, out;
  };
  // w3 has w1's shape; o has q's
  const std::vector<Lin> layers = {{"q", mx.hidden, mx.q_out},        {"kv", mx.hidden, mx.kv_out},
                                   {"w1", mx.hidden, mx.ffn},         {"w2", mx.ffn, mx.hidden},
                                   {"router", mx.hidden, mx.experts}, {"lm_head", mx.hidden, mx.vocab}};
  std::vector<GemmSpec> g;
  auto squares = [&](const std::string& dtype, const std::vector<std::int64_t>& sizes) {
    for (auto s : sizes) {
      g.push_back(make_gemm("square", dtype, "fwd", s, s, s));
      if (dtype == "fp8_e4m3") {  // and as Transformer Engine's forward runs it
        g.push_back(make_gemm("square", dtype, "fwd", s, s, s));
        g.back().fast_accum = true;
      }
    }
  };
  auto llm = [&](const std::string& dtype, const std::vector<std::int64_t>& tokens,
                 const std::vector<std::string>& passes) {
    for (auto t : tokens) {
      for (const auto& l : layers) {
        for (const auto& ps : passes)
          g.push_back(make_gemm(mx.name + "." + l.name, dtype, ps, t, l.in, l.out));
      }
    }
  };
  const std::vector<std::string> all_passes = {"fwd", "dgrad", "wgrad"};
  if (smoke) {
    squares("bf16", {256, 1024});
    squares("fp16", {512});
    squares("tf32", {512});
    if (dev.has_fp8()) squares("fp8_e4m3", {1024});
    for (const auto& ps : all_passes)
      g.push_back(make_gemm(mx.name + ".w1", "bf16", ps, 256, mx.hidden, mx.ffn));
    g.push_back(make_gemm(mx.name + ".router", "bf16", "fwd", 256, mx.hidden, mx.experts));
  } else if (!full) {
    squares("bf16", {1024, 2048, 4096, 8192});
    squares("fp16", {4096, 8192});
    squares("tf32", {4096, 8192});
    if (dev.has_fp8()) squares("fp8_e4m3", {4096, 8192});
    llm("bf16", {512, 4096}, all_passes);
  } else {
    const std::vector<std::int64_t> sq = {256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384};
    squares("bf16", sq);
    squares("fp16", sq);
    squares("tf32", {1024, 2048, 4096, 8192, 16384});
    if (dev.has_fp8()) squares("fp8_e4m3", {1024, 2048, 4096, 8192, 16384});
    llm("bf16", {128, 512, 2048, 8192, 16384}, all_passes);
    llm("fp16", {512, 4096}, {"fwd"});
  }
  if (!dev.has_fp8()) {
    p.notes.push_back("gemm: fp8 skipped: compute capability " + std::to_string(dev.cc_major) + "." +
                      std::to_string(dev.cc_minor) + " has no fp8 tensor cores (needs 8.9)");
  }
  for (const auto& s : g) {
    double bytes = static_cast<double>((s.tokens * s.in + s.in * s.out) *
                                       static_cast<std::int64_t>(dtype_bytes(s.dtype))) +
                   static_cast<double>(
                       s.tokens * s.out *
                       static_cast<std::int64_t>(std::max(dtype_bytes(s.dtype), dtype_out_bytes(s.dtype))));
    if (fits(bytes)) {
      p.gemm.push_back(s);
    } else {
      p.notes.push_back(s.label() + ": skipped (needs " + mib(bytes) + ")");
    }
  }
}

// MoE layers: routings and token distributions.
void plan_moe(Plan& p, double budget) {
  const Mode mode = p.mode;
  const bool full = mode == Mode::full;
  const bool smoke = mode == Mode::smoke;
  auto fits = [&](double bytes) { return bytes <= budget; };
  std::vector<MoeSpec> ms;
  auto add = [&](std::int64_t t, const std::string& routing, const std::string& dist) {
    MoeSpec m;
    m.model = p.model;
    m.tokens = t;
    m.routing = routing;
    m.distribution = dist;
    ms.push_back(m);
  };
  if (smoke) {
    add(512, "sparse", "uniform");
    add(256, "dense", "uniform");
  } else if (!full) {
    add(4096, "sparse", "uniform");
    add(4096, "sparse", "mixtral_he_tuned");
    add(4096, "dense", "uniform");
  } else {
    for (std::int64_t t : {512, 2048, 8192}) {
      for (const char* d : {"uniform", "mixtral_he_tuned", "mixtral_gs_tuned", "skewed"}) add(t, "sparse", d);
      add(t, "dense", "uniform");
    }
  }
  for (const auto& m : ms) {
    if (fits(static_cast<double>(m.bytes_needed()))) {
      p.moe.push_back(m);
    } else {
      p.notes.push_back(m.label() + ": skipped (needs " + mib(static_cast<double>(m.bytes_needed())) + ")");
    }
  }
}

// NF4 dequantization, AdamW and elementwise sizes.
void plan_rates(Plan& p, double budget) {
  const Mode mode = p.mode;
  const bool full = mode == Mode::full;
  const bool smoke = mode == Mode::smoke;
  auto fits = [&](double bytes) { return bytes <= budget; };
  const std::int64_t w1 = static_cast<std::int64_t>(p.model.ffn) * p.model.hidden;  // 58.7M
  const std::int64_t q = static_cast<std::int64_t>(p.model.hidden) * p.model.q_out;
  if (smoke) {
    p.nf4_elements = {64 * 256 * 64};
    p.adamw_params = {1 << 20};
    p.elementwise_tokens = {64};
  } else if (!full) {
    p.nf4_elements = {w1};
    p.adamw_params = {std::int64_t{1} << 26};
    p.elementwise_tokens = {4096};
  } else {
    p.nf4_elements = {q, w1};
    p.adamw_params = {std::int64_t{1} << 24, std::int64_t{1} << 26, std::int64_t{1} << 28};
    p.elementwise_tokens = {1024, 4096, 16384};
  }
  {
    std::vector<std::int64_t> keep;
    for (auto n : p.adamw_params) {
      if (fits(5.0 * 4 * static_cast<double>(n)))
        keep.push_back(n);
      else
        p.notes.push_back("adamw: " + std::to_string(n) + " params skipped (device memory)");
    }
    p.adamw_params = keep;
    keep.clear();
    for (auto t : p.elementwise_tokens) {
      if (fits(5.0 * 2 * static_cast<double>(t) * p.model.ffn))
        keep.push_back(t);
      else
        p.notes.push_back("elementwise: " + std::to_string(t) + " tokens skipped (device memory)");
    }
    p.elementwise_tokens = keep;
  }
}

}  // namespace

Plan make_plan(Mode mode, const DeviceFacts& dev, const std::vector<std::string>& only) {
  Plan p;
  p.mode = mode;
  p.families = only.empty() ? all_families() : only;
  const bool full = mode == Mode::full;
  const bool smoke = mode == Mode::smoke;
  if (full) {
    p.timing = TimingPolicy{3, 10, 200, 0.6, 0.005};
    p.gemm_algo_candidates = 8;
  } else if (smoke) {
    p.timing = TimingPolicy{1, 3, 10, 0.05, 0.05};
    p.gemm_algo_candidates = 2;
    p.launch_per_sample = 200;
    p.eager_ops_per_sample = 128;
  } else {
    p.timing = TimingPolicy{2, 5, 50, 0.25, 0.01};
    p.gemm_algo_candidates = 4;
  }
  const double mem = static_cast<double>(dev.memory_bytes);
  // what a benchmark may allocate: leave room for the context, cuBLAS workspaces and the L2 flush buffer
  const double budget = mem > 0 ? std::max(0.0, 0.85 * mem - 1.5e9) : 1e18;

  plan_bandwidth(p, dev, budget);
  plan_gemm(p, dev, budget);
  plan_moe(p, budget);
  plan_rates(p, budget);
  plan_op_classes(p, mode);
  fit_op_classes(p, budget);
  return p;
}

}  // namespace ftcost::calib
