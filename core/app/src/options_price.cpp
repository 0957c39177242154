// The price and measurement group of the option table (options_internal.hpp): your price or electricity, the
// staleness of offers, a calibration, a recorded run, and the provider and spot offers.
#include "ftcost/calibration.hpp"
#include "ftcost/run.hpp"
#include "ftcost/suggest.hpp"
#include "ftcost/units.hpp"
#include "options_internal.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace ftcost {

namespace {

Option price_per_hour_option() {
  Option o = declare_option("price-per-hour", OptionKind::real, "price", "$/GPU-hour");
  o.help = "Your price in USD per GPU-hour (instead of the database's offers)";
  o.details = "Your price per GPU-hour, in US dollars.";
  o.unit = "USD per GPU-hour";
  o.lo = 0;
  o.hi = 10000;
  o.default_help = "the database's offers by the price rule; 0 = a GPU you own";
  o.invalidates = {"provider", "spot"};
  o.apply = stores(&Inputs::price_per_hour, real_value);
  return o;
}

Option electricity_option() {
  Option o = declare_option("electricity", OptionKind::real, "price", "Electricity");
  o.help = "A GPU you own: your electricity price, costed at the GPU's board power (TDP)";
  o.details =
      "For a GPU you own: the job's cost is its board power (TDP, from the GPU's spec sheet) times your "
      "electricity price. Leave it out to price the job with the database's cloud offers.";
  o.unit = "USD per kWh";
  o.lo = 0;
  o.hi = 10;
  o.reads = {"gpu"};
  o.checks_given = {"price-per-hour"};
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("price-per-hour") ? "cannot be combined with --price-per-hour (give one price)" : "";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (st.in.gpu.tdp_w <= 0)
      return make_error(
          Errc::invalid_value, "--electricity",
          st.in.gpu.id + " has no board power (TDP) in its spec; give --price-per-hour instead");
    st.in.electricity_usd_per_kwh = std::strtod(v.c_str(), nullptr);
    return Ok{};
  };
  return o;
}

Option stale_days_option() {
  Option o = declare_option("stale-days", OptionKind::count, "price", "Stale after");
  o.help = "Prices older than this many days are flagged stale";
  o.details = "Prices older than this are flagged as stale.";
  o.unit = "days";
  o.lo = 1;
  o.hi = 100000;
  o.default_help = "365";
  o.apply = stores(&Inputs::stale_days, count_value);
  return o;
}

Option calibration_option() {
  Option o = declare_option("calibration", OptionKind::id_or_path, "gpu", "Calibration");
  o.help = "Calibration JSON from ftcost-calibrate";
  o.details = "Measured kernel speeds of your GPU (ftcost-calibrate); estimates for that GPU use them.";
  o.id_list = "files";  // a path only: calibrations are files the user has (or uploaded to the page)
  o.in_url = false;
  o.reads = {"gpu"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (!st.reader)
      return make_error(Errc::io_error, "--calibration",
                        "file paths are not available here; load the file in the UI");
    FTCOST_TRY(text, st.reader(v));
    auto cal = parse_calibration(text, v);
    if (!cal.ok()) return cal.error();
    FTCOST_TRY(spec_ok,
               check_against_spec(cal.value(), st.in.gpu.bf16_tflops, st.in.gpu.memory_bandwidth_gbps));
    (void)spec_ok;
    const double cal_gib = static_cast<double>(cal->device.memory_bytes) / kGiB;
    if (std::fabs(cal_gib - st.in.gpu.memory_gib) > 0.1 * st.in.gpu.memory_gib)
      st.in.warnings.push_back("calibration " + v + " was measured on \"" + cal->device.name + "\" (" +
                               std::to_string(static_cast<int>(cal_gib)) +
                               " GiB), which does not look like " + st.in.gpu.id);
    st.in.calibration = std::make_shared<const Calibration>(std::move(cal).value());
    st.in.calibration_source = v;
    return Ok{};
  };
  return o;
}

// What --run reads (apply_runs, run.cpp): the GPU and --model-kind it checks, then max_batch_size and
// step_model at the estimate's batch, with the stack refitted: the model, the GPU, the stack, the
// calibration, the expert load and every workload setting. Every option above it but the prices.
std::vector<std::string> run_reads() {
  return {"model",
          "gpu",
          "method",
          "quant",
          "lora-rank",
          "lora-targets",
          "lora-dropout",
          "lora-variant",
          "rslora",
          "modules-to-save",
          "precision",
          "fp8",
          "optimizer",
          "checkpointing",
          "moe",
          "top-k",
          "seq",
          "dataset",
          "template-tokens",
          "max-length",
          "padding",
          "queries",
          "batch",
          "grad-accum",
          "effective-batch",
          "epochs",
          "headroom",
          "stack",
          "attention",
          "liger",
          "offload-activations",
          "host-ram",
          "tiled-mlp",
          "tiled-loss",
          "optimizer-in-backward",
          "adamw-impl",
          "kbit-upcast",
          "packed-doc-len",
          "objective",
          "precompute-ref",
          "num-generations",
          "completion-len",
          "num-iterations",
          "beta",
          "reward-s",
          "generation",
          "vllm-gpu-memory-utilization",
          "vllm-gpus",
          "model-kind",
          "routing",
          "calibration"};
}

Option run_option() {
  Option o = declare_option("run", OptionKind::id_or_path, "gpu", "Your run");
  o.help = "A recorded training run (ftcost.run/1, tools/ftcost_probe.py): refit the stack to it";
  o.details =
      "A short run of your own job recorded with tools/ftcost_probe.py (or imported from "
      "trainer_state.json): "
      "the stack profile's step-time (and, with memory figures, memory) parameters are refitted to it, and "
      "the "
      "estimate's range is the run's residual. The run must be on the GPU being estimated.";
  o.id_list = "files";
  o.in_url = false;
  o.reads = run_reads();
  o.applies = [](const ResolveState& st) -> std::string {
    return st.in.model_kind == "step" ? "" : "applies only to --model-kind step";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    return apply_run_file(st.in, v, st.db, st.reader);
  };
  return o;
}

Option provider_option() {
  Option o = declare_option("provider", OptionKind::id_or_path, "price", "Provider");
  o.help = "Take the price from this provider id";
  o.details = "Take the price from this provider's offers for the GPU.";
  o.id_list = "providers";
  o.checks_given = {"price-per-hour", "electricity"};
  o.applies = [](const ResolveState& st) -> std::string {
    if (st.given("price-per-hour"))
      return "cannot be combined with --price-per-hour (your price replaces the provider's offers)";
    return st.given("electricity") ? "cannot be combined with --electricity (your GPU replaces the offers)"
                                   : "";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    const auto ids = option_ids("providers", st.db);
    if (std::find(ids.begin(), ids.end(), v) == ids.end())
      return make_error(Errc::unknown_id, "--provider",
                        "unknown provider \"" + v + "\"" + known_ids_hint(v, ids));
    st.in.provider = v;
    return Ok{};
  };
  return o;
}

Option spot_option() {
  Option o = declare_option("spot", OptionKind::toggle, "price", "Spot");
  o.help = "Also consider spot (interruptible) offers; the price rule picks among them and on-demand";
  o.details = "Use the provider's spot (interruptible) price instead of on-demand.";
  o.values = {{"on", "on", ""}, {"off", "off", ""}};
  o.default_help = "off";
  o.checks_given = {"price-per-hour", "electricity"};
  o.applies = [](const ResolveState& st) -> std::string {
    if (st.given("price-per-hour")) return "cannot be combined with --price-per-hour (your price is used)";
    return st.given("electricity") ? "cannot be combined with --electricity (your GPU is used)" : "";
  };
  o.apply = stores(&Inputs::spot, on_value);
  return o;
}

}  // namespace

// Prices, calibration and a recorded run.
void add_price_options(std::vector<Option>& table) {
  table.push_back(price_per_hour_option());
  table.push_back(electricity_option());
  table.push_back(stale_days_option());
  table.push_back(calibration_option());
  table.push_back(run_option());
  table.push_back(provider_option());
  table.push_back(spot_option());
}

}  // namespace ftcost
