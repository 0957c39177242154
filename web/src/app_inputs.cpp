// The inputs panel: every `ftcost estimate` option as a widget with a tooltip (meaning and unit).
// Unset options show the value the core chose (its defaults), marked "default".
#include "app.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ftcost::web {

namespace {

struct Choice {
  std::string value;
  std::string label;
  std::string tip;
};

float g_label_w = 120;

void tip(const char* text) {
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

// Label on the left (with the tooltip), widget to its right, full width.
void label(const char* text, const char* tooltip, bool is_default = false) {
  ImGui::AlignTextToFramePadding();
  if (is_default)
    ImGui::TextDisabled("%s", text);
  else
    ImGui::TextUnformatted(text);
  tip(tooltip);
  ImGui::SameLine(g_label_w);
  ImGui::SetNextItemWidth(-1);
}

void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextColored(style::kAccent, "%s", title);
  ImGui::Separator();
}

std::string params_text(double n) {
  if (n >= 1e9) return plot::fmt(n / 1e9, 3) + "B";
  if (n >= 1e6) return plot::fmt(n / 1e6, 3) + "M";
  return plot::fmt_int(n);
}

// Combo over choices. Returns the chosen value when the user picks one.
bool combo(const char* id, const std::string& current, const std::vector<Choice>& choices, std::string* out,
           const char* tooltip, bool is_default) {
  std::string preview = current;
  for (const auto& c : choices)
    if (c.value == current) preview = c.label;
  if (is_default) preview += "  (default)";
  bool picked = false;
  if (ImGui::BeginCombo(id, preview.c_str(), ImGuiComboFlags_HeightLarge)) {
    for (const auto& c : choices) {
      if (ImGui::Selectable(c.label.c_str(), c.value == current)) {
        *out = c.value;
        picked = true;
      }
      if (!c.tip.empty()) tip(c.tip.c_str());
    }
    ImGui::EndCombo();
  }
  tip(tooltip);
  return picked;
}

}  // namespace

void App::draw_inputs() {
  mark("inputs");
  const float fh = ImGui::GetFontSize();
  g_label_w =
      std::max(ImGui::CalcTextSize("Checkpointing").x, ImGui::CalcTextSize("LoRA targets").x) + fh * 1.0f;
  const Database& db = engine_.db();
  const Request& rq = state_.request;
  auto isdef = [&](const char* k) { return rq.find(k) == rq.end(); };
  std::string v;

  // ---- model ----
  section("Model");
  {
    std::vector<Choice> models;
    for (const auto& [id, m] : db.models()) {
      ParamCounts pc = m.params();
      models.push_back(Choice{
          id, m.display_name + "  (" + m.kind() + ", " + params_text(static_cast<double>(pc.total())) + ")",
          m.hf_repo.empty() ? std::string() : "Hugging Face: " + m.hf_repo});
    }
    if (!model_config_name_.empty())
      models.push_back(Choice{std::string(kUploadedModelPrefix) + model_config_name_,
                              "Your config: " + model_config_name_,
                              "The Hugging Face config.json you gave this page"});
    label("Model",
          "The model to fine-tune: a preset (Hugging Face config.json shipped with ftcost) or your own "
          "config.json. "
          "Parameters are counted from the config's structure.");
    const std::string cur = effective("model");
    if (combo("##model", cur, models, &v, "Model preset, or your uploaded config.json", false)) {
      Request r = rq;
      r["model"] = v;
      const ModelSpec* m = db.model(v);
      if (m != nullptr && !m->is_moe()) {
        r.erase("moe");
        r.erase("top-k");
        r.erase("routing");
      }
      set_request(r);
    }
    ImGui::Dummy(ImVec2(g_label_w - ImGui::GetStyle().ItemSpacing.x, 0));
    ImGui::SameLine();
    if (ImGui::SmallButton("Your config.json...")) host_.open_file_picker("model");
    anchor("model.upload");
    tip("Use your own model: a Hugging Face config.json (Llama/Mistral/Qwen2, Mixtral, Qwen-MoE, "
        "DeepSeek-MoE, OLMoE, "
        "Phi-3.5-MoE, gpt-oss, Mamba, BlackMamba, Jamba). You can also drop the file onto the page.");
    ImGui::SameLine();
    if (ImGui::SmallButton("Paste...")) {
      show_paste_ = true;
      host_.request_clipboard_text();
    }
    tip("Paste the text of a config.json");
    if (show_paste_) {
      mark("paste_config");
      ImGui::TextDisabled("Paste a config.json here (Ctrl+V), then Use:");
      static char buf[65536];
      if (!paste_buffer_.empty()) {
        std::snprintf(buf, sizeof buf, "%s", paste_buffer_.c_str());
        paste_buffer_.clear();
      }
      ImGui::InputTextMultiline("##paste", buf, sizeof buf, ImVec2(-1, fh * 8));
      if (ImGui::Button("Use")) {
        on_file("model", "pasted-config.json", buf);
        show_paste_ = false;
      }
      ImGui::SameLine();
      if (ImGui::Button("Cancel")) show_paste_ = false;
    }
    if (result_.is_object() && result_.contains("model")) {
      const json& m = result_["model"];
      std::string line = jstr(m, "kind") + ", " + params_text(jnum(m, "total_params", 0.0)) + " parameters";
      if (jnum(m, "active_params", 0.0) > 0 && jnum(m, "active_params", 0.0) < jnum(m, "total_params", 0.0))
        line += ", " + params_text(jnum(m, "active_params", 0.0)) + " active per token";
      line += ", " + params_text(jnum(m, "trainable_params", 0.0)) + " trained";
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
      ImGui::TextWrapped("%s", line.c_str());
      ImGui::PopStyleColor();
    }
  }

  // ---- method ----
  section("Fine-tuning");
  {
    const std::string method = effective("method");
    label(
        "Method",
        "full: every weight is trained (16-bit weights, gradients and optimizer states for all parameters).\n"
        "lora: the base model is frozen in 16 bits; small low-rank adapters are trained.\n"
        "qlora: the frozen base is stored quantized (4-bit NF4 by default) and dequantized on the fly; LoRA "
        "adapters are trained.");
    int mi = method == "full" ? 0 : method == "lora" ? 1 : 2;
    const char* names[] = {"full", "lora", "qlora"};
    int before = mi;
    ImGui::RadioButton("Full", &mi, 0);
    anchor("method.full");
    tip("Full fine-tuning: all parameters trained");
    ImGui::SameLine();
    ImGui::RadioButton("LoRA", &mi, 1);
    anchor("method.lora");
    tip("LoRA: 16-bit frozen base + trained low-rank adapters");
    ImGui::SameLine();
    ImGui::RadioButton("QLoRA", &mi, 2);
    anchor("method.qlora");
    tip("QLoRA: quantized frozen base (bitsandbytes) + trained LoRA adapters");
    if (mi != before) {
      Request r = rq;
      r["method"] = names[mi];
      if (mi == 0) {
        r.erase("lora-rank");
        r.erase("lora-targets");
      }
      if (mi != 2) r.erase("quant");
      set_request(r);
    }
    if (method == "qlora") {
      label("Quantization",
            "How the frozen base weights are stored (bitsandbytes): nf4-dq = 4-bit NormalFloat with "
            "double-quantized block scales (QLoRA default, ~0.52 bytes/parameter); nf4 = without double "
            "quantization; int8 = LLM.int8 (1 byte/parameter).",
            isdef("quant"));
      if (combo("##quant", effective("quant"),
                {{"nf4-dq", "NF4 + double quant", ""}, {"nf4", "NF4", ""}, {"int8", "int8", ""}}, &v,
                "Storage format of the frozen base weights", isdef("quant")))
        set_key("quant", v);
    }
    if (method != "full") {
      label(
          "LoRA rank",
          "Rank r of the adapter matrices (A: r x in, B: out x r). Adapter parameters grow linearly with r. "
          "Unit: dimensions.",
          isdef("lora-rank"));
      int rank = std::atoi(effective("lora-rank").c_str());
      if (rank <= 0) rank = 16;
      if (ImGui::InputInt("##rank", &rank, 8, 64))
        set_key("lora-rank", std::to_string(std::clamp(rank, 1, 65536)));
      tip("LoRA rank r (1 to 65536)");
      label("LoRA targets",
            "Which linear layers get adapters (PEFT target_modules): groups (all-linear, attention, experts, "
            "mlp, router, mamba) or module names (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, "
            "down_proj, w1, w2, w3, ...), comma-separated.",
            isdef("lora-targets"));
      const std::string targets = effective("lora-targets");
      std::vector<Choice> tc = {{"all-linear", "all linear layers", "Every linear layer except lm_head"},
                                {"attention", "attention", "q_proj, k_proj, v_proj, o_proj"},
                                {"attention,experts", "attention + experts", ""},
                                {"attention,mlp", "attention + dense MLP", ""},
                                {"experts", "experts", "MoE expert FFNs (w1, w2, w3)"},
                                {"q_proj,v_proj", "q_proj, v_proj", "The original LoRA paper's choice"}};
      bool known = std::any_of(tc.begin(), tc.end(), [&](const Choice& c) { return c.value == targets; });
      if (!known) tc.push_back(Choice{targets, targets, ""});
      if (combo("##targets", targets, tc, &v, "Modules that get LoRA adapters", isdef("lora-targets")))
        set_key("lora-targets", v);
    }
    label("Precision", "Compute precision of forward/backward (autocast dtype): bf16, fp16 or fp32.",
          isdef("precision"));
    if (combo("##precision", effective("precision"),
              {{"bf16", "bf16", "bfloat16 (Ampere and newer)"},
               {"fp16", "fp16", "float16"},
               {"fp32", "fp32", "float32 (no mixed precision)"}},
              &v, "Compute precision", isdef("precision")))
      set_key("precision", v);
    label("Optimizer",
          "Optimizer of the trained parameters and its state size per parameter: adamw (two states in the "
          "parameter dtype), adamw-mixed (fp32 master weights + two fp32 states), adamw-8bit (bitsandbytes "
          "8-bit states), sgd (none), sgd-momentum (one).",
          isdef("optimizer"));
    if (combo("##optimizer", effective("optimizer"),
              {{"adamw", "AdamW", "torch AdamW, states in the parameter dtype"},
               {"adamw-mixed", "AdamW, fp32 master", "fp32 master weights and states"},
               {"adamw-8bit", "AdamW 8-bit", "bitsandbytes 8-bit states"},
               {"sgd", "SGD", "no state"},
               {"sgd-momentum", "SGD + momentum", "one state"}},
              &v, "Optimizer", isdef("optimizer")))
      set_key("optimizer", v);
    label("Checkpointing",
          "Gradient (activation) checkpointing: keep only layer inputs and recompute activations in the "
          "backward pass. Less memory (larger batches), about one extra forward pass of time.",
          isdef("checkpointing"));
    bool gc = effective("checkpointing") != "off";
    if (ImGui::Checkbox(isdef("checkpointing") ? "on/off  (default)##gc" : "on/off##gc", &gc))
      set_key("checkpointing", gc ? "on" : "off");
    tip("Recompute activations in the backward pass instead of storing them");
    label("Attention",
          "Attention implementation: flash (FlashAttention-2: no seq x seq score matrix kept) or eager "
          "(PyTorch matmul + softmax: stores the scores, memory grows with the square of the length).",
          isdef("attention"));
    if (combo("##attention", effective("attention"),
              {{"flash", "FlashAttention-2", ""}, {"eager", "eager", ""}}, &v, "Attention implementation",
              isdef("attention")))
      set_key("attention", v);
    const bool moe = result_.is_object() && result_.contains("inputs") && result_["inputs"].contains("moe");
    if (moe || rq.count("moe") > 0) {
      label("MoE experts",
            "Mixture-of-Experts mode: sparse = each token goes to its top-k experts as the model is "
            "configured; dense = every expert is active for every token (the paper's dense runs).",
            isdef("moe"));
      if (combo("##moe", effective("moe"),
                {{"sparse", "sparse (top-k)", ""}, {"dense", "dense (all experts)", ""}}, &v,
                "MoE routing mode", isdef("moe")))
        set_key("moe", v);
      label("Routing",
            "How tokens spread over the experts (expert load): uniform; the paper's measured distributions "
            "for Mixtral or BlackMamba (Fig. 11, 8 experts); or skewed (Zipf exponent S: larger = more "
            "imbalanced). The busiest expert sets the pace of the per-expert loop.",
            isdef("routing"));
      {
        std::string cur = effective("routing");
        if (cur.empty()) cur = "uniform";
        std::vector<Choice> rc = {
            {"uniform", "uniform", "every expert gets the same share"},
            {"paper-mixtral", "paper: Mixtral (Fig. 11)", "measured before fine-tuning, 8 experts"},
            {"paper-blackmamba", "paper: BlackMamba (Fig. 11)", "measured before fine-tuning, 8 experts"},
            {"skew:0.5", "skewed, S = 0.5", "Zipf exponent 0.5"},
            {"skew:1", "skewed, S = 1", "Zipf exponent 1"},
            {"skew:2", "skewed, S = 2", "Zipf exponent 2"}};
        if (std::none_of(rc.begin(), rc.end(), [&](const Choice& c) { return c.value == cur; }))
          rc.push_back(Choice{cur, cur, ""});
        if (combo("##routing", cur, rc, &v, "Expert load distribution", isdef("routing")))
          set_key("routing", v);
      }
      if (effective("moe") != "dense") {
        label("Top-k", "Experts per token (overrides the model's top-k). Unit: experts.", isdef("top-k"));
        int k = std::atoi(effective("top-k").c_str());
        if (k <= 0 && result_.is_object() && result_.contains("inputs"))
          k = static_cast<int>(jnum(result_["inputs"], "experts_per_token", 2));
        if (ImGui::InputInt("##topk", &k, 1, 1)) set_key("top-k", std::to_string(std::max(1, k)));
        tip("Experts each token is routed to");
      }
    }
  }

  // ---- data ----
  section("Data");
  {
    const bool fixed = rq.count("seq") > 0;
    label("Lengths",
          "Sequence lengths: from a dataset preset (a measured length distribution; batches are padded as "
          "chosen below) or one fixed length for every sample.");
    int mode = fixed ? 1 : 0;
    ImGui::RadioButton("Dataset", &mode, 0);
    tip("Lengths drawn from a dataset's measured distribution");
    ImGui::SameLine();
    ImGui::RadioButton("Fixed length", &mode, 1);
    tip("Every sample has the same number of tokens");
    if (mode != (fixed ? 1 : 0)) {
      Request r = rq;
      if (mode == 1) {
        r.erase("dataset");
        r.erase("padding");
        r.erase("max-length");
        r.erase("template-tokens");
        r["seq"] = "512";
      } else {
        r.erase("seq");
      }
      set_request(r);
    }
    if (!fixed) {
      std::vector<Choice> ds;
      for (const auto& [id, d] : db.datasets())
        ds.push_back(Choice{id, d.display_name.empty() ? id : d.display_name + " (" + id + ")",
                            plot::fmt_int(d.queries) + " queries, median " + plot::fmt_int(d.median) +
                                " tokens. " + d.source});
      label("Dataset", "Dataset preset: its size (queries) and its token-length distribution.",
            isdef("dataset"));
      if (combo("##dataset", effective("dataset"), ds, &v, "Dataset preset", isdef("dataset")))
        set_key("dataset", v);
      label("Padding",
            "How a batch is shaped: longest = padded to its longest sample (Hugging Face collator default); "
            "max-length = every sample padded to the maximum length; packing = samples concatenated into "
            "rows of the maximum length.",
            isdef("padding"));
      if (combo("##padding", effective("padding"),
                {{"longest", "to the longest in the batch", ""},
                 {"max-length", "to the maximum length", ""},
                 {"packing", "packing", ""}},
                &v, "Padding policy", isdef("padding")))
        set_key("padding", v);
      label("Template",
            "Tokens the prompt template adds to every query (chat/instruction wrapper), on top of the "
            "dataset's measured lengths. Unit: tokens.",
            isdef("template-tokens"));
      {
        int tt = std::atoi(effective("template-tokens").c_str());
        if (ImGui::InputInt("##template", &tt, 8, 64))
          set_key("template-tokens", std::to_string(std::clamp(tt, 0, 100000)));
        tip("Prompt-template tokens per query");
      }
      label("Max length", "Truncation length (LLaMA-Factory cutoff_len). Unit: tokens.", isdef("max-length"));
      int ml = std::atoi(effective("max-length").c_str());
      if (ml <= 0) ml = 1024;
      if (ImGui::InputInt("##maxlen", &ml, 128, 1024))
        set_key("max-length", std::to_string(std::clamp(ml, 8, 1 << 22)));
      tip("Samples longer than this are truncated (tokens)");
    } else {
      label("Seq. length", "Tokens per sample (prompt + answer). Unit: tokens.");
      int s = std::atoi(effective("seq").c_str());
      if (ImGui::InputInt("##seq", &s, 128, 1024)) set_key("seq", std::to_string(std::clamp(s, 1, 1 << 22)));
      tip("Tokens per sample");
    }
    label("Batch size",
          "Samples per optimizer step on the GPU. \"Largest\" = the largest batch that fits in memory "
          "(the paper's setting). Unit: samples.",
          isdef("batch"));
    bool maxb = effective("batch") == "max" || effective("batch").empty();
    if (ImGui::Checkbox("largest that fits", &maxb))
      set_key("batch",
              maxb ? "max"
                   : std::to_string(std::max<long long>(1, std::llround(jnum(result_, "batch_size", 1)))));
    tip("Use the largest batch that fits in the GPU's memory");
    if (!maxb) {
      ImGui::Dummy(ImVec2(g_label_w - ImGui::GetStyle().ItemSpacing.x, 0));
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-1);
      int b = std::atoi(effective("batch").c_str());
      if (ImGui::InputInt("##batch", &b, 1, 8)) set_key("batch", std::to_string(std::clamp(b, 1, 1 << 24)));
      tip("Batch size (samples)");
    }
    label("Queries", "Dataset size: samples (queries) per epoch. Unit: samples.", isdef("queries"));
    double q = std::atof(effective("queries").c_str());
    if (ImGui::InputDouble("##queries", &q, 1000, 10000, "%.0f"))
      set_key("queries", std::to_string(std::llround(std::clamp(q, 1.0, 1e12))));
    tip("Samples per epoch");
    label("Epochs", "Passes over the dataset (may be fractional).", isdef("epochs"));
    double ep = std::atof(effective("epochs").c_str());
    if (ImGui::InputDouble("##epochs", &ep, 1, 5, "%.3g")) {
      ep = std::clamp(ep, 0.001, 1e6);
      char b[32];
      std::snprintf(b, sizeof b, "%.6g", ep);
      set_key("epochs", b);
    }
    tip("Number of epochs");
  }

  // ---- GPU and price ----
  section("GPU and price");
  {
    std::vector<Choice> gpus;
    for (const auto& [gpu_id, g] : db.gpus()) {
      const std::string id = gpu_id;  // (clang 14 cannot capture a structured binding)
      bool yours = std::any_of(calibrations_.begin(), calibrations_.end(),
                               [&](const YourCalibration& c) { return c.gpu == id; });
      gpus.push_back(Choice{id,
                            g.name + "  (" + plot::fmt(g.memory_gib) + " GiB)" + (yours ? "  [yours]" : ""),
                            g.vendor + " " + g.name + ", " + g.architecture + ": " + plot::fmt(g.memory_gib) +
                                " GiB, " + plot::fmt(g.memory_bandwidth_gbps) + " GB/s, " +
                                plot::fmt(g.bf16_tflops) + " bf16 TFLOP/s dense" +
                                (yours ? "\nYour calibration is loaded for this GPU."
                                       : "\nSpec sheet only (no calibration loaded).")});
    }
    label("GPU",
          "The GPU to run on: every GPU in ftcost's database (spec sheets with sources). [yours] = a "
          "calibration "
          "you loaded (measured speeds) is used for it.");
    if (combo("##gpu", effective("gpu"), gpus, &v, "GPU", false)) set_key("gpu", v);
    const std::string gid = effective("gpu");
    for (const auto& c : calibrations_)
      if (c.gpu == gid) {
        ImGui::Dummy(ImVec2(g_label_w - ImGui::GetStyle().ItemSpacing.x, 0));
        ImGui::SameLine();
        ImGui::TextColored(c.enabled ? style::kGood : style::kWarn,
                           c.enabled ? "calibrated: %s" : "calibration %s (not used)", c.name.c_str());
        tip(c.summary.c_str());
      }
    std::vector<Choice> stacks;
    for (const auto& [id, sp] : db.stacks())
      stacks.push_back(Choice{id, sp.display_name.empty() ? id : sp.display_name,
                              sp.description + "\n\n" + sp.to_json().dump(1)});
    label("Software",
          "Software stack profile: how the training software behaves (per-kernel and per-expert host "
          "overheads, MoE execution as a loop over experts or grouped GEMM, memory overheads). Its constants "
          "are fitted from reference measurements; hover an entry to see them.",
          isdef("stack"));
    if (combo("##stack", effective("stack"), stacks, &v, "Software stack profile", isdef("stack")))
      set_key("stack", v);

    // price source
    label(
        "Price",
        "Where the $/GPU-hour comes from: the cheapest dated offer in the database (on-demand or spot), one "
        "provider's offer, or your own price.");
    std::string price_mode = rq.count("price-per-hour") ? "custom"
                             : rq.count("provider")     ? "provider:" + rq.at("provider")
                                                        : "cheapest";
    if (price_mode == "cheapest" && effective("spot") == "on") price_mode = "cheapest-spot";
    std::vector<Choice> pc = {{"cheapest", "cheapest on-demand offer", ""},
                              {"cheapest-spot", "cheapest spot offer", ""}};
    std::set<std::string> seen;
    for (const auto& o : db.offers_for(gid))
      if (seen.insert(o.provider_id).second)
        pc.push_back(Choice{"provider:" + o.provider_id, o.provider,
                            o.date.empty() ? o.source : "dated " + o.date + ", " + o.source});
    pc.push_back(Choice{"custom", "my price ($/GPU-hour)", ""});
    if (combo("##price", price_mode, pc, &v, "Price source", false)) {
      Request r = rq;
      r.erase("price-per-hour");
      r.erase("provider");
      r.erase("spot");
      if (v == "cheapest-spot")
        r["spot"] = "on";
      else if (v == "custom")
        r["price-per-hour"] = "1.00";
      else if (v.rfind("provider:", 0) == 0)
        r["provider"] = v.substr(9);
      set_request(r);
    }
    if (price_mode == "custom") {
      label("$/GPU-hour", "Your price per GPU-hour, in US dollars.");
      double p = std::atof(effective("price-per-hour").c_str());
      if (ImGui::InputDouble("##pph", &p, 0.1, 1.0, "%.4g")) {
        char b[32];
        std::snprintf(b, sizeof b, "%.6g", std::clamp(p, 0.0001, 10000.0));
        set_key("price-per-hour", b);
      }
      tip("US dollars per GPU-hour");
    } else if (price_mode.rfind("provider:", 0) == 0) {
      label("Spot", "Use the provider's spot (interruptible) price instead of on-demand.", isdef("spot"));
      bool spot = effective("spot") == "on";
      if (ImGui::Checkbox("spot price##spot", &spot)) set_key("spot", spot ? "on" : "off");
      tip("Spot (interruptible) instead of on-demand");
    }
    label("Stale after", "Prices older than this are flagged as stale. Unit: days.", isdef("stale-days"));
    int sd = std::atoi(effective("stale-days").c_str());
    if (sd <= 0) sd = 365;
    if (ImGui::InputInt("##stale", &sd, 30, 365))
      set_key("stale-days", std::to_string(std::clamp(sd, 1, 100000)));
    tip("Days after which a price counts as stale");
    label("Step model",
          "How step time is predicted: step (ftcost's model: every op's FLOPs and bytes on the GPU's "
          "peaks, or on your calibration, plus the stack profile's host overheads; any GPU) or paper (the "
          "paper's Eq. (2) fitted to its A40 sweeps; A40 only).",
          isdef("model-kind"));
    {
      std::string mk = effective("model-kind");
      if (mk.empty()) mk = "step";
      std::vector<Choice> kc = {{"step", "ftcost step model (any GPU)", ""},
                                {"paper", "paper's Eq. (2) (A40 only)", ""}};
      if (std::none_of(kc.begin(), kc.end(), [&](const Choice& c) { return c.value == mk; }))
        kc.push_back(Choice{mk, mk, ""});
      if (combo("##mk", mk, kc, &v, "Step-time model", isdef("model-kind"))) set_key("model-kind", v);
    }
  }
  ImGui::Spacing();
  ImGui::Separator();
  if (ImGui::Button("Reset to the paper's setup")) set_request(default_request());
  tip("Mixtral-8x7B, QLoRA, sparse MoE, MATH14K, largest batch, on the A40 (the paper's headline "
      "configuration)");
  ImGui::Spacing();
  ImGui::TextDisabled("Computed in this %s in %.1f ms. Nothing leaves your machine.",
                      host_.storage_description().find("browser") != std::string::npos ? "browser" : "app",
                      last_compute_ms_);
}

}  // namespace ftcost::web
