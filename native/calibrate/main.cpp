// ftcost-calibrate: measures the kernels LLM fine-tuning spends its time in on this GPU and writes a
// calibration JSON (schema ftcost.calibration/3) that `ftcost --calibration FILE` and the browser
// calculator load. With --collectives it measures NCCL collectives across the GPUs instead. See
// docs/calibrate.md.
//
// Exit codes (docs/calibrate.md "Exit codes"):
//   0   written, every measurement recorded
//   1   written, but a measurement failed (a CUDA/cuBLAS/NCCL error or a failed correctness check; the
//       other items ran) or an error stopped the run (marked partial); or nothing could be written
//   2   bad arguments (nothing measured)
//   3   cannot measure here: no driver, driver too old, no GPU, GPU unusable, CUDA libraries missing
//       (one line on stderr, nothing written)
//   4   written without some rows the core's loader rejected (each named in meta.notes; partial)
//   130 interrupted by Ctrl-C (what finished is written, marked partial)
#include "collectives_bench.hpp"
#include "cuda_libs.hpp"
#include "device.hpp"
#include "ftcost/calibrate/bench.hpp"
#include "ftcost/calibrate/collectives.hpp"
#include "ftcost/calibrate/driver.hpp"
#include "ftcost/calibrate/nvml.hpp"
#include "ftcost/calibrate/output.hpp"
#include "ftcost/calibrate/plan.hpp"
#include "ftcost/calibrate/progress.hpp"
#include "kernels.hpp"

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

volatile std::sig_atomic_t g_cancel = 0;

extern "C" void on_signal(int) {
  if (g_cancel) std::_Exit(130);  // second Ctrl-C: leave at once
  g_cancel = 1;
  const char msg[] =
      "\nftcost-calibrate: interrupted: finishing the current measurement, then writing what finished "
      "(Ctrl-C again to quit without writing)\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
}

void say(const std::string& line) { std::fprintf(stderr, "ftcost-calibrate: %s\n", line.c_str()); }

}  // namespace

int main(int argc, char** argv) {
  using namespace ftcost;
  using namespace ftcost::calib;

  CLI::App app{
      "ftcost-calibrate: measure the kernels LLM fine-tuning spends its time in (GEMMs, MoE layers, "
      "NF4 dequantization, AdamW, elementwise, launches) on this GPU and write a calibration JSON"};
  bool quick = false, full = false, smoke = false;
  int device = 0;
  std::string out;
  std::vector<std::string> only;
  bool collectives = false;
  auto* q =
      app.add_flag("--quick", quick, "a subset of sizes: under 3 minutes on an H100-class GPU (the default)");
  auto* f = app.add_flag("--full", full, "every size and shape: under 15 minutes on an H100-class GPU");
  auto* s = app.add_flag("--smoke", smoke, "tiny sizes in seconds: a test of the tool, not a calibration");
  s->group("");  // hidden: for the device tests
  q->excludes(f);
  s->excludes(q);
  s->excludes(f);
  app.add_option("--device", device, "CUDA device index (default 0)")->check(CLI::NonNegativeNumber);
  app.add_option("--out", out, "output file (default: calibration-<gpu>-<UTC time>.json here)");
  app.add_option("--only", only,
                 "comma-separated benchmark families to run: launch, host, bandwidth, elementwise, adamw, "
                 "nf4, gemm, moe, norm, cast, pointwise, cross_entropy, lora, attention")
      ->delimiter(',');
  auto* c = app.add_flag("--collectives", collectives,
                         "measure NCCL collectives (all-reduce, all-gather, reduce-scatter, all-to-all, "
                         "send/recv; 8 B to 1 GiB) across this node's GPUs and the GPU-to-GPU copy matrix, "
                         "instead of the kernels; across nodes run it under mpirun, one rank per GPU");
  c->excludes(app.get_option("--only"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    say(std::string(e.what()) + " (see --help)");
    return 2;
  }
  auto fams = parse_only(only);
  if (!fams.ok()) {
    say(fams.error().to_string());
    return 2;
  }
  const Mode mode = smoke ? Mode::smoke : full ? Mode::full : Mode::quick;

  // ---- can this host measure? (the driver through dlopen, before the CUDA runtime is touched) ----
  auto launch = detect_launch([](const char* n) { return std::getenv(n); });
  if (!launch.ok()) {
    say(launch.error().to_string());
    return 2;
  }
  if (launch.value().under_mpi() && !collectives) {
    say("started by " + launch.value().launcher + " with " + std::to_string(launch.value().world_size) +
        " ranks: only --collectives runs across ranks; start the kernel calibration once per GPU without "
        "mpirun");
    return 2;
  }
#ifndef FTCOST_WITH_MPI
  if (launch.value().world_size > 1) {
    say("started as rank " + std::to_string(launch.value().rank) + " of " +
        std::to_string(launch.value().world_size) + " by " + launch.value().launcher +
        ", but this build has no MPI: rebuild with -DFTCOST_CALIBRATE_MPI=ON (Open MPI) for --collectives "
        "across nodes, "
        "or run it without mpirun for one node");
    return 2;
  }
#endif
  {
    auto api = real_driver_api();
    const std::vector<int> wanted = collectives ? std::vector<int>{} : std::vector<int>{device};
    HostCheck hc = probe_driver(*api, CUDART_VERSION, wanted);
    if (hc.status == HostStatus::ok) {
      auto problems = load_cuda_libraries(!collectives, collectives);
      if (!problems.empty()) hc = libraries_missing(problems);
    }
    if (hc.status != HostStatus::ok) {
      say(hc.message);
      return hc.exit_code();
    }
  }
  auto count = cuda_device_count();
  if (!count.ok()) {  // the driver probe passed but the runtime disagrees
    say("no usable CUDA GPU (" + count.error().field + ": " + count.error().message +
        "); nothing was measured");
    return 3;
  }
  if (collectives) {
    if (launch.value().world_size <= 1 && count.value() < 2) {
      say("--collectives: 1 CUDA device visible; collectives need >= 2 GPUs (or run under mpirun across "
          "nodes); nothing was measured");
      return 3;
    }
  } else if (device >= count.value()) {
    say("--device " + std::to_string(device) + ": there are " + std::to_string(count.value()) +
        " CUDA device(s), 0.." + std::to_string(count.value() - 1));
    return 2;
  }
  const bool writer = launch.value().rank == 0;  // under mpirun only rank 0 writes
  std::string path = out;
  // ---- the output file: checked before minutes of measuring ----
  auto info = describe_device(device);
  if (!info.ok()) {
    say("cannot describe device " + std::to_string(device) + ": " + info.error().to_string());
    return 1;
  }
  if (path.empty()) path = default_output_name(info.value().device.name, utc_now_iso());
  if (writer) {
    std::string note;
    auto chosen = choose_output_path(path, &note);
    if (!chosen.ok()) {
      say(chosen.error().to_string());
      return 2;
    }
    if (!note.empty()) say(note);
    path = chosen.value();
  }

  Calibration cal;
  cal.device = info.value().device;
  CalMeta& meta = cal.meta;
  meta.tool_version = tool_version();
  meta.git_revision = git_revision();
  meta.git_dirty = git_dirty();
  meta.created_utc = utc_now_iso();
  meta.command_line = shell_join(std::vector<std::string>(argv, argv + argc));
  meta.mode = mode_name(mode);
  meta.only = only.empty() ? std::vector<std::string>{} : fams.value();

  if (collectives) {
    meta.only = {};
    meta.notes.push_back("--collectives: NCCL collectives and the GPU-to-GPU copy matrix only; no kernels");
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const auto c0 = std::chrono::steady_clock::now();
    Status st = run_collectives_main(cal, mode, launch.value(), count.value(), &g_cancel);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!writer) return st.ok() ? 0 : 1;
    meta.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    return write_and_exit_code(cal, path, st.ok() ? std::string() : st.error().to_string(), 0, g_cancel != 0,
                               stdout, stderr);
  }

  Plan plan = make_plan(mode, info.value().facts, fams.value());
  for (const auto& n : plan.notes) meta.notes.push_back(n);

  try {
    gpu_init(device);
  } catch (const DeviceError& e) {
    say("cannot set up device " + std::to_string(device) + ": " + e.call + ": " + e.what());
    return 1;
  }

  std::unique_ptr<Nvml> nvml = Nvml::load();
  if (nvml && nvml->attach(info.value().pci_bus_id)) {
    cal.conditions.nvml = true;
    cal.device.pci_device_id = nvml->pci_device_id();
    cal.device.power_limit_w = nvml->power_limit_w();
    if (auto v = nvml->driver_version()) cal.device.driver_version = *v;
    if (!cal.device.sm_clock_max_mhz) cal.device.sm_clock_max_mhz = nvml->max_sm_clock_mhz();
    if (!cal.device.memory_clock_max_mhz) cal.device.memory_clock_max_mhz = nvml->max_memory_clock_mhz();
    if (auto n = nvml->compute_processes(); n && *n >= 1)
      cal.conditions.other_processes = *n - 1;  // less this one
    cal.conditions.start = nvml->sample();
  } else {
    nvml.reset();
    meta.notes.push_back(
        "NVML (libnvidia-ml.so.1) not available: clocks, temperature, power and throttling unknown");
  }
  NvmlMonitor monitor(nvml.get());

  const bool tty = ::isatty(2) != 0;
  const DeviceInfo& di = info.value();
  char head[256];
  std::snprintf(head, sizeof head, "%s (cc %d.%d, %d SMs, %.1f GiB), %s: %zu families, about %s",
                di.device.name.c_str(), di.device.cc_major, di.device.cc_minor, di.device.sm_count,
                static_cast<double>(di.device.memory_bytes) / 1073741824.0, meta.mode.c_str(),
                plan.families.size(), format_duration(plan.estimate_seconds()).c_str());
  say(head);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  Progress progress(stderr, tty, plan.estimate_seconds());
  progress.set_total_units(1.0);
  Env env(plan, cal, &progress, &g_cancel);
  monitor.start();
  const auto t0 = std::chrono::steady_clock::now();
  std::string fatal;
  for (const auto& family : plan.families) {
    if (env.cancelled()) break;
    env.set_family(family);
    try {
      run_family(family, env);
    } catch (const DeviceError& e) {
      fatal = "error in " + env.label() + ": " + e.call + " failed: " + e.what();
    } catch (const std::exception& e) {
      fatal = "error in " + env.label() + ": " + e.what();
    }
    if (!fatal.empty()) {
      meta.notes.push_back("stopped: " + fatal);
      break;
    }
  }
  progress.finish();
  monitor.stop();
  monitor.fill(cal.conditions);
  if (nvml) cal.conditions.end = nvml->sample();
  gpu_shutdown();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  meta.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return write_and_exit_code(cal, path, fatal, env.failures(), env.cancelled(), stdout, stderr);
}
