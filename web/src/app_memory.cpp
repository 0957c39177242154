// The memory breakdown against the GPU's capacity, the step-time breakdowns, and throughput against batch
// size.
#include "app.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "result_cards.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::web {

namespace {

// A memory row of `Of`, typed: a renamed field fails to compile here.
template <class Of>
struct FieldInfo {
  double Of::*field;
  const char* label;
  const char* tip;
};

// The memory components.
constexpr FieldInfo<MemoryBreakdown> kMem[] = {
    {&MemoryBreakdown::weights, "weights",
     "Base model weights as stored: 16-bit, or NF4/int8 with block scales for QLoRA (parts that stay 16-bit "
     "included)."},
    {&MemoryBreakdown::trainable_params, "adapters",
     "Trainable parameters kept apart from the weights (LoRA adapters, fp32)."},
    {&MemoryBreakdown::gradients, "gradients", "Gradients of the trainable parameters."},
    {&MemoryBreakdown::optimizer_states, "optimizer",
     "Optimizer states of the trainable parameters (AdamW: two per parameter)."},
    {&MemoryBreakdown::autocast_copies, "autocast copies",
     "16-bit copies of fp32 trainable weights made by autocast."},
    {&MemoryBreakdown::activations, "activations",
     "Activations saved for the backward pass (with checkpointing: layer inputs + one layer's recompute "
     "peak), MoE routed copies and expert intermediates."},
    {&MemoryBreakdown::logits, "logits + loss",
     "Logits and loss over the vocabulary, often upcast to fp32: large for big vocabularies."},
    {&MemoryBreakdown::dequant_buffers, "dequant buffers", "QLoRA: temporary dequantized weights."},
    {&MemoryBreakdown::dora_weight_norm, "DoRA weight norm",
     "DoRA: the norm of W + s*BA computed every forward, a temporary the size of the largest adapted weight "
     "(QLoRA dequantizes it first)."},
    {&MemoryBreakdown::fp8_weight_copies, "FP8 weight copies",
     "Transformer Engine: the FP8 weights (and their transposes on Hopper/Ada) each te.Linear keeps for its "
     "backward: every layer's without checkpointing, one layer's with it, and lm_head's."},
    {&MemoryBreakdown::cuda_context, "CUDA context", "CUDA context and library workspaces (cuBLAS, ...)."},
    {&MemoryBreakdown::allocator_overhead, "allocator",
     "PyTorch caching-allocator fragmentation and reserve."},
    {&MemoryBreakdown::optimizer_step_temp, "step temporaries",
     "Foreach AdamW's temporary at the optimizer step (sqrt of every exp_avg_sq, one state-sized list): it "
     "exists beside every gradient once activations and logits are freed. Fused AdamW and 8-bit optimizers "
     "have none."},
};

// What sharding adds to each rank (more than one GPU).
constexpr FieldInfo<RankMemory> kRankMem[] = {
    {&RankMemory::fp32_grad_partition, "fp32 grad partition",
     "DeepSpeed ZeRO's fp32 gradient partition / FSDP's sharded fp32 gradients."},
    {&RankMemory::gather_buffers, "gather buffers",
     "FSDP unit all-gather and prefetch, ZeRO-3 live parameters."},
    {&RankMemory::bucket_buffers, "bucket buffers", "DDP gradient buckets, ZeRO reduce/all-gather buckets."},
    {&RankMemory::nccl_buffers, "NCCL buffers", "Communicator buffers."},
    {&RankMemory::live_params, "live parameters",
     "Parameters kept gathered beyond the working set: ZeRO-3's cache and prefetch, FSDP's root unit."},
    {&RankMemory::quant_states, "4-bit quant states",
     "bitsandbytes' absmax of every 4-bit Linear: neither parameter nor buffer, so not sharded or "
     "offloaded."},
    {&RankMemory::expert_copies, "expert-loop copies",
     "gpt-oss's training loop: each expert's weight slices copied and saved for backward."},
};

// The breakdown a memory view shows: the one GPU's, or one rank's base components.
const MemoryBreakdown& memory_of(const JobEstimate& e) {
  return e.pe.is_single ? e.pe.single.memory : e.pe.memory.base;
}

// What sharding adds on every rank at every moment (0 on one GPU).
double rank_extras(const JobEstimate& e) {
  if (e.pe.is_single) return 0;
  double x = 0;
  for (const auto& r : kRankMem) x += e.pe.memory.*r.field;
  return x;
}

struct BreakdownInfo {
  const char* key;
  const char* title;
};

constexpr BreakdownInfo kBreakdowns[] = {
    {"step_breakdown_s", "By stage (the paper's Fig. 4)"},
    {"layer_breakdown_s", "By layer type (Fig. 5)"},
    {"kernel_classes_s", "By kernel class (Fig. 6)"},
};

std::string nice_key(std::string k) {
  if (k.size() > 2 && k.compare(k.size() - 2, 2, "_s") == 0) k.resize(k.size() - 2);
  std::replace(k.begin(), k.end(), '_', ' ');
  return k;
}

}  // namespace

void App::draw_memory() {
  mark("memory");
  if (!has_est_) return;
  const JobEstimate& e = est_;
  const JobAnswer& a = e.answer;
  const bool multi = a.gpus > 1;
  const MemoryBreakdown& mb = memory_of(e);
  std::string title = (a.batch > 0 ? "Memory at batch " + plot::fmt_int(static_cast<double>(a.batch))
                                   : std::string("Memory at batch 1")) +
                      (multi ? " per GPU (one rank)" : "");
  section_title(title.c_str(),
                "The components present at the step's peak moment, in GiB, against the GPU's usable memory: "
                "their sum is the peak. A component that exists only at another moment (the optimizer "
                "step's temporaries) is in the thin bar under it, not in the peak's bar.");
  // The bar stacks what exists at the peak moment (MemoryBreakdown::at_peak(): its plain sum is the peak);
  // what sharding adds on each rank exists at every moment.
  const MemoryBreakdown at = mb.at_peak();
  const double paged = paged_gib(e);
  std::vector<plot::Segment> segs;
  std::vector<std::string> shown;
  double sum = 0;
  int ci = 0;
  auto add = [&](const char* label, double gib, const char* tip) {
    if (gib > 0) {
      segs.push_back(plot::Segment{label, gib, plot::color(ci, 0.9f), tip});
      shown.push_back(std::string(label) + " " + plot::fmt(gib, 4));
      sum += gib;
    }
    ++ci;
  };
  for (const auto& m : kMem) {
    double v = at.*m.field / kGiB;
    // paged optimizer states: only what stays on the GPU is in the bar (the rest is in host RAM)
    if (m.field == &MemoryBreakdown::optimizer_states) v = std::max(0.0, v - paged);
    add(m.label, v, m.tip);
  }
  if (!e.pe.is_single)
    for (const auto& r : kRankMem) add(r.label, e.pe.memory.*r.field / kGiB, r.tip);
  const double usable = a.usable_gib;
  const MemoryBreakdown::Phases ph = mb.phases();
  const double extras = rank_extras(e);
  const MemoryBreakdown::Moment peak_at = mb.peak_moment();
  // the optimizer step is a moment of its own: drawn apart when it is not the peak and has a temporary
  const bool step_apart = mb.optimizer_step_temp > 0 && peak_at != MemoryBreakdown::Moment::optimizer_step;
  const double step_total = (ph.optimizer_step + extras) / kGiB;
  plot::BarOptions bo;
  bo.total_label = "peak (not the sum)";
  bo.scale_max = std::max({usable * 1.04, sum * 1.02, step_apart ? step_total * 1.02 : 0.0, 1e-9});
  plot::stacked_bar("mem", 0, segs, usable, "GiB", "usable", bo);
  shown.insert(shown.begin(), "peak (not the sum) " + plot::fmt(sum, 4) + " GiB");
  cards_["memory.bar"] = shown;
  if (step_apart) {
    // fixed + every gradient + the step's temporaries (activations and logits are freed by then)
    const double grads = mb.gradients / kGiB, temp = mb.optimizer_step_temp / kGiB;
    const double fixed = step_total - grads - temp;
    std::vector<plot::Segment> step{
        {"fixed (weights, optimizer, context...)", fixed, plot::color(0, 0.35f),
         "Everything that exists at every moment of the step."},
        {"gradients", grads, plot::color(2, 0.9f), "Every gradient exists at the optimizer step."},
        {"step temporaries", temp, plot::color(10, 0.9f), kMem[10].tip}};
    plot::BarOptions so = bo;
    so.total_label = "optimizer step (another moment, not the peak)";
    so.height = 0.7f;
    so.legend = false;
    plot::stacked_bar("mem_step", 0, step, usable, "GiB", "usable", so);
    cards_["memory.optimizer_step"] = {"optimizer step " + plot::fmt(step_total, 4) + " GiB",
                                       "step temporaries " + plot::fmt(temp, 4)};
  }
  if (mb.phased) {
    const std::string at_name = mb.peak_phase();
    auto star = [&](const char* k) { return at_name == k ? " (peak)" : ""; };
    ImGui::TextDisabled("end of forward + loss %s%s, start of backward %s%s, end of backward %s%s GiB",
                        plot::fmt((ph.forward_loss + extras) / kGiB).c_str(), star("forward_loss"),
                        plot::fmt((ph.backward_start + extras) / kGiB).c_str(), star("backward_start"),
                        plot::fmt((ph.backward_end + extras) / kGiB).c_str(), star("backward_end"));
    if (mb.optimizer_step_temp > 0)
      ImGui::TextDisabled("optimizer step %s%s GiB", plot::fmt(step_total).c_str(), star("optimizer_step"));
    tip("The peak of a step is the largest of its moments: gradients exist only after the forward (the "
        "optimizer frees them with zero_grad(set_to_none=True)), the loss's logits are freed before any "
        "layer is recomputed, and a foreach AdamW's temporary exists only at the step. The bar shows what "
        "exists at the peak moment.");
  } else if (peak_at == MemoryBreakdown::Moment::optimizer_step) {
    muted_text_wrapped(
        "peak at the optimizer step: foreach AdamW's temporary beside every gradient (the bar); "
        "activations and logits are freed by then");
  }
  // the one-GPU memory model's line (a rank's memory is not fixed + per sample of the one-GPU model)
  if (e.pe.is_single) {
    const MaxBatch& m = e.pe.single.max_batch;
    ImGui::TextDisabled("fixed %s GiB + %s GiB per sample", plot::fmt(m.fixed_bytes / kGiB).c_str(),
                        plot::fmt(m.per_sample_bytes / kGiB).c_str());
    const json& mm = jat(result_, "memory_model");
    if (mm.contains("note") && mm["note"].is_string()) tip(mm["note"].get<std::string>().c_str());
  }
}

void App::draw_step_time() {
  mark("step_time");
  const json& r = result_;
  std::string title = "Step time: " + plot::fmt(jnum(r, "step_time_s")) + " s per step";
  const json& sm = jat(r, "step_model");
  section_title(title.c_str(),
                "Time of one optimizer step (forward, recompute, backward, optimizer) at this batch size");
  calibrated_badge("step_time");
  if (sm.is_object() && sm.contains("name")) {
    std::string m = "model: " + jstr(sm, "name");
    if (sm.contains("range_fraction") && sm["range_fraction"].is_number())
      m += ", +/-" + plot::fmt(100.0 * sm["range_fraction"].get<double>(), 2) + "%";
    ImGui::TextDisabled("(%s)", m.c_str());  // its own line: beside the title it was cut off
    if (sm.contains("note") && sm["note"].is_string()) tip(sm["note"].get<std::string>().c_str());
  }
  const std::string dominant = jstr(sm, "dominant_uncertainty");
  if (!dominant.empty()) {
    muted_text_wrapped("uncertainty mostly from: " + dominant);
  }
  // every "<name>_s" object of numbers is a breakdown: known ones first, in the paper's order
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& b : kBreakdowns)
    if (r.contains(b.key) && r[b.key].is_object()) found.emplace_back(b.key, b.title);
  for (auto it = r.begin(); it != r.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() > 2 && k.compare(k.size() - 2, 2, "_s") == 0 && it->is_object() && k != "step_time_s" &&
        std::none_of(found.begin(), found.end(), [&](const auto& f) { return f.first == k; }))
      found.emplace_back(k, "By " + nice_key(k));
  }
  if (found.empty()) {
    ImGui::TextDisabled("The step model gives no breakdown for this configuration.");
    return;
  }
  int ci = 0;
  for (const auto& [key, t] : found) {
    std::vector<plot::Segment> items;
    for (auto it = r[key].begin(); it != r[key].end(); ++it)
      if (it->is_number() && it->get<double>() > 0)
        items.push_back(plot::Segment{nice_key(it.key()), it->get<double>(), plot::color(ci++), ""});
    if (items.empty()) continue;
    ImGui::TextDisabled("%s", t.c_str());
    plot::bar_list(key.c_str(), 0, items, "s");
  }
  draw_step_ops();
}

void App::draw_throughput_plot() {
  mark("throughput_plot");
  const float fh = ImGui::GetFontSize();
  section_title(
      "Throughput vs batch size",
      "Predicted throughput for every batch size up to beyond the maximum (faded: does not fit). "
      "Shaded: the model's uncertainty range. Points: measurements, when the GPU has them.\n\n"
      "Small steps in the curve are real, not noise: wave quantization. A GEMM is cut into tiles "
      "that run on the GPU's SMs in whole waves, so a batch whose tiles need one more (partly empty) "
      "wave takes nearly a full wave longer and the throughput drops a little before it climbs "
      "again (the step model's wave_efficiency, core/predict/src/throughput.cpp). Batches that fill the last "
      "wave are the efficient ones.");
  calibrated_badge("throughput_plot");
  ImGui::SameLine(0, fh * 1.5f);
  ImGui::Checkbox("tokens/s", &plot_tokens_);
  tip("Show tokens per second instead of samples per second: tokens of data (the samples' own) "
      "and tokens computed (the padded batch, padding included)");
  if (sweep_.points.empty()) {
    ImGui::TextDisabled("%s", sweep_.error.empty() ? "no points" : sweep_.error.c_str());
    return;
  }
  plot::Series model;
  model.name = jstr(jat(result_, "step_model"), "name", "model");
  model.color = plot::color(0);
  // the job's unit of a sample, as the CLI and the cards say it (samples, preference pairs, GRPO prompts)
  const std::string noun = est_.job.in.workload.objective.sample_noun();
  model.unit = plot_tokens_ ? "tokens/s of data" : noun + "/s";
  // tokens of data per sample do not depend on the batch (the samples' own lengths); the tokens computed
  // do (a larger batch is padded to a longer sample)
  const JobAnswer& a = est_.answer;
  const double data_per_sample = a.qps > 0 ? a.data_tokens_per_s / a.qps : 0;
  plot::Series computed;
  computed.name = "tokens computed (padding included)";
  computed.color = plot::color(3, 0.7f);
  computed.unit = "tokens/s computed";
  double ymax = 0, xmax = 1;
  for (const auto& p : sweep_.points) {
    const double scale = plot_tokens_ ? data_per_sample : 1.0;
    model.x.push_back(p.batch);
    model.y.push_back(p.qps * scale);
    model.y_lo.push_back(p.qps_low * scale);
    model.y_hi.push_back(p.qps_high * scale);
    model.dim.push_back(p.fits ? 0 : 1);
    model.notes.push_back(tokens_line(p.qps * data_per_sample, p.tokens_per_s));
    computed.x.push_back(p.batch);
    computed.y.push_back(p.tokens_per_s);
    computed.dim.push_back(p.fits ? 0 : 1);
    ymax = std::max({ymax, p.qps_high * scale, plot_tokens_ ? p.tokens_per_s : 0.0});
    xmax = std::max(xmax, p.batch);
  }
  std::vector<plot::Series> series{model};
  if (plot_tokens_) series.push_back(computed);
  // measured points: the paper's A40 sweeps for the same model and dataset (queries/s)
  const std::string gpu = effective("gpu"), model_id = effective("model"), dataset = effective("dataset");
  if (!plot_tokens_ && gpu == "a40") {
    const bool dense = effective("moe") == "dense";
    for (const auto& sw : paper::a40_sweeps()) {
      if (model_id != sw.model || dataset != sw.dataset) continue;
      plot::Series m;
      m.name = std::string("measured, paper A40 (") + (dense ? "dense" : "sparse") + ")";
      m.color = plot::color(1);
      m.line = false;
      m.markers = true;
      m.marker_radius = 4.5f;
      m.unit = noun + "/s";
      for (const auto& p : sw.points) {
        if ((p.sparsity >= 0.99) != dense) continue;
        m.x.push_back(p.batch);
        m.y.push_back(p.throughput);
        ymax = std::max(ymax, p.throughput);
        xmax = std::max(xmax, p.batch);
      }
      if (!m.x.empty()) series.push_back(m);
    }
  }
  plot::Axis xa{"batch size (" + noun + ")", 1, xmax, xmax > 64, true};
  if (!xa.log) xa.lo = 0;
  plot::Axis ya{plot_tokens_ ? "tokens/s" : noun + "/s", 0, ymax * 1.12, false, false};
  std::vector<plot::VLine> vl;
  if (sweep_.max_batch > 0)
    vl.push_back(plot::VLine{sweep_.max_batch, "max batch " + plot::fmt_int(sweep_.max_batch),
                             IM_COL32(255, 110, 110, 255)});
  const double b = static_cast<double>(a.batch);
  if (b > 0 && b != sweep_.max_batch)
    vl.push_back(plot::VLine{b, "batch " + plot::fmt_int(b), IM_COL32(200, 200, 200, 255)});
  plot::line_plot("tp", ImVec2(0, fh * 16), xa, ya, series, vl);
  // say what the wiggles are where they occur: a throughput that drops as the batch grows (a real step)
  int drops = 0;
  for (std::size_t i = 1; i < sweep_.points.size(); ++i)
    if (sweep_.points[i].fits && sweep_.points[i].qps < sweep_.points[i - 1].qps * 0.999) ++drops;
  if (drops > 0) {
    muted_text_wrapped(
        "Steps: GEMM wave quantization (tiles fill the SMs in whole waves; a batch that needs one more wave "
        "is briefly slower), real in measurements too. Hover the title for more.");
    cards_["throughput.steps"] = {std::to_string(drops)};
  }
}

}  // namespace ftcost::web
