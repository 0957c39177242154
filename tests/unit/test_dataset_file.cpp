// The user's own data (--dataset FILE): the three file forms, their strict errors (file, line, problem),
// histogram statistics, and that the paper's template_tokens never reach a user's own lengths.
#include "ftcost/database.hpp"
#include "ftcost/dataset.hpp"
#include "ftcost/estimate.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

using namespace ftcost;

namespace {

std::string error_of(const std::string& text, const std::string& path = "my.txt") {
  auto r = parse_dataset_file(text, path);
  return r.ok() ? std::string("(accepted)") : r.error().to_string();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Result<Inputs> resolve_with(const std::map<std::string, std::string>& files, Request req) {
  FileReader reader = [files](const std::string& p) -> Result<std::string> {
    auto it = files.find(p);
    if (it == files.end()) return make_error(Errc::io_error, p, "no such file");
    return it->second;
  };
  return resolve_request(req, Database::embedded(), reader);
}

}  // namespace

TEST_CASE("plain text: one length per line, exact statistics") {
  auto r = parse_dataset_file("# lengths of my set\r\n100\r\n200\r\n200\r\n500\r\n\r\n", "my.txt");
  REQUIRE(r.ok());
  CHECK(r->own_data);
  CHECK(r->id == "my.txt");
  CHECK(r->queries == 4);
  CHECK(r->template_tokens == 0);
  CHECK(r->lengths.mean() == doctest::Approx(250.0));
  CHECK(r->lengths.max() == 500);
  CHECK(r->lengths.min() == 100);
  // E[max of 2 draws] of {100, 200, 200, 500} = sum over pairs: P(max=100)=1/16, P(<=200)=9/16, so
  // 100/16 + 200*8/16 + 500*7/16 = 325
  CHECK(r->lengths.expected_max(2, 1e9) == doctest::Approx(325.0));
  // truncation at 300: E[min(L, 300)] = (100 + 200 + 200 + 300) / 4
  CHECK(r->lengths.truncated_mean(300) == doctest::Approx(200.0));
}

TEST_CASE("plain text errors name the file, the line and the problem") {
  CHECK(error_of("100\n12.5\n") ==
        "my.txt:2: \"12.5\" is not a whole number of tokens (digits only, no sign, "
        "unit or decimals)");
  CHECK(contains(error_of("100\n0\n"), "my.txt:2: a sample has at least 1 token, got 0"));
  CHECK(contains(error_of("100\n\n200\n"), "my.txt:2: empty line"));
  CHECK(contains(error_of("100\n-5\n"), "my.txt:2: \"-5\" is not a whole number"));
  CHECK(contains(error_of("100\n99999999\n"), "my.txt:2: 99999999 tokens is more than the limit"));
  CHECK(contains(error_of("12.5\n100\n"), "my.txt:1: \"12.5\""));
  CHECK(contains(error_of(""), "my.txt: is empty"));
  CHECK(contains(error_of("# only a comment\n"), "my.txt: is empty"));
}

TEST_CASE("CSV with a header naming the length column") {
  auto r = parse_dataset_file("id,text,num_tokens\n1,\"a, \"\"quoted\"\" text\",300\n2,plain,100\n", "d.csv");
  REQUIRE(r.ok());
  CHECK(r->queries == 2);
  CHECK(r->lengths.mean() == doctest::Approx(200.0));
  CHECK(contains(error_of("id,length\n1,10\n2\n", "d.csv"), "d.csv:3: 1 columns, but the header has 2"));
  CHECK(contains(error_of("id,length\n1,10\n2,ten\n", "d.csv"), "d.csv:3 (column length): \"ten\""));
  CHECK(contains(error_of("id,text\n1,10\n", "d.csv"),
                 "d.csv:1: the first line is neither a length nor a CSV "
                 "header with a length column (columns: id, text"));
  CHECK(contains(error_of("length,tokens\n1,10\n", "d.csv"), "d.csv:1: two length columns"));
  CHECK(contains(error_of("id,length\n1,\"10\n", "d.csv"), "d.csv:2: a quoted field is not closed"));
  CHECK(contains(error_of("length\n", "d.csv"), "d.csv: holds no lengths"));
}

TEST_CASE("ftcost.dataset/1 JSON with a histogram") {
  const std::string minimal =
      R"({"schema": "ftcost.dataset/1", "histogram": [[100, 100, 3], [200, 299, 1]]})";
  auto r = parse_dataset_file(minimal, "dir/lengths.json");
  REQUIRE(r.ok());
  CHECK(r->id == "lengths.json");
  CHECK(r->queries == 4);  // the histogram's total
  CHECK(r->lengths.mean() == doctest::Approx((3 * 100 + 249.5) / 4.0));
  CHECK(r->lengths.max() == 299);
  CHECK(r->template_tokens == 0);

  auto e = [](const std::string& t) { return error_of(t, "l.json"); };
  CHECK(contains(e(R"({"schema": "ftcost.dataset/1", "histogram": [[100, 100, 3]], "lenghts": 1})"),
                 "l.json: lenghts: is not a field of ftcost.dataset/1"));
  CHECK(contains(e(R"({"schema": "ftcost.dataset/1", "histogram": [[100, 120, 3], [110, 130, 1]]})"),
                 "l.json: histogram[1]: bins must be in increasing order"));
  CHECK(contains(e(R"({"schema": "ftcost.dataset/1", "histogram": [[100, 90, 3]]})"),
                 "l.json: histogram[0]: hi must be >= lo"));
  CHECK(contains(e(R"({"schema": "ftcost.dataset/1", "histogram": [[100, 100, 0]]})"),
                 "l.json: histogram: holds no samples"));
  CHECK(contains(e(R"({"schema": "ftcost.dataset/1", "histogram": [[100, 100, 1.5]]})"),
                 "l.json: histogram[0]: count must be a whole number"));
  CHECK(contains(e(R"({"schema": "ftcost.dataset/1", "histogram": [[100, 100]]})"),
                 "l.json: histogram[0]: must be a [lo, hi, count] triple"));
  CHECK(contains(e(R"({"schema": "ftcost.dataset/2", "histogram": [[100, 100, 1]]})"), "l.json: schema"));
  CHECK(contains(
      e(R"({"schema": "ftcost.dataset/1", "histogram": [[1, 1, 1]], "quantiles": [[0, 1], [1, 2]]})"),
      "give either histogram or quantiles"));
  CHECK(contains(e(R"({"schema": "ftcost.dataset/1", "quantiles": [[0, 1], [1, 2]]})"), "l.json: queries"));
  CHECK(contains(e("{\"schema\": "), "l.json: not valid JSON"));
}

TEST_CASE("many distinct lengths are binned to about 1% without moving the mean") {
  std::vector<std::int64_t> lengths;
  double sum = 0;
  for (std::int64_t i = 0; i < 50000; ++i) {
    const std::int64_t l = 1 + (i * 7919) % 20000;
    lengths.push_back(l);
    sum += static_cast<double>(l);
  }
  const auto bins = bin_lengths(lengths);
  CHECK(bins.size() < 800);
  auto d = LengthDistribution::from_histogram(bins, "x");
  REQUIRE(d.ok());
  CHECK(d->mean() == doctest::Approx(sum / 50000).epsilon(0.005));
  CHECK(d->max() == 20000);
  CHECK(d->min() == 1);
}

TEST_CASE("a long list reduces to a compact histogram file that reads back the same") {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(1 + (i * 7919) % 9000) + "\n";
  auto a = parse_dataset_file(text, "long.txt");
  REQUIRE(a.ok());
  const std::string compact = a->to_file_json().dump();
  CHECK(compact.size() < text.size() / 2);
  auto b = parse_dataset_file(compact, "long.txt");
  REQUIRE(b.ok());
  CHECK(b->queries == a->queries);
  CHECK(b->id == "long.txt");
  CHECK(b->lengths.points() == a->lengths.points());
}

TEST_CASE("a JSON histogram of more than 1024 exact bins reads like the list it came from") {
  // issue 39 H1: 460,000 exact bins made every estimate of compare and plan walk 920,000 quantile points
  std::string text;
  std::string bins;
  for (int l = 1; l <= 3000; ++l) {
    const int n = 1 + (l * 7) % 5;
    for (int k = 0; k < n; ++k) text += std::to_string(l) + "\n";
    bins += std::string(bins.empty() ? "" : ",") + "[" + std::to_string(l) + "," + std::to_string(l) + "," +
            std::to_string(n) + "]";
  }
  auto list = parse_dataset_file(text, "l.txt");
  auto hist = parse_dataset_file(R"({"schema": "ftcost.dataset/1", "histogram": [)" + bins + "]}", "h.json");
  REQUIRE(list.ok());
  REQUIRE(hist.ok());
  CHECK(hist->histogram.size() < 1024);
  CHECK(hist->lengths.points() == list->lengths.points());
  CHECK(hist->queries == list->queries);
}

TEST_CASE("summarised_reader serves the user's list as its compact file: the same job, read once") {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(1 + (i * 7919) % 9000) + "\n";
  const Request req = {
      {"model", "llama-3.1-8b"}, {"gpu", "h100-sxm5-80gb"}, {"method", "lora"}, {"dataset", "d/My Lengths"}};
  int reads = 0;
  FileReader reader = [&](const std::string& p) -> Result<std::string> {
    ++reads;
    if (p != "d/My Lengths") return make_error(Errc::io_error, p, "no such file");
    return text;
  };
  auto a = resolve_request(req, Database::embedded(), reader);
  REQUIRE(a.ok());
  const FileReader summarised = summarised_reader(a.value(), reader);
  auto served = summarised("d/My Lengths");
  REQUIRE(served.ok());
  CHECK(served->size() < text.size() / 2);
  auto b = resolve_request(req, Database::embedded(), summarised);
  REQUIRE(b.ok());
  CHECK(reads == 1);
  CHECK(b->dataset->id == a->dataset->id);  // a file name, not a valid id: taken from the path again
  CHECK(b->dataset->display_name == a->dataset->display_name);
  CHECK(b->dataset->source == a->dataset->source);
  CHECK(b->dataset->queries == a->dataset->queries);
  CHECK(b->dataset->lengths.points() == a->dataset->lengths.points());
  CHECK(b->workload.max_length == a->workload.max_length);
  CHECK(b->defaults == a->defaults);
}

TEST_CASE("--dataset FILE: no template tokens of the paper's pipeline, no silent truncation") {
  const Request base = {{"model", "llama-3.1-8b"}, {"gpu", "rtx-4090"}, {"method", "qlora"}};
  Request preset = base;
  preset["dataset"] = "cs15k";
  auto p = resolve_with({}, preset);
  REQUIRE(p.ok());
  CHECK(p->workload.template_tokens == 80);  // the paper's prompt pipeline, a preset fact

  Request own = base;
  own["dataset"] = "data/mine.txt";
  auto o = resolve_with({{"data/mine.txt", "100\n3000\n"}}, own);
  REQUIRE(o.ok());
  CHECK(o->workload.template_tokens == 0);
  CHECK(o->workload.max_length == 3000);  // default: the longest sample, not the 1024 cutoff
  CHECK(o->workload.queries == 2);
  CHECK(o->dataset_id == "data/mine.txt");
  REQUIRE(o->dataset != nullptr);
  CHECK(o->dataset->own_data);

  // a JSON file may state a template its lengths leave out
  own["dataset"] = "t.json";
  auto t = resolve_with({{"t.json", R"({"schema": "ftcost.dataset/1", "template_tokens": 12,
                                      "histogram": [[100, 100, 1]]})"}},
                        own);
  REQUIRE(t.ok());
  CHECK(t->workload.template_tokens == 12);
  CHECK(t->workload.max_length == 112);

  // errors name the flag or the file
  own["dataset"] = "nope";
  auto u = resolve_with({}, own);
  REQUIRE(!u.ok());
  CHECK(u.error().field == "--dataset");
  own["dataset"] = "data/bad.txt";
  auto b = resolve_with({{"data/bad.txt", "100\nabc\n"}}, own);
  REQUIRE(!b.ok());
  CHECK(b.error().to_string() ==
        "data/bad.txt:2: \"abc\" is not a whole number of tokens (digits only, no sign, "
        "unit or decimals)");
}
