#include "ftcost/dataset.hpp"

#include "ftcost/fields.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <utility>

namespace ftcost {

Result<LengthDistribution> LengthDistribution::from_quantiles(std::vector<std::pair<double, double>> pts,
                                                              const std::string& path) {
  if (pts.size() < 2)
    return make_error(Errc::invalid_value, path, "needs at least two quantile points, [0, min] and [1, max]");
  if (pts.front().first != 0.0 || pts.back().first != 1.0)
    return make_error(Errc::invalid_value, path, "must start at quantile 0 and end at quantile 1");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (!std::isfinite(pts[i].first) || !std::isfinite(pts[i].second) || pts[i].second < 1)
      return make_error(Errc::invalid_value, path + "[" + std::to_string(i) + "]",
                        "lengths must be finite and >= 1 token");
    if (i > 0 && (pts[i].first <= pts[i - 1].first || pts[i].second < pts[i - 1].second))
      return make_error(Errc::invalid_value, path + "[" + std::to_string(i) + "]",
                        "quantiles must increase and lengths must not decrease");
  }
  LengthDistribution d;
  d.points_ = std::move(pts);
  return d;
}

LengthDistribution LengthDistribution::fixed(double length) {
  LengthDistribution d;
  d.points_ = {{0.0, length}, {1.0, length}};
  return d;
}

Result<LengthDistribution> LengthDistribution::from_histogram(const std::vector<LengthBin>& bins,
                                                              const std::string& path) {
  if (bins.empty()) return make_error(Errc::invalid_value, path, "needs at least one [lo, hi, count] bin");
  double total = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const LengthBin& b = bins[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!std::isfinite(b.lo) || !std::isfinite(b.hi) || std::floor(b.lo) != b.lo ||
        std::floor(b.hi) != b.hi || b.lo < 1 || b.hi > kMaxSampleTokens)
      return make_error(Errc::out_of_range, at,
                        "lengths must be whole numbers of tokens from 1 to " +
                            std::to_string(static_cast<long long>(kMaxSampleTokens)));
    if (b.hi < b.lo) return make_error(Errc::invalid_value, at, "hi must be >= lo");
    if (i > 0 && b.lo <= bins[i - 1].hi)
      return make_error(
          Errc::invalid_value, at,
          "bins must be in increasing order and must not overlap (lo must be above the previous "
          "bin's hi)");
    if (!std::isfinite(b.count) || b.count < 0 || std::floor(b.count) != b.count)
      return make_error(Errc::invalid_value, at, "count must be a whole number >= 0");
    total += b.count;
  }
  if (total <= 0) return make_error(Errc::invalid_value, path, "holds no samples (every count is 0)");
  LengthDistribution d;
  double f = 0;
  double seen = 0;
  for (const LengthBin& b : bins) {
    if (b.count <= 0) continue;
    if (d.points_.empty() || d.points_.back() != std::make_pair(f, b.lo)) d.points_.emplace_back(f, b.lo);
    seen += b.count;
    f = seen / total;
    d.points_.emplace_back(f, b.hi);
  }
  d.points_.front().first = 0.0;
  d.points_.back().first = 1.0;
  if (d.points_.size() == 1) d.points_.emplace_back(1.0, d.points_.front().second);
  return d;
}

double LengthDistribution::quantile(double u) const {
  if (u <= 0) return points_.front().second;
  if (u >= 1) return points_.back().second;
  auto it = std::upper_bound(points_.begin(), points_.end(), u,
                             [](double v, const std::pair<double, double>& p) { return v < p.first; });
  const auto& hi = *it;
  const auto& lo = *(it - 1);
  double t = (u - lo.first) / (hi.first - lo.first);
  return lo.second + t * (hi.second - lo.second);
}

double LengthDistribution::truncated_mean(double cap) const { return expected_max(1.0, cap); }

double LengthDistribution::mean() const { return expected_max(1.0, points_.back().second); }

double LengthDistribution::expected_max(double n, double cap) const {
  // E[min(max of n draws, cap)] = integral over u of min(Q(u), cap) d(u^n). Q is linear on each piece, so
  // each piece (split where Q crosses the cap) integrates in closed form:
  //   int_a^b (alpha + beta u) n u^(n-1) du = alpha (b^n - a^n) + beta n/(n+1) (b^(n+1) - a^(n+1)).
  auto piece = [n](double a, double b, double alpha, double beta) {
    const double an = std::pow(a, n);
    const double bn = std::pow(b, n);
    return alpha * (bn - an) + beta * n / (n + 1.0) * (bn * b - an * a);
  };
  double total = 0;
  for (std::size_t i = 1; i < points_.size(); ++i) {
    const double a = points_[i - 1].first;
    const double b = points_[i].first;
    const double qa = points_[i - 1].second;
    const double qb = points_[i].second;
    if (b <= a) continue;
    const double beta = (qb - qa) / (b - a);
    const double alpha = qa - beta * a;
    if (qb <= cap) {
      total += piece(a, b, alpha, beta);
    } else if (qa >= cap) {
      total += cap * (std::pow(b, n) - std::pow(a, n));
    } else {
      const double c = a + (cap - qa) / beta;  // Q(c) = cap; beta > 0 here
      total += piece(a, c, alpha, beta) + cap * (std::pow(b, n) - std::pow(c, n));
    }
  }
  return total;
}

json Dataset::to_json() const {
  json j{{"id", id},
         {"name", display_name},
         {"queries", queries},
         {"median_tokens", median},
         {"mean_tokens", lengths.mean()},
         {"max_tokens", lengths.max()},
         {"own_data", own_data}};
  if (!tokenizer.empty()) j["tokenizer"] = tokenizer;
  if (has_completions) j["completion_mean_tokens"] = completions.mean();
  return j;
}

namespace {

// A [lo, hi, count] bin array (`key`: histogram or completion_histogram) checked and read.
Result<std::vector<LengthBin>> bins_from_json(const json& h, const std::string& key) {
  if (!h.is_array()) return make_error(Errc::wrong_type, key, "must be an array of [lo, hi, count] bins");
  std::vector<LengthBin> bins;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const json& e = h[i];
    if (!e.is_array() || e.size() != 3 || !e[0].is_number() || !e[1].is_number() || !e[2].is_number())
      return make_error(Errc::wrong_type, key + "[" + std::to_string(i) + "]",
                        "must be a [lo, hi, count] triple of numbers (lengths in tokens, lo..hi inclusive)");
    bins.push_back(LengthBin{e[0].get<double>(), e[1].get<double>(), e[2].get<double>()});
  }
  FTCOST_CHECK(LengthDistribution::from_histogram(bins, key));
  return bins;
}

Result<LengthDistribution> histogram_from_json(const json& h) {
  FTCOST_TRY(bins, bins_from_json(h, "histogram"));
  return LengthDistribution::from_histogram(bins, "histogram");
}

// GRPO's completion lengths (completion_histogram), when the file gives them.
Status read_completions(const json& doc, Dataset& d) {
  if (!doc.contains("completion_histogram")) return Ok{};
  FTCOST_TRY(bins, bins_from_json(doc.at("completion_histogram"), "completion_histogram"));
  d.completion_histogram = coarsen_bins(bins);
  FTCOST_TRY(dist, LengthDistribution::from_histogram(d.completion_histogram, "completion_histogram"));
  d.completions = dist;
  d.has_completions = true;
  return Ok{};
}

std::string number_text(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return json(v).dump();
}

// length_tokens, the summary a file states for its readers: all six statistics (fields.cpp
// dataset.length_tokens), in order, and the shortest and longest the lengths' own (a summary that
// contradicts the data it sums up is a wrong file, not a detail to ignore).
Status check_length_tokens(const json& doc, const LengthDistribution& dist) {
  FTCOST_TRY(lt, FieldReader(doc, *field_list("dataset"), "").member("length_tokens"));
  if (lt == nullptr) return Ok{};
  const FieldReader r(*lt, *field_list("dataset.length_tokens"), "length_tokens");
  FTCOST_CHECK(r.check_object());
  for (auto it = lt->begin(); it != lt->end(); ++it)
    if (!field_list("dataset.length_tokens")->find(it.key()))
      return make_error(Errc::unknown_key, r.path_of(it.key()),
                        "is not a statistic of length_tokens (min, median, mean, p90, p99, max)");
  std::map<std::string, double> v;
  for (const char* k : {"min", "median", "mean", "p90", "p99", "max"}) {
    if (!r.present(k))
      return make_error(Errc::missing_field, r.path_of(k),
                        "required: length_tokens states min, median, mean, p90, p99 and max (or leave "
                        "length_tokens out)");
    FTCOST_TRY(x, r.number(k));
    v[k] = x;
  }
  const char* order[] = {"min", "median", "p90", "p99", "max"};
  for (std::size_t i = 1; i < 5; ++i)
    if (v[order[i]] < v[order[i - 1]])
      return make_error(
          Errc::invalid_value, r.path_of(order[i]),
          "must not be below " + std::string(order[i - 1]) + " (" + number_text(v[order[i - 1]]) + ")");
  if (v["mean"] < v["min"] || v["mean"] > v["max"])
    return make_error(Errc::invalid_value, r.path_of("mean"), "must be between min and max");
  for (const auto& [k, data] : {std::make_pair("min", dist.min()), std::make_pair("max", dist.max())})
    if (std::fabs(v[k] - data) > 0.5)
      return make_error(Errc::invalid_value, r.path_of(k),
                        number_text(v[k]) + " contradicts the lengths, whose " + k + " is " +
                            number_text(data) + " tokens");
  return Ok{};
}

}  // namespace

namespace {
json bins_json(const std::vector<LengthBin>& bins) {
  json out = json::array();
  for (const auto& b : bins)
    out.push_back(json::array({static_cast<std::int64_t>(b.lo), static_cast<std::int64_t>(b.hi),
                               static_cast<std::int64_t>(b.count)}));
  return out;
}
}  // namespace

json Dataset::to_file_json() const {
  const json bins = bins_json(histogram);
  json j{{"schema", "ftcost.dataset/1"},
         {"id", id},
         {"display_name", display_name},
         {"queries", static_cast<std::int64_t>(queries)},
         {"histogram", bins},
         {"source", source}};
  if (!tokenizer.empty()) j["tokenizer"] = tokenizer;
  if (template_tokens > 0) j["template_tokens"] = template_tokens;
  if (has_completions) j["completion_histogram"] = bins_json(completion_histogram);
  return j;
}

// A dataset file read through its field list (fields.cpp: dataset); the lengths as a histogram or quantiles.
Result<Dataset> parse_dataset(const json& doc, const std::string& source) {
  FTCOST_TRY(r, FieldReader::file(doc, "dataset", source));
  Dataset d;
  FTCOST_TRY(id, r.string("id"));
  FTCOST_TRY(name, r.string("display_name", id));
  FTCOST_TRY(queries, r.integer("queries"));
  FTCOST_TRY(qp, r.integer("queries_published", queries));
  FTCOST_TRY(src, r.string("source"));
  d.id = id;
  d.display_name = name;
  d.queries = static_cast<double>(queries);
  d.queries_published = static_cast<double>(qp);
  d.source = src;
  FTCOST_TRY(tt, r.integer("template_tokens"));
  d.template_tokens = static_cast<double>(tt);
  FTCOST_TRY(tok, r.string("tokenizer"));
  d.tokenizer = tok;
  if (auto st = read_completions(doc, d); !st.ok()) return st.error();
  FTCOST_TRY(hist, r.member("histogram"));
  FTCOST_TRY(quant, r.member("quantiles"));
  if (hist) {
    if (quant)
      return make_error(Errc::invalid_value, "histogram", "give either histogram or quantiles, not both");
    FTCOST_TRY(checked, histogram_from_json(doc.at("histogram")));  // errors name the file's bins
    (void)checked;
    std::vector<LengthBin> bins;
    for (const auto& b : doc.at("histogram"))
      bins.push_back(LengthBin{b[0].get<double>(), b[1].get<double>(), b[2].get<double>()});
    d.histogram = coarsen_bins(bins);
    FTCOST_TRY(dist, LengthDistribution::from_histogram(d.histogram, "histogram"));
    FTCOST_CHECK(check_length_tokens(doc, dist));
    d.lengths = dist;
    d.median = dist.quantile(0.5);
    return d;
  }
  if (!quant)
    return make_error(
        Errc::missing_field, "quantiles",
        "required: an array of [quantile, tokens] pairs (or a histogram of [lo, hi, count] bins)");
  std::vector<std::pair<double, double>> pts;
  const json& q = *quant;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const json& e = q[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number())
      return make_error(Errc::wrong_type, "quantiles[" + std::to_string(i) + "]",
                        "must be a [quantile, tokens] pair");
    pts.emplace_back(e[0].get<double>(), e[1].get<double>());
  }
  FTCOST_TRY(dist, LengthDistribution::from_quantiles(std::move(pts), "quantiles"));
  FTCOST_CHECK(check_length_tokens(doc, dist));
  d.lengths = dist;
  d.median = dist.quantile(0.5);
  return d;
}

std::vector<LengthBin> coarsen_bins(const std::vector<LengthBin>& bins) {
  std::vector<LengthBin> fine;
  for (const LengthBin& b : bins)
    if (b.count > 0) fine.push_back(b);
  if (fine.size() <= kExactLengthBins) return bins;
  // bins [lo, hi] with hi = max(lo, floor(lo * 1.01)): exact below 100 tokens, then ~1% wide; a finer bin
  // inside the current one joins it, a wider one stays as it is
  std::vector<LengthBin> out;
  for (const LengthBin& b : fine) {
    if (!out.empty() && b.hi <= out.back().hi) {
      out.back().count += b.count;
      continue;
    }
    if (!out.empty() && b.lo <= out.back().hi) out.back().hi = b.lo - 1;  // ends where b starts
    out.push_back(LengthBin{b.lo, std::max(b.hi, std::floor(b.lo * 1.01)), b.count});
  }
  // the last bin ends at the longest sample, not beyond it
  out.back().hi = std::min(out.back().hi, fine.back().hi);
  return out;
}

std::vector<LengthBin> bin_lengths(const std::vector<std::int64_t>& lengths) {
  // The distinct lengths with their counts, in increasing order: a sort and one pass (a std::map of a
  // million distinct lengths took 3 s, most of it cache misses).
  std::vector<std::int64_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  std::vector<LengthBin> exact;
  for (std::int64_t l : sorted) {
    const auto x = static_cast<double>(l);
    if (!exact.empty() && exact.back().lo == x)
      exact.back().count += 1;
    else
      exact.push_back(LengthBin{x, x, 1.0});
  }
  return coarsen_bins(exact);
}

namespace {

std::string trim(const std::string& s) {
  std::size_t a = 0;
  std::size_t b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Line {
  std::size_t number;  // 1-based
  std::string text;    // without the line end
};

// The file's lines (LF or CRLF; a UTF-8 byte order mark is dropped); trailing empty lines are left out.
std::vector<Line> split_lines(const std::string& text) {
  std::vector<Line> lines;
  std::size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::size_t n = 1;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    std::string l = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(Line{n++, l});
    if (end == std::string::npos) break;
    start = end + 1;
  }
  while (!lines.empty() && trim(lines.back().text).empty()) lines.pop_back();
  return lines;
}

bool is_comment(const std::string& t) { return !t.empty() && t[0] == '#'; }

// A whole number of tokens, 1..kMaxSampleTokens; the error says what is wrong with `cell`.
Result<std::int64_t> parse_length(const std::string& cell, const std::string& where) {
  const std::string t = trim(cell);
  if (t.empty()) return make_error(Errc::invalid_value, where, "empty; expected a length in tokens");
  std::int64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9')
      return make_error(
          Errc::invalid_value, where,
          "\"" + t + "\" is not a whole number of tokens (digits only, no sign, unit or decimals)");
    v = v * 10 + (c - '0');
    if (v > static_cast<std::int64_t>(kMaxSampleTokens))
      return make_error(Errc::out_of_range, where,
                        t + " tokens is more than the limit of " +
                            std::to_string(static_cast<long long>(kMaxSampleTokens)));
  }
  if (v < 1) return make_error(Errc::out_of_range, where, "a sample has at least 1 token, got " + t);
  return v;
}

// RFC 4180 fields of one line: comma-separated, "quoted" fields with "" for a quote (no line breaks inside).
Result<std::vector<std::string>> csv_fields(const std::string& line, const std::string& where) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  bool was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      if (!trim(cur).empty() || was_quoted)
        return make_error(Errc::invalid_value, where,
                          "a quote inside an unquoted field (column " + std::to_string(out.size() + 1) + ")");
      cur.clear();
      quoted = was_quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
      was_quoted = false;
    } else {
      if (was_quoted && !std::isspace(static_cast<unsigned char>(c)))
        return make_error(Errc::invalid_value, where,
                          "text after a closing quote (column " + std::to_string(out.size() + 1) + ")");
      cur += c;
    }
  }
  if (quoted) return make_error(Errc::invalid_value, where, "a quoted field is not closed");
  out.push_back(cur);
  return out;
}

Result<Dataset> dataset_from_lengths(const std::vector<std::int64_t>& lengths, const std::string& path,
                                     const std::string& what) {
  if (lengths.empty()) return make_error(Errc::invalid_value, path, "holds no lengths (" + what + ")");
  Dataset d;
  d.queries = d.queries_published = static_cast<double>(lengths.size());
  d.histogram = bin_lengths(lengths);
  FTCOST_TRY(dist, LengthDistribution::from_histogram(d.histogram, path));
  d.lengths = dist;
  d.median = dist.quantile(0.5);
  d.source = path + " (" + what + ")";
  return d;
}

const char* const kLengthColumns[] = {"length",   "tokens",      "num_tokens",
                                      "n_tokens", "token_count", "length_tokens"};

Result<Dataset> parse_csv(const std::vector<Line>& lines, std::size_t header_at, const std::string& path) {
  const Line& header = lines[header_at];
  const std::string hwhere = path + ":" + std::to_string(header.number);
  FTCOST_TRY(names, csv_fields(header.text, hwhere));
  int col = -1;
  std::string all;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string n = lower(trim(names[i]));
    all += (i ? ", " : "") + trim(names[i]);
    for (const char* want : kLengthColumns)
      if (n == want) {
        if (col >= 0)
          return make_error(Errc::invalid_value, hwhere,
                            "two length columns (\"" + trim(names[static_cast<std::size_t>(col)]) +
                                "\" and \"" + trim(names[i]) + "\"); keep one");
        col = static_cast<int>(i);
      }
  }
  if (col < 0) {
    std::string wanted;
    for (const char* w : kLengthColumns) wanted += std::string(wanted.empty() ? "" : ", ") + w;
    return make_error(Errc::invalid_value, hwhere,
                      "the first line is neither a length nor a CSV header with a length column (columns: " +
                          all + "; a length column is named one of " + wanted + ")");
  }
  std::vector<std::int64_t> lengths;
  for (std::size_t k = header_at + 1; k < lines.size(); ++k) {
    const std::string where = path + ":" + std::to_string(lines[k].number);
    if (trim(lines[k].text).empty())
      return make_error(Errc::invalid_value, where, "empty line inside the CSV");
    FTCOST_TRY(cells, csv_fields(lines[k].text, where));
    if (cells.size() != names.size())
      return make_error(
          Errc::invalid_value, where,
          std::to_string(cells.size()) + " columns, but the header has " + std::to_string(names.size()));
    FTCOST_TRY(v, parse_length(cells[static_cast<std::size_t>(col)],
                               where + " (column " + trim(names[static_cast<std::size_t>(col)]) + ")"));
    lengths.push_back(v);
  }
  return dataset_from_lengths(lengths, path, "CSV column " + trim(names[static_cast<std::size_t>(col)]));
}

Result<Dataset> parse_dataset_json(const std::string& text, const std::string& path) {
  FTCOST_TRY(doc, parse_json_text(text, path));
  if (!doc.is_object())
    return make_error(Errc::wrong_type, path, "must be a JSON object (schema ftcost.dataset/1)");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!field_list("dataset")->find(it.key()))  // the format's keys: fields.cpp
      return make_error(Errc::unknown_key, path + ": " + it.key(),
                        "is not a field of ftcost.dataset/1 (docs/dataset.md)");
  }
  // A stated id names the data set in reports: a name, not a path or terminal codes (a preset's id also
  // follows the schema's pattern, which db check enforces; a file's own id may be any such name).
  if (doc.contains("id") && doc.at("id").is_string()) {
    const std::string id = doc.at("id").get<std::string>();
    const bool bad_char = std::any_of(id.begin(), id.end(), [](char ch) {
      const auto u = static_cast<unsigned char>(ch);
      return u < 0x20 || u == 0x7F || ch == '/' || ch == '\\';
    });
    if (id.empty() || id.size() > 200 || bad_char)
      return make_error(Errc::invalid_value, path + ": id",
                        "must be a name of 1 to 200 characters without '/', '\\' or control characters "
                        "(it names the data set in reports), got " +
                            json(id).dump());
  }
  // defaults for what a minimal file (schema + histogram) leaves out
  json full = doc;
  std::string base =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (!full.contains("id")) full["id"] = base;
  if (!full.contains("source")) full["source"] = path;
  const bool has_queries = full.contains("queries");
  if (!has_queries) full["queries"] = 1;  // replaced by the histogram's total below
  auto parsed = parse_dataset(full, path);
  if (!parsed.ok()) {
    Error e = parsed.error();
    e.field = path + ": " + e.field;
    return e;
  }
  Dataset d = std::move(parsed).value();
  if (!has_queries) {
    if (!doc.contains("histogram"))
      return make_error(Errc::missing_field, path + ": queries",
                        "required with quantiles (a histogram's counts give it otherwise)");
    double total = 0;
    for (const auto& b : doc.at("histogram")) total += b[2].get<double>();
    // the histogram's total stands for queries: the same range (fields.cpp dataset_list)
    if (total > 1099511627776.0)
      return make_error(Errc::out_of_range, path + ": histogram",
                        "its counts add up to " + json(total).dump() +
                            " samples, more than 2^40 (1099511627776); give the counts of your data set");
    d.queries = d.queries_published = total;
  }
  return d;
}

}  // namespace

Result<Dataset> parse_dataset_file(const std::string& text, const std::string& path) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (text.compare(i, 3, "\xEF\xBB\xBF") == 0) i += 3;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  Result<Dataset> r = make_error(Errc::internal, path, "not parsed");
  if (i < text.size() && (text[i] == '{' || text[i] == '[')) {
    r = parse_dataset_json(text, path);
  } else {
    const std::vector<Line> lines = split_lines(text);
    std::size_t first = 0;
    while (first < lines.size() && is_comment(trim(lines[first].text))) ++first;
    if (first == lines.size())
      return make_error(
          Errc::invalid_value, path,
          "is empty: expected ftcost.dataset/1 JSON, one length per line, or a CSV with a length "
          "column");
    const std::string t = trim(lines[first].text);
    const bool numeric =
        !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!numeric && t.find(',') == std::string::npos && std::isdigit(static_cast<unsigned char>(t[0]))) {
      // a malformed number on the first line of a plain list (e.g. "12.5"), not a header
      FTCOST_CHECK(parse_length(t, path + ":" + std::to_string(lines[first].number)));
    }
    if (numeric) {
      std::vector<std::int64_t> lengths;
      for (std::size_t k = first; k < lines.size(); ++k) {
        const std::string lt = trim(lines[k].text);
        const std::string where = path + ":" + std::to_string(lines[k].number);
        if (is_comment(lt)) continue;
        if (lt.empty())
          return make_error(Errc::invalid_value, where, "empty line; expected a length in tokens");
        FTCOST_TRY(v, parse_length(lt, where));
        lengths.push_back(v);
      }
      r = dataset_from_lengths(lengths, path, "one length per line");
    } else {
      r = parse_csv(lines, first, path);
    }
    if (r.ok()) {
      Dataset& d = r.value();
      d.id = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
      d.display_name = d.id;
    }
  }
  if (!r.ok()) return r;
  Dataset d = std::move(r).value();
  d.own_data = true;
  return d;
}

}  // namespace ftcost
