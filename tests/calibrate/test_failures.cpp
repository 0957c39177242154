// Issue 17: every way the first real run can fail, faked here without a GPU. A fake driver (DriverApi)
// gives each "cannot measure here" class; injected errors go through run_item as the CUDA side throws
// them; the writer drops rows the loader rejects; the output folder is checked before measuring.
#include "ftcost/calibrate/bench.hpp"
#include "ftcost/calibrate/driver.hpp"
#include "ftcost/calibrate/output.hpp"
#include "ftcost/calibrate/plan.hpp"
#include "synthetic.hpp"
#include "tmpdir.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace ftcost::calib;

namespace {

struct FakeDriver : DriverApi {
  std::optional<std::string> load_error;
  int version = 13000, version_rc = cu::success;
  int init_rc = cu::success;
  int count = 1, count_rc = cu::success;
  int mode = 0;
  int context_rc = cu::success;
  std::optional<int> nvml;
  bool nodes = true, nodes_ok = true;
  std::optional<std::string> load() override { return load_error; }
  int driver_version(int* v) override {
    *v = version;
    return version_rc;
  }
  int init() override { return init_rc; }
  int device_count(int* n) override {
    *n = count;
    return count_rc;
  }
  int compute_mode(int, int* m) override {
    *m = mode;
    return cu::success;
  }
  int try_context(int) override { return context_rc; }
  std::string error_name(int code) override { return "CUDA_ERROR_" + std::to_string(code); }
  std::optional<int> nvml_gpu_count() override { return nvml; }
  bool device_nodes_present() override { return nodes; }
  bool device_nodes_accessible() override { return nodes_ok; }
};

std::string tmpdir() {
  static const std::string dir = ftcost::test::make_tmpdir("fail");
  return dir;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

// The probe of device 0 by a build that needs CUDA 13.0, checked for its status and a part of its message.
HostCheck probed(FakeDriver& f, HostStatus want, const std::string& part) {
  HostCheck h = probe_driver(f, 13000, {0});
  CHECK(h.status == want);
  CHECK(h.message.find(part) != std::string::npos);
  return h;
}

}  // namespace

TEST_CASE("driver probe: each reason for 'cannot measure here' has its own message, all exit 3") {
  SUBCASE("a healthy host") {
    FakeDriver f;
    f.count = 8;
    HostCheck h = probe_driver(f, 13000, {0});
    CHECK(h.status == HostStatus::ok);
    CHECK(h.exit_code() == 0);
    CHECK(h.device_count == 8);
  }
  SUBCASE("no driver installed") {
    FakeDriver f;
    f.load_error = "cannot load libcuda.so.1 (libcuda.so.1: cannot open shared object file)";
    HostCheck h = probed(f, HostStatus::no_driver, "needs CUDA 13.0");
    CHECK(h.exit_code() == 3);
    CHECK(h.message.rfind("no NVIDIA driver: cannot load libcuda.so.1", 0) == 0);
    CHECK(one_line(h.message));
  }
  SUBCASE("driver too old (R550 = CUDA 12.4) names both versions and forward compatibility") {
    FakeDriver f;
    f.version = 12040;
    HostCheck h = probed(f, HostStatus::driver_too_old, "found CUDA 12.4, this build needs >= 13.0");
    CHECK(h.exit_code() == 3);
    CHECK(h.message.find("forward-compatibility") != std::string::npos);
    CHECK(h.driver_version == 12040);
    CHECK(one_line(h.message));
  }
  SUBCASE("forward-compat package on a GPU that does not support it") {
    FakeDriver f;
    f.init_rc = cu::compat_not_supported_on_device;
    probed(f, HostStatus::driver_too_old, "data-centre GPUs only");
  }
  SUBCASE("no GPU") {
    FakeDriver f;
    f.init_rc = cu::no_device;
    f.nodes = false;
    HostCheck h = probe_driver(f, 13000, {0});
    CHECK(h.status == HostStatus::no_gpu);
    CHECK(h.message.rfind("no GPU: ", 0) == 0);
    FakeDriver g;
    g.count = 0;
    g.nodes = false;
    CHECK(probe_driver(g, 13000, {}).status == HostStatus::no_gpu);
  }
  SUBCASE("MIG on without an instance visible: NVML sees GPUs, CUDA none") {
    FakeDriver f;
    f.count = 0;
    f.nvml = 1;
    probed(f, HostStatus::gpu_unusable, "MIG");
  }
  SUBCASE("no permission on /dev/nvidiactl") {
    FakeDriver f;
    f.init_rc = cu::no_device;
    f.nodes_ok = false;
    probed(f, HostStatus::gpu_unusable, "/dev/nvidiactl");
    FakeDriver g;
    g.init_rc = cu::not_permitted;
    CHECK(probe_driver(g, 13000, {0}).status == HostStatus::gpu_unusable);
  }
  SUBCASE("exclusive-process mode, GPU held by another process") {
    FakeDriver f;
    f.mode = cu::computemode_exclusive_process;
    f.context_rc = cu::device_unavailable;
    CHECK(probed(f, HostStatus::gpu_unusable, "exclusive-process").exit_code() == 3);
  }
  SUBCASE("compute-prohibited mode") {
    FakeDriver f;
    f.mode = cu::computemode_prohibited;
    probed(f, HostStatus::gpu_unusable, "prohibited");
  }
  SUBCASE("a toolkit stub libcuda") {
    FakeDriver f;
    f.init_rc = cu::stub_library;
    CHECK(probe_driver(f, 13000, {0}).status == HostStatus::no_driver);
  }
  SUBCASE("an out-of-range --device is left to the caller (exit 2), not probed") {
    FakeDriver f;
    f.context_rc = cu::invalid_device;
    f.count = 1;
    CHECK(probe_driver(f, 13000, {5}).status == HostStatus::ok);
    CHECK(probe_driver(f, 13000, {0}).status == HostStatus::gpu_unusable);
  }
}

TEST_CASE("the real driver probe on this host agrees with what is installed") {
  auto api = real_driver_api();
  HostCheck h = probe_driver(*api, 13000, {});
  if (::access("/dev/nvidiactl", F_OK) != 0) {
    CHECK(h.status != HostStatus::ok);
    CHECK(h.exit_code() == 3);
    CHECK(one_line(h.message));
  }
  MESSAGE("real probe: " << std::string(host_status_name(h.status)) << ": " << h.message);
}

TEST_CASE("CUDA libraries: a missing one gives the exit-3 message naming it, never a loader exit") {
  DynLib lib;
  auto e = lib.open(library_candidates("libcublas-absent.so.13", {"/nonexistent/lib64", ""}));
  REQUIRE(e.has_value());
  CHECK(e->find("libcublas-absent.so.13") != std::string::npos);
  CHECK(e->find("/nonexistent/lib64/libcublas-absent.so.13") != std::string::npos);
  CHECK_FALSE(lib.is_open());
  CHECK(lib.symbol("cublasCreate_v2") == nullptr);
  HostCheck h = libraries_missing({*e});
  CHECK(h.status == HostStatus::libraries_missing);
  CHECK(h.exit_code() == 3);
  CHECK(h.message.rfind("CUDA libraries missing: cannot load libcublas-absent.so.13", 0) == 0);
  CHECK(one_line(h.message));
  // a library that is there loads, and its symbols resolve
  DynLib libc;
  REQUIRE_FALSE(libc.open({"libc.so.6"}).has_value());
  CHECK(libc.symbol("strlen") != nullptr);
  CHECK(library_candidates("libx.so.1", {"/a", "/a", ""}) ==
        std::vector<std::string>{"libx.so.1", "/a/libx.so.1"});
  CHECK(cuda_version_text(12040) == "12.4");
  CHECK(cuda_version_text(13000) == "13.0");
}

TEST_CASE("failures are not skips: only NOT_SUPPORTED and ARCH_MISMATCH skip") {
  CHECK(classify_cublas_status(15) == StatusClass::skip);          // NOT_SUPPORTED
  CHECK(classify_cublas_status(8) == StatusClass::skip);           // ARCH_MISMATCH
  CHECK(classify_cublas_status(3) == StatusClass::out_of_memory);  // ALLOC_FAILED
  CHECK(classify_cublas_status(7) == StatusClass::failure);        // INVALID_VALUE: an argument bug
  CHECK(classify_cublas_status(13) == StatusClass::failure);       // EXECUTION_FAILED
  CHECK(classify_cublas_status(14) == StatusClass::failure);       // INTERNAL_ERROR
  CHECK(classify_cublas_status(1) == StatusClass::failure);        // NOT_INITIALIZED
  CHECK(cuda_error_is_sticky(700));
  CHECK(cuda_error_is_sticky(719));
  CHECK_FALSE(cuda_error_is_sticky(2));  // cudaErrorMemoryAllocation
  CHECK_FALSE(cuda_error_is_sticky(1));  // cudaErrorInvalidValue

  // an INVALID_VALUE in the fp8 path (as cublas_check throws it) is a counted failure reported with the
  // shape and layout; the next item still runs
  ftcost::Calibration cal;
  DeviceFacts h100{9, 0, 85045460992ull, 52428800, 132};
  Plan plan = make_plan(Mode::quick, h100, {"gemm"});
  volatile std::sig_atomic_t cancel = 0;
  Env env(plan, cal, nullptr, &cancel);
  env.set_family("gemm");
  GemmSpec fp8 = make_gemm("square", "fp8_e4m3", "fwd", 4096, 4096, 4096);
  CHECK_FALSE(run_item(env, fp8.label(), [] {
    throw DeviceError("cublasLtMatmul(...) [gemm.cu:150]", "CUBLAS_STATUS_INVALID_VALUE: an invalid value");
  }));
  bool next_ran = false;
  CHECK(run_item(env, "gemm bf16 square fwd", [&] { next_ran = true; }));
  CHECK(next_ran);
  CHECK(env.failures() == 1);
  REQUIRE(cal.meta.notes.size() == 1);
  CHECK(cal.meta.notes[0].find("FAILED: gemm fp8_e4m3 square fwd TN m=4096 n=4096 k=4096: cublasLtMatmul") ==
        0);
  CHECK(cal.meta.notes[0].find("INVALID_VALUE") != std::string::npos);
  // skips (not failures) and sticky errors (stop the run): test_host.cpp, "run_item: OOM and unsupported ..."
}

TEST_CASE("independent MoE items: a grouped failure costs only the grouped rows; checks run once") {
  DeviceFacts h100{9, 0, 85045460992ull, 52428800, 132};
  Plan plan = make_plan(Mode::quick, h100, {"moe"});
  REQUIRE(plan.moe.size() >= 2);
  CHECK(plan.items("moe") == static_cast<int>(plan.moe.size()) * 4);  // layer and expert GEMMs, each impl

  // bench_moe's item loop (kernels/moe.cu) with fake checks: the grouped small check fails
  int small_calls[2] = {0, 0}, ref_calls = 0, agree_calls = 0;
  MoeGate::Hooks hooks;
  hooks.small_check = [&](bool grouped) -> std::string {
    ++small_calls[grouped ? 1 : 0];
    return grouped ? "out: 3 of 25600 values differ" : "";
  };
  hooks.loop_reference = [&]() -> std::string {
    ++ref_calls;
    return "";
  };
  hooks.grouped_agrees = [&]() -> std::string {
    ++agree_calls;
    return "";
  };
  ftcost::Calibration cal;
  volatile std::sig_atomic_t cancel = 0;
  Env env(plan, cal, nullptr, &cancel);
  env.set_family("moe");
  MoeGate gate;
  int recorded[2] = {0, 0};
  for (const MoeSpec& spec : plan.moe) {
    gate.new_shape();
    for (const char* item : {"layer", "expert GEMMs"}) {
      for (bool grouped : {false, true}) {
        const bool ok = run_item(env, spec.label() + ": " + item + (grouped ? ", grouped" : ", loop"), [&] {
          gate.prepare(grouped, hooks);
          ++recorded[grouped ? 1 : 0];
        });
        CHECK(ok == !grouped);
      }
    }
  }
  CHECK(recorded[0] == static_cast<int>(plan.moe.size()) * 2);  // every loop item
  CHECK(recorded[1] == 0);
  CHECK(small_calls[0] == 1);  // the small CPU check once per implementation and run
  CHECK(small_calls[1] == 1);
  CHECK(ref_calls == static_cast<int>(plan.moe.size()));  // the big loop reference once per shape
  CHECK(agree_calls == 0);                                // grouped never got that far
  CHECK(env.failures() == static_cast<int>(plan.moe.size()) * 2);
  CHECK(cal.meta.notes[0].find("expert GEMMs") == std::string::npos);
  CHECK(cal.meta.notes[0].find("grouped: the MoE layer does not match its CPU reference: out: 3 of") !=
        std::string::npos);

  // grouped unsupported (an exception, not a check result) is not remembered: tried again, and the loop
  // reference it needs is built once per shape however many items ask
  MoeGate g2;
  int agree2 = 0;
  MoeGate::Hooks h2 = hooks;
  h2.small_check = [](bool) { return std::string(); };
  h2.grouped_agrees = [&]() -> std::string {
    ++agree2;
    throw Unsupported("cublasGemmGroupedBatchedEx", "CUBLAS_STATUS_NOT_SUPPORTED");
  };
  ref_calls = 0;
  g2.new_shape();
  CHECK_THROWS_AS(g2.prepare(true, h2), Unsupported);
  CHECK_NOTHROW(g2.prepare(false, h2));
  CHECK_THROWS_AS(g2.prepare(true, h2), Unsupported);
  CHECK(agree2 == 2);
  CHECK(ref_calls == 1);
  // a failed loop reference (top-k mismatch) fails both implementations of that shape only
  MoeGate g3;
  MoeGate::Hooks h3 = h2;
  bool bad_shape = true;
  h3.loop_reference = [&]() {
    return bad_shape ? std::string("top-k experts: 1 of 8192 differ") : std::string();
  };
  h3.grouped_agrees = [] { return std::string(); };
  g3.new_shape();
  CHECK_THROWS_AS(g3.prepare(false, h3), ValidationFailure);
  CHECK_THROWS_AS(g3.prepare(true, h3), ValidationFailure);
  bad_shape = false;
  g3.new_shape();
  CHECK_NOTHROW(g3.prepare(false, h3));
  CHECK_NOTHROW(g3.prepare(true, h3));
}

TEST_CASE("partial results: a row the loader rejects is dropped with a note, the rest is written") {
  ftcost::Calibration c = ftcost::test::synthetic_calibration();
  const std::size_t gemm_rows = c.measurements.gemm.size();
  c.measurements.gemm[3].tflops.median = -1;      // rejected: must be > 0
  c.measurements.adamw[0].bytes_per_param = 999;  // rejected: not bytes_moved / params
  const std::string path = tmpdir() + "/partial.json";
  WriteOutcome w = check_drop_and_write(c, path);
  REQUIRE(w.status.ok());
  REQUIRE(w.dropped.size() == 2);
  CHECK(w.dropped[0].find("dropped measurements.gemm[3] (") == 0);
  CHECK(w.dropped[0].find("tflops_median") != std::string::npos);
  CHECK(w.dropped[1].find("dropped measurements.adamw[0]") == 0);
  CHECK(c.meta.partial);
  auto back = ftcost::parse_calibration(slurp(path), path);
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().to_string()));
  CHECK(back.value().measurements.gemm.size() == gemm_rows - 1);
  CHECK(back.value().meta.partial);
  bool noted = false;
  for (const auto& n : back.value().meta.notes) noted = noted || n.find("dropped measurements.gemm[3]") == 0;
  CHECK(noted);
  // a problem outside the rows (the device block) is not dropped: nothing written
  ftcost::Calibration d = ftcost::test::synthetic_calibration();
  d.device.sm_count = -5;
  const std::string bad = tmpdir() + "/bad-device.json";
  WriteOutcome wb = check_drop_and_write(d, bad);
  CHECK_FALSE(wb.status.ok());
  CHECK(wb.dropped.empty());
  struct stat st;
  CHECK(::stat(bad.c_str(), &st) != 0);
}

TEST_CASE("fail fast: the output folder is checked before measuring, with a fallback to here") {
  std::string note;
  auto ok = choose_output_path(tmpdir() + "/x.json", &note);
  REQUIRE(ok.ok());
  CHECK(ok.value() == tmpdir() + "/x.json");
  CHECK(note.empty());
  // no probe file is left behind
  struct stat st;
  CHECK(::stat((tmpdir() + "/x.json").c_str(), &st) != 0);
  // a folder that does not exist: the same name here, with a message
  char cwd[4096];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(::chdir(tmpdir().c_str()) == 0);
  auto fb = choose_output_path("/nonexistent-ftcost/dir/cal.json", &note);
  REQUIRE(::chdir(cwd) == 0);
  REQUIRE(fb.ok());
  CHECK(fb.value() == "cal.json");
  CHECK(note.find(
            "--out /nonexistent-ftcost/dir/cal.json: cannot create a file in /nonexistent-ftcost/dir") == 0);
  CHECK(note.find("current directory") != std::string::npos);
  // a file where a folder should be
  std::ofstream(tmpdir() + "/plainfile") << "x";
  note.clear();
  auto nd = choose_output_path(tmpdir() + "/plainfile/cal.json", &note);
  REQUIRE(nd.ok());
  CHECK(nd.value() == "cal.json");
  // a folder name is not a file name
  auto dir = choose_output_path(tmpdir() + "/", &note);
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().field == "--out");
}

TEST_CASE("fp8 GEMMs are planned with and without fast accumulation, and rows say which") {
  DeviceFacts h100{9, 0, 85045460992ull, 52428800, 132};
  Plan plan = make_plan(Mode::quick, h100, {"gemm"});
  int fp8_plain = 0, fp8_fast = 0, other_fast = 0;
  for (const GemmSpec& g : plan.gemm) {
    if (g.dtype == "fp8_e4m3") (g.fast_accum ? fp8_fast : fp8_plain)++;
    if (g.dtype != "fp8_e4m3" && g.fast_accum) ++other_fast;
    CHECK(g.row().fast_accum == g.fast_accum);
    if (g.fast_accum) CHECK(g.label().find("fp8_e4m3 fast_accum") != std::string::npos);
  }
  CHECK(fp8_plain == 2);  // 4096 and 8192
  CHECK(fp8_fast == fp8_plain);
  CHECK(other_fast == 0);
  DeviceFacts a100{8, 0, 42505273344ull, 41943040, 108};
  for (const GemmSpec& g : make_plan(Mode::quick, a100, {"gemm"}).gemm) CHECK(g.dtype != "fp8_e4m3");
}

TEST_CASE("exit codes at the end of a run: 0 written, 4 rows dropped, 1 failures or stopped, 130 cancelled") {
  std::FILE* sink = std::tmpfile();
  REQUIRE(sink != nullptr);
  auto run = [&](ftcost::Calibration c, const std::string& name, const std::string& fatal, int failures,
                 bool cancelled) {
    return write_and_exit_code(c, tmpdir() + "/" + name, fatal, failures, cancelled, sink, sink);
  };
  ftcost::Calibration good = ftcost::test::synthetic_calibration();
  CHECK(run(good, "ok.json", "", 0, false) == 0);
  ftcost::Calibration bad_row = good;
  bad_row.measurements.gemm[1].tflops.median = -3;
  CHECK(run(bad_row, "dropped.json", "", 0, false) == kExitPartialRows);
  CHECK(ftcost::parse_calibration(slurp(tmpdir() + "/dropped.json"), "x").value().meta.partial);
  CHECK(run(good, "failed.json", "", 2, false) == 1);
  CHECK(run(good, "stopped.json", "error in gemm: cudaErrorIllegalAddress", 0, false) == 1);
  CHECK(ftcost::parse_calibration(slurp(tmpdir() + "/stopped.json"), "x").value().meta.partial);
  CHECK(run(good, "cancelled.json", "", 0, true) == 130);
  CHECK(run(bad_row, "cancelled-and-dropped.json", "", 0, true) == 130);  // Ctrl-C wins over dropped rows
  // nothing writable: 1, nothing left behind
  CHECK(run(good, "no/such/dir/x.json", "", 0, false) == 1);
  // a problem outside the rows: kept as FILE.rejected, exit 1
  ftcost::Calibration bad_device = good;
  bad_device.device.sm_count = -1;
  CHECK(run(bad_device, "device.json", "", 0, false) == 1);
  struct stat st;
  CHECK(::stat((tmpdir() + "/device.json").c_str(), &st) != 0);
  CHECK(::stat((tmpdir() + "/device.json.rejected").c_str(), &st) == 0);
  std::fclose(sink);
}
