// ftcost — will this fine-tuning job fit, how fast will it run, what will it cost.
// Exit codes: 0 ok, 2 bad input (the message names the flag or field), 1 internal error.
#include "compare_cmd.hpp"
#include "db_check_cmd.hpp"
#include "fileio.hpp"
#include "format.hpp"
#include "ftcost/calibration_share.hpp"
#include "ftcost/database.hpp"
#include "ftcost/estimate.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/options.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/parallel.hpp"
#include "ftcost/plan.hpp"
#include "ftcost/scaling.hpp"
#include "ftcost/sweep.hpp"
#include "ftcost/validate.hpp"
#include "ftcost/version.hpp"
#include "plan_cmd.hpp"
#include "report.hpp"
#include "run_cmd.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <initializer_list>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>

using namespace ftcost;
using cli::fixed;
using cli::Table;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Every input file (model/GPU/calibration JSON, --points CSV, reference rows, stack profiles): regular files
// only, at most 8 MiB (fileio.hpp).
Result<std::string> read_file(const std::string& path) { return cli::read_regular_file(path); }

long today_days() { return static_cast<long>(std::time(nullptr) / 86400); }

int fail(const Error& e) {
  std::cerr << "ftcost: error: " << cli::printable(e.to_string()) << "\n";
  return e.exit_code();
}

void print_json(const json& j) { std::cout << j.dump(2) << "\n"; }

// A number validator whose message says what is allowed (CLI11's built-in ranges print DBL_MAX).
CLI::Validator number_in(double lo, double hi, const std::string& what) {
  return CLI::Validator(
      [lo, hi, what](std::string& s) -> std::string {
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        // decimal notation only: strtod also takes hex ("0x10"), "inf" and "nan"
        const bool plain = s.find_first_not_of("0123456789.eE+-") == std::string::npos;
        if (s.empty() || !plain || end == nullptr || *end != '\0' || !std::isfinite(v))
          return "must be a number, got \"" + s + "\"";
        if (v < lo || v > hi) return "must be " + what + ", got " + s;
        return std::string();
      },
      what);
}

std::string gib(double bytes) { return fixed(bytes / kGiB, 2); }

// ---------------------------------------------------------------- estimate
int print_estimate(const Estimate& e) {
  const Inputs& in = e.in;
  const Workload& w = in.workload;
  const ModelSpec& m = in.model;
  std::cout << "ftcost estimate: " << cli::printable(m.display_name) << " on " << cli::printable(in.gpu.name)
            << " — " << method_name(w.method);
  if (m.is_moe())
    std::cout << ", " << (w.moe == MoeMode::sparse ? "sparse" : "dense") << " MoE (" << w.active_experts(m)
              << " of " << m.moe.experts << " experts)";
  std::cout << "\n";
  std::cout << "stack: " << in.stack.id << " — " << in.stack.display_name
            << (in.stack.version.empty() ? std::string() : " [" + in.stack.version + "]") << "\n";
  if (in.calibration) {
    // which calibration, and whether it is synthetic or partial (decided from the file's own fields)
    const std::string flags = calibration_flags_text(calibration_flags(*in.calibration));
    std::cout << "calibration: " << cli::printable(in.calibration_source) << " ("
              << cli::printable(in.calibration->device.name) << ", fingerprint "
              << calibration_fingerprint(*in.calibration) << ")\n";
    if (!flags.empty()) std::cout << "! calibration is " << cli::printable(flags) << "\n";
  }
  if (!in.defaults.empty()) {
    std::cout << "defaults:";
    for (const auto& d : in.defaults) std::cout << "\n  " << d;
    std::cout << "\n";
  }
  std::cout << "\nparameters: " << cli::human_count(static_cast<double>(m.params().total())) << " total, "
            << cli::human_count(static_cast<double>(m.active_params(m.is_moe() ? w.active_experts(m) : 0)))
            << " active per token, " << cli::human_count(e.params.trainable) << " trainable\n";
  std::cout << "memory at batch " << e.batch << " × " << fixed(e.max_batch.seq_len, 0)
            << " tokens (peak, GiB):\n";
  const MemoryBreakdown& mb = e.memory;
  Table t({"component", "GiB"}, {false, true});
  auto add = [&](const char* name, double bytes) {
    if (bytes > 0) t.row({name, gib(bytes)});
  };
  add("weights", mb.weights);
  add("trainable params (adapters)", mb.trainable_params);
  add("gradients", mb.gradients);
  add("optimizer states", mb.optimizer_states);
  add("autocast weight copies", mb.autocast_copies);
  add("activations", mb.activations);
  add("logits + loss", mb.logits);
  add("dequant buffers", mb.dequant_buffers);
  add("CUDA context", mb.cuda_context);
  add("allocator overhead", mb.allocator_overhead);
  t.row({mb.phased ? "peak (not the sum: see below)" : "total", gib(mb.total())});
  t.row({"usable on " + cli::printable(in.gpu.id), gib(e.max_batch.usable_bytes)});
  std::cout << t.str();
  if (mb.phased) {
    const MemoryBreakdown::Phases ph = mb.phases();
    const std::string at = mb.peak_phase();
    auto mark = [&](const char* name) { return at == name ? " GiB (peak)" : " GiB"; };
    std::cout << "peak over the step (gradients exist only after the forward, logits and recompute never "
                 "together):\n  end of forward + loss "
              << gib(ph.forward_loss) << mark("forward_loss") << "; start of backward "
              << gib(ph.backward_start) << mark("backward_start") << "; end of backward "
              << gib(ph.backward_end) << mark("backward_end") << "\n";
  }
  if (in.stack.memory_uncertainty_fraction > 0)
    std::cout << "memory range: " << gib(e.memory_low) << "-" << gib(e.memory_high)
              << " GiB (stack uncertainty ±" << fixed(in.stack.memory_uncertainty_fraction * 100, 0)
              << "% of activations, loss, allocator); free " << gib(e.max_batch.usable_bytes - mb.total())
              << " GiB\n";
  if (mb.host_offload > 0)
    std::cout << "host RAM: " << gib(mb.host_offload) << " GiB of offloaded checkpoints (pinned), "
              << fixed(e.step.offload_pcie_s, 3) << " s of PCIe copies per step, overlapped with compute\n";
  std::cout << "\nmax batch size: " << e.max_batch.batch << " (padded length "
            << fixed(e.max_batch.seq_len, 0) << " tokens; " << gib(e.max_batch.per_sample_bytes)
            << " GiB per sample)\n";
  std::cout << "longest sequence at batch 1: " << fixed(e.max_seq.seq_len, 0) << " tokens\n";
  if (e.batch > e.max_batch.batch && e.max_batch.batch > 0) {
    // An explicit --batch that does not fit: no step time, throughput, time or cost is a result.
    std::cout << "does not fit at batch " << e.batch << ": the maximum on " << in.gpu.id << " is "
              << e.max_batch.batch << "; step time, throughput, time and cost are not estimated (use --batch "
              << e.max_batch.batch << " or --batch max)\n";
  } else if (e.batch > 0) {
    std::cout << "step time: " << fixed(e.step.total_s, 3) << " s at batch " << e.batch << " ("
              << e.step.model << ", ±" << fixed(e.step.range_fraction * 100, 0) << "%)\n";
    if (e.step.model == "step-model") {
      const double tot = e.step.total_s;
      auto pct = [&](double v) { return fixed(100.0 * v / (tot > 0 ? tot : 1), 0) + "%"; };
      Table st({"stage", "s", "share"}, {false, true, true});
      for (int i = 0; i < kStages; ++i) {
        double v = e.step.by_stage[static_cast<std::size_t>(i)];
        if (v > 0) st.row({stage_name(static_cast<Stage>(i)), fixed(v, 3), pct(v)});
      }
      std::cout << st.str();
      Table lt({"layer type", "device s"}, {false, true});
      for (int i = 0; i < kLayerTypes; ++i) {
        double v = e.step.by_layer[static_cast<std::size_t>(i)];
        if (v > 0) lt.row({layer_type_name(static_cast<LayerType>(i)), fixed(v, 3)});
      }
      Table kt({"kernel class", "device s"}, {false, true});
      for (int i = 0; i < kKernelClasses; ++i) {
        double v = e.step.by_class[static_cast<std::size_t>(i)];
        if (v > 0) kt.row({kernel_class_name(static_cast<KernelClass>(i)), fixed(v, 3)});
      }
      std::cout << lt.str() << kt.str();
      std::cout << "device busy " << fixed(e.step.gpu_s, 3) << " s, host-bound wait "
                << fixed(e.step.host_s, 3) << " s, " << cli::group_thousands(e.step.kernels)
                << " kernel launches per step"
                << (e.step.calibrated ? " (calibrated)" : " (spec efficiencies, no calibration)") << "\n";
      std::cout << "range dominated by: " << e.step.dominant_uncertainty << "\n";
    }
    std::cout << "throughput: " << fixed(e.throughput_qps, 3) << " queries/s [" << fixed(e.throughput_low, 3)
              << "–" << fixed(e.throughput_high, 3) << "], " << fixed(e.throughput_tps, 0) << " tokens/s\n";
    std::cout << "time: " << cli::duration(e.time_hours) << " for " << cli::group_thousands(w.queries)
              << " queries × " << fixed(w.epochs, w.epochs == std::floor(w.epochs) ? 0 : 2) << " epochs\n";
    if (e.has_price) {
      std::cout << "cost: " << cli::money(e.chosen.cost_usd) << " [" << cli::money(e.chosen.cost_low) << "–"
                << cli::money(e.chosen.cost_high) << "] at $" << fixed(e.chosen.price.usd_per_hour, 2)
                << "/GPU-h (" << e.chosen.price.provider
                << (e.chosen.price.date.empty() ? "" : ", " + e.chosen.price.date) << ")\n";
    }
    if (!e.costs.empty()) {
      std::cout << "\nproviders for " << in.gpu.id << ":\n";
      Table pt({"provider", "kind", "$/GPU-h", "date", "cost", "note"},
               {false, false, true, false, true, false});
      for (std::size_t i = 0; i < e.costs.size(); ++i) {
        const auto& c = e.costs[i];
        std::string note = i == 0 ? "cheapest" : "";
        if (c.price.stale)
          note +=
              std::string(note.empty() ? "" : ", ") + "stale (" + std::to_string(c.price.age_days) + " days)";
        if (c.price.date.empty()) note += std::string(note.empty() ? "" : ", ") + "undated";
        pt.row({c.price.provider, c.price.spot ? "spot" : "on-demand", fixed(c.price.usd_per_hour, 2),
                c.price.date.empty() ? "-" : c.price.date, cli::money(c.cost_usd), note});
      }
      std::cout << pt.str();
    }
  }
  for (const auto& wmsg : e.warnings) std::cout << "warning: " << cli::printable(wmsg) << "\n";
  return 0;
}

// ---------------------------------------------------------------- estimate on more than one GPU
int print_parallel(const ParallelEstimate& p) {
  const Inputs& in = p.single.in;
  std::cout << "parallel: " << p.strategy_label << " on " << p.plan.ranks() << " x " << in.gpu.id << " ("
            << p.plan.gpus_per_node << " per node x " << p.plan.nodes << " node"
            << (p.plan.nodes > 1 ? "s" : "")
            << (p.plan.node_id.empty() ? std::string() : ", " + p.plan.node_id) << "), data parallel " << p.dp
            << ", offload " << offload_name(p.plan.offload) << "\n";
  std::cout << "links: intra-node " << link_kind_name(p.plan.intra.kind) << " "
            << fixed(p.plan.intra.busbw_gbps, 1) << " GB/s bus bandwidth (" << p.plan.intra.note << ")\n";
  if (p.plan.nodes > 1)
    std::cout << "       network " << link_kind_name(p.plan.inter.kind) << " "
              << fixed(p.plan.inter.busbw_gbps, 1) << " GB/s per GPU (" << p.plan.inter.note << ")\n";
  const MemoryBreakdown& b = p.memory.base;
  std::cout << "memory per rank at micro-batch " << p.micro_batch << " x " << fixed(p.seq_len, 0)
            << " tokens (peak, GiB):\n";
  const std::pair<const char*, double> rows[] = {{"weights", b.weights},
                                                 {"trainable params (adapters)", b.trainable_params},
                                                 {"gradients", b.gradients},
                                                 {"fp32 gradient partition", p.memory.fp32_grad_partition},
                                                 {"optimizer states", b.optimizer_states},
                                                 {"autocast weight copies", b.autocast_copies},
                                                 {"all-gather / prefetch buffers", p.memory.gather_buffers},
                                                 {"gradient buckets", p.memory.bucket_buffers},
                                                 {"NCCL buffers", p.memory.nccl_buffers},
                                                 {"activations", b.activations},
                                                 {"logits + loss", b.logits},
                                                 {"dequantization buffers", b.dequant_buffers},
                                                 {"CUDA context", b.cuda_context},
                                                 {"allocator overhead", b.allocator_overhead}};
  for (const auto& [name, bytes] : rows)
    if (bytes > 0)
      std::cout << "  " << std::left << std::setw(30) << name << std::right << std::setw(8) << gib(bytes)
                << "\n";
  std::cout << "  " << std::left << std::setw(30) << "total" << std::right << std::setw(8)
            << gib(p.memory.total()) << "\n";
  std::cout << "  " << std::left << std::setw(30) << ("usable on " + in.gpu.id) << std::right << std::setw(8)
            << gib(p.usable_bytes) << "\n";
  if (p.memory.host_bytes > 0)
    std::cout << "  host RAM per rank (offload): " << gib(p.memory.host_bytes) << " GiB\n";
  if (p.deepspeed.gpu_bytes > 0)
    std::cout << "  DeepSpeed's own estimator, model states: "
              << gib(static_cast<double>(p.deepspeed.gpu_bytes)) << " GiB per GPU, "
              << gib(static_cast<double>(p.deepspeed.cpu_bytes)) << " GiB host per node\n";
  std::cout << "max micro-batch per GPU: " << p.max_micro_batch << "; global batch " << p.global_batch
            << "\n";
  if (p.micro_batch > 0) {
    std::cout << "communication per optimizer step:\n";
    for (const auto& c : p.comm)
      std::cout << "  " << std::left << std::setw(48) << c.name << std::right << " " << coll_op_name(c.op)
                << " x" << fixed(c.calls, 0) << " on " << c.ranks << " (" << c.scope
                << "): " << fixed(c.time_s * 1e3, 1) << " ms, exposed " << fixed(c.exposed_s * 1e3, 1)
                << " ms  # " << c.overlap << "\n";
    std::cout << "step: " << fixed(p.step_s, 3) << " s = compute " << fixed(p.compute_s, 3) << " + optimizer "
              << fixed(p.optimizer_s, 3) << " + exposed communication " << fixed(p.comm_exposed_s, 3)
              << " (of " << fixed(p.comm_s, 3) << ")\n";
    std::cout << "throughput: " << fixed(p.throughput_qps, 3) << " queries/s, "
              << cli::group_thousands(p.throughput_tps) << " tokens/s";
    if (p.scaling_efficiency > 0)
      std::cout << " (scaling efficiency " << fixed(p.scaling_efficiency * 100, 0) << "%)";
    std::cout << "\ntime: " << fixed(p.time_hours, p.time_hours < 10 ? 2 : 1) << " h\n";
    if (p.usd_per_gpu_hour > 0)
      std::cout << "cost: $" << fixed(p.cost_usd, 2) << " at $" << fixed(p.usd_per_gpu_hour, 2) << "/GPU-h x "
                << p.plan.ranks() << " GPUs (" << p.price_provider << ")\n";
  }
  for (const auto& y : p.why) std::cout << "why: " << y << "\n";
  for (const auto& wmsg : single_gpu_warnings(p)) std::cout << "warning: " << wmsg << "\n";
  for (const auto& wmsg : p.warnings) std::cout << "warning: " << wmsg << "\n";
  return 0;
}

// ---------------------------------------------------------------- bench
int run_bench(int iterations, bool as_json) {
  // Parsing and checking the embedded database (what the browser does once at start-up).
  const auto db_files = Database::embedded_files();
  const auto tp0 = std::chrono::steady_clock::now();
  const int db_rounds = 20;
  std::size_t db_items = 0;
  for (int i = 0; i < db_rounds; ++i) db_items += Database::from_files(db_files).gpus().size();
  const double db_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp0).count() / db_rounds;
  const Database& db = Database::embedded();
  Request req = {{"model", "mixtral-8x7b"},
                 {"gpu", "a40"},
                 {"method", "qlora"},
                 {"dataset", "math14k"},
                 {"batch", "max"}};
  auto in = resolve_request(req, db, nullptr, today_days());
  if (!in.ok()) return fail(in.error());
  double sink = 0;
  // warm-up
  for (int i = 0; i < 100; ++i) sink += estimate(in.value(), db).value().throughput_qps;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) sink += estimate(in.value(), db).value().throughput_qps;
  auto t1 = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(t1 - t0).count();
  // Full path: parse the request and resolve presets each time (what the web UI does per cell).
  auto t2 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    auto r = resolve_request(req, db, nullptr, today_days());
    sink += estimate(r.value(), db).value().throughput_qps;
  }
  auto t3 = std::chrono::steady_clock::now();
  double secs_full = std::chrono::duration<double>(t3 - t2).count();
  // All GPUs x batch sizes 1..max (a UI table)
  auto t4 = std::chrono::steady_clock::now();
  long cells = 0;
  for (const auto& [id, g] : db.gpus()) {
    Inputs x = in.value();
    x.gpu = g;
    for (int b = 1; b <= 32; ++b) {
      x.workload.batch = b;
      sink += estimate(x, db).value().throughput_qps;
      ++cells;
    }
  }
  auto t5 = std::chrono::steady_clock::now();
  double table_ms = std::chrono::duration<double, std::milli>(t5 - t4).count();
  // One multi-GPU estimate (budget 200 µs): Mixtral-8x7B QLoRA on two DGX H100 nodes, FSDP, and the same
  // with --parallel auto (every strategy evaluated).
  Request mreq = req;
  mreq["gpu"] = "h100-sxm5-80gb";
  auto min = resolve_request(mreq, db, nullptr, today_days());
  if (!min.ok()) return fail(min.error());
  auto mplan =
      plan_from_json(json{{"node", "dgx-h100"}, {"nodes", 2}, {"parallel", "fsdp"}}, min.value(), db);
  if (!mplan.ok()) return fail(mplan.error());
  ParallelPlan aplan = mplan.value();
  aplan.choose = true;
  const int miters = std::max(1, iterations / 4);
  for (int i = 0; i < 20; ++i)
    sink += estimate_parallel(min.value(), mplan.value(), db).value().throughput_qps;
  auto t6 = std::chrono::steady_clock::now();
  for (int i = 0; i < miters; ++i)
    sink += estimate_parallel(min.value(), mplan.value(), db).value().throughput_qps;
  auto t7 = std::chrono::steady_clock::now();
  for (int i = 0; i < miters; ++i) sink += estimate_parallel(min.value(), aplan, db).value().throughput_qps;
  auto t8 = std::chrono::steady_clock::now();
  const double per_multi = std::chrono::duration<double>(t7 - t6).count() / miters * 1e6;
  const double per_auto = std::chrono::duration<double>(t8 - t7).count() / miters * 1e6;
  // The whole plan search over the shipped database (budget 50 ms native, issue #18): the paper's job
  // (Mixtral-8x7B QLoRA, math14k, 15,000 queries x 10 epochs) and a Llama-3.1-8B LoRA job; median of runs.
  auto plan_ms = [&](const Request& job, long* front, long* estimates) {
    std::vector<double> t;
    const int runs = std::max(3, std::min(15, iterations / 2000));
    for (int i = 0; i < runs; ++i) {
      auto r = plan(job, PlanConstraints{}, db, nullptr, today_days());
      if (!r.ok()) return -1.0;
      t.push_back(r->search_ms);
      *front = static_cast<long>(r->front.size());
      *estimates = r->estimates;
      sink += r->front.empty() ? 0 : r->front.front().cost_usd;
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  long paper_front = 0, paper_est = 0, llama_front = 0, llama_est = 0;
  const double plan_paper_ms = plan_ms({{"model", "mixtral-8x7b"},
                                        {"method", "qlora"},
                                        {"dataset", "math14k"},
                                        {"queries", "15000"},
                                        {"epochs", "10"},
                                        {"stack", "hf-transformers-2024"}},
                                       &paper_front, &paper_est);
  const double plan_llama_ms = plan_ms({{"model", "llama-3.1-8b"},
                                        {"method", "lora"},
                                        {"dataset", "math14k"},
                                        {"queries", "15000"},
                                        {"epochs", "3"},
                                        {"stack", "hf-trl-2026"}},
                                       &llama_front, &llama_est);
  // `ftcost compare` over every instance shape (the calculator recomputes it on every input change):
  // Mixtral QLoRA, every offer's instance, --parallel auto on the multi-GPU ones.
  Request creq = req;
  creq.erase("gpu");
  const int citers = std::max(1, iterations / 4000);
  auto t9 = std::chrono::steady_clock::now();
  std::size_t compare_rows = 0;
  for (int i = 0; i < citers; ++i) {
    auto rows = compare_gpus(creq, db, nullptr, today_days());
    if (!rows.ok()) return fail(rows.error());
    compare_rows = rows.value().size();
    sink += static_cast<double>(compare_rows);
  }
  auto t10 = std::chrono::steady_clock::now();
  const double compare_ms = std::chrono::duration<double, std::milli>(t10 - t9).count() / citers;
  double per = secs / iterations * 1e6, per_full = secs_full / iterations * 1e6;
  if (as_json) {
    print_json(json{{"iterations", iterations},
                    {"estimate_us", per},
                    {"estimates_per_s", 1e6 / per},
                    {"resolve_and_estimate_us", per_full},
                    {"gpu_by_batch_table_cells", cells},
                    {"gpu_by_batch_table_ms", table_ms},
                    {"database_parse_ms", db_ms},
                    {"multi_gpu_estimate_us", per_multi},
                    {"multi_gpu_auto_estimate_us", per_auto},
                    {"plan_paper_job_ms", plan_paper_ms},
                    {"plan_paper_job_estimates", paper_est},
                    {"plan_llama_lora_job_ms", plan_llama_ms},
                    {"plan_llama_lora_job_estimates", llama_est},
                    {"compare_shapes_ms", compare_ms},
                    {"compare_shapes_rows", compare_rows},
                    {"checksum", sink + static_cast<double>(db_items)}});
  } else {
    std::cout << "ftcost bench: Mixtral-8x7B QLoRA on A40, math14k, batch=max (" << iterations
              << " iterations)\n";
    std::cout << "  estimate():                 " << fixed(per, 2) << " µs  ("
              << cli::group_thousands(1e6 / per) << " estimates/s)\n";
    std::cout << "  resolve_request()+estimate(): " << fixed(per_full, 2) << " µs\n";
    std::cout << "  " << cells << "-cell GPU × batch table:  " << fixed(table_ms, 2)
              << " ms (budget: one 60 fps frame, 16.7 ms)\n";
    std::cout << "  embedded database parse + check: " << fixed(db_ms, 2) << " ms (" << db_files.size()
              << " files; once at start-up)\n";
    std::cout << "  multi-GPU estimate (2x DGX H100, FSDP): " << fixed(per_multi, 2)
              << " µs (budget 200 µs)\n";
    std::cout << "  multi-GPU --parallel auto (all strategies): " << fixed(per_auto, 2) << " µs\n";
    std::cout << "  plan search, paper job (Mixtral-8x7B QLoRA, math14k, 15,000 x 10): "
              << fixed(plan_paper_ms, 1) << " ms, " << paper_est << " estimates, " << paper_front
              << " plans on the front (budget 50 ms)\n";
    std::cout << "  plan search, Llama-3.1-8B LoRA (hf-trl-2026, math14k, 15,000 x 3): "
              << fixed(plan_llama_ms, 1) << " ms, " << llama_est << " estimates, " << llama_front
              << " plans on the front (budget 50 ms)\n";
    std::cout << "  compare over every instance shape (" << compare_rows << " rows): " << fixed(compare_ms, 2)
              << " ms\n";
    if (db_items == 0) std::cout << "  (no GPUs in the database)\n";
  }
  return 0;
}

int run_command(int argc, char** argv);

}  // namespace

// What a command printed reaches its reader, or the command fails: a full disk or a closed stdout is an
// error, not exit 0 with an empty file.
int main(int argc, char** argv) {
  cli::capture_stdout();
  const int rc = run_command(argc, argv);
  auto flushed = cli::flush_stdout();
  if (!flushed.ok()) {
    std::cerr << "ftcost: error: " << flushed.error().message << "\n";
    return rc != 0 ? rc : 2;
  }
  return rc;
}

namespace {

int run_command(int argc, char** argv) {
  try {
    CLI::App app{
        "ftcost — will an LLM fine-tuning job fit on a GPU, how fast does it run, what does it cost"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("ftcost ") + kVersion);
    bool as_json = false;

    // estimate
    Request req;
    auto* est = app.add_subcommand("estimate",
                                   "Memory, maximum batch, throughput, time and cost of one fine-tuning job");
    // The job's flags on a command, each stored under its name in `into`; `skip` names flags the command
    // does not take (it chooses that value itself).
    // Flags and help lines come from the option table (core/src/options.cpp).
    const Database& help_db = Database::embedded();
    auto add_job_options = [&help_db](CLI::App* cmd, Request& into, std::initializer_list<std::string> skip) {
      for (const auto& o : job_options()) {
        const std::string key = o.key;
        if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
        cmd->add_option_function<std::string>(
            o.flag(), [&into, key](const std::string& v) { into[key] = v; }, option_help_text(o, &help_db));
      }
    };
    add_job_options(est, req, {});
    auto* est_json = est->add_flag("--json", as_json, "print one JSON object");
    bool est_csv = false;
    est->add_flag("--csv", est_csv, "print the same fields as CSV rows: field,value")->excludes(est_json);
    std::string vs_spec;
    auto* est_vs =
        est->add_option("--vs", vs_spec,
                        "Compare with the same job changed: KEY=VALUE[,KEY=VALUE] (job options without "
                        "--, e.g. method=lora or gpu=h100-sxm5-80gb,lora-rank=64): memory, time and "
                        "cost of both side by side");
    est_vs->excludes("--csv");

    // sweep: the estimate's flags but --batch (every batch size up to beyond the maximum)
    Request sreq;
    bool sweep_json = false, sweep_csv = false;
    int sweep_points = 36;
    auto* swp =
        app.add_subcommand("sweep", "Throughput, step time and memory of one job against the batch size");
    add_job_options(swp, sreq, {"batch"});
    swp->add_option("--points", sweep_points,
                    "about this many batch sizes, log-spaced when the range is larger")
        ->check(CLI::Range(2, 1000));
    auto* swp_json = swp->add_flag("--json", sweep_json, "print JSON");
    swp->add_flag("--csv", sweep_csv, "print CSV")->excludes(swp_json);

    // compare: the same flags but --gpu (every GPU) and the price choice (every offer)
    Request creq;
    cli::CompareOptions copt;
    auto* cmp = app.add_subcommand(
        "compare",
        "The same job on every rentable instance shape (each offer's GPUs, several instances where the offer "
        "names its network): fits, strategy, speed, time, cost; cheapest first");
    add_job_options(cmp, creq, {"gpu", "provider", "price-per-hour", "calibration", "run", "spot"});
    cmp->add_option_function<std::string>(
           "--spot", [&copt](const std::string& v) { copt.view.spot = v == "on"; },
           "on | off: include spot (interruptible) offers (default off)")
        ->check(CLI::IsMember({"on", "off"}));
    cmp->add_flag("--offers", copt.view.offers, "list every price offer, not only each GPU's cheapest");
    cmp->add_flag("--fits-only", copt.view.fits_only, "hide GPUs where the job does not fit");
    cmp->add_option("--max-gpus", copt.max_gpus,
                    "rank instance shapes of at most this many GPUs in all (default 64); --gpus N keeps "
                    "instances of N GPUs, --nodes M shapes of M instances")
        ->check(CLI::Range(1, 4096));
    auto* cmp_json = cmp->add_flag("--json", copt.as_json, "print JSON");
    cmp->add_flag("--csv", copt.as_csv, "print CSV")->excludes(cmp_json);

    // plan: the job's flags but what the search chooses (GPU, shape, strategy, batch, price), and the plan's
    // constraint flags (plan_constraint_keys(): --gpus and --spot are constraints here)
    Request preq;
    cli::PlanCmdOptions popt;
    auto* pln = app.add_subcommand(
        "plan",
        "Search GPU x shape x strategy x method x batch: the time/cost front, the best plan, its config");
    {
      std::vector<std::string> skip = plan_chosen_keys();
      for (const auto& k : plan_constraint_keys()) skip.push_back(k.key);
      for (const auto& o : job_options()) {
        if (std::find(skip.begin(), skip.end(), o.key) != skip.end()) continue;
        const std::string key = o.key;
        pln->add_option_function<std::string>(
            o.flag(), [&preq, key](const std::string& v) { preq[key] = v; }, option_help_text(o, &help_db));
      }
      for (const auto& k : plan_constraint_keys()) {
        const std::string key = k.key;
        pln->add_option_function<std::string>(
            "--" + key, [&preq, key](const std::string& v) { preq[key] = v; }, k.help);
      }
    }
    auto* pln_json = pln->add_flag("--json", popt.as_json, "print JSON");
    pln->add_flag("--csv", popt.as_csv, "print CSV")->excludes(pln_json);
    pln->add_option(
        "--config", popt.config,
        "write the runnable config of the best plan (or --pick N) for this stack: trl, torchtune, "
        "axolotl, llamafactory, unsloth");
    pln->add_option("--out", popt.out, "file the --config is written to (companion files beside it)");
    pln->add_option("--pick", popt.pick, "the plan id (from the front) for --config")
        ->check(number_in(0, 100000, "a plan id, 0 or more"));
    // scale: the estimate's flags on 1, 2, 4, 8... GPUs
    Request screq;
    std::string scale_counts;
    bool scale_json = false, scale_csv = false;
    auto* scl = app.add_subcommand(
        "scale",
        "The job on 1, 2, 4, 8... GPUs: time, cost, throughput and scaling efficiency per GPU count");
    add_job_options(scl, screq, {"nodes"});
    scl->add_option("--counts", scale_counts,
                    "GPU counts, e.g. 1,2,4,8,16 (default 1, 2, 4... up to a node, and 2 and 4 nodes with a "
                    "network); above --gpus (GPUs per node, default 8) a count is whole nodes");
    auto* scl_json = scl->add_flag("--json", scale_json, "print JSON");
    scl->add_flag("--csv", scale_csv, "print CSV")->excludes(scl_json);

    // paper
    auto* paper_cmd = app.add_subcommand(
        "paper", "The paper's analytical model (arXiv 2408.04693): Eq. (1), Eq. (2), Table IV");
    paper_cmd->require_subcommand(1);
    auto* eq1 = paper_cmd->add_subcommand("eq1", "Eq. (1): maximum batch size from GPU memory");
    double eq1_mem = 48, eq1_seq = 512, eq1_sparsity = 0.25;
    double eq1_model_mem = -1;
    std::string eq1_model = "mixtral", eq1_coeffs = "code";
    eq1->add_option("--gpu-mem", eq1_mem, "GPU memory in GB")->check(number_in(1e-9, 1e12, "> 0"));
    eq1->add_option("--model", eq1_model, "mixtral | blackmamba")
        ->check(CLI::IsMember({"mixtral", "blackmamba"}));
    eq1->add_option("--coeffs", eq1_coeffs,
                    "Mixtral coefficients: code (C0=62, C1=0.89; reproduce Fig. 13) | paper (82, 0.95)")
        ->check(CLI::IsMember({"code", "paper"}));
    eq1->add_option("--seq", eq1_seq, "sequence length (the padded/maximum length)")
        ->check(number_in(1e-9, 1e12, "> 0"));
    eq1->add_option("--sparsity", eq1_sparsity, "fraction of experts active: 0.25 sparse, 1 dense")
        ->check(number_in(0.001, 1.0, "in (0, 1]"));
    eq1->add_option("--model-mem", eq1_model_mem, "model memory in GB (default: Table I, 23.35 / 5.6)")
        ->check(number_in(0, 1e12, ">= 0"));
    eq1->add_flag("--json", as_json, "JSON output");
    auto* eq2 =
        paper_cmd->add_subcommand("eq2", "Eq. (2): the A40 throughput fits (C2, C4, RMSE) and predictions");
    eq2->add_flag("--json", as_json, "JSON output");
    auto* t4 =
        paper_cmd->add_subcommand("table4", "Table IV: cost of fine-tuning Mixtral on A40, A100, H100");
    double t4_queries = 15000, t4_epochs = 10;
    t4->add_option("--queries", t4_queries, "queries (the table is exact with 15,000)")
        ->check(number_in(1e-9, 1e12, "> 0"));
    t4->add_option("--epochs", t4_epochs, "epochs")->check(number_in(1e-9, 1e12, "> 0"));
    t4->add_flag("--json", as_json, "JSON output");

    // fit
    auto* fit = app.add_subcommand("fit", "Fit the paper's Eq. (2) to measured (batch, throughput) points");
    std::string points_file;
    double c3 = paper::kC3Mixtral;
    fit->add_option("--points", points_file, "CSV with header batch,throughput[,sparsity]")->required();
    fit->add_option("--c3", c3, "MoE attenuation C3 (Mixtral 1.8, BlackMamba 2.5)")
        ->check(number_in(1e-9, 1e12, "between 1e-9 and 1e12"));
    fit->add_flag("--json", as_json, "JSON output");

    auto* models = app.add_subcommand("models", "List model presets");
    models->add_flag("--json", as_json, "JSON output");
    auto* gpus = app.add_subcommand("gpus", "List GPUs in the database");
    gpus->add_flag("--json", as_json, "JSON output");
    auto* validate = app.add_subcommand(
        "validate", "Predicted vs measured on every reference measurement (tests/data/reference)");
    std::string ref_dir = FTCOST_SOURCE_DIR "/tests/data/reference";
    std::string md_out, svg_out;
    validate->add_option("--dir", ref_dir, "folder of reference JSON files");
    std::string runs_dir = FTCOST_SOURCE_DIR "/gpu-db/runs";
    validate->add_option("--runs", runs_dir,
                         "folder of contributed runs (runs/<gpu-id>/*.json, ftcost.run/1): validation rows");
    validate->add_option("--markdown", md_out, "also write the report as Markdown to this file");
    validate->add_option("--svg", svg_out, "also write a predicted-vs-measured plot (SVG) to this file");
    validate->add_flag("--json", as_json, "JSON output");
    auto* fitstack = app.add_subcommand(
        "fit-stack", "Fit a stack profile's free parameters to the training reference rows");
    std::string fit_stack_id = kPaperStackId, fit_write;
    fitstack->add_option("--stack", fit_stack_id,
                         std::string("stack profile id (default: ") + kPaperStackId +
                             " for the reference rows, " + kDefaultStackId +
                             ", the estimate's default, with --run)");
    fitstack->add_option("--dir", ref_dir, "folder of reference JSON files");
    fitstack->add_option("--write", fit_write,
                         "write the fitted profile to this stack JSON file (atomically); with --run a new "
                         "user profile file");
    std::vector<std::string> fit_runs;
    fitstack->add_option("--run", fit_runs,
                         "refit to your own run(s) (ftcost.run/1 from tools/ftcost_probe.py) instead of the "
                         "reference rows");
    fitstack->add_flag("--json", as_json, "JSON output (with --run)");
    auto* db_cmd = app.add_subcommand("db", "The GPU database (gpu-db/)");
    db_cmd->require_subcommand(1);
    auto* db_check = db_cmd->add_subcommand("check",
                                            "Validate gpu-db files (schema, units, physical plausibility, "
                                            "ids, sources, calibrations); exit 2 on any problem");
    std::vector<std::string> db_paths;
    db_check->add_option(
        "paths", db_paths,
        "files or folders to check (default: the repository's gpu-db/, else the built-in database)");
    db_check->add_flag("--json", as_json, "JSON output");
    auto* bench = app.add_subcommand("bench", "Benchmark the estimator (estimates per second)");
    int iterations = 20000;
    bench->add_option("--iterations", iterations, "iterations")
        ->check(number_in(1, 1e8, "between 1 and 100000000"));
    bench->add_flag("--json", as_json, "JSON output");

    if (argc > 1 && argv[1][0] != '-') {
      const std::string cmd = argv[1];
      bool known = false;
      for (const auto* sc : app.get_subcommands({})) known = known || sc->get_name() == cmd;
      if (!known) {
        std::cerr << "ftcost: error: unknown command \"" << cmd
                  << "\"; commands: estimate, compare, plan, scale, sweep, paper, fit, validate, fit-stack, "
                     "models, gpus, db, bench\n";
        return 2;
      }
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      std::cout << app.help();
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      std::cout << app.help("", CLI::AppFormatMode::All);
      return 0;
    } catch (const CLI::CallForVersion&) {
      std::cout << "ftcost " << kVersion << "\n";
      return 0;
    } catch (const CLI::ParseError& e) {
      std::cerr << "ftcost: error: " << e.what() << "\n";
      std::cerr << "run `ftcost --help` (or `ftcost <command> --help`) for usage\n";
      return 2;
    }

    if (db_check->parsed()) return run_db_check(db_paths, as_json);
    const Database& db = Database::embedded();
    if (!db.problems().empty()) {
      for (const auto& p : db.problems())
        std::cerr << "ftcost: internal database problem: " << p.file << ": " << p.error.to_string() << "\n";
      return 1;
    }

    if (est->parsed() && est_vs->count() > 0) {
      // two jobs side by side: this one (A) and the same with --vs applied (B), through the same core path
      auto req_b = apply_vs(vs_spec, req);
      if (!req_b.ok()) return fail(req_b.error());
      auto in_a = resolve_request(req, db, read_file, today_days());
      if (!in_a.ok()) return fail(in_a.error());
      auto in_b = resolve_request(req_b.value(), db, read_file, today_days());
      if (!in_b.ok()) {
        Error e = in_b.error();
        e.message = "(--vs) " + e.message;
        return fail(e);
      }
      auto ja = estimate_job_json(in_a.value(), db);
      if (!ja.ok()) return fail(ja.error());
      auto jb = estimate_job_json(in_b.value(), db);
      if (!jb.ok()) return fail(jb.error());
      const json jobs = compare_jobs(req, ja.value(), req_b.value(), jb.value());
      if (as_json)
        print_json(jobs);
      else
        std::cout << compare_jobs_text(jobs);
      return 0;
    }

    if (est->parsed()) {
      auto in = resolve_request(req, db, read_file, today_days());
      if (!in.ok()) return fail(in.error());
      if (in->multi.active() || !in->multi.parallel.empty()) {
        auto plan = plan_from_inputs(in.value(), db);
        if (!plan.ok()) return fail(plan.error());
        auto pe = estimate_parallel(in.value(), plan.value(), db);
        if (!pe.ok()) return fail(pe.error());
        if (as_json) {
          print_json(parallel_to_json(pe.value()));
          return 0;
        }
        if (est_csv) {
          std::cout << json_to_field_csv(parallel_to_json(pe.value()));
          return 0;
        }
        if (pe->is_single) return print_estimate(pe->single);
        return print_parallel(pe.value());
      }
      auto e = estimate(in.value(), db);
      if (!e.ok()) return fail(e.error());
      if (as_json) {
        print_json(estimate_to_json(e.value()));
        return 0;
      }
      if (est_csv) {
        std::cout << json_to_field_csv(estimate_to_json(e.value()));
        return 0;
      }
      return print_estimate(e.value());
    }

    if (swp->parsed()) {
      Request r = sreq;
      r["batch"] = "max";
      auto in = resolve_request(r, db, read_file, today_days());
      if (!in.ok()) return fail(in.error());
      if (in->multi.active() || !in->multi.parallel.empty())
        return fail(
            make_error(Errc::invalid_value, in->multi.gpus * in->multi.nodes > 1 ? "--gpus" : "--offload",
                       "sweep covers one GPU; multi-GPU sweeps are not built yet (use `ftcost estimate` "
                       "with --gpus/--parallel and --batch)"));
      const Sweep sw = batch_sweep(in.value(), db, sweep_points);
      if (!sw.error.empty() && sw.points.empty()) {
        if (sw.code == Errc::does_not_fit)
          return fail(
              make_error(Errc::does_not_fit, "--gpu",
                         in.value().model.id + " does not fit on " + in.value().gpu.id + " at batch 1"));
        return fail(make_error(sw.code, "", sw.error));
      }
      if (sweep_json) {
        print_json(sweep_to_json(sw));
        return 0;
      }
      if (sweep_csv) {
        std::cout << sweep_to_csv(sw);
        return 0;
      }
      Table t({"batch", "fits", "memory GiB", "step s", "queries/s", "range", "tokens/s"},
              {true, false, true, true, true, false, true});
      for (const auto& p : sw.points)
        t.row({fixed(p.batch, 0), p.fits ? "yes" : "no", fixed(p.memory_gib, 1), fixed(p.step_s, 3),
               fixed(p.qps, 3), fixed(p.qps_low, 3) + "–" + fixed(p.qps_high, 3), fixed(p.tokens_per_s, 0)});
      std::cout << "ftcost sweep: " << cli::printable(in.value().model.id) << " on "
                << cli::printable(in.value().gpu.id) << ", maximum batch "
                << static_cast<long long>(sw.max_batch) << "\n"
                << t.str();
      return 0;
    }

    if (pln->parsed()) return cli::run_plan(preq, db, read_file, today_days(), popt);
    if (cmp->parsed()) return cli::run_compare(creq, db, read_file, today_days(), copt);

    if (scl->parsed()) {
      std::vector<int> counts;
      if (!scale_counts.empty()) {
        auto c = parse_counts(scale_counts);
        if (!c.ok()) return fail(c.error());
        counts = c.value();
      }
      auto s = scaling_series(screq, db, read_file, today_days(), counts);
      if (!s.ok()) return fail(s.error());
      if (scale_json) {
        print_json(scaling_to_json(s.value()));
        return 0;
      }
      if (scale_csv) {
        std::cout << scaling_to_csv(s.value());
        return 0;
      }
      Table t({"GPUs", "nodes", "strategy", "batch/GPU", "peak/GPU", "step", "exposed comm", "queries/s",
               "speedup", "efficiency", "time", "cost", "note"},
              {true, true, false, true, true, true, true, true, true, true, true, true, false});
      for (const auto& p : s->points) {
        if (!p.error.empty()) {
          t.row({std::to_string(p.gpus), std::to_string(p.nodes), p.strategy, "-", "-", "-", "-", "-", "-",
                 "-", "-", "-", "error: " + p.error});
          continue;
        }
        if (!p.fits) {
          t.row({std::to_string(p.gpus), std::to_string(p.nodes), p.strategy, std::to_string(p.micro_batch),
                 fixed(p.per_rank_peak_gib, 1) + " GiB", "-", "-", "-", "-", "-", "-", "-", "does not fit"});
          continue;
        }
        t.row({std::to_string(p.gpus), std::to_string(p.nodes), p.strategy, std::to_string(p.micro_batch),
               fixed(p.per_rank_peak_gib, 1) + " GiB", fixed(p.step_s, 3) + " s",
               fixed(p.comm_exposed_s, 3) + " s", fixed(p.qps, 2), fixed(p.speedup, 2) + "x",
               fixed(100 * p.efficiency, 0) + "%", cli::duration(p.hours),
               p.cost_usd > 0 ? cli::money(p.cost_usd) : "-", p.gpus == s->base_gpus ? "base" : ""});
      }
      std::cout << "ftcost scale: " << cli::printable(s->gpu) << ", " << s->node_gpus << " GPUs per node"
                << (s->network != "none" ? ", " + s->network + " between nodes" : std::string(", one node"))
                << "; efficiency = throughput per GPU against the smallest count that fits";
      if (s->usd_per_gpu_hour > 0)
        std::cout << "; $" << fixed(s->usd_per_gpu_hour, 2) << "/GPU-h (" << cli::printable(s->price_provider)
                  << ")";
      std::cout << "\n" << t.str();
      if (s->base_gpus == 0) std::cout << "the job fits on none of these GPU counts\n";
      return 0;
    }

    if (eq1->parsed()) {
      const bool mixtral = eq1_model == "mixtral";
      const paper::Eq1Coeffs c =
          mixtral ? (eq1_coeffs == "code" ? paper::kEq1MixtralCode : paper::kEq1MixtralPaper)
                  : paper::kEq1BlackMamba;
      const double mm = eq1_model_mem >= 0
                            ? eq1_model_mem
                            : (mixtral ? paper::kMixtralModelMemGB : paper::kBlackMambaModelMemGB);
      auto r = paper::eq1_max_batch(c, eq1_mem, mm, eq1_seq, eq1_sparsity);
      if (!r.ok()) return fail(r.error());
      if (as_json) {
        print_json(json{{"equation", "Eq. (1)"},
                        {"coefficients", c.label},
                        {"c0", c.c0},
                        {"c1", c.c1},
                        {"gpu_mem_gb", eq1_mem},
                        {"model_mem_gb", mm},
                        {"seq_len", eq1_seq},
                        {"sparsity", eq1_sparsity},
                        {"raw", r->raw},
                        {"max_batch_size", r->batch}});
      } else {
        std::cout << "Eq. (1) " << c.label << ": GPU " << fixed(eq1_mem, 1) << " GB, model " << fixed(mm, 2)
                  << " GB, seq " << fixed(eq1_seq, 0) << ", sparsity " << fixed(eq1_sparsity, 2)
                  << "\n  max batch = floor(" << fixed(r->raw, 2) << ") = " << r->batch << "\n";
      }
      return 0;
    }

    if (eq2->parsed()) {
      json rows = json::array();
      Table t({"workload", "C3", "C2 (slope)", "C4 (intercept)", "RMSE (scripts)",
               "RMSE (exponent everywhere)", "points"},
              {false, true, true, true, true, true, true});
      for (const auto& sw : paper::a40_sweeps()) {
        auto f = paper::fit_eq2(sw.points, sw.c3);
        if (!f.ok()) return fail(f.error());
        rows.push_back(json{{"workload", sw.id},
                            {"model", sw.model},
                            {"dataset", sw.dataset},
                            {"gpu", "a40"},
                            {"c3", f->c3},
                            {"c2", f->c2},
                            {"c4", f->c4},
                            {"rmse", f->rmse},
                            {"rmse_exponent_everywhere", f->rmse_exponent_everywhere},
                            {"points", f->n}});
        t.row({sw.id, fixed(f->c3, 1), fixed(f->c2, 3), fixed(f->c4, 3), fixed(f->rmse, 3),
               fixed(f->rmse_exponent_everywhere, 3), std::to_string(f->n)});
      }
      if (as_json) {
        print_json(json{{"equation", "Eq. (2)"},
                        {"gpu", "a40"},
                        {"source", "paper.md §2.4 sweeps, §3.2 refit"},
                        {"fits", rows}});
      } else {
        std::cout
            << "Eq. (2) throughput = C2/(sparsity·C3)·ln(batch) + C4, refitted to the paper's A40 sweeps:\n"
            << t.str();
      }
      return 0;
    }

    if (t4->parsed()) {
      if (as_json) {
        print_json(paper_table4_with_predictions_json(Database::embedded(), t4_queries, t4_epochs));
        return 0;
      }
      std::cout << "Table IV (arXiv 2408.04693): Mixtral-8x7B QLoRA, sparse MoE, math data, "
                << fixed(t4_epochs, 0) << " epochs, " << cli::group_thousands(t4_queries)
                << " queries, CUDO Compute prices\n";
      Table t({"GPU", "Mem", "MBS", "Throughput (q/s)", "$/hr", "Hours", "Cost ($)", "Published ($)",
               "ftcost MBS", "ftcost q/s", "ftcost hours", "ftcost cost ($)"},
              {false, true, true, true, true, true, true, true, true, true, true, true});
      const auto rows = paper::table4(t4_queries, t4_epochs);
      const auto pred = paper_table4_predictions(Database::embedded(), t4_queries, t4_epochs);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        const auto& p = pred[i];
        const bool ok = p.error.empty();
        t.row({r.gpu, fixed(r.memory_gb, 0) + " GB", std::to_string(r.max_batch), fixed(r.throughput_qps, 2),
               fixed(r.usd_per_hour, 2), fixed(r.hours, 1), fixed(r.cost, 1), fixed(r.published_cost, 1),
               ok ? std::to_string(p.max_batch) : "error", ok ? fixed(p.throughput_qps, 2) : "-",
               ok ? fixed(p.hours, 1) : "-", ok ? fixed(p.cost, 1) : "-"});
      }
      std::cout << t.str();
      std::cout
          << "Left: the paper's arithmetic on its measured throughputs. ftcost: its own prediction (stack "
             "hf-transformers-2024, its predicted maximum batch, the paper's prices); the A40 was part of "
             "the fit, the A100 and H100 were not.\n";
      for (const auto& p : pred)
        if (!p.error.empty()) std::cout << "ftcost on " << p.gpu_id << ": " << p.error << "\n";
      return 0;
    }

    if (fit->parsed()) {
      auto text = read_file(points_file);
      if (!text.ok()) return fail(make_error(text.error().code, "--points", text.error().to_string()));
      auto pts = paper::parse_points_csv(text.value(), points_file);
      if (!pts.ok()) return fail(pts.error());
      auto f = paper::fit_eq2(pts.value(), c3);
      if (!f.ok()) return fail(f.error());
      if (as_json) {
        print_json(json{{"c2", f->c2},
                        {"c3", f->c3},
                        {"c4", f->c4},
                        {"rmse", f->rmse},
                        {"rmse_exponent_everywhere", f->rmse_exponent_everywhere},
                        {"points", f->n}});
      } else {
        std::cout << "Eq. (2) fit to " << f->n << " points (C3 = " << fixed(f->c3, 2) << " fixed):\n"
                  << "  C2 (slope)     = " << fixed(f->c2, 4) << "\n  C4 (intercept) = " << fixed(f->c4, 4)
                  << "\n"
                  << "  RMSE           = " << fixed(f->rmse, 4) << " queries/s\n";
      }
      return 0;
    }

    if (models->parsed()) {
      if (as_json) {
        json a = json::array();
        for (const auto& [id, m] : db.models())
          a.push_back(json{{"id", id},
                           {"name", m.display_name},
                           {"kind", m.kind()},
                           {"total_params", m.params().total()},
                           {"active_params", m.active_params(m.moe.top_k)},
                           {"experts", m.moe.experts},
                           {"top_k", m.moe.top_k},
                           {"layers", m.layers()},
                           {"hf_repo", m.hf_repo}});
        print_json(a);
        return 0;
      }
      Table t({"id", "kind", "total", "active", "experts", "layers", "HF repo"},
              {false, false, true, true, false, true, false});
      for (const auto& [id, m] : db.models()) {
        t.row({id, m.kind(), cli::human_count(static_cast<double>(m.params().total())),
               cli::human_count(static_cast<double>(m.active_params(m.moe.top_k))),
               m.is_moe() ? std::to_string(m.moe.top_k) + " of " + std::to_string(m.moe.experts) : "-",
               std::to_string(m.layers()), m.hf_repo});
      }
      std::cout << t.str();
      return 0;
    }

    if (gpus->parsed()) {
      if (as_json) {
        json a = json::array();
        for (const auto& [id, g] : db.gpus()) {
          json j = g.to_json();
          j["sources"] = g.sources;
          j["price_offers"] = db.offers_for(id).size();
          a.push_back(j);
        }
        print_json(a);
        return 0;
      }
      Table t({"id", "name", "memory", "usable", "bandwidth", "bf16 dense", "prices"},
              {false, false, true, true, true, true, true});
      for (const auto& [id, g] : db.gpus()) {
        t.row({id, g.name, fixed(g.memory_gib, 0) + " GiB",
               fixed(g.usable_bytes() / kGiB, 1) + " GiB" + (g.usable_memory_estimated() ? "*" : ""),
               fixed(g.memory_bandwidth_gbps, 0) + " GB/s",
               g.bf16_tflops > 0 ? fixed(g.bf16_tflops, 0) + " TFLOP/s" : "-",
               std::to_string(db.offers_for(id).size())});
      }
      std::cout << t.str() << "* estimated as 97.5% of the label (no nvidia-smi total known)\n";
      return 0;
    }

    if (fitstack->parsed() && !fit_runs.empty() && fitstack->count("--stack") == 0)
      fit_stack_id = kDefaultStackId;
    if (fitstack->parsed() && !fit_runs.empty())
      return cli::run_fit_stack_runs(fit_runs, db, fit_stack_id, fit_write, as_json, read_file);
    if (validate->parsed() || fitstack->parsed()) {
      // An output path given empty is an error, not "no output" (issue #15 item 9).
      for (const auto& [cmd, flag] : {std::pair<CLI::App*, const char*>{validate, "--markdown"},
                                      {validate, "--svg"},
                                      {validate, "--dir"},
                                      {fitstack, "--write"},
                                      {fitstack, "--dir"}}) {
        if (!cmd->parsed() || cmd->count(flag) == 0) continue;
        const std::string& v = std::string(flag) == "--markdown" ? md_out
                               : std::string(flag) == "--svg"    ? svg_out
                               : std::string(flag) == "--write"  ? fit_write
                                                                 : ref_dir;
        if (v.empty())
          return fail(make_error(Errc::invalid_value, flag,
                                 std::string(flag) == "--dir" ? "needs a folder, got an empty value"
                                                              : "needs a file name, got an empty value"));
      }
      auto rows = cli::load_reference_dir(ref_dir, read_file);
      if (!rows.ok()) return fail(rows.error());
      if (validate->parsed()) {
        auto run_rows = cli::load_run_rows(runs_dir, db, read_file);
        if (!run_rows.ok()) return fail(run_rows.error());
        std::vector<RefRow> all = rows.value();
        all.insert(all.end(), run_rows->begin(), run_rows->end());
        return cli::run_validate(all, db, as_json, md_out, svg_out);
      }
      return cli::run_fit_stack(rows.value(), db, fit_stack_id, fit_write, read_file);
    }
    if (bench->parsed()) return run_bench(iterations, as_json);
    return 0;
  } catch (const std::exception& ex) {
    std::cerr << "ftcost: internal error: " << ex.what() << "\n";
    return 1;
  }
}

}  // namespace
