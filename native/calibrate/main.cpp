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
#include <memory>
#include <optional>
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

using ftcost::Calibration;
using ftcost::calib::Launch;
using ftcost::calib::Mode;

// The command line, as parsed.
struct Args {
  bool quick = false, full = false, smoke = false, collectives = false;
  int device = 0;
  std::string out;
  std::vector<std::string> only;
};

// An exit code where the run stops before measuring, nothing where it goes on.
using Stop = std::optional<int>;

void add_options(CLI::App& app, Args& a) {
  auto* q = app.add_flag("--quick", a.quick,
                         "a subset of sizes: under 3 minutes on an H100-class GPU (the default)");
  auto* f = app.add_flag("--full", a.full, "every size and shape: under 15 minutes on an H100-class GPU");
  auto* s = app.add_flag("--smoke", a.smoke, "tiny sizes in seconds: a test of the tool, not a calibration");
  s->group("");  // hidden: for the device tests
  q->excludes(f);
  s->excludes(q);
  s->excludes(f);
  app.add_option("--device", a.device, "CUDA device index (default 0)")->check(CLI::NonNegativeNumber);
  app.add_option("--out", a.out, "output file (default: calibration-<gpu>-<UTC time>.json here)");
  app.add_option("--only", a.only,
                 "comma-separated benchmark families to run: launch, host, bandwidth, elementwise, adamw, "
                 "nf4, gemm, moe, norm, cast, pointwise, cross_entropy, lora, attention")
      ->delimiter(',');
  auto* c = app.add_flag("--collectives", a.collectives,
                         "measure NCCL collectives (all-reduce, all-gather, reduce-scatter, all-to-all, "
                         "send/recv; 8 B to 1 GiB) across this node's GPUs and the GPU-to-GPU copy matrix, "
                         "instead of the kernels; across nodes run it under mpirun, one rank per GPU");
  c->excludes(app.get_option("--only"));
}

// How this process was started (mpirun or not) against what was asked.
Stop check_launch(const Launch& launch, bool collectives) {
  if (launch.under_mpi() && !collectives) {
    say("started by " + launch.launcher + " with " + std::to_string(launch.world_size) +
        " ranks: only --collectives runs across ranks; start the kernel calibration once per GPU without "
        "mpirun");
    return 2;
  }
#ifndef FTCOST_WITH_MPI
  if (launch.world_size > 1) {
    say("started as rank " + std::to_string(launch.rank) + " of " + std::to_string(launch.world_size) +
        " by " + launch.launcher +
        ", but this build has no MPI: rebuild with -DFTCOST_CALIBRATE_MPI=ON (Open MPI) for --collectives "
        "across nodes, "
        "or run it without mpirun for one node");
    return 2;
  }
#endif
  return std::nullopt;
}

// Can this host measure? The driver through dlopen, before the CUDA runtime is touched, then the
// runtime's device count; `count` receives it.
Stop check_host(const Args& a, const Launch& launch, int* count) {
  using namespace ftcost::calib;
  {
    auto api = real_driver_api();
    const std::vector<int> wanted = a.collectives ? std::vector<int>{} : std::vector<int>{a.device};
    HostCheck hc = probe_driver(*api, CUDART_VERSION, wanted);
    if (hc.status == HostStatus::ok) {
      auto problems = load_cuda_libraries(!a.collectives, a.collectives);
      if (!problems.empty()) hc = libraries_missing(problems);
    }
    if (hc.status != HostStatus::ok) {
      say(hc.message);
      return hc.exit_code();
    }
  }
  auto n = cuda_device_count();
  if (!n.ok()) {  // the driver probe passed but the runtime disagrees
    say("no usable CUDA GPU (" + n.error().field + ": " + n.error().message + "); nothing was measured");
    return 3;
  }
  *count = n.value();
  if (a.collectives) {
    if (launch.world_size <= 1 && *count < 2) {
      say("--collectives: 1 CUDA device visible; collectives need >= 2 GPUs (or run under mpirun across "
          "nodes); nothing was measured");
      return 3;
    }
  } else if (a.device >= *count) {
    say("--device " + std::to_string(a.device) + ": there are " + std::to_string(*count) +
        " CUDA device(s), 0.." + std::to_string(*count - 1));
    return 2;
  }
  return std::nullopt;
}

// The output file: checked before minutes of measuring (only the writer, rank 0, checks it).
Stop choose_path(const std::string& gpu_name, bool writer, std::string* path) {
  if (path->empty()) *path = ftcost::calib::default_output_name(gpu_name, ftcost::calib::utc_now_iso());
  if (!writer) return std::nullopt;
  std::string note;
  auto chosen = ftcost::calib::choose_output_path(*path, &note);
  if (!chosen.ok()) {
    say(chosen.error().to_string());
    return 2;
  }
  if (!note.empty()) say(note);
  *path = chosen.value();
  return std::nullopt;
}

void fill_meta(ftcost::CalMeta& meta, Mode mode, const Args& a, const std::vector<std::string>& fams,
               int argc, char** argv) {
  using namespace ftcost::calib;
  meta.tool_version = tool_version();
  meta.git_revision = git_revision();
  meta.git_dirty = git_dirty();
  meta.created_utc = utc_now_iso();
  meta.command_line = shell_join(std::vector<std::string>(argv, argv + argc));
  meta.mode = mode_name(mode);
  meta.only = a.only.empty() ? std::vector<std::string>{} : fams;
}

void catch_signals(bool on) {
  std::signal(SIGINT, on ? on_signal : SIG_DFL);
  std::signal(SIGTERM, on ? on_signal : SIG_DFL);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --collectives: NCCL collectives and the copy matrix; under mpirun only rank 0 writes.
int run_collectives(Calibration& cal, Mode mode, const Launch& launch, int count, const std::string& path) {
  cal.meta.only = {};
  cal.meta.notes.push_back("--collectives: NCCL collectives and the GPU-to-GPU copy matrix only; no kernels");
  catch_signals(true);
  const auto c0 = std::chrono::steady_clock::now();
  ftcost::Status st = ftcost::calib::run_collectives_main(cal, mode, launch, count, &g_cancel);
  catch_signals(false);
  if (launch.rank != 0) return st.ok() ? 0 : 1;
  cal.meta.duration_s = seconds_since(c0);
  return ftcost::calib::write_and_exit_code(cal, path, st.ok() ? std::string() : st.error().to_string(), 0,
                                            g_cancel != 0, stdout, stderr);
}

// NVML, where the driver has it: clocks, power limit and the conditions at the start; nothing otherwise.
std::unique_ptr<ftcost::calib::Nvml> attach_nvml(Calibration& cal, const std::string& pci_bus_id) {
  std::unique_ptr<ftcost::calib::Nvml> nvml = ftcost::calib::Nvml::load();
  if (nvml && nvml->attach(pci_bus_id)) {
    cal.conditions.nvml = true;
    cal.device.pci_device_id = nvml->pci_device_id();
    cal.device.power_limit_w = nvml->power_limit_w();
    if (auto v = nvml->driver_version()) cal.device.driver_version = *v;
    if (!cal.device.sm_clock_max_mhz) cal.device.sm_clock_max_mhz = nvml->max_sm_clock_mhz();
    if (!cal.device.memory_clock_max_mhz) cal.device.memory_clock_max_mhz = nvml->max_memory_clock_mhz();
    if (auto n = nvml->compute_processes(); n && *n >= 1)
      cal.conditions.other_processes = *n - 1;  // less this one
    cal.conditions.start = nvml->sample();
    return nvml;
  }
  cal.meta.notes.push_back(
      "NVML (libnvidia-ml.so.1) not available: clocks, temperature, power and throttling unknown");
  return nullptr;
}

void say_plan(const ftcost::calib::DeviceInfo& di, const std::string& mode, const ftcost::calib::Plan& plan) {
  char head[256];
  std::snprintf(head, sizeof head, "%s (cc %d.%d, %d SMs, %.1f GiB), %s: %zu families, about %s",
                di.device.name.c_str(), di.device.cc_major, di.device.cc_minor, di.device.sm_count,
                static_cast<double>(di.device.memory_bytes) / 1073741824.0, mode.c_str(),
                plan.families.size(), ftcost::calib::format_duration(plan.estimate_seconds()).c_str());
  say(head);
}

// Every family of the plan, in order, until Ctrl-C or an error that stops the run (returned, empty if none).
std::string run_families(const ftcost::calib::Plan& plan, ftcost::calib::Env& env, ftcost::CalMeta& meta) {
  std::string fatal;
  for (const auto& family : plan.families) {
    if (env.cancelled()) break;
    env.set_family(family);
    try {
      ftcost::calib::run_family(family, env);
    } catch (const ftcost::calib::DeviceError& e) {
      fatal = "error in " + env.label() + ": " + e.call + " failed: " + e.what();
    } catch (const std::exception& e) {
      fatal = "error in " + env.label() + ": " + e.what();
    }
    if (!fatal.empty()) {
      meta.notes.push_back("stopped: " + fatal);
      break;
    }
  }
  return fatal;
}

// The kernel calibration of one device: the plan, NVML's watch, every family, then the file.
int run_kernels(Calibration& cal, Mode mode, const std::vector<std::string>& fams, int device,
                const ftcost::calib::DeviceInfo& info, const std::string& path) {
  using namespace ftcost::calib;
  ftcost::CalMeta& meta = cal.meta;
  Plan plan = make_plan(mode, info.facts, fams);
  for (const auto& n : plan.notes) meta.notes.push_back(n);

  try {
    gpu_init(device);
  } catch (const DeviceError& e) {
    say("cannot set up device " + std::to_string(device) + ": " + e.call + ": " + e.what());
    return 1;
  }
  std::unique_ptr<Nvml> nvml = attach_nvml(cal, info.pci_bus_id);
  NvmlMonitor monitor(nvml.get());
  say_plan(info, meta.mode, plan);

  catch_signals(true);
  Progress progress(stderr, ::isatty(2) != 0, plan.estimate_seconds());
  progress.set_total_units(1.0);
  Env env(plan, cal, &progress, &g_cancel);
  monitor.start();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string fatal = run_families(plan, env, meta);
  progress.finish();
  monitor.stop();
  monitor.fill(cal.conditions);
  if (nvml) cal.conditions.end = nvml->sample();
  gpu_shutdown();
  catch_signals(false);

  meta.duration_s = seconds_since(t0);
  return write_and_exit_code(cal, path, fatal, env.failures(), env.cancelled(), stdout, stderr);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ftcost;
  using namespace ftcost::calib;

  CLI::App app{
      "ftcost-calibrate: measure the kernels LLM fine-tuning spends its time in (GEMMs, MoE layers, "
      "NF4 dequantization, AdamW, elementwise, launches) on this GPU and write a calibration JSON"};
  Args args;
  add_options(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    say(std::string(e.what()) + " (see --help)");
    return 2;
  }
  auto fams = parse_only(args.only);
  if (!fams.ok()) {
    say(fams.error().to_string());
    return 2;
  }
  const Mode mode = args.smoke ? Mode::smoke : args.full ? Mode::full : Mode::quick;

  auto launch = detect_launch([](const char* n) { return std::getenv(n); });
  if (!launch.ok()) {
    say(launch.error().to_string());
    return 2;
  }
  if (Stop stop = check_launch(launch.value(), args.collectives)) return *stop;
  int count = 0;
  if (Stop stop = check_host(args, launch.value(), &count)) return *stop;
  auto info = describe_device(args.device);
  if (!info.ok()) {
    say("cannot describe device " + std::to_string(args.device) + ": " + info.error().to_string());
    return 1;
  }
  std::string path = args.out;
  const bool writer = launch.value().rank == 0;  // under mpirun only rank 0 writes
  if (Stop stop = choose_path(info.value().device.name, writer, &path)) return *stop;

  Calibration cal;
  cal.device = info.value().device;
  fill_meta(cal.meta, mode, args, fams.value(), argc, argv);
  if (args.collectives) return run_collectives(cal, mode, launch.value(), count, path);
  return run_kernels(cal, mode, fams.value(), args.device, info.value(), path);
}
