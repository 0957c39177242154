// gpu-db checker, GPUs (gpus/<id>.json): interconnect, sources, the chosen value where sources disagree, and
// physical plausibility per architecture (bandwidth, memory, peaks, clocks, power within bounds for
// Volta ... Blackwell, CDNA 2/3/4, Gaudi 2/3; dense peaks not sparsity-doubled, checked against SMs x clock;
// FP8/BF16 only on hardware that has it).
#include "checks.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ftcost::dbcheck {

namespace {

// -------------------------------------------------------------------------- GPU plausibility

struct Family {
  const char* name;
  const char* vendor;
  const char* arch_word;    // must appear in "architecture"
  const char* cc_prefixes;  // NVIDIA: compute capabilities "9.0" or major prefixes "10.", comma-separated
  double bw_lo, bw_hi;      // GB/s
  double mem_lo, mem_hi;    // GiB
  double peak_lo, peak_hi;  // dense 16-bit tensor peak (max of bf16, fp16), TFLOP/s
  double fp32_lo, fp32_hi;  // TFLOP/s
  int year_lo, year_hi;
  double tdp_lo, tdp_hi;            // W
  double tensor_flop_per_sm_clock;  // dense 16-bit FLOP per SM (CU) per clock at most; 0 = not checked
  bool bf16, fp8, fp4, tf32;        // hardware has these tensor types
};

// Bounds are deliberately wide (the whole product line of an architecture, with margin): they catch
// unit mistakes (TB/s for GB/s, GB for GiB), sign errors and sparsity-doubled peaks, not small errors.
const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"Volta", "NVIDIA", "Volta", "7.0", 600, 1300, 12,    40,    80,    160,  10,
       20,      2017,     2019,    150,   350, 1024, false, false, false, false},
      {"Turing", "NVIDIA", "Turing", "7.5", 150, 700,  4,     48,    20,    150,  4,
       20,       2018,     2020,     50,    300, 1024, false, false, false, false},
      {"Ampere (GA100)",
       "NVIDIA",
       "Ampere",
       "8.0",
       1200,
       2300,
       32,
       96,
       200,
       350,
       15,
       25,
       2020,
       2023,
       200,
       500,
       2048,
       true,
       false,
       false,
       true},
      {"Ampere (GA10x)",
       "NVIDIA",
       "Ampere",
       "8.6,8.7",
       150,
       1100,
       4,
       64,
       10,
       200,
       5,
       45,
       2020,
       2023,
       30,
       450,
       1024,
       true,
       false,
       false,
       true},
      {"Ada Lovelace", "NVIDIA", "Ada", "8.9", 150,  1200, 4,    64,    10,  400, 5, 100,
       2022,           2025,     30,    500,   1024, true, true, false, true},
      {"Hopper", "NVIDIA", "Hopper", "9.0", 1500, 5500, 64,   160,  100,   1100, 40,
       80,       2022,     2026,     300,   1000, 4096, true, true, false, true},
      {"Blackwell (data centre)",
       "NVIDIA",
       "Blackwell",
       "10.,11.",
       4000,
       10000,
       128,
       320,
       1500,
       3000,
       50,
       120,
       2024,
       2030,
       500,
       1500,
       8192,
       true,
       true,
       true,
       true},
      {"Blackwell (GB20x)",
       "NVIDIA",
       "Blackwell",
       "12.",
       250,
       2500,
       8,
       128,
       20,
       600,
       10,
       130,
       2025,
       2030,
       50,
       700,
       1024,
       true,
       true,
       true,
       true},
      {"CDNA 2", "AMD", "CDNA 2", "",  1000, 3500, 32,   128,   100,   450,  20,
       60,       2020,  2023,     300, 600,  1024, true, false, false, false},
      {"CDNA 3", "AMD", "CDNA 3", "",  3000, 7000, 96,   320,  400,   1500, 40,
       170,      2023,  2027,     500, 1200, 2048, true, true, false, true},
      {"CDNA 4", "AMD", "CDNA 4", "",   5000, 10000, 192,  320,  1500, 3000, 100,
       200,      2025,  2030,     1000, 1600, 4096,  true, true, true, true},
      {"Gaudi 2", "Intel", "Gaudi 2", "",  1500, 3000, 64,   128,  300,   600, 0,
       300,       2022,    2025,      300, 800,  0,    true, true, false, true},
      {"Gaudi 3", "Intel", "Gaudi 3", "",  2500, 4500, 96,   160,  400,   2000, 100,
       300,       2024,    2027,      500, 1000, 0,    true, true, false, true},
  };
  return f;
}

bool cc_matches(const std::string& cc, const std::string& prefixes) {
  std::size_t start = 0;
  while (start <= prefixes.size()) {
    std::size_t comma = prefixes.find(',', start);
    if (comma == std::string::npos) comma = prefixes.size();
    const std::string p = prefixes.substr(start, comma - start);
    if (!p.empty() && (p.back() == '.' ? cc.rfind(p, 0) == 0 : cc == p)) return true;
    start = comma + 1;
  }
  return false;
}

std::string range_text(double lo, double hi, const char* unit) {
  return fmt_num(lo) + "-" + fmt_num(hi) + (unit[0] ? std::string(" ") + unit : std::string());
}

// A value outside the family's bounds; hints at the unit mistake that would explain it.
void check_range(const std::string& fieldname, double v, double lo, double hi, const char* unit,
                 const Family& fam, Sink& sink,
                 const std::vector<std::pair<double, std::string>>& hints = {}) {
  if (v >= lo && v <= hi) return;
  std::string msg = fmt_num(v) + (unit[0] ? std::string(" ") + unit : std::string()) +
                    " is implausible for " + fam.name + " (expected " + range_text(lo, hi, unit) + ")";
  for (const auto& [factor, what] : hints) {
    const double w = v * factor;
    if (w >= lo && w <= hi) {
      msg += "; " + what + ": " + fmt_num(w);
      break;
    }
  }
  sink.add(fieldname, Errc::out_of_range, msg);
}

const char* const kDtypes[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8_tops", "fp4"};

// Numeric (or string) fields a chosen_values entry may name.
const char* const kChoosable[] = {"memory_gib",
                                  "usable_memory_mib_nvidia_smi",
                                  "memory_bandwidth_gbps",
                                  "memory_type",
                                  "sm_count",
                                  "boost_clock_mhz",
                                  "l2_cache_mb",
                                  "tdp_w",
                                  "release_year",
                                  "compute_capability",
                                  "dense_tflops.fp32",
                                  "dense_tflops.tf32",
                                  "dense_tflops.fp16",
                                  "dense_tflops.bf16",
                                  "dense_tflops.fp8",
                                  "dense_tflops.int8_tops",
                                  "dense_tflops.fp4",
                                  "interconnect.nvlink_gbps_bidirectional",
                                  "interconnect.pcie_gen"};

const json* value_at(const json& doc, const std::string& dotted) {
  const json* cur = &doc;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object()) return nullptr;
    cur = member(*cur, key);
    if (!cur) return nullptr;
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// Types, ranges and the topology's values come from the field list (check_keys); here the rule between
// the NVLink fields.
void check_interconnect(const json& ic, Sink& sink) {
  const double nv = num_field(ic, "nvlink_gbps_bidirectional");
  const json* topo = find_field(ic, "nvlink_topology");
  const bool has_nv = have(nv) && nv > 0;
  const bool has_topo = topo && topo->is_string();
  const double nvmax = num_field(ic, "nvlink_max_gpus");
  const double nvgen = num_field(ic, "nvlink_generation");
  if (has_nv != has_topo || has_nv != have(nvmax) || has_nv != have(nvgen))
    sink.add("interconnect.nvlink_topology", Errc::invalid_value,
             "nvlink_generation, nvlink_topology and nvlink_max_gpus are given exactly when "
             "nvlink_gbps_bidirectional is");
}

void check_gpu_sources(const json& doc, Sink& sink) {
  if (const json* src = find_field(doc, "sources"); src && src->is_array()) {
    if (src->empty())
      sink.add("sources", Errc::missing_field,
               "every GPU needs at least one source (datasheet URL, repository file, nvidia-smi printout)");
    for (std::size_t i = 0; i < src->size(); ++i) {
      const std::string p = "sources[" + std::to_string(i) + "]";
      if (!(*src)[i].is_string()) {
        sink.add(p, Errc::wrong_type, std::string("must be a string, got ") + (*src)[i].type_name());
        continue;
      }
      const std::string sp = source_problem((*src)[i].get<std::string>());
      if (!sp.empty()) sink.add(p, Errc::invalid_value, sp);
    }
  }
}

// Where sources disagree: the chosen value and why.
// One chosen_values entry: a spec field, the value the file has for it, the alternatives and why.
void check_chosen_value(const json& doc, const json& c, const std::string& p, Sink& sink) {
  if (!check_keys(c, p, "gpu.chosen_values[]", "ftcost.gpu/1", sink)) return;
  const std::string f = str_field(c, "field");
  bool choosable = false;
  for (const char* k : kChoosable) choosable = choosable || f == k;
  if (!f.empty() && !choosable) {
    sink.add(p + ".field", Errc::invalid_value,
             in_quotes(f) + " is not a spec field (e.g. memory_bandwidth_gbps, dense_tflops.bf16)");
  } else if (!f.empty() && c.contains("value")) {
    const json* actual = value_at(doc, f);
    const json& claimed = c.at("value");
    bool same = actual && *actual == claimed;
    if (actual && actual->is_number() && claimed.is_number())
      same = std::fabs(actual->get<double>() - claimed.get<double>()) <=
             1e-9 * std::max(1.0, std::fabs(actual->get<double>()));
    if (!same)
      sink.add(p + ".value", Errc::invalid_value,
               "is " + clip(claimed.dump(), 40) + " but " + f + " is " +
                   (actual ? clip(actual->dump(), 40) : std::string("missing")) +
                   ": the chosen value must be the one in the file");
  }
  if (const json* alt = find_field(c, "alternatives"); alt && alt->is_array()) {
    if (alt->empty())
      sink.add(p + ".alternatives", Errc::missing_field, "name the other values and who gives them");
    for (std::size_t k = 0; k < alt->size(); ++k)
      if (!(*alt)[k].is_string() || (*alt)[k].get<std::string>().empty())
        sink.add(p + ".alternatives[" + std::to_string(k) + "]", Errc::wrong_type,
                 "must be a non-empty string");
  }
  check_nonempty_text(c, "why", p, sink, 10);
}

void check_chosen_values(const json& doc, Sink& sink) {
  const std::string dis = str_field(doc, "disagreements");
  const json* chosen = find_field(doc, "chosen_values");
  if (dis.find_first_not_of(" \t\r\n") != std::string::npos &&
      (!chosen || (chosen->is_array() && chosen->empty())))
    sink.add(
        "chosen_values", Errc::missing_field,
        "the file lists disagreements between sources but not the chosen value and why: add chosen_values "
        "[{field, value, alternatives, why}]");
  if (!chosen || !chosen->is_array()) return;
  for (std::size_t i = 0; i < chosen->size(); ++i)
    check_chosen_value(doc, (*chosen)[i], "chosen_values[" + std::to_string(i) + "]", sink);
}

// The architecture family the GPU belongs to (from its vendor, compute capability and architecture), or
// nullptr (with a problem when the file names one db check does not know).
const Family* gpu_family(const json& doc, Sink& sink) {
  const std::string vendor = str_field(doc, "vendor");
  const std::string arch = str_field(doc, "architecture");
  const json* ccv = find_field(doc, "compute_capability");
  const std::string cc = ccv && ccv->is_string() ? ccv->get<std::string>() : std::string();
  const Family* fam = nullptr;
  if (vendor == "NVIDIA") {
    if (!ccv) {
      sink.add("compute_capability", Errc::missing_field,
               "NVIDIA GPUs need their CUDA compute capability, e.g. \"9.0\"");
    } else if (!parse_compute_capability(cc)) {
      sink.add("compute_capability", Errc::invalid_value,
               "must be \"major.minor\", e.g. \"8.6\", got " + in_quotes(cc));
    } else {
      for (const auto& f : families())
        if (std::string(f.vendor) == "NVIDIA" && cc_matches(cc, f.cc_prefixes)) fam = &f;
      if (!fam) {
        sink.add("compute_capability", Errc::invalid_value,
                 "compute capability " + cc +
                     " is not one db check knows (7.0-12.x); add its architecture's bounds to "
                     "core/dbcheck/src/gpus.cpp");
      } else if (!contains(arch, fam->arch_word)) {
        sink.add("architecture", Errc::invalid_value,
                 in_quotes(arch) + " does not match compute capability " + cc + " (" + fam->name + ")");
      }
    }
  } else if (vendor == "AMD" || vendor == "Intel") {
    if (ccv)
      sink.add("compute_capability", Errc::invalid_value,
               "is a CUDA notion: null for " + vendor + " devices");
    for (const auto& f : families())
      if (vendor == f.vendor && contains(arch, f.arch_word)) fam = &f;
    if (!fam && !arch.empty())
      sink.add("architecture", Errc::invalid_value,
               in_quotes(arch) +
                   " is not an architecture db check knows (CDNA 2/3/4, Gaudi 2/3); add its bounds to "
                   "core/dbcheck/src/gpus.cpp");
  } else if (!vendor.empty()) {
    sink.add(
        "vendor", Errc::invalid_value,
        in_quotes(vendor) +
            " must be NVIDIA, AMD or Intel (others need plausibility bounds in core/dbcheck/src/gpus.cpp)");
  }
  return fam;
}

// The numbers the family bounds and the peak ratios look at.
struct GpuNumbers {
  double mem, bw, sms, clk, tdp, year;
  double fp32, tf32, bf16, fp8, fp4, peak16;
};

// An id that carries a memory size ("-80gb") must agree with memory_gib.
void check_id_memory(const std::string& id, double mem, Sink& sink) {
  if (!ends_with(id, "gb") || !(mem > 0)) return;
  std::size_t dash = id.rfind('-');
  const std::string size =
      dash == std::string::npos ? std::string() : id.substr(dash + 1, id.size() - dash - 3);
  if (!size.empty() && size.find_first_not_of("0123456789") == std::string::npos && size.size() < 6 &&
      std::fabs(digits_value(size) - mem) > 0.5)
    sink.add("memory_gib", Errc::invalid_value, "is " + fmt_num(mem) + " but the id says " + size + " GB");
}

// Sign and range checks that hold for every GPU, memory against the id; returns the numbers.
GpuNumbers check_gpu_numbers(const json& doc, const json* tf, Sink& sink) {
  const double mem = num_field(doc, "memory_gib");
  const double bw = num_field(doc, "memory_bandwidth_gbps");
  const double usable = num_field(doc, "usable_memory_mib_nvidia_smi");
  const double sms = num_field(doc, "sm_count");
  const double clk = num_field(doc, "boost_clock_mhz");
  const double tdp = num_field(doc, "tdp_w");
  const double year = num_field(doc, "release_year");

  // Signs and hard ranges come from the field list (check_keys); the clock's narrower bounds with the GHz
  // hint are a plausibility rule.
  if (have(clk) && (clk < 300 || clk > 3500) && !sink.has_field("boost_clock_mhz")) {
    std::string m = "must be between 300 and 3500 MHz, got " + fmt_num(clk);
    if (clk > 0 && clk < 4) m += "; looks like GHz: " + fmt_num(clk * 1000);
    sink.add("boost_clock_mhz", Errc::out_of_range, m);
  }

  double dt[7];
  for (int i = 0; i < 7; ++i) {
    dt[i] = tf ? num_field(*tf, kDtypes[i]) : std::nan("");  // ranges: the field list (check_keys)
  }
  const double fp32 = dt[0];
  const double tf32 = dt[1];
  const double fp16 = dt[2];
  const double bf16 = dt[3];
  const double fp8 = dt[4];
  const double fp4 = dt[6];
  const double peak16 = std::max(have(bf16) ? bf16 : 0.0, have(fp16) ? fp16 : 0.0);
  if (tf && peak16 <= 0 && !sink.has_field("dense_tflops.bf16") && !sink.has_field("dense_tflops.fp16"))
    sink.add("dense_tflops.bf16", Errc::missing_field,
             "a GPU needs its dense 16-bit tensor peak (bf16, or fp16 where there is no bf16)");

  if (usable > 0 && mem > 0) {
    const double ratio = usable / (mem * 1024.0);
    if (ratio > 1.001)
      sink.add("usable_memory_mib_nvidia_smi", Errc::out_of_range,
               fmt_num(usable) + " MiB is more than memory_gib (" + fmt_num(mem) +
                   " GiB = " + fmt_num(mem * 1024) + " MiB)");
    else if (ratio < 0.9)
      sink.add(
          "usable_memory_mib_nvidia_smi", Errc::out_of_range,
          fmt_num(usable) + " MiB is less than 90% of memory_gib (" + fmt_num(mem) +
              " GiB): memory_gib is the capacity label in GiB, usable memory is nvidia-smi's total in MiB");
  }
  check_id_memory(str_field(doc, "id"), mem, sink);
  return GpuNumbers{mem, bw, sms, clk, tdp, year, fp32, tf32, bf16, fp8, fp4, peak16};
}

void check_family_bounds(const Family* fam, const GpuNumbers& n, Sink& sink) {
  const double mem = n.mem;
  const double bw = n.bw;
  const double sms = n.sms;
  const double clk = n.clk;
  const double tdp = n.tdp;
  const double year = n.year;
  const double fp32 = n.fp32;
  const double tf32 = n.tf32;
  const double bf16 = n.bf16;
  const double fp8 = n.fp8;
  const double fp4 = n.fp4;
  const double peak16 = n.peak16;
  if (have(mem) && mem > 0)
    check_range("memory_gib", mem, fam->mem_lo, fam->mem_hi, "GiB", *fam, sink,
                {{1.0 / 1024, "looks like MiB"}});
  if (have(bw) && bw > 0)
    check_range("memory_bandwidth_gbps", bw, fam->bw_lo, fam->bw_hi, "GB/s", *fam, sink,
                {{1000, "looks like TB/s; in GB/s that is"},
                 {0.001, "looks like MB/s; in GB/s that is"},
                 {1.0 / 8, "looks like Gbit/s; in GB/s that is"}});
  if (peak16 > 0) {
    const std::string f16 = have(bf16) && bf16 >= peak16 ? "dense_tflops.bf16" : "dense_tflops.fp16";
    check_range(f16, peak16, fam->peak_lo, fam->peak_hi, "TFLOP/s", *fam, sink,
                {{0.5, "a 'with sparsity' (2:4) figure? the dense peak is half"},
                 {0.001, "looks like GFLOP/s; in TFLOP/s that is"}});
  }
  if (have(fp32) && fp32 > 0 && fam->fp32_hi > 0)
    check_range("dense_tflops.fp32", fp32, fam->fp32_lo, fam->fp32_hi, "TFLOP/s", *fam, sink);
  if (have(year) && (year < fam->year_lo || year > fam->year_hi))
    sink.add("release_year", Errc::out_of_range,
             fmt_num(year) + " is outside " + fam->name + "'s years (" + std::to_string(fam->year_lo) + "-" +
                 std::to_string(fam->year_hi) + ")");
  if (have(tdp) && tdp > 0)
    check_range("tdp_w", tdp, fam->tdp_lo, fam->tdp_hi, "W", *fam, sink,
                {{1000, "looks like kW; in W that is"}});
  if (have(bf16) && !fam->bf16)
    sink.add("dense_tflops.bf16", Errc::invalid_value,
             std::string(fam->name) + " has no BF16 tensor cores: use null");
  if (have(fp8) && !fam->fp8)
    sink.add("dense_tflops.fp8", Errc::invalid_value,
             std::string(fam->name) + " has no FP8 tensor cores: use null");
  if (have(fp4) && !fam->fp4)
    sink.add("dense_tflops.fp4", Errc::invalid_value,
             std::string(fam->name) + " has no FP4 tensor cores: use null");
  if (have(tf32) && !fam->tf32)
    sink.add("dense_tflops.tf32", Errc::invalid_value,
             std::string(fam->name) + " has no TF32 tensor cores: use null");
  // Dense peak per SM per clock: a sparsity-doubled or otherwise inflated peak exceeds what the
  // architecture's tensor units can do.
  if (fam->tensor_flop_per_sm_clock > 0 && peak16 > 0 && sms >= 1 && clk > 0) {
    const double per = peak16 * 1e12 / (sms * clk * 1e6);
    const std::string f16 = have(bf16) && bf16 >= peak16 ? "dense_tflops.bf16" : "dense_tflops.fp16";
    if (per > fam->tensor_flop_per_sm_clock * 1.1 && !sink.has_field(f16))
      sink.add(f16, Errc::out_of_range,
               fmt_num(peak16) + " TFLOP/s is " + fmt_num(std::round(per)) + " FLOP per SM per clock (" +
                   fmt_num(sms) + " SMs at " + fmt_num(clk) + " MHz); " + fam->name + " does at most " +
                   fmt_num(fam->tensor_flop_per_sm_clock) +
                   " dense: a 'with sparsity' figure? store the dense peak (half)");
    else if (per < fam->tensor_flop_per_sm_clock * 0.2 && !sink.has_field(f16))
      sink.add(f16, Errc::out_of_range,
               fmt_num(peak16) + " TFLOP/s is only " + fmt_num(std::round(per)) + " FLOP per SM per clock; " +
                   fam->name + " tensor units do " + fmt_num(fam->tensor_flop_per_sm_clock) +
                   ": is this the non-tensor rate?");
  }
}

// Ratios between the peaks of one GPU (a 'with sparsity' figure among dense ones).
void check_peak_ratios(const GpuNumbers& n, Sink& sink) {
  const double sms = n.sms;
  const double clk = n.clk;
  const double fp32 = n.fp32;
  const double tf32 = n.tf32;
  const double bf16 = n.bf16;
  const double fp8 = n.fp8;
  const double peak16 = n.peak16;
  if (have(fp32) && fp32 > 0 && sms >= 1 && clk > 0 && fp32 * 1e12 / (sms * clk * 1e6) > 282 &&
      !sink.has_field("dense_tflops.fp32"))
    sink.add("dense_tflops.fp32", Errc::out_of_range,
             fmt_num(fp32) + " TFLOP/s is more than 256 FP32 FLOP per SM per clock (" + fmt_num(sms) +
                 " SMs at " + fmt_num(clk) + " MHz): fp32 is the non-tensor rate");
  if (peak16 > 0) {
    if (have(tf32) && have(bf16) && tf32 > 0.55 * bf16 && !sink.has_field("dense_tflops.tf32"))
      sink.add("dense_tflops.tf32", Errc::out_of_range,
               fmt_num(tf32) + " is more than half the bf16 peak " + fmt_num(bf16) +
                   ": a 'with sparsity' figure?");
    if (have(fp8) && fp8 > 2.1 * peak16 && !sink.has_field("dense_tflops.fp8"))
      sink.add("dense_tflops.fp8", Errc::out_of_range,
               fmt_num(fp8) + " is more than twice the 16-bit peak " + fmt_num(peak16) +
                   ": a 'with sparsity' figure?");
    if (have(fp32) && fp32 > 1.05 * peak16 && !sink.has_field("dense_tflops.fp32"))
      sink.add("dense_tflops.fp32", Errc::out_of_range,
               fmt_num(fp32) + " is above the 16-bit tensor peak " + fmt_num(peak16));
  }
}

// ------------------------------------------------------------------------------ variants of a GPU

// HBM generations: maximum data rate per pin and maximum capacity per 1024 bits of interface (one stack of
// HBM2/2e/3/3e, half an HBM4 stack), from the table in stas00/ml-engineering compute/accelerator/README.md
// (HEAD 744d01e) "Accelerator memory size and speed", which cites Wikipedia's High Bandwidth Memory page;
// copied in docs/sources/gpu-variants.md. Longest names first ("HBM3e" before "HBM3").
struct HbmType {
  const char* name;
  double gbps_per_pin;
  double gib_per_1024_bits;
};
const HbmType kHbmTypes[] = {
    {"HBM2e", 3.6, 24}, {"HBM3e", 9.6, 48}, {"HBM2", 2.4, 8}, {"HBM3", 6.4, 24}, {"HBM4", 8.0, 32},
};

const HbmType* hbm_type(const std::string& memory_type) {
  for (const HbmType& t : kHbmTypes)
    if (lower(memory_type).rfind(lower(t.name), 0) == 0) return &t;
  return nullptr;
}

// Bandwidth and capacity within what the memory type allows on the stated bus (HBM types only).
void check_memory_bus(const GpuSpec& g, Sink& sink) {
  const HbmType* t = hbm_type(g.memory_type);
  if (!t || g.memory_bus_bits <= 0) return;
  const double max_bw = g.memory_bus_bits / 8.0 * t->gbps_per_pin;
  if (g.memory_bandwidth_gbps > max_bw * 1.005)
    sink.add("memory_bandwidth_gbps", Errc::out_of_range,
             fmt_num(g.memory_bandwidth_gbps) + " GB/s is more than " + g.memory_type + " can carry on " +
                 std::to_string(g.memory_bus_bits) + " bits (" + fmt_num(t->gbps_per_pin) +
                 " Gbit/s per pin at most: " + fmt_num(std::round(max_bw)) + " GB/s)");
  const double max_gib = g.memory_bus_bits / 1024.0 * t->gib_per_1024_bits;
  if (g.memory_gib > max_gib * 1.001)
    sink.add("memory_gib", Errc::out_of_range,
             fmt_num(g.memory_gib) + " GiB is more than " + g.memory_type + " holds on " +
                 std::to_string(g.memory_bus_bits) + " bits (" + fmt_num(max_gib) + " GiB at most)");
}

// A dense peak of the variant against its parent's: never above it at the same or a lower power; equal at a
// lower power only where chosen_values says why (a power cap slows the tensor cores).
void check_variant_peaks(const json& doc, const GpuSpec& v, const GpuSpec& p, Sink& sink) {
  if (!(v.tdp_w > 0 && p.tdp_w > 0 && v.tdp_w <= p.tdp_w)) return;
  const std::pair<const char*, std::pair<double, double>> peaks[] = {{"fp32", {v.fp32_tflops, p.fp32_tflops}},
                                                                     {"tf32", {v.tf32_tflops, p.tf32_tflops}},
                                                                     {"fp16", {v.fp16_tflops, p.fp16_tflops}},
                                                                     {"bf16", {v.bf16_tflops, p.bf16_tflops}},
                                                                     {"fp8", {v.fp8_tflops, p.fp8_tflops}}};
  const json* chosen = find_field(doc, "chosen_values");
  for (const auto& peak : peaks) {
    const std::string field = std::string("dense_tflops.") + peak.first;
    const double mine = peak.second.first;
    const double theirs = peak.second.second;
    if (mine <= 0 || theirs <= 0 || sink.has_field(field)) continue;
    const std::string at = " at " + fmt_num(v.tdp_w) + " W (" + p.id + ": " + fmt_num(theirs) + " at " +
                           fmt_num(p.tdp_w) + " W)";
    bool justified = false;
    for (std::size_t i = 0; chosen && chosen->is_array() && i < chosen->size(); ++i)
      justified = justified || str_field((*chosen)[i], "field") == field;
    if (mine > theirs * 1.0005)
      sink.add(
          field, Errc::out_of_range,
          fmt_num(mine) + " is above its parent's peak" + at + ": a variant is not faster than its parent");
    else if (mine >= theirs * 0.9995 && v.tdp_w < p.tdp_w && !justified)
      sink.add(field, Errc::invalid_value,
               fmt_num(mine) + " is the parent's peak" + at +
                   ": a power-capped variant runs at lower clocks; store the derated peak, or keep the "
                   "parent's with a chosen_values entry that says why");
  }
}

// NVLink of a variant: the parent's generation, at most the parent's bandwidth (export variants cut it).
void check_variant_links(const GpuSpec& v, const GpuSpec& p, Sink& sink) {
  const GpuInterconnect& a = v.interconnect;
  const GpuInterconnect& b = p.interconnect;
  if (a.nvlink_gbps_bidirectional <= 0) return;
  if (b.nvlink_gbps_bidirectional <= 0 || a.nvlink_generation != b.nvlink_generation)
    sink.add("interconnect.nvlink_generation", Errc::invalid_value,
             "NVLink " + std::to_string(a.nvlink_generation) + " but its parent " + p.id + " has " +
                 (b.nvlink_gbps_bidirectional > 0 ? "NVLink " + std::to_string(b.nvlink_generation)
                                                  : std::string("none")) +
                 ": a variant keeps its parent's die and links");
  else if (a.nvlink_gbps_bidirectional > b.nvlink_gbps_bidirectional * 1.0005)
    sink.add("interconnect.nvlink_gbps_bidirectional", Errc::out_of_range,
             fmt_num(a.nvlink_gbps_bidirectional) + " GB/s is more than its parent " + p.id + "'s " +
                 fmt_num(b.nvlink_gbps_bidirectional) + ": variants keep or cut the parent's NVLink");
}

// Memory of a variant: an HBM variant states its bus width; a changed memory type with the parent's
// bandwidth unchanged is a copied spec.
void check_variant_memory(const GpuSpec& v, const GpuSpec& p, Sink& sink) {
  if (hbm_type(v.memory_type) && v.memory_bus_bits <= 0)
    sink.add(
        "memory_bus_bits", Errc::missing_field,
        "a variant with " + v.memory_type +
            " states its memory bus width, so that its bandwidth can be checked against its memory type");
  if (lower(v.memory_type) != lower(p.memory_type) &&
      std::fabs(v.memory_bandwidth_gbps - p.memory_bandwidth_gbps) < 0.5)
    sink.add("memory_bandwidth_gbps", Errc::invalid_value,
             fmt_num(v.memory_bandwidth_gbps) + " GB/s is " + p.id + "'s " + p.memory_type +
                 " bandwidth, but this is " + v.memory_type + ": copied from the parent?");
}

}  // namespace

void check_gpu_variant(Entry& e, const std::map<std::string, GpuRef>& gpu_refs,
                       const std::set<std::string>& gpu_files) {
  auto g = parse_gpu(e.doc, e.path);
  if (!g.ok()) return;  // reported by the loader check
  const GpuSpec& v = g.value();
  check_memory_bus(v, e.sink);
  if (v.variant_of.empty()) return;
  auto it = gpu_refs.find(v.variant_of);
  if (it == gpu_refs.end()) {
    if (gpu_files.count(v.variant_of) == 0)
      e.sink.add("variant_of", Errc::unknown_id, in_quotes(v.variant_of) + " is not a GPU in gpus/");
    return;
  }
  if (!it->second.spec_ok) return;  // the parent's file reports its own problems
  const GpuSpec& p = it->second.spec;
  if (!p.variant_of.empty())
    e.sink.add("variant_of", Errc::invalid_value,
               p.id + " is itself a variant of " + p.variant_of + ": name the datasheet class (" +
                   p.variant_of + ")");
  if (v.vendor != p.vendor || v.compute_capability != p.compute_capability)
    e.sink.add("compute_capability", Errc::invalid_value,
               v.vendor + " " + v.compute_capability + " but its parent " + p.id + " is " + p.vendor + " " +
                   p.compute_capability + ": a variant has its parent's die");
  check_variant_peaks(e.doc, v, p, e.sink);
  check_variant_links(v, p, e.sink);
  check_variant_memory(v, p, e.sink);
}

void check_gpu_doc(const json& doc, const std::string& file, Sink& sink) {
  if (!check_keys(doc, "", "gpu", "ftcost.gpu/1", sink)) return;
  check_id(doc, file, ".-", sink);
  for (const char* k : {"vendor", "name", "architecture", "form_factor", "memory_type"})
    check_nonempty_text(doc, k, "", sink);

  const json* tf = find_field(doc, "dense_tflops");
  if (tf && !tf->is_object()) tf = nullptr;  // reported by the type check
  if (tf) check_keys(*tf, "dense_tflops", "gpu.dense_tflops", "ftcost.gpu/1", sink);
  const json* ic = find_field(doc, "interconnect");
  if (ic && ic->is_object()) {
    check_keys(*ic, "interconnect", "gpu.interconnect", "ftcost.gpu/1", sink);
    check_interconnect(*ic, sink);
  }
  check_gpu_sources(doc, sink);
  check_chosen_values(doc, sink);
  const Family* fam = gpu_family(doc, sink);
  const GpuNumbers n = check_gpu_numbers(doc, tf, sink);
  if (fam) check_family_bounds(fam, n, sink);
  check_peak_ratios(n, sink);
}

}  // namespace ftcost::dbcheck
