#include "ftcost/throughput.hpp"

#include <algorithm>
#include <cmath>

#include "ftcost/memory.hpp"
#include "ftcost/paper.hpp"

namespace ftcost {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
}  // namespace

StepTime roofline_lite_step(const ModelSpec& m, const Workload& w, const StackProfile& s, const GpuSpec& g,
                            std::int64_t batch, double mean_len) {
  StepTime st;
  st.model = "roofline-lite";
  const double N = d(batch) * mean_len;  // padded tokens per step
  const double H = d(m.hidden);
  const double k = d(w.active_experts(m));
  const double E = d(m.moe.experts);
  const double peak = g.peak_tflops(w.precision == "fp32" ? "tf32" : w.precision) * 1e12;
  const double bw = g.memory_bandwidth_gbps * 1e9;
  const double gemm_rate = std::max(peak, 1e9) * s.gemm_efficiency;
  const double mem_rate = bw * s.memory_efficiency;

  // Linear weights touched per forward pass and FLOPs per token (2 per weight per token).
  ParamCounts pc = m.params();
  const double mamba_lin = d(m.layers_with(Mixer::mamba)) *
                           d(m.hidden * 2 * m.mamba.d_inner + m.mamba.d_inner * (m.mamba.dt_rank + 2 * m.mamba.d_state) +
                             m.mamba.dt_rank * m.mamba.d_inner + m.mamba.d_inner * m.hidden);
  const double expert_p = d(m.expert_params());
  const double moe_layers = d(m.layers_with(Ffn::moe));
  const double active_experts_lin = moe_layers * k * expert_p;
  // Experts that receive at least one token (uniform routing): E * (1 - (1 - k/E)^N).
  const double hit = E > 0 ? E * (1.0 - std::pow(1.0 - k / E, N)) : 0;
  const double touched_experts_lin = moe_layers * hit * expert_p;
  const double body_lin = d(pc.attention) + d(pc.mlp) + d(pc.shared_experts) + d(pc.router) + mamba_lin;
  const double head_lin = H * d(m.vocab);
  const double flops_tok_body = 2.0 * (body_lin + active_experts_lin);
  const double flops_tok_head = 2.0 * head_lin;
  double attn_flops = 0;
  if (m.layers_with(Mixer::attention) > 0) attn_flops = d(m.layers_with(Mixer::attention)) * 2.0 * N * mean_len * d(m.attn.q_dim());
  const double wbytes = 2.0;  // GEMMs read 16-bit weights
  const double weights_touched = (body_lin + touched_experts_lin) * wbytes;

  auto gemm_pass = [&](double flops, double bytes) { return std::max(flops / gemm_rate, bytes / mem_rate); };
  // forward
  const double f_fwd = N * (flops_tok_body + flops_tok_head) + attn_flops;
  const double t_fwd_gemm = gemm_pass(f_fwd, weights_touched + head_lin * wbytes);
  // recompute (checkpointing): the layers again, not the head
  const double f_rec = w.checkpointing ? N * flops_tok_body + attn_flops : 0;
  const double t_rec_gemm = w.checkpointing ? gemm_pass(f_rec, weights_touched) : 0;
  // backward: input gradients always; weight gradients only when the base weights train
  const bool full = w.method == Method::full;
  const double lora_p = lora_params(m, w);
  const double f_bwd = N * (flops_tok_body + flops_tok_head) * (full ? 2.0 : 1.0) + 2.5 * attn_flops + N * 4.0 * lora_p;
  const double t_bwd_gemm = gemm_pass(f_bwd, (weights_touched + head_lin * wbytes) * (full ? 2.0 : 1.0));

  // QLoRA: every quantized weight is dequantized at each use (forward, recompute, backward).
  double t_dq = 0;
  if (w.method == Method::qlora) {
    const double qparams = body_lin + touched_experts_lin;
    const double passes = w.checkpointing ? 3.0 : 2.0;
    const double dq_bytes = (w.quant == Quant::int8 ? 0.6 : 1.0) * s.dequant_bytes_per_param;
    t_dq = passes * qparams * dq_bytes / mem_rate;
  }
  // Activation traffic of the non-GEMM ops: ~3 touches of every saved byte per pass.
  Workload w_nogc = w;
  w_nogc.checkpointing = false;
  const ActivationDetail ad = activation_detail(m, w_nogc, s, mean_len);
  const double act_bytes = N * (ad.per_token_bytes + ad.logits_per_token_bytes) * 3.0;
  const double passes_act = w.checkpointing ? 3.0 : 2.0;
  const double t_elem = act_bytes * passes_act / mem_rate;
  // Optimizer: a memory-bound pass over trainable parameters and their states.
  const double trainable = full ? d(pc.total()) : lora_p;
  const double opt_bytes = trainable * s.optimizer_bytes_per_param * (full && w.precision != "fp32" ? 0.5 : 1.0);
  const double t_opt = opt_bytes / mem_rate;
  // Kernel launches (host-bound in an eager stack).
  const double loop_kernels = s.kernels_per_expert_per_pass * moe_layers * (s.moe_execution == "loop" ? hit : 0.0);
  const double kernels_per_pass = s.kernels_per_layer_per_pass * d(m.layers()) + loop_kernels;
  const double launch_pass = kernels_per_pass * s.launch_overhead_us * 1e-6;
  const double passes_fb = w.checkpointing ? 3.0 : 2.0;

  const double dq_per_pass = w.method == Method::qlora ? t_dq / (w.checkpointing ? 3.0 : 2.0) : 0;
  const double el_per_pass = t_elem / passes_act;
  st.forward_s = t_fwd_gemm + dq_per_pass + el_per_pass + launch_pass;
  st.recompute_s = w.checkpointing ? t_rec_gemm + dq_per_pass + el_per_pass + launch_pass : 0;
  st.backward_s = t_bwd_gemm + dq_per_pass + el_per_pass + launch_pass;
  st.optimizer_s = t_opt + 1e-6 * s.launch_overhead_us * 4.0 * (full ? d(m.layers()) * 10.0 : 200.0);
  st.total_s = st.forward_s + st.recompute_s + st.backward_s + st.optimizer_s;
  st.gemm_s = t_fwd_gemm + t_rec_gemm + t_bwd_gemm;
  st.dequant_s = t_dq;
  st.elementwise_s = t_elem;
  st.launch_s = launch_pass * passes_fb;
  st.flops = f_fwd + f_rec + f_bwd;
  st.bytes = weights_touched * passes_fb + act_bytes * passes_act + opt_bytes;
  st.range_fraction = 0.35;
  st.range_note = "roofline-lite stand-in with unfitted stack constants: +/-35% until the step-time model and calibration replace it";
  return st;
}

Result<double> paper_eq2_qps(const std::string& model_id, const std::string& dataset_id, const std::string& gpu_id,
                             double sparsity, std::int64_t batch, double* rmse_out) {
  if (gpu_id != "a40")
    return make_error(Errc::invalid_value, "--model-kind",
                      "paper: Eq. (2) has coefficients only for the A40 (the paper re-fits C2/C4 per GPU from a sweep); "
                      "use `ftcost fit` with your own sweep for " + gpu_id);
  for (const auto& sw : paper::a40_sweeps()) {
    if (model_id == sw.model && dataset_id == sw.dataset) {
      auto fit = paper::fit_eq2(sw.points, sw.c3);
      if (!fit.ok()) return fit.error();
      if (rmse_out != nullptr) *rmse_out = fit->rmse;
      return paper::eq2_throughput(fit->c2, fit->c3, fit->c4, sparsity, static_cast<double>(batch));
    }
  }
  return make_error(Errc::invalid_value, "--model-kind",
                    "paper: Eq. (2) was fitted only for mixtral-8x7b and blackmamba-2.8b on cs15k/math14k");
}

}  // namespace ftcost
