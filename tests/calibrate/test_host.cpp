// Host-side pieces of ftcost-calibrate: plans, expert-load distributions, progress/ETA, output files,
// hashing, the summary table, NVML absence, the CPU score.
#include "ftcost/calibrate/bench.hpp"
#include "ftcost/calibrate/host_bench.hpp"
#include "ftcost/calibrate/nvml.hpp"
#include "ftcost/calibrate/output.hpp"
#include "ftcost/calibrate/plan.hpp"
#include "ftcost/calibrate/progress.hpp"
#include "ftcost/calibrate/routing.hpp"
#include "synthetic.hpp"
#include "tmpdir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

using namespace ftcost::calib;

namespace {
// {cc_major, cc_minor, memory_bytes, l2_bytes, sm_count}
DeviceFacts h100() { return {9, 0, 85045460992ull, 52428800, 132}; }
DeviceFacts a100_40() { return {8, 0, 42505273344ull, 41943040, 108}; }
std::string tmpdir() {
  static const std::string dir = ftcost::test::make_tmpdir("test");
  return dir;
}
}  // namespace

TEST_CASE("GEMM passes map to cuBLAS's column-major view") {
  GemmSpec f = make_gemm("x", "bf16", "fwd", 512, 4096, 14336);  // y[512,14336] = x[512,4096] W^T
  CHECK(f.transa == 'T');
  CHECK(f.transb == 'N');
  CHECK(f.m == 14336);
  CHECK(f.n == 512);
  CHECK(f.k == 4096);
  GemmSpec d = make_gemm("x", "bf16", "dgrad", 512, 4096, 14336);  // dx[512,4096] = dy[512,14336] W
  CHECK(d.transa == 'N');
  CHECK(d.transb == 'N');
  CHECK(d.m == 4096);
  CHECK(d.n == 512);
  CHECK(d.k == 14336);
  GemmSpec w = make_gemm("x", "bf16", "wgrad", 512, 4096, 14336);  // dW[14336,4096] = dy^T x
  CHECK(w.transa == 'N');
  CHECK(w.transb == 'T');
  CHECK(w.m == 4096);
  CHECK(w.n == 14336);
  CHECK(w.k == 512);
  CHECK(f.flops() == d.flops());
  CHECK(f.flops() == w.flops());
}

TEST_CASE("quick plan: every family, the Mixtral shapes in all passes, fp8 only where supported") {
  Plan q = make_plan(Mode::quick, h100(), {});
  CHECK(q.families == all_families());
  std::set<std::string> shapes, passes, dtypes;
  bool has_8192 = false;
  for (const auto& g : q.gemm) {
    shapes.insert(g.shape);
    passes.insert(g.pass);
    dtypes.insert(g.dtype);
    has_8192 = has_8192 || (g.shape == "square" && g.dtype == "bf16" && g.m == 8192);
  }
  CHECK(has_8192);
  for (const char* s : {"mixtral-8x7b.q", "mixtral-8x7b.kv", "mixtral-8x7b.w1", "mixtral-8x7b.w2",
                        "mixtral-8x7b.router", "mixtral-8x7b.lm_head"}) {
    CHECK(shapes.count(s) == 1);
  }
  CHECK(passes == std::set<std::string>{"fwd", "dgrad", "wgrad"});
  CHECK(dtypes.count("fp8_e4m3") == 1);
  Plan a = make_plan(Mode::quick, a100_40(), {});
  for (const auto& g : a.gemm) CHECK(g.dtype != "fp8_e4m3");
  CHECK(std::any_of(a.notes.begin(), a.notes.end(),
                    [](const std::string& n) { return n.find("fp8") != std::string::npos; }));
  // MoE: sparse uniform, the paper's distribution, dense
  std::set<std::string> moe;
  for (const auto& m : q.moe) moe.insert(m.routing + "/" + m.distribution);
  CHECK(moe == std::set<std::string>{"sparse/uniform", "sparse/mixtral_he_tuned", "dense/uniform"});
  // bandwidth arrays beyond 4x L2
  REQUIRE(!q.bandwidth_array_bytes.empty());
  for (auto b : q.bandwidth_array_bytes) CHECK(static_cast<double>(b) >= 4.0 * 52428800);
}

TEST_CASE("full plan is a superset in sizes and runs longer") {
  Plan q = make_plan(Mode::quick, h100(), {});
  Plan f = make_plan(Mode::full, h100(), {});
  CHECK(f.gemm.size() > q.gemm.size());
  CHECK(f.moe.size() > q.moe.size());
  CHECK(f.estimate_seconds() > q.estimate_seconds());
  CHECK(f.gemm_algo_candidates >= q.gemm_algo_candidates);
  CHECK(q.estimate_seconds() < 180);  // the budget of --quick on an H100-class GPU
  CHECK(f.estimate_seconds() < 900);
}

TEST_CASE("plans drop what does not fit in memory, with a note") {
  DeviceFacts small = a100_40();
  small.memory_bytes = 16ull << 30;
  Plan p = make_plan(Mode::full, small, {});
  for (const auto& m : p.moe) CHECK(static_cast<double>(m.bytes_needed()) <= 0.85 * 16.0 * (1 << 30));
  CHECK(std::any_of(p.notes.begin(), p.notes.end(),
                    [](const std::string& n) { return n.find("moe") != std::string::npos; }));
}

TEST_CASE("--only validates names and keeps run order") {
  auto r = parse_only({"moe", "gemm", "gemm"});
  REQUIRE(r.ok());
  CHECK(r.value() == std::vector<std::string>{"gemm", "moe"});
  auto bad = parse_only({"gemm", "flash"});
  REQUIRE(!bad.ok());
  CHECK(bad.error().field == "--only");
  Plan p = make_plan(Mode::quick, h100(), r.value());
  CHECK(p.runs("gemm"));
  CHECK_FALSE(p.runs("bandwidth"));
  CHECK(p.items("bandwidth") == 0);
  CHECK(p.estimate_seconds("bandwidth") == 0);
}

TEST_CASE("the op classes between the GEMMs (issue 38): families, quick sizes, what they add to --quick") {
  Plan q = make_plan(Mode::quick, h100(), {});
  const std::vector<std::string> fams = {"norm", "cast", "pointwise", "cross_entropy", "lora", "attention"};
  double added = 0;
  for (const auto& f : fams) {
    CHECK(q.runs(f));
    CHECK(q.items(f) > 0);
    added += q.estimate_seconds(f);
  }
  CHECK(q.items("norm") == 2);           // 4096 x 4096, fwd and bwd
  CHECK(q.items("cross_entropy") == 6);  // 2048 rows x 32000, 128256, 152064, fwd and bwd
  CHECK(q.items("lora") == 18);          // r 8, 16, 64 x sides A, B x 3 passes
  CHECK(q.items("attention") == 4);      // Llama-3-8B b8 L1024, b2 L4096, fwd and bwd
  for (const auto& l : q.lora) CHECK((l.side == "A" ? l.gemm.out : l.gemm.in) == l.rank);
  CHECK(added < 40);  // 34 items at the quick policy's 0.25 s cap, plus checks
  Plan f = make_plan(Mode::full, h100(), {});
  CHECK(f.attention.size() > q.attention.size());
  CHECK(f.lora.size() > q.lora.size());
  auto only = parse_only({"attention", "lora"});
  REQUIRE(only.ok());
  CHECK(only.value() == std::vector<std::string>{"lora", "attention"});
  // a GPU too small for the 8192 x 152064 fp32 logits (twice) drops those rows with a note
  DeviceFacts small = a100_40();
  small.memory_bytes = 8ull << 30;
  Plan s = make_plan(Mode::full, small, {});
  for (const auto& c : s.cross_entropy)
    CHECK(8.0 * static_cast<double>(c.rows * c.vocab) <= 0.85 * 8.0 * (1 << 30));
  CHECK(std::any_of(s.notes.begin(), s.notes.end(),
                    [](const std::string& n) { return n.find("cross_entropy") != std::string::npos; }));
}

TEST_CASE("expert-load distributions") {
  for (const char* n : {"uniform", "mixtral_he_tuned", "mixtral_gs_tuned", "skewed"}) {
    auto w = distribution_weights(n, 8);
    REQUIRE(w.ok());
    CHECK(std::accumulate(w.value().begin(), w.value().end(), 0.0) == doctest::Approx(1.0));
  }
  auto he = distribution_weights("mixtral_he_tuned", 8).value();
  CHECK(he[2] == doctest::Approx(68.3 / 411.5));  // the paper's hottest expert after tuning
  CHECK(!distribution_weights("mixtral_he_tuned", 16).ok());
  CHECK(!distribution_weights("zipf", 8).ok());
  auto sk = distribution_weights("skewed", 8).value();
  CHECK(sk[0] > 0.4);
  CHECK(sk[0] < 0.5);
}

TEST_CASE("expert counts are exact, capped at one per token, and proportional") {
  auto w = distribution_weights("mixtral_he_tuned", 8).value();
  auto c = expert_counts(4096, 2, w);
  CHECK(std::accumulate(c.begin(), c.end(), std::int64_t{0}) == 8192);
  for (std::size_t e = 0; e < 8; ++e) CHECK(std::abs(static_cast<double>(c[e]) - 8192 * w[e]) <= 1.0);
  // an expert cannot get a token twice: a 90% weight is capped at T
  auto capped = expert_counts(100, 2, {0.9, 0.05, 0.05});
  CHECK(capped[0] == 100);
  CHECK(capped[1] + capped[2] == 100);
  auto dense = expert_counts(64, 8, std::vector<double>(8, 0.125));
  for (auto x : dense) CHECK(x == 64);
}

TEST_CASE("assignments match the counts with distinct experts per token") {
  for (const char* dist : {"uniform", "mixtral_gs_tuned", "skewed"}) {
    auto counts = expert_counts(1000, 2, distribution_weights(dist, 8).value());
    auto idx = assign_experts(1000, 2, counts, 42);
    REQUIRE(idx.size() == 2000);
    std::vector<std::int64_t> seen(8, 0);
    for (int t = 0; t < 1000; ++t) {
      CHECK(idx[static_cast<std::size_t>(2 * t)] != idx[static_cast<std::size_t>(2 * t + 1)]);
      for (int j = 0; j < 2; ++j) ++seen[static_cast<std::size_t>(idx[static_cast<std::size_t>(2 * t + j)])];
    }
    CHECK(seen == counts);
  }
  CHECK(assign_experts(100, 2, expert_counts(100, 2, std::vector<double>(8, 1.0 / 8)), 7) ==
        assign_experts(100, 2, expert_counts(100, 2, std::vector<double>(8, 1.0 / 8)), 7));
}

TEST_CASE("durations, progress line and ETA") {
  const std::pair<double, const char*> durations[] = {
      {0, "0:00"}, {7.4, "0:07"}, {754, "12:34"}, {3723, "1:02:03"}, {-1, "--:--"}, {std::nan(""), "--:--"}};
  for (const auto& d : durations) {
    INFO(d.first);
    CHECK(format_duration(d.first) == d.second);
  }
  std::string l = progress_line(0.5, "gemm bf16", 83, 100.0, 10);
  CHECK(l.rfind("[#####.....]  50%  gemm bf16  1:23 elapsed, ETA 1:40", 0) == 0);
  CHECK(progress_line(2.0, "x", 0, std::nullopt, 4).rfind("[####] 100%", 0) == 0);
  std::string longl = progress_line(0.1, std::string(100, 'a'), 1, std::nullopt, 4, 20);
  CHECK(longl.find(std::string(17, 'a') + "...") != std::string::npos);
  CHECK(*estimate_eta(0.5, 60, 0) == doctest::Approx(60));
  CHECK(*estimate_eta(0.0, 0, 90) == doctest::Approx(90));
  CHECK(!estimate_eta(0.0, 0, 0));
  CHECK(*estimate_eta(1.0, 10, 90) == 0);
  // early on, the plan's estimate dominates; later, the measured rate
  CHECK(*estimate_eta(0.05, 10, 100) == doctest::Approx(0.25 * 190 + 0.75 * 95));
}

TEST_CASE("Progress writes plain lines when not a terminal") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f);
  {
    Progress p(f, false, 10);
    p.set_total_units(1.0);
    p.begin("launch");
    for (int i = 0; i < 10; ++i) p.advance(0.1);
    p.message("ftcost-calibrate: note: something");
    p.finish();
  }
  std::rewind(f);
  std::string all;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) all += buf;
  std::fclose(f);
  CHECK(all.find('\r') == std::string::npos);
  CHECK(all.find("100%") != std::string::npos);
  CHECK(all.find("note: something") != std::string::npos);
}

TEST_CASE("atomic write: replaces the file, leaves no temporary, fails cleanly") {
  std::string path = tmpdir() + "/out.json";
  REQUIRE(atomic_write_file(path, "first").ok());
  REQUIRE(atomic_write_file(path, "second\n").ok());
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  CHECK(ss.str() == "second\n");
  // nothing else in the folder
  std::FILE* ls = ::popen(("ls -A " + tmpdir()).c_str(), "r");
  REQUIRE(ls);
  char name[256];
  std::vector<std::string> names;
  while (std::fgets(name, sizeof name, ls)) names.emplace_back(name);
  ::pclose(ls);
  CHECK(names.size() == 1);
  auto bad = atomic_write_file(tmpdir() + "/no/such/dir/out.json", "x");
  REQUIRE(!bad.ok());
  CHECK(bad.error().code == ftcost::Errc::io_error);
}

TEST_CASE("check_and_write writes only what the loader accepts") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  std::string path = tmpdir() + "/cal.json";
  REQUIRE(check_and_write(c, path).ok());
  c.measurements.gemm[0].tflops.median = -1;  // the writer must refuse this
  std::string bad = tmpdir() + "/bad.json";
  auto s = check_and_write(c, bad);
  REQUIRE(!s.ok());
  CHECK(s.error().field == "measurements.gemm[0].tflops_median");
  struct stat st;
  CHECK(::stat(bad.c_str(), &st) != 0);
}

TEST_CASE("sha256 and the UUID hash") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  unsigned char uuid[16];
  for (int i = 0; i < 16; ++i) uuid[i] = static_cast<unsigned char>(i * 17);
  std::string h = uuid_hash(uuid);
  CHECK(h.rfind("sha256:", 0) == 0);
  CHECK(h.size() == 71);
  CHECK(h.find("00112233") == std::string::npos);  // not the raw UUID
}

TEST_CASE("names and metadata") {
  CHECK(slugify("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3");
  CHECK(slugify("  ") == "gpu");
  CHECK(default_output_name("NVIDIA A40", "2025-06-01T12:00:00Z") ==
        "calibration-nvidia-a40-20250601T120000Z.json");
  CHECK(shell_join({"ftcost-calibrate", "--out", "a b.json", "--only=gemm,moe"}) ==
        "ftcost-calibrate --out 'a b.json' --only=gemm,moe");
  std::string t = utc_now_iso();
  CHECK(t.size() == 20);
  CHECK(t.back() == 'Z');
  CHECK(!host_cpu_name().empty());
  CHECK(!tool_version().empty());
}

TEST_CASE("summary table names every family's headline number") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  std::string s = summary_table(c);
  for (const char* want : {"copy bandwidth",
                           "triad bandwidth",
                           "GEMM bf16 best",
                           "GEMM fp8_e4m3 best",
                           "TFLOP/s",
                           "experts w1+w3 fwd T=4096 sparse uniform",
                           "grouped",
                           "MoE layer fwd",
                           "NF4 dequant fused",
                           "AdamW unfused",
                           "rmsnorm",
                           "empty kernel launch, async",
                           "eager op",
                           "CPU single-thread score",
                           "notes: 1",
                           "RMSNorm bwd 4096x4096",
                           "cast bf16->fp32",
                           "mul bf16",
                           "cross-entropy fwd 2048x128256 fp32",
                           "LoRA GEMMs (4 rows): roofline fraction",
                           "attention bwd llama-3-8b b=2 L=4096"}) {
    CHECK_MESSAGE(s.find(want) != std::string::npos, want);
  }
  ftcost::Calibration empty = c;
  empty.measurements = {};
  CHECK(summary_table(empty).find("(no measurements)") != std::string::npos);
}

TEST_CASE("NVML absent: load gives nothing, throttle masks decode") {
  CHECK(Nvml::load("libnvidia-ml-does-not-exist.so.1") == nullptr);
  auto names = throttle_reason_names(0x1 | 0x4 | 0x40);
  CHECK(names == std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"});
  NvmlMonitor m(nullptr);
  m.start();
  m.stop();
  ftcost::CalConditions c;
  m.fill(c);
  CHECK(!c.sm_clock_min_mhz);
}

TEST_CASE("CPU score and the eager host work are deterministic and positive") {
  CHECK(cpu_work_unit(5) == cpu_work_unit(5));
  CHECK(cpu_work_unit(5) != cpu_work_unit(6));
  CHECK(eager_host_work(3) == eager_host_work(3));
  ftcost::CpuRow r = measure_cpu_score(TimingPolicy{1, 3, 5, 0.5, 0.5});
  CHECK(r.kind == "single_thread");
  CHECK(r.iterations >= 1);
  CHECK(r.score.median > 0);
  CHECK(r.score.p10 <= r.score.median);
  CHECK(r.score.median <= r.score.p90);
}

TEST_CASE("run_item: OOM and unsupported skip with a note, failures are counted, cancel stops") {
  ftcost::Calibration cal;
  Plan plan = make_plan(Mode::quick, h100(), {});
  volatile std::sig_atomic_t cancel = 0;
  Env env(plan, cal, nullptr, &cancel);
  env.set_family("gemm");
  CHECK(run_item(env, "ok", [] {}));
  CHECK_FALSE(run_item(env, "oom", [] { throw OutOfMemory("cudaMalloc(&p, 1 TB)", "out of memory"); }));
  CHECK_FALSE(
      run_item(env, "unsup", [] { throw Unsupported("cublasLtMatmul", "CUBLAS_STATUS_NOT_SUPPORTED"); }));
  CHECK_FALSE(run_item(env, "bad", [] { throw ValidationFailure("12 of 128 values differ"); }));
  CHECK(env.failures() == 1);
  REQUIRE(cal.meta.notes.size() == 3);
  CHECK(cal.meta.notes[0].find("oom: skipped: out of device memory (cudaMalloc") == 0);
  CHECK(cal.meta.notes[2].find("FAILED: bad: 12 of 128") == 0);
  // a library/runtime error fails the item and the run goes on; a sticky one stops the run
  CHECK_FALSE(
      run_item(env, "lib", [] { throw DeviceError("cublasLtMatmul", "CUBLAS_STATUS_INVALID_VALUE"); }));
  CHECK(env.failures() == 2);
  CHECK_THROWS_AS(
      run_item(env, "fatal", [] { throw FatalDeviceError("cudaMemcpy", "an illegal memory access"); }),
      FatalDeviceError);
  cancel = 1;
  bool ran = false;
  CHECK_FALSE(run_item(env, "after", [&] { ran = true; }));
  CHECK_FALSE(ran);
}
