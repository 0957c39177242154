// The numeric constants that shape a prediction and are not stack-profile fields, each with its status and
// source. Status: "structural" (follows from an algorithm or a file format; the source says which),
// "assumed" (an engineering estimate no measurement in this repository pins; the reason is given), never
// "fitted" (fitted values live in gpu-db/stacks/*.json with the rows they were fitted on). docs/design.md
// lists where every other parameter lives.
#pragma once

namespace ftcost::constants {

// ---- memory (core/predict/src/memory.cpp)
// ---------------------------------------------------------------------

// With per-layer gradient checkpointing, the backward of one layer recomputes its forward (its full
// activation set, 1x) and holds that layer's activation gradients while they are consumed (about half of it
// again). Structural in form (one layer is live at a time: docs/sources/stack-facts.md §1.6,
// torch.utils.checkpoint); the 0.5 for the gradients in flight is assumed (their share depends on the order
// autograd frees them).
inline constexpr double kRecomputedLayerPeak = 1.5;

// [structural] Tensors a transformers gated MLP (down(act(gate(x)) * up(x))) saves per token, in units of the
// intermediate width: gate out, act out, up out and the product (the hf-trl profiles'
// mlp_saved_intermediates; stack-facts 1.5). Used where a stack's fused MLP does not run (Unsloth with
// lora_dropout > 0).
inline constexpr double kHfMlpSavedIntermediates = 4.0;
// Without checkpointing every layer's activations are saved; on top of them the layer whose backward runs
// holds its gradients in flight (the same assumed half of one layer as above).
inline constexpr double kBackwardGradInFlight = 0.5;

// ---- GPU memory (core/spec/src/gpu.cpp)
// --------------------------------------------------------------------

// Usable fraction of the nominal memory for a GPU file without `usable_memory_mib_nvidia_smi`. Assumed: the
// files that list it span 0.937 (GDDR cards with ECC on: A10, A40, L4, L40S, T4) to 0.996–1.0 (HBM: A100,
// H100, H200, B200) of memory_gib x 1024 MiB; 0.975 sits between the two families.
inline constexpr double kUnlistedUsableFraction = 0.975;

// ---- step time (core/predict/src/throughput.cpp)
// --------------------------------------------------------------

// Attention backward vs forward work: FlashAttention-2's backward runs five matrix products per tile (S, dP,
// dV, dQ, dK) against the forward's two (S, PV), so 2.5x the FLOPs; its memory traffic scales the same way
// (Dao 2023, "FlashAttention-2", §3.1.2 / Algorithm 2). Structural; used for SDPA and eager attention too.
inline constexpr double kAttentionBackwardFactor = 2.5;

// Share of the cross-entropy kernels' bytes (log-softmax, NLL and their gradients over the logits) that runs
// in the backward stage. Assumed: the forward reads the logits and writes the log-probabilities (2 passes),
// the backward reads them and writes the gradient plus the fp32 upcast copy (about 2.5 passes); 0.55/0.45.
inline constexpr double kLossBackwardShare = 0.55;
inline constexpr double kLossForwardShare = 0.45;  // 1 - kLossBackwardShare, written out (exact in binary)

// Optimizer-step bytes of other optimizers relative to AdamW's (read param, grad, m, v; write param, m, v).
// SGD without momentum: read param and grad, write param, with no state (assumed 1/4 of AdamW's traffic per
// parameter, the foreach kernels' fixed passes dominating); with momentum: one state tensor (assumed 1/2).
// 8-bit AdamW (bitsandbytes blockwise): m and v stored in 1 byte each plus per-block absmax; counted per
// parameter this is (4+4+1+1 read, 4+1+1 write) / (4+4+4+4 read, 4+4+4 write) = 16/28 = 0.57, rounded up to
// 0.6 for the block scales. Structural for 8-bit, assumed for SGD.
inline constexpr double kSgdOptimizerBytes = 0.25;
inline constexpr double kSgdMomentumOptimizerBytes = 0.5;
inline constexpr double kAdamW8bitOptimizerBytes = 0.6;

// Bytes a QLoRA int8 (LLM.int8, bitsandbytes) dequantization moves relative to the stack's NF4 figure
// (dequant_bytes_per_param). Assumed: int8 weights are twice NF4's bytes but need no look-up table pass and
// one scale per row instead of per 64-block; 0.6 has no measurement behind it in this repository.
inline constexpr double kInt8DequantBytes = 0.6;

// Loss traffic of a model with its own training code (BlackMamba's Megatron-style loss, no fp32 upcast of
// the logits) relative to the stack's transformers loss path: 0.4. Assumed from the dtype difference (16-bit
// logits read and written instead of fp32 copies: about 2 bytes of 5 per vocabulary entry).
inline constexpr double kOwnCodeLossBytes = 0.4;

// Selective-scan DRAM bytes per token per d_inner channel (bf16): forward reads u, delta, z and writes out,
// out_z (10 B); backward 14–16 B plus the conv recompute (about 4 B): 20. Its FLOPs per state dimension use
// the same factors (about 10 per (b, d, l, n) forward: exp2, B·(delta·u), the scan operator, y += C·x).
// Structural, counted from the kernels' I/O (docs/sources/stack-facts.md §5.2, mamba-ssm@v1.2.0.post1
// selective_scan_fwd_kernel.cuh).
inline constexpr double kScanBytesForward = 10.0;
inline constexpr double kScanBytesBackward = 20.0;

// ---- uncertainty (core/predict/src/estimate.cpp)
// --------------------------------------------------------------

// Relative width of the throughput range of a stack profile that is not fitted to any measurement. Assumed:
// before they were fitted, the modern-stack profiles were 30–50% off their stacks' published throughputs
// (the review that opened the stacks issue, #13); 0.35 is the middle of that.
inline constexpr double kUnfittedProfileUncertainty = 0.35;
// Added in quadrature when a fitted profile runs on a GPU it was not fitted on, without a calibration:
// the spec-only efficiency curves' transfer error. Assumed from the paper stack's Table IV transfer (A40 ->
// A100/H100: +8.0% and -1.6%) rounded up to allow for GPUs further from the A40.
inline constexpr double kSpecOnlyTransferUncertainty = 0.15;

}  // namespace ftcost::constants
