#include "ftcost/calibrate/output.hpp"

#include "fileio.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <unistd.h>

#ifndef FTCOST_VERSION
#define FTCOST_VERSION "0.0.0"
#endif
#ifndef FTCOST_GIT_REVISION
#define FTCOST_GIT_REVISION "unknown"
#endif
#ifndef FTCOST_GIT_DIRTY
#define FTCOST_GIT_DIRTY 0
#endif

namespace ftcost::calib {

std::string tool_version() { return FTCOST_VERSION; }
std::string git_revision() { return FTCOST_GIT_REVISION; }
bool git_dirty() { return FTCOST_GIT_DIRTY != 0; }

// ---- files ----

Status atomic_write_file(const std::string& path, const std::string& text) {
  return cli::write_file_atomic(path, text);
}

Status check_and_write(const Calibration& cal, const std::string& path) {
  std::string text = to_json_text(cal);
  auto back = parse_calibration(text, path);
  if (!back.ok()) return back.error();
  return atomic_write_file(path, text);
}

namespace {

// "measurements.gemm[3].tflops_median" -> ("gemm", 3)
bool row_of(const std::string& field, std::string* section, std::size_t* index) {
  const std::string pre = "measurements.";
  if (field.compare(0, pre.size(), pre) != 0) return false;
  const std::size_t open = field.find('[', pre.size());
  if (open == std::string::npos) return false;
  const std::size_t close = field.find(']', open);
  if (close == std::string::npos || close == open + 1) return false;
  *section = field.substr(pre.size(), open - pre.size());
  std::size_t v = 0;
  for (std::size_t i = open + 1; i < close; ++i) {
    if (field[i] < '0' || field[i] > '9') return false;
    v = v * 10 + static_cast<std::size_t>(field[i] - '0');
  }
  *index = v;
  return true;
}

template <class Row>
bool erase_at(std::vector<Row>& v, std::size_t i) {
  if (i >= v.size()) return false;
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
  return true;
}

bool erase_row(CalMeasurements& m, const std::string& section, std::size_t i) {
  if (section == "bandwidth") return erase_at(m.bandwidth, i);
  if (section == "gemm") return erase_at(m.gemm, i);
  if (section == "expert_gemm") return erase_at(m.expert_gemm, i);
  if (section == "moe_layer") return erase_at(m.moe_layer, i);
  if (section == "nf4_dequant") return erase_at(m.nf4_dequant, i);
  if (section == "adamw") return erase_at(m.adamw, i);
  if (section == "elementwise") return erase_at(m.elementwise, i);
  if (section == "launch") return erase_at(m.launch, i);
  if (section == "host") return erase_at(m.host, i);
  if (section == "cpu") return erase_at(m.cpu, i);
  if (section == "collectives") return erase_at(m.collectives, i);
  if (section == "p2p") return erase_at(m.p2p, i);
  if (section == "norm") return erase_at(m.norm, i);
  if (section == "cast") return erase_at(m.cast, i);
  if (section == "pointwise") return erase_at(m.pointwise, i);
  if (section == "cross_entropy") return erase_at(m.cross_entropy, i);
  if (section == "lora_gemm") return erase_at(m.lora_gemm, i);
  if (section == "attention") return erase_at(m.attention, i);
  return false;
}

// what a reader needs to find the row again
std::string describe_row(const CalMeasurements& m, const std::string& section, std::size_t i) {
  if (section == "gemm" && i < m.gemm.size()) {
    const GemmRow& r = m.gemm[i];
    return r.shape + " " + r.dtype + " " + r.pass + " " + std::to_string(r.m) + "x" + std::to_string(r.n) +
           "x" + std::to_string(r.k);
  }
  if (section == "expert_gemm" && i < m.expert_gemm.size()) {
    const ExpertGemmRow& r = m.expert_gemm[i];
    return r.model + " " + r.proj + " " + r.pass + " " + r.impl + " " + r.distribution;
  }
  if (section == "collectives" && i < m.collectives.size()) {
    const CollectiveRow& r = m.collectives[i];
    return r.op + " ranks=" + std::to_string(r.ranks) + " bytes=" + std::to_string(r.bytes);
  }
  return "";
}

}  // namespace

WriteOutcome check_drop_and_write(Calibration& cal, const std::string& path, int max_drops) {
  WriteOutcome out;
  for (int round = 0;; ++round) {
    cal.derived = derive_calibration(cal.measurements);
    std::string text = to_json_text(cal);
    auto back = parse_calibration(text, path);
    if (back.ok()) {
      out.status = atomic_write_file(path, text);
      return out;
    }
    const Error& e = back.error();
    std::string section;
    std::size_t index = 0;
    if (round >= max_drops || !row_of(e.field, &section, &index)) {
      out.status = e;
      return out;
    }
    const std::string what = describe_row(cal.measurements, section, index);
    if (!erase_row(cal.measurements, section, index)) {
      out.status = e;
      return out;
    }
    std::string note = "dropped measurements." + section + "[" + std::to_string(index) + "]" +
                       (what.empty() ? "" : " (" + what + ")") + ": the loader rejects it: " + e.to_string();
    cal.meta.notes.push_back(note);
    cal.meta.partial = true;
    out.dropped.push_back(note);
  }
}

int write_and_exit_code(Calibration& cal, const std::string& path, const std::string& fatal, int failures,
                        bool cancelled, std::FILE* out, std::FILE* err) {
  auto say = [&](const std::string& line) { std::fprintf(err, "ftcost-calibrate: %s\n", line.c_str()); };
  cal.meta.partial = cal.meta.partial || cancelled || !fatal.empty();
  WriteOutcome w = check_drop_and_write(cal, path);
  if (!w.status.ok()) {
    const Error& e = w.status.error();
    if (e.code == Errc::io_error) {
      say("cannot write " + path + ": " + e.message);
    } else {  // a problem outside the measurement rows: keep the whole document for a bug report
      std::string rejected = path + ".rejected";
      (void)atomic_write_file(rejected, to_json_text(cal));
      say("the calibration fails the core's checks (" + e.to_string() + "); not written as " + path +
          ", kept as " + rejected);
    }
    return 1;
  }
  std::fputs(summary_table(cal).c_str(), out);
  std::fflush(out);
  say("wrote " + path + (cal.meta.partial ? " (partial)" : ""));
  for (const auto& d : w.dropped) say(d);
  if (!fatal.empty()) {
    say(fatal);
    return 1;
  }
  if (failures > 0) {
    say(std::to_string(failures) + " measurement(s) failed and were not recorded (see meta.notes)");
    return 1;
  }
  if (cancelled) return 130;
  if (!w.dropped.empty()) {
    say(std::to_string(w.dropped.size()) + " row(s) rejected by the loader were dropped (exit 4: partial)");
    return kExitPartialRows;
  }
  return 0;
}

Result<std::string> choose_output_path(const std::string& path, std::string* note) {
  auto writable_dir = [](const std::string& dir, std::string* why) {
    std::string probe = (dir == "/" ? "" : dir) + "/.ftcost-calibrate-probe." + std::to_string(::getpid());
    int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      *why = std::strerror(errno);
      return false;
    }
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
  };
  std::string dir = ".";
  const std::size_t slash = path.find_last_of('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty() || base == "." || base == "..")
    return make_error(Errc::invalid_value, "--out", "\"" + path + "\" names a folder, not a file");
  std::string why;
  if (writable_dir(dir, &why)) return path;
  std::string why_here;
  if (dir != "." && writable_dir(".", &why_here)) {
    if (note)
      *note = "--out " + path + ": cannot create a file in " + dir + " (" + why + "); writing " + base +
              " in the current directory instead";
    return base;
  }
  return make_error(Errc::io_error, "--out",
                    "cannot create a file in " + dir + " (" + why + ")" +
                        (dir != "." ? " nor in the current directory (" + why_here + ")" : "") +
                        ": nothing was measured");
}

// ---- SHA-256 (FIPS 180-4) ----

namespace {
constexpr std::uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
inline std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
}  // namespace

std::string sha256_hex(const std::string& data) {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg = data;
  std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  for (std::size_t off = 0; off < msg.size(); off += 64) {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      const auto* b =
          reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * static_cast<std::size_t>(i));
      w[i] = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
             std::uint32_t{b[3]};
    }
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      std::uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      std::uint32_t ch = (e & f) ^ (~e & g);
      std::uint32_t t1 = hh + S1 + ch + kK[i] + w[i];
      std::uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      std::uint32_t t2 = S0 + maj;
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  char out[65];
  for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", h[i]);
  return std::string(out, 64);
}

std::string uuid_hash(const unsigned char uuid[16]) {
  char hex[33];
  for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
  return "sha256:" + sha256_hex(std::string("ftcost-calibrate device uuid ") + std::string(hex, 32));
}

// ---- names and metadata ----

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string slugify(const std::string& s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

std::string default_output_name(const std::string& device_name, const std::string& created_utc) {
  std::string stamp;
  for (char c : created_utc) {
    if (c != '-' && c != ':') stamp += c;
  }
  return "calibration-" + slugify(device_name) + "-" + stamp + ".json";
}

std::string host_cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      std::size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string v = line.substr(colon + 1);
        std::size_t a = v.find_first_not_of(" \t");
        if (a != std::string::npos) return v.substr(a);
      }
    }
  }
  return "unknown";
}

std::string shell_join(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=,:+@%", c) != nullptr;
    });
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

// ---- summary ----

namespace {
__attribute__((format(printf, 1, 2))) std::string fmt(const char* f, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}
std::string us_text(double us) { return us >= 1000 ? fmt("%.2f ms", us / 1000) : fmt("%.1f us", us); }
}  // namespace

std::string summary_table(const Calibration& cal) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto& m = cal.measurements;
  auto add = [&](std::string a, std::string b) { rows.emplace_back(std::move(a), std::move(b)); };

  for (const char* kind : {"copy", "triad"}) {
    const BandwidthRow* best = nullptr;
    for (const auto& r : m.bandwidth) {
      if (r.kernel == kind && (!best || r.gbps.median > best->gbps.median)) best = &r;
    }
    if (best) {
      add(std::string(kind) + " bandwidth (" +
              fmt("%.0f MiB", static_cast<double>(best->array_bytes) / 1048576.0) + " arrays)",
          fmt("%.0f GB/s", best->gbps.median) + "  (p10-p90 " + fmt("%.0f", best->gbps.p10) + "-" +
              fmt("%.0f", best->gbps.p90) + ")");
    }
  }
  for (const char* dt : {"bf16", "fp16", "tf32", "fp8_e4m3"}) {
    const GemmRow* best = nullptr;
    for (const auto& r : m.gemm) {
      if (r.dtype == dt && (!best || r.tflops.median > best->tflops.median)) best = &r;
    }
    if (best) {
      add(std::string("GEMM ") + dt + " best (" + best->shape + " " + best->pass + " " +
              std::to_string(best->m) + "x" + std::to_string(best->n) + "x" + std::to_string(best->k) + ")",
          fmt("%.1f TFLOP/s", best->tflops.median) +
              (best->tflops_heuristic ? "  (heuristic's first: " + fmt("%.1f", *best->tflops_heuristic) + ")"
                                      : ""));
    }
  }
  // expert GEMMs: loop vs grouped per (tokens, routing, distribution) for w1_w3 fwd
  std::map<std::string, std::pair<double, double>> eg;
  for (const auto& r : m.expert_gemm) {
    if (r.proj != "w1_w3" || r.pass != "fwd") continue;
    std::string key =
        "experts w1+w3 fwd T=" + std::to_string(r.tokens) + " " + r.routing + " " + r.distribution;
    (r.impl == "loop" ? eg[key].first : eg[key].second) = r.time_us.median;
  }
  for (const auto& kv : eg) {
    std::string v = "loop " + (kv.second.first > 0 ? us_text(kv.second.first) : "-") + ", grouped " +
                    (kv.second.second > 0 ? us_text(kv.second.second) : "-");
    if (kv.second.first > 0 && kv.second.second > 0)
      v += fmt("  (%.2fx)", kv.second.first / kv.second.second);
    add(kv.first, v);
  }
  std::map<std::string, std::pair<double, double>> ml;
  for (const auto& r : m.moe_layer) {
    std::string key = "MoE layer " + std::string(r.direction == "forward" ? "fwd" : "bwd") +
                      " T=" + std::to_string(r.tokens) + " " + r.routing + " " + r.distribution;
    (r.impl == "loop" ? ml[key].first : ml[key].second) = r.time_us.median;
  }
  for (const auto& kv : ml) {
    add(kv.first, "loop " + (kv.second.first > 0 ? us_text(kv.second.first) : "-") + ", grouped " +
                      (kv.second.second > 0 ? us_text(kv.second.second) : "-"));
  }
  for (const auto& r : m.nf4_dequant) {
    add("NF4 dequant " + r.variant + " (" + fmt("%.1fM", static_cast<double>(r.elements) / 1e6) + " params)",
        fmt("%.0f GB/s", r.gbps.median) + ", " + us_text(r.time_us_median) +
            fmt(" (%.2f B/param)", r.bytes_per_param));
  }
  for (const auto& r : m.adamw) {
    add("AdamW " + r.impl + " (" + fmt("%.0fM", static_cast<double>(r.params) / 1e6) + " params)",
        fmt("%.0f GB/s", r.gbps.median) + ", " + us_text(r.time_us_median));
  }
  for (const auto& r : m.elementwise) {
    add(r.op + " " + r.dtype + " (" + fmt("%.1fM", static_cast<double>(r.elements) / 1e6) + ")",
        fmt("%.0f GB/s", r.gbps.median));
  }
  for (const auto& r : m.norm)
    add("RMSNorm " + r.direction + " " + std::to_string(r.rows) + "x" + std::to_string(r.cols),
        fmt("%.0f GB/s", r.gbps.median));
  for (const auto& r : m.cast)
    add("cast " + r.src_dtype + "->" + r.dst_dtype + " (" +
            fmt("%.1fM", static_cast<double>(r.elements) / 1e6) + ")",
        fmt("%.0f GB/s", r.gbps.median));
  for (const auto& r : m.pointwise)
    add(r.op + " " + r.dtype + " (" + fmt("%.1fM", static_cast<double>(r.elements) / 1e6) + ")",
        fmt("%.0f GB/s", r.gbps.median));
  for (const auto& r : m.cross_entropy)
    add("cross-entropy " + r.direction + " " + std::to_string(r.rows) + "x" + std::to_string(r.vocab) +
            " fp32",
        fmt("%.0f GB/s", r.gbps.median));
  if (!m.lora_gemm.empty() && cal.derived.lora_gemm_roofline_fraction)
    add("LoRA GEMMs (" + std::to_string(m.lora_gemm.size()) + " rows): roofline fraction",
        fmt("%.2f (median)", *cal.derived.lora_gemm_roofline_fraction));
  for (const auto& r : m.attention)
    add("attention " + r.direction + " " + r.model + " b=" + std::to_string(r.batch) +
            " L=" + std::to_string(r.seq_len),
        fmt("%.1f TFLOP/s (causal)", r.tflops.median));
  for (const auto& r : m.launch) add("empty kernel launch, " + r.kind, fmt("%.2f us", r.us.median));
  for (const auto& r : m.host) add("eager op (host work + launch)", fmt("%.2f us/op", r.us.median));
  for (const auto& r : m.cpu) add("CPU single-thread score", fmt("%.1f", r.score.median));
  // collectives: the largest size of each op (bus bandwidth, as nccl-tests prints it), and the smallest
  // size's time (latency)
  for (const auto& op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}) {
    const CollectiveRow *big = nullptr, *small = nullptr;
    for (const auto& r : m.collectives) {
      if (r.op != op) continue;
      if (!big || r.bytes > big->bytes) big = &r;
      if (!small || r.bytes < small->bytes) small = &r;
    }
    if (big) {
      add(std::string(op) + " x" + std::to_string(big->ranks) + " (" +
              fmt("%.0f MiB", static_cast<double>(big->bytes) / 1048576.0) + ")",
          fmt("busbw %.1f GB/s", big->busbw_gbps) + fmt(", algbw %.1f GB/s", big->algbw_gbps) + "; " +
              std::to_string(small->bytes) + " B in " + us_text(small->time_us));
    }
  }
  if (!m.p2p.empty()) {
    double lo = m.p2p[0].gbps, hi = lo;
    for (const auto& r : m.p2p) lo = std::min(lo, r.gbps), hi = std::max(hi, r.gbps);
    add("GPU-to-GPU copies (" + std::to_string(m.p2p.size()) + " pairs)",
        fmt("%.0f", lo) + fmt("-%.0f GB/s", hi));
  }

  std::size_t w = 10;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  std::string out;
  const auto& d = cal.device;
  out += d.name + " (cc " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ", " +
         std::to_string(d.sm_count) + " SMs, " +
         fmt("%.1f GiB", static_cast<double>(d.memory_bytes) / 1073741824.0) + "), " + cal.meta.mode +
         (cal.meta.partial ? " (partial)" : "") + ", " + fmt("%.0f s", cal.meta.duration_s) + "\n";
  for (const auto& r : rows)
    out += "  " + r.first + std::string(w - r.first.size() + 2, ' ') + r.second + "\n";
  if (rows.empty()) out += "  (no measurements)\n";
  if (!cal.meta.notes.empty())
    out += "  notes: " + std::to_string(cal.meta.notes.size()) + " (in meta.notes of the JSON)\n";
  return out;
}

}  // namespace ftcost::calib
