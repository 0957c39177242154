// gpu-db checker, datasets (datasets/<id>.json): query counts, template tokens, length statistics in order
// and present in the quantile table; then the core's dataset loader.
#include "checks.hpp"
#include "ftcost/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ftcost::dbcheck {

namespace {

// The length statistics (length_tokens) in order, and in the preset's quantile table.
void check_length_tokens(const json& doc, const json& lt_obj, Sink& sink) {
  const json* lt = &lt_obj;
  const char* order[] = {"min", "median", "p90", "p99", "max"};
  double prev = 0;
  for (const char* k : order) {
    const double v = num_field(*lt, k);
    if (!have(v) || sink.has_field(std::string("length_tokens.") + k)) continue;  // e.g. negative: the list
    if (v < 1)
      sink.add(std::string("length_tokens.") + k, Errc::out_of_range,
               "must be >= 1 token, got " + fmt_num(v));
    else if (v < prev)
      sink.add(std::string("length_tokens.") + k, Errc::out_of_range,
               "must not be below the previous statistic (" + fmt_num(prev) + ")");
    prev = std::max(prev, v);
  }
  const double mean = num_field(*lt, "mean");
  const double mn = num_field(*lt, "min");
  const double mx = num_field(*lt, "max");
  if (have(mean) && have(mn) && have(mx) && (mean < mn || mean > mx))
    sink.add("length_tokens.mean", Errc::out_of_range, fmt_num(mean) + " is outside [min, max]");
  // A preset's quantile table must contain the summary statistics.
  const json* qs = find_field(doc, "quantiles");
  if (qs == nullptr)
    sink.add("quantiles", Errc::missing_field,
             "required of a preset in gpu-db/datasets (a histogram alone is for your own length files)");
  if (qs && qs->is_array()) {
    auto has_point = [&](double u, double v) {
      return std::any_of(qs->begin(), qs->end(), [u, v](const json& e) {
        return e.is_array() && e.size() == 2 && e[0].is_number() && e[1].is_number() &&
               std::fabs(e[0].get<double>() - u) < 1e-12 && std::fabs(e[1].get<double>() - v) < 1e-9;
      });
    };
    const std::pair<double, const char*> pts[] = {
        {0.0, "min"}, {0.5, "median"}, {0.9, "p90"}, {0.99, "p99"}, {1.0, "max"}};
    for (const auto& [u, k] : pts) {
      const double v = num_field(*lt, k);
      if (have(v) && !has_point(u, v))
        sink.add(
            "quantiles", Errc::invalid_value,
            std::string("must contain [") + fmt_num(u) + ", " + fmt_num(v) + "] (length_tokens." + k + ")");
    }
  }
}

}  // namespace

void check_dataset_doc(const json& doc, const std::string& file, Sink& sink) {
  if (!check_keys(doc, "", "dataset", "ftcost.dataset/1", sink)) return;
  check_schema_value(doc, "ftcost.dataset/1", sink);
  check_id(doc, file, ".-", sink);
  check_nonempty_text(doc, "source", "", sink, 8);
  const double q = num_field(doc, "queries");
  const double qp = num_field(doc, "queries_published");
  if (have(q) && q < 1) sink.add("queries", Errc::out_of_range, "must be >= 1, got " + fmt_num(q));
  const double tt = num_field(doc, "template_tokens");
  if (have(tt) && (tt < 0 || tt > 4096))
    sink.add("template_tokens", Errc::out_of_range, "must be between 0 and 4096 tokens, got " + fmt_num(tt));
  if (have(tt) && tt > 0 && str_field(doc, "template_tokens_note").empty())
    sink.add("template_tokens_note", Errc::missing_field, "say where the template token count comes from");
  if (have(q) && have(qp) && q >= 1 && std::fabs(qp - q) / q > 0.1)
    sink.add("queries_published", Errc::out_of_range,
             fmt_num(qp) + " is more than 10% away from queries (" + fmt_num(q) + ")");
  const json* lt = find_field(doc, "length_tokens");
  if (lt && lt->is_object() &&
      check_keys(*lt, "length_tokens", "dataset.length_tokens", "ftcost.dataset/1", sink)) {
    check_length_tokens(doc, *lt, sink);
  }
  auto d = parse_dataset(doc, file);
  if (!d.ok()) sink.add_loader_error(d.error());
}

}  // namespace ftcost::dbcheck
