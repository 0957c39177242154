// `ftcost paper eq1 | eq2 | table4`: the paper's analytical model (arXiv 2408.04693).
#include "command.hpp"
#include "format.hpp"
#include "ftcost/database.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/validate.hpp"

#include <iostream>
#include <memory>
#include <string>

namespace ftcost::cli {

namespace {

struct Eq1State {
  double mem = 48, seq = 512, sparsity = 0.25;
  double model_mem = -1;
  std::string model = "mixtral", coeffs = "code";
  bool as_json = false;
};

int run_eq1(const Eq1State& s) {
  const bool mixtral = s.model == "mixtral";
  const paper::Eq1Coeffs c = mixtral ? (s.coeffs == "code" ? paper::kEq1MixtralCode : paper::kEq1MixtralPaper)
                                     : paper::kEq1BlackMamba;
  const double mm =
      s.model_mem >= 0 ? s.model_mem : (mixtral ? paper::kMixtralModelMemGB : paper::kBlackMambaModelMemGB);
  auto r = paper::eq1_max_batch(c, s.mem, mm, s.seq, s.sparsity);
  if (!r.ok()) return fail(r.error());
  if (s.as_json) {
    print_json(json{{"equation", "Eq. (1)"},
                    {"coefficients", c.label},
                    {"c0", c.c0},
                    {"c1", c.c1},
                    {"gpu_mem_gb", s.mem},
                    {"model_mem_gb", mm},
                    {"seq_len", s.seq},
                    {"sparsity", s.sparsity},
                    {"raw", r->raw},
                    {"max_batch_size", r->batch}});
  } else {
    std::cout << "Eq. (1) " << c.label << ": GPU " << fixed(s.mem, 1) << " GB, model " << fixed(mm, 2)
              << " GB, seq " << fixed(s.seq, 0) << ", sparsity " << fixed(s.sparsity, 2)
              << "\n  max batch = floor(" << fixed(r->raw, 2) << ") = " << r->batch << "\n";
  }
  return 0;
}

struct Eq2State {
  bool as_json = false;
};

int run_eq2(const Eq2State& s) {
  json rows = json::array();
  Table t({"workload", "C3", "C2 (slope)", "C4 (intercept)", "RMSE (scripts)", "RMSE (exponent everywhere)",
           "points"},
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
  if (s.as_json) {
    print_json(json{{"equation", "Eq. (2)"},
                    {"gpu", "a40"},
                    {"source", "paper.md §2.4 sweeps, §3.2 refit"},
                    {"fits", rows}});
  } else {
    std::cout << "Eq. (2) throughput = C2/(sparsity·C3)·ln(batch) + C4, refitted to the paper's A40 sweeps:\n"
              << t.str();
  }
  return 0;
}

struct Table4State {
  double queries = 15000, epochs = 10;
  bool as_json = false;
};

int run_table4(const Table4State& s) {
  if (s.as_json) {
    print_json(paper_table4_with_predictions_json(Database::embedded(), s.queries, s.epochs));
    return 0;
  }
  std::cout << "Table IV (arXiv 2408.04693): Mixtral-8x7B QLoRA, sparse MoE, math data, "
            << fixed(s.epochs, 0) << " epochs, " << group_thousands(s.queries)
            << " queries, CUDO Compute prices\n";
  Table t({"GPU", "Mem", "MBS", "Throughput (q/s)", "$/hr", "Hours", "Cost ($)", "Published ($)",
           "ftcost MBS", "ftcost q/s", "ftcost hours", "ftcost cost ($)"},
          {false, true, true, true, true, true, true, true, true, true, true, true});
  const auto rows = paper::table4(s.queries, s.epochs);
  const auto pred = paper_table4_predictions(Database::embedded(), s.queries, s.epochs);
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
  std::cout << "Left: the paper's arithmetic on its measured throughputs. ftcost: its own prediction (stack "
               "hf-transformers-2024, its predicted maximum batch, the paper's prices); the A40 was part of "
               "the fit, the A100 and H100 were not.\n";
  for (const auto& p : pred)
    if (!p.error.empty()) std::cout << "ftcost on " << p.gpu_id << ": " << p.error << "\n";
  return 0;
}

}  // namespace

Command add_paper(CLI::App& app) {
  auto* paper_cmd = app.add_subcommand(
      "paper", "The paper's analytical model (arXiv 2408.04693): Eq. (1), Eq. (2), Table IV");
  paper_cmd->require_subcommand(1);

  auto s1 = std::make_shared<Eq1State>();
  auto* eq1 = paper_cmd->add_subcommand("eq1", "Eq. (1): maximum batch size from GPU memory");
  eq1->add_option("--gpu-mem", s1->mem, "GPU memory in GB")->check(number_in(1e-9, 1e12, "> 0"));
  eq1->add_option("--model", s1->model, "mixtral | blackmamba")
      ->check(CLI::IsMember({"mixtral", "blackmamba"}));
  eq1->add_option("--coeffs", s1->coeffs,
                  "Mixtral coefficients: code (C0=62, C1=0.89; reproduce Fig. 13) | paper (82, 0.95)")
      ->check(CLI::IsMember({"code", "paper"}));
  eq1->add_option("--seq", s1->seq, "sequence length (the padded/maximum length)")
      ->check(number_in(1e-9, 1e12, "> 0"));
  eq1->add_option("--sparsity", s1->sparsity, "fraction of experts active: 0.25 sparse, 1 dense")
      ->check(number_in(0.001, 1.0, "in (0, 1]"));
  eq1->add_option("--model-mem", s1->model_mem, "model memory in GB (default: Table I, 23.35 / 5.6)")
      ->check(number_in(0, 1e12, ">= 0"));
  eq1->add_flag("--json", s1->as_json, "JSON output");

  auto s2 = std::make_shared<Eq2State>();
  auto* eq2 =
      paper_cmd->add_subcommand("eq2", "Eq. (2): the A40 throughput fits (C2, C4, RMSE) and predictions");
  eq2->add_flag("--json", s2->as_json, "JSON output");

  auto s4 = std::make_shared<Table4State>();
  auto* t4 = paper_cmd->add_subcommand("table4", "Table IV: cost of fine-tuning Mixtral on A40, A100, H100");
  t4->add_option("--queries", s4->queries, "queries (the table is exact with 15,000)")
      ->check(number_in(1e-9, 1e12, "> 0"));
  t4->add_option("--epochs", s4->epochs, "epochs")->check(number_in(1e-9, 1e12, "> 0"));
  t4->add_flag("--json", s4->as_json, "JSON output");

  return {paper_cmd, [=] {
            if (eq1->parsed()) return run_eq1(*s1);
            if (eq2->parsed()) return run_eq2(*s2);
            if (t4->parsed()) return run_table4(*s4);
            return 0;
          }};
}

}  // namespace ftcost::cli
