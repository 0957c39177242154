// The data and batch groups of the option table (options_internal.hpp): a fixed --seq or a dataset and its
// lengths, then the batch, gradient accumulation and epochs.
#include "ftcost/suggest.hpp"
#include "options_internal.hpp"

#include <cmath>
#include <memory>
#include <utility>

namespace ftcost {

namespace {

// --batch N | fastest | max into the workload (0: chosen by the rule).
Status apply_batch(ResolveState& st, const std::string& v) {
  st.in.workload.batch = v == "max" || v == "fastest" ? 0 : std::atoll(v.c_str());
  st.in.workload.batch_fastest = v == "fastest";
  return Ok{};
}

// --effective-batch E: excludes --grad-accum; with --batch b on one GPU the grad-accum is E / b (several GPUs
// divide by their replicas too: parallel.cpp's choose_micro).
Status apply_effective_batch(ResolveState& st, const std::string& v) {
  if (st.given("grad-accum"))
    return make_error(Errc::invalid_value, "--effective-batch",
                      "chooses the grad-accum itself: give --effective-batch or --grad-accum, not both");
  Workload& w = st.in.workload;
  w.effective_batch = std::atoll(v.c_str());
  if (w.batch > 0 && w.effective_batch % w.batch != 0)
    return make_error(Errc::invalid_value, "--effective-batch",
                      v + " is not a multiple of --batch " + std::to_string(w.batch));
  if (w.batch > 0) w.grad_accum = w.effective_batch / w.batch;
  return Ok{};
}

Option seq_option() {
  Option o = declare_option("seq", OptionKind::count, "data", "Seq. length");
  o.help = "Fixed sequence length (instead of --dataset), or max (the longest that fits at batch 1)";
  o.details =
      "Tokens per sample (prompt + answer); every sample has this length. \"max\": the longest sequence "
      "that fits at batch 1 on this GPU with this stack (the estimate is then for that length).";
  o.unit = "tokens";
  o.values = {{"max", "longest that fits", "the longest sequence that fits at batch 1"}};
  o.lo = 1;
  o.hi = 1 << 22;
  o.invalidates = {"dataset", "padding", "max-length", "template-tokens"};
  o.checks_given = {"dataset"};
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (st.given("dataset"))
      return make_error(Errc::invalid_value, "--seq", "give either --seq or --dataset, not both");
    Workload& w = st.in.workload;
    w.seq_max = v == "max";
    w.seq_len = w.seq_max ? 1.0 : std::atof(v.c_str());  // seq max: estimate() sets the length
    w.lengths = LengthDistribution::fixed(w.seq_len);
    w.max_length = w.seq_len;
    return Ok{};
  };
  return o;
}

Option dataset_option() {
  Option o = declare_option("dataset", OptionKind::id_or_path, "data", "Dataset");
  o.help =
      "Dataset preset, or your own token lengths: a file of one length per line, a CSV with a length "
      "column, "
      "or ftcost.dataset/1 JSON (tools/dataset_lengths.py writes it; docs/dataset.md)";
  o.details =
      "Dataset preset (its size and token-length distribution), or your own data: a file with the token "
      "length of every sample (one per line, a CSV with a length column, or the ftcost.dataset/1 JSON that "
      "tools/dataset_lengths.py writes from a Hugging Face dataset and tokenizer). No prompt-template "
      "tokens "
      "are added to your own lengths.";
  o.id_list = "datasets";
  o.default_help = "cs15k when no --seq";
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState&) { return fixed_default("cs15k", "no --seq or --dataset given"); };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "give either --seq or --dataset, not both" : "";
  };
  o.apply = [](ResolveState& st, const std::string& v) -> Status {
    if (const Dataset* d = st.db.dataset(v)) {
      st.in.dataset_id = v;
      st.in.dataset = std::make_shared<const Dataset>(*d);
      st.in.workload.lengths = d->lengths;
      return Ok{};
    }
    const bool path_like = v.find('/') != std::string::npos || v.find('.') != std::string::npos;
    if (!path_like || !st.reader)
      return make_error(Errc::unknown_id, "--dataset",
                        "unknown dataset \"" + v + "\"" + known_ids_hint(v, option_ids("datasets", st.db)) +
                            (st.reader ? " (or a path to your length file: one length per line, CSV or "
                                         "ftcost.dataset/1 JSON)"
                                       : " (load your own length file in the UI)"));
    FTCOST_TRY(text, st.reader(v));
    FTCOST_TRY(d, parse_dataset_file(text, v));
    st.in.dataset_id = v;
    st.in.workload.lengths = d.lengths;
    st.in.dataset = std::make_shared<const Dataset>(std::move(d));
    return Ok{};
  };
  return o;
}

Option template_tokens_option() {
  Option o = declare_option("template-tokens", OptionKind::count, "data", "Template");
  o.help = "Tokens the prompt template adds to every sample";
  o.details =
      "Tokens the prompt template adds to every query (chat/instruction wrapper), on top of the "
      "dataset's measured lengths.";
  o.unit = "tokens";
  o.lo = 0;
  o.hi = 100000;
  o.default_help = "the dataset preset's; 0 for your own length file unless it states template_tokens";
  o.reads = {"dataset"};
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState& st) {
    const Dataset* d = st.in.dataset.get();
    const double tt = d != nullptr ? d->template_tokens : 0;
    DefaultValue dv =
        fixed_default(number_text(tt), d != nullptr && d->own_data
                                           ? "stated in your length file " + st.in.dataset_id
                                           : "prompt template, from the " + st.in.dataset_id + " preset");
    dv.listed = tt > 0;
    return dv;
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "applies only with --dataset (include it in --seq)" : "";
  };
  o.apply = stores(&Workload::template_tokens, real_value);
  return o;
}

Option max_length_option() {
  Option o = declare_option("max-length", OptionKind::count, "data", "Max length");
  o.help = "Truncation length";
  o.details = "Samples longer than this are truncated (LLaMA-Factory cutoff_len).";
  o.unit = "tokens";
  o.lo = 1;  // as --seq and a length file's samples: the default (the longest sample) is always allowed
  o.hi = 1 << 22;
  o.default_help = "1024 for a preset; the longest sample of your own length file";
  o.reads = {"dataset", "template-tokens"};
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState& st) {
    const Dataset* d = st.in.dataset.get();
    if (d != nullptr && d->own_data)
      return fixed_default(number_text(std::ceil(d->lengths.max() + st.in.workload.template_tokens)),
                           "the longest sample in " + st.in.dataset_id + ": no truncation");
    return fixed_default("1024", "LLaMA-Factory cutoff_len");
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "applies only with --dataset" : "";
  };
  o.apply = stores(&Workload::max_length, real_value);
  return o;
}

Option padding_option() {
  Option o = declare_option("padding", OptionKind::choice, "data", "Padding");
  o.help = "How a batch is shaped";
  o.details =
      "How a batch is shaped: longest = padded to its longest sample (Hugging Face collator default); "
      "max-length = every sample padded to the maximum length; packing = samples concatenated into "
      "rows of the maximum length.";
  o.values = {{"longest", "to the longest in the batch", ""},
              {"max-length", "to the maximum length", ""},
              {"packing", "packing", ""}};
  o.default_help = "longest";
  o.checks_given = {"seq"};
  o.default_rule = [](const ResolveState&) {
    return fixed_default("longest", "pad each batch to its longest sample, the HF collator default");
  };
  o.applies = [](const ResolveState& st) -> std::string {
    return st.given("seq") ? "applies only with --dataset (a fixed --seq needs no padding)" : "";
  };
  o.apply = stores_choice(
      &Workload::padding,
      {{"longest", Padding::longest}, {"max-length", Padding::max_length}, {"packing", Padding::packing}});
  return o;
}

Option queries_option() {
  Option o = declare_option("queries", OptionKind::count, "data", "Queries");
  o.help = "Number of training samples per epoch";
  o.details = "Dataset size: samples (queries) per epoch.";
  o.unit = "samples";
  o.lo = 1;
  o.hi = static_cast<double>(std::int64_t{1} << 40);
  o.default_help = "the dataset's size, else 1000";
  o.reads = {"dataset"};
  o.default_rule = [](const ResolveState& st) {
    if (const Dataset* d = st.in.dataset.get())
      return fixed_default(number_text(d->queries), "size of " + st.in.dataset_id);
    DefaultValue dv = fixed_default("1000");
    return dv;
  };
  o.apply = stores(&Workload::queries, real_value);
  return o;
}

Option batch_option() {
  Option o = declare_option("batch", OptionKind::count, "data", "Batch size");
  o.help = "Micro-batch size N, fastest or max";
  o.details =
      "Samples per forward/backward pass on the GPU (the micro-batch). \"Fastest\" = the batch of the "
      "highest throughput among those whose memory range's upper end fits (with padding to the longest "
      "sample a larger batch can be slower); \"Largest\" = the largest batch that fits in memory (the "
      "paper's setting).";
  o.unit = "samples";
  o.values = {{"fastest", "fastest that fits",
               "the batch of the highest throughput whose memory range's upper end fits"},
              {"max", "largest that fits", "the largest batch that fits in the GPU's memory"}};
  o.lo = 1;
  o.hi = 1 << 24;
  o.default_help = "fastest";
  o.default_rule = [](const ResolveState&) {
    return fixed_default("fastest", "the fastest batch that fits");
  };
  o.apply = apply_batch;
  return o;
}

Option grad_accum_option() {
  Option o = declare_option("grad-accum", OptionKind::count, "data", "Grad. accum.");
  o.help = "Gradient accumulation: micro-batches per optimizer step";
  o.details =
      "Gradient accumulation steps: the optimizer steps once every N micro-batches, so the effective "
      "batch is N x the micro-batch. The gradient buffer is kept between micro-batches; the optimizer's "
      "time is spread over N micro-batches.";
  o.unit = "micro-batches";
  o.lo = 1;
  o.hi = 65536;
  o.default_help = "1";
  o.default_rule = unlisted_default("1");
  o.apply = stores(&Workload::grad_accum, count_value);
  return o;
}

Option effective_batch_option() {
  Option o = declare_option("effective-batch", OptionKind::count, "data", "Effective batch");
  o.help =
      "Samples per optimizer step to keep (micro-batch x grad-accum x data-parallel GPUs): the "
      "grad-accum follows, and the fastest micro-batch that divides it is chosen";
  o.details =
      "The batch the optimizer sees (a training hyper-parameter): micro-batch x gradient accumulation x "
      "data-parallel GPUs. With it, ftcost chooses the micro-batch (the fastest that fits and divides it) "
      "and the gradient accumulation; leave it out to keep --grad-accum as given.";
  o.unit = "samples";
  o.lo = 1;
  o.hi = 1 << 24;
  o.default_help = "none: --grad-accum as given";
  o.reads = {"batch", "grad-accum"};
  o.checks_given = {"grad-accum"};
  o.apply = apply_effective_batch;
  return o;
}

Option epochs_option() {
  Option o = declare_option("epochs", OptionKind::real, "data", "Epochs");
  o.help = "Number of epochs (may be fractional)";
  o.details = "Passes over the dataset (may be fractional).";
  o.unit = "epochs";
  o.lo = 0.001;
  o.hi = 1e6;
  o.default_help = "1";
  o.default_rule = [](const ResolveState&) { return fixed_default("1"); };
  o.apply = stores(&Workload::epochs, real_value);
  return o;
}

}  // namespace

// The sequences: a fixed --seq, or a dataset with its template, truncation, padding and size.
void add_data_options(std::vector<Option>& table) {
  table.push_back(seq_option());
  table.push_back(dataset_option());
  table.push_back(template_tokens_option());
  table.push_back(max_length_option());
  table.push_back(padding_option());
  table.push_back(queries_option());
}

// The batch, gradient accumulation and epochs.
void add_batch_options(std::vector<Option>& table) {
  table.push_back(batch_option());
  table.push_back(grad_accum_option());
  table.push_back(effective_batch_option());
  table.push_back(epochs_option());
}

}  // namespace ftcost
