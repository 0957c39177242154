// Headless smoke test of the calculator's UI: Dear ImGui with no platform or renderer backend (display
// size set, font atlas built, draw data produced and dropped), N frames of every view, with inputs
// changed, a shared link restored, a bad link and bad uploads given. Fails on any missing panel, a
// result that does not change when an input does, or an error where an estimate is expected.
// Run by ctest (native preset) as `web_ui_smoke`.
#include "app.hpp"
#include "engine.hpp"
#include "ftcost/api.hpp"
#include "ftcost/job_compare.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "option_samples.hpp"
#include "style.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

int failures = 0;
#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                   \
      std::fprintf(stderr, "\n");                                          \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

class TestHost : public ftcost::web::Host {
 public:
  std::map<std::string, std::string> store;
  std::string hash;
  int downloads = 0, pickers = 0;
  std::string load(const std::string& key) override { return store.count(key) ? store[key] : ""; }
  void save(const std::string& key, const std::string& value) override { store[key] = value; }
  void set_state_hash(const std::string& h) override { hash = h; }
  std::string share_url(const std::string& h) override { return "http://127.0.0.1/#" + h; }
  void copy_to_clipboard(const std::string&) override {}
  void download(const std::string&, const std::string&, const std::string& content) override {
    ++downloads;
    last_download = content;
  }
  void open_file_picker(const std::string&) override { ++pickers; }
  void request_clipboard_text() override {}
  bool fetch_hub_config(const std::string& id) override {
    hub_requests.push_back(id);
    return true;
  }
  std::vector<std::string> hub_requests;
  std::string storage_description() override { return "the test's memory"; }
  std::string last_download;
};

void run_frames(ftcost::web::App& app, int n, std::set<std::string>* seen, float w = 1400, float h = 900) {
  ImGuiIO& io = ImGui::GetIO();
  for (int i = 0; i < n; ++i) {
    io.DisplaySize = ImVec2(w, h);
    io.DeltaTime = 1.0f / 60.0f;
    // move the mouse over the page so that hover read-outs and tooltips are drawn too
    io.MousePos = ImVec2(static_cast<float>((i * 97) % static_cast<int>(w)),
                         static_cast<float>((i * 53) % static_cast<int>(h)));
    ImGui::NewFrame();
    app.frame();
    ImGui::Render();
    ImDrawData* dd = ImGui::GetDrawData();
    CHECK(dd != nullptr && dd->Valid, "no draw data");
    CHECK(dd->TotalVtxCount > 100, "almost nothing drawn (%d vertices)", dd->TotalVtxCount);
    if (seen != nullptr) seen->insert(app.panels_drawn().begin(), app.panels_drawn().end());
  }
}

double result_number(const ftcost::web::App& app, const char* key) {
  const auto& r = app.result();
  if (!r.is_object() || !r.contains(key) || !r[key].is_number()) return -1;
  return r[key].get<double>();
}

// the same request through the JS API's function gives the same numbers as the UI's engine
void check_api_matches_ui(ftcost::web::App& app, double qps0) {
  std::string j = ftcost::api::estimate_json(ftcost::web::request_to_json_text(app.effective_request()));
  auto doc = ftcost::json::parse(j);
  CHECK(ftcost::web::jnum(doc, "max_batch_size", -1.0) == result_number(app, "max_batch_size"),
        "api and UI disagree on max batch");
  CHECK(ftcost::web::jnum(doc, "throughput_queries_per_s", -1.0) == qps0,
        "api and UI disagree on throughput");
}

// the GPU x provider table: rows on GPUs the paper's CUDA-only stack does not run on are flagged and never
// "cheapest"; NVIDIA rows are not flagged
void check_provider_table(ftcost::web::App& app) {
  ftcost::web::Engine engine;
  auto rows = engine.compare(app.effective_request(), {});
  int flagged = 0, nvidia = 0;
  for (const auto& r : rows) {
    const auto* g = engine.db().gpu(r.gpu_id);
    CHECK(g != nullptr, "unknown GPU %s in the table", r.gpu_id.c_str());
    if (g == nullptr) continue;
    if (g->vendor == "NVIDIA") {
      ++nvidia;
      CHECK(r.stack_warning.empty(), "NVIDIA row %s flagged: %s", r.gpu_id.c_str(), r.stack_warning.c_str());
    } else {
      ++flagged;
      CHECK(!r.stack_warning.empty(), "%s (%s) not flagged", r.gpu_id.c_str(), g->vendor.c_str());
    }
  }
  CHECK(flagged > 0 && nvidia > 0, "table has %d flagged and %d NVIDIA rows", flagged, nvidia);
  for (bool spot : {false, true}) {
    const int i = ftcost::web::cheapest_row(rows, spot);
    CHECK(i >= 0, "no cheapest row (spot %d)", spot ? 1 : 0);
    if (i >= 0) {
      const auto& c = rows[static_cast<std::size_t>(i)];
      CHECK(c.stack_warning.empty() && c.fits && c.has_price && (spot || !c.spot), "bad cheapest row %s",
            c.gpu_id.c_str());
    }
  }
  CHECK(ftcost::web::compare_to_csv(rows).find("runs on NVIDIA GPUs only") != std::string::npos,
        "the CSV export does not carry the stack warning");
}

// a valid calibration is accepted, assigned to its GPU, marked "yours" and used for that GPU's estimates
void check_valid_calibration(ftcost::web::App& app, TestHost& host, std::set<std::string>& seen) {
  std::ifstream f(std::string(FTCOST_SOURCE_DIR) + "/tests/data/calibration/h100-sxm-synthetic.json");
  std::stringstream text;
  text << f.rdbuf();
  app.on_file("calibration", "h100-sxm-synthetic.json", text.str());
  run_frames(app, 3, &seen);
  CHECK(app.calibrations().size() == 1, "valid calibration not accepted: %s",
        app.calibration_error().c_str());
  if (app.calibrations().size() == 1) {
    CHECK(app.calibrations()[0].gpu == "h100-sxm5-80gb", "calibration assigned to %s",
          app.calibrations()[0].gpu.c_str());
    auto r = app.state().request;
    r["gpu"] = app.calibrations()[0].gpu;
    app.set_request(r);
    run_frames(app, 3, &seen);
    CHECK(app.effective_request().count("calibration") == 1, "the calibration is not used for its GPU");
    // spec-only next to calibrated, with the badges (#16 item 5)
    const ftcost::json cc = ftcost::web::jat(ftcost::json::parse(app.debug_json()), "calibration_comparison");
    CHECK(cc.is_object() && !ftcost::web::jflag(ftcost::web::jat(cc, "a"), "calibrated", true) &&
              ftcost::web::jflag(ftcost::web::jat(cc, "b"), "calibrated", false),
          "no spec-only vs calibrated comparison: %s", cc.dump().c_str());
    // export of the current job: request, link and CLI command
    const int downloads = host.downloads;
    app.export_job_for_test();
    const ftcost::json job = ftcost::json::parse(host.last_download);
    CHECK(host.downloads == downloads + 1 && ftcost::web::jstr(job, "schema") == "ftcost.job/1" &&
              ftcost::web::jstr(job, "link").find("#v=1&model=") != std::string::npos &&
              ftcost::web::jstr(job, "cli").find("--gpu h100-sxm5-80gb") != std::string::npos,
          "job export: %s", host.last_download.substr(0, 400).c_str());
    CHECK(!app.result().contains("error"), "estimate with the calibration failed: %s",
          app.result().dump().c_str());
    CHECK(host.store.count("ftcost.calibrations") == 1 && !host.store["ftcost.calibrations"].empty(),
          "calibration not stored");
    // a new App (a reload of the page) finds it again in storage
    ftcost::web::App reloaded(host);
    CHECK(reloaded.calibrations().size() == 1, "stored calibration not restored");

    // #16 item 8: the calibration is seen and shared
    app.set_view(ftcost::web::View::calculator);
    run_frames(app, 3, &seen);
    const ftcost::json dbg = ftcost::json::parse(app.debug_json());
    const ftcost::json& tp_card = ftcost::web::jat(ftcost::web::jat(dbg, "cards"), "c_tp");
    CHECK(tp_card.dump().find("badge: calibrated, synthetic") != std::string::npos &&
              tp_card.dump().find("spec sheet ") != std::string::npos,
          "throughput card without the calibrated badge and the spec-sheet figure: %s",
          tp_card.dump().c_str());
    CHECK(ftcost::web::jat(job, "calibration").is_object() &&
              ftcost::web::jstr(ftcost::web::jat(job, "calibration"), "fingerprint").size() == 16 &&
              ftcost::web::jat(ftcost::web::jat(job, "calibration"), "compact").is_object(),
          "the job export does not carry the calibration");
    const std::string fp = app.calibrations()[0].fingerprint;
    CHECK(host.hash.find("&cal=") != std::string::npos, "the link does not embed the calibration: %s",
          host.hash.substr(0, 200).c_str());
    const double calibrated_qps = result_number(app, "throughput_queries_per_s");
    double spec_qps = -1;
    for (const auto& row : ftcost::web::jat(ftcost::web::jat(dbg, "calibration_comparison"), "rows"))
      if (ftcost::web::jstr(row, "metric") == "throughput_queries_per_s")
        spec_qps = ftcost::web::jnum(row, "a");
    // a fresh browser (empty storage) opening the link: the same calibrated numbers, nothing stored
    {
      TestHost fresh;
      ftcost::web::App other(fresh);
      other.on_hash("#" + host.hash);
      run_frames(other, 3, nullptr);
      CHECK(other.calibrations().size() == 1 && other.calibrations()[0].from_link &&
                other.calibrations()[0].fingerprint == fp,
            "the link's calibration was not used");
      CHECK(result_number(other, "throughput_queries_per_s") == calibrated_qps,
            "the link does not reproduce the calibrated throughput (%g vs %g)",
            result_number(other, "throughput_queries_per_s"), calibrated_qps);
      CHECK(fresh.store["ftcost.calibrations"].empty(), "a link's calibration was stored");
      CHECK(fresh.hash.find("&cal=") != std::string::npos, "the recipient's link lost the calibration");
    }
    // the sender reloading the page (its link, its own stored file): its own file is used, no link copy
    {
      ftcost::web::App again(host);
      again.on_hash("#" + host.hash);
      run_frames(again, 3, nullptr);
      CHECK(again.calibrations().size() == 1 && !again.calibrations()[0].from_link &&
                again.calibrations()[0].in_use() &&
                result_number(again, "throughput_queries_per_s") == calibrated_qps,
            "reloading the sender's own link does not use the sender's own calibration");
    }
    // a link with the fingerprint only, in a browser without that file: a message, spec-sheet numbers; the
    // file loaded afterwards gives the calibrated numbers
    {
      std::string h = host.hash;
      const auto at = h.find("&cal=");
      auto end = h.find('&', at + 1);
      h = h.substr(0, at) + "&cal-id=" + fp + (end == std::string::npos ? std::string() : h.substr(end));
      TestHost fresh;
      ftcost::web::App other(fresh);
      other.on_hash("#" + h);
      run_frames(other, 3, nullptr);
      bool said = false;
      for (const auto& n : other.notices())
        said = said || (n.text.find("made with calibration " + fp.substr(0, 8)) != std::string::npos &&
                        n.text.find("showing spec-sheet numbers") != std::string::npos);
      CHECK(said, "no message about the missing calibration");
      CHECK(other.effective_request().count("calibration") == 0 &&
                result_number(other, "throughput_queries_per_s") == spec_qps,
            "not the spec-sheet numbers (%g vs %g)", result_number(other, "throughput_queries_per_s"),
            spec_qps);
      CHECK(fresh.hash.find("&cal-id=" + fp) != std::string::npos, "the link lost the fingerprint: %s",
            fresh.hash.c_str());
      other.on_file("calibration", "h100-sxm-synthetic.json", text.str());
      run_frames(other, 3, nullptr);
      CHECK(result_number(other, "throughput_queries_per_s") == calibrated_qps,
            "loading the file does not give the calibrated numbers");
      bool still = false;
      for (const auto& n : other.notices())
        still = still || n.text.find("made with calibration") != std::string::npos;
      CHECK(!still, "the missing-calibration message stays after the file was loaded");
    }
  }
}

// the Plan view (#18): the search runs (deferred, then cached), the front is drawn, a plan loads into the
// calculator with the same numbers, its config downloads, the constraints round-trip through the link
void check_plan_view(ftcost::web::App& app, TestHost& host, std::set<std::string>& seen) {
  // attention LoRA targets: every config generator maps them (all-linear on an MoE model is refused by
  // name)
  ftcost::Request job = ftcost::web::default_request();
  job["lora-targets"] = "q_proj,k_proj,v_proj,o_proj";
  app.set_request(job);
  app.set_view(ftcost::web::View::plan);
  run_frames(app, 30, &seen);  // 0.5 s of frames: past the search's quarter-second wait
  const auto& pr = app.plan_result();
  CHECK(pr.is_object() && !pr.contains("error"), "plan search failed: %s", pr.dump().substr(0, 400).c_str());
  const auto& front = ftcost::web::jat(pr, "front");
  CHECK(front.is_array() && !front.empty(), "the plan front is empty");
  const int best = static_cast<int>(ftcost::web::jnum(pr, "best", -1));
  CHECK(best >= 0, "no best plan");
  // the request the view sends: the job minus what the plan chooses
  const ftcost::Request preq = app.plan_request();
  CHECK(preq.count("gpu") == 0 && preq.count("batch") == 0, "the plan request keeps gpu/batch");
  CHECK(preq.at("model") == "mixtral-8x7b", "the plan request lost the job's model");
  // a constraint changes the search and goes into the link
  app.set_plan_constraint("max-gpus", "1");
  app.set_plan_constraint("minimize", "time");
  run_frames(app, 30, &seen);
  CHECK(host.hash.find("plan-max-gpus=1") != std::string::npos &&
            host.hash.find("view=plan") != std::string::npos,
        "plan state not in the hash: %s", host.hash.c_str());
  CHECK(ftcost::web::jstr(app.plan_result(), "minimize") == "time", "minimize=time not searched: %s",
        app.plan_result().dump().substr(0, 300).c_str());
  for (const auto& p : ftcost::web::jat(app.plan_result(), "front"))
    CHECK(ftcost::web::jnum(p, "gpus_per_node") * ftcost::web::jnum(p, "nodes") <= 1, "max-gpus=1 ignored");
  {
    TestHost h2;
    ftcost::web::App app2(h2);
    app2.on_hash(host.hash);
    CHECK(app2.state().view == ftcost::web::View::plan, "view=plan not restored from %s", host.hash.c_str());
    CHECK(app2.state().plan == app.state().plan, "plan constraints not restored from %s", host.hash.c_str());
    const auto bad = ftcost::web::decode_hash("v=1&plan-bogus=3");
    CHECK(!bad.problems.empty() && bad.state.plan.empty(), "an unknown plan key was accepted");
  }
  // a bad constraint: the search names the flag, nothing is clamped
  app.set_plan_constraint("deadline", "-3");
  app.update_plan_now();
  CHECK(app.plan_result().contains("error") &&
            ftcost::web::jstr(app.plan_result()["error"], "field") == "--deadline",
        "a negative deadline was not refused by name: %s", app.plan_result().dump().substr(0, 300).c_str());
  run_frames(app, 3, &seen);
  app.set_plan_constraint("deadline", "");
  app.set_plan_constraint("minimize", "");
  app.set_plan_constraint("max-gpus", "");
  app.update_plan_now();
  run_frames(app, 3, &seen);
  // export: the main config file of the best plan, for TRL
  const int best2 = static_cast<int>(ftcost::web::jnum(app.plan_result(), "best", -1));
  const int before = host.downloads;
  CHECK(app.export_plan_config(best2, "trl", 0), "the TRL config of plan %d was not exported", best2);
  CHECK(host.downloads == before + 1 &&
            host.last_download.find("per_device_train_batch_size") != std::string::npos,
        "the exported config is not a TRL config: %s", host.last_download.substr(0, 200).c_str());
  // load the best plan: the calculator's estimate gives the plan's hours and cost
  double plan_hours = 0, plan_cost = 0;
  for (const auto& p : ftcost::web::jat(app.plan_result(), "front"))
    if (static_cast<int>(ftcost::web::jnum(p, "id", -1)) == best2) {
      plan_hours = ftcost::web::jnum(p, "hours");
      plan_cost = ftcost::web::jnum(p, "cost_usd");
    }
  CHECK(app.load_plan(best2), "plan %d did not load", best2);
  CHECK(!app.load_plan(100000), "a plan id that does not exist loaded");
  run_frames(app, 3, &seen);
  CHECK(app.state().view == ftcost::web::View::calculator, "loading a plan did not open the calculator");
  // The plan searches with the database's calibrations; when the user's calibration for the plan's GPU is
  // on (the H100 one loaded above), the Calculator uses it, says so, and its numbers differ.
  std::string plan_gpu;
  for (const auto& p : ftcost::web::jat(app.plan_result(), "front"))
    if (static_cast<int>(ftcost::web::jnum(p, "id", -1)) == best2) plan_gpu = ftcost::web::jstr(p, "gpu");
  bool calibrated = false;
  for (const auto& cal : app.calibrations()) calibrated = calibrated || (cal.enabled && cal.gpu == plan_gpu);
  const double h = result_number(app, "time_hours"), c = result_number(app, "cost_usd");
  if (calibrated) {
    bool warned = false;
    for (const auto& n : app.notices())
      warned = warned || n.text.find("uses your calibration") != std::string::npos;
    CHECK(warned, "a plan on a GPU with the user's calibration loaded without saying the numbers differ");
  } else {
    CHECK(std::fabs(h - plan_hours) <= 1e-9 * plan_hours && std::fabs(c - plan_cost) <= 1e-6 * plan_cost,
          "the loaded plan estimates %g h, $%g; the plan said %g h, $%g (%s)", h, c, plan_hours, plan_cost,
          ftcost::json(app.state().request).dump().c_str());
  }
  // the scaling series of a multi-GPU-capable job (full fine-tuning of a 7B model on H100s)
  app.set_request(ftcost::Request{
      {"model", "llama-2-7b"}, {"gpu", "h100-sxm5-80gb"}, {"method", "full"}, {"dataset", "math14k"}});
  run_frames(app, 3, &seen);
  const auto& sc = app.scaling_result();
  int fitted = 0;
  for (const auto& p : ftcost::web::jat(sc, "points")) fitted += ftcost::web::jflag(p, "fits") ? 1 : 0;
  CHECK(fitted >= 2, "the scaling series has %d fitting counts: %s", fitted,
        sc.dump().substr(0, 400).c_str());
  app.set_request(ftcost::web::default_request());
}

// the option table: every option that links carry round-trips through the URL hash, in the table's order
void check_option_links() {
  const ftcost::Database& db = ftcost::Database::embedded();
  std::size_t last_pos = 0;
  for (const auto& o : ftcost::job_options()) {
    const ftcost::test::OptionSample smp = ftcost::test::option_sample(o, db);
    ftcost::web::UiState st;
    st.request = smp.request;
    const std::string h = ftcost::web::encode_hash(st);
    const ftcost::web::HashDecode d = ftcost::web::decode_hash(h);
    if (!o.in_url) {
      CHECK(h.find("&" + o.key + "=") == std::string::npos, "%s is in a link: %s", o.key.c_str(), h.c_str());
      continue;
    }
    CHECK(d.problems.empty(), "%s: the link %s has problems", o.key.c_str(), h.c_str());
    CHECK(d.state.request == smp.request, "%s does not round-trip through %s", o.key.c_str(), h.c_str());
    // every option alone after the fixed keys: its position in the hash follows the table's order
    ftcost::web::UiState all;
    for (const auto& x : ftcost::job_options())
      if (x.in_url) all.request[x.key] = "1";
    const std::string ha = ftcost::web::encode_hash(all);
    const std::size_t pos = ha.find("&" + o.key + "=");
    CHECK(pos != std::string::npos && pos >= last_pos, "%s out of the table's order in %s", o.key.c_str(),
          ha.c_str());
    last_pos = pos;
  }
}

// a value outside the option's range is refused by the core, naming the option
void check_out_of_range() {
  TestHost h2;
  ftcost::web::App app2(h2);
  run_frames(app2, 3, nullptr);
  ftcost::Request r = app2.state().request;
  r["epochs"] = "0";  // below the table's range: the core refuses it, by name
  app2.set_request(r);
  run_frames(app2, 2, nullptr);
  const std::string err = ftcost::web::jstr(app2.result()["error"], "message");
  CHECK(err.find("--epochs") != std::string::npos, "epochs=0 not refused by name: %s", err.c_str());
}

// more than one GPU: the same JSON as the CLI's multi-GPU path, and the parallel panel drawn
void check_multi_gpu() {
  TestHost h4;
  ftcost::web::App app4(h4);
  ftcost::Request r = {{"model", "llama-3.1-70b"},
                       {"gpu", "h100-sxm5-80gb"},
                       {"method", "lora"},
                       {"dataset", "math14k"},
                       {"node", "dgx-h100"}};
  app4.set_request(r);
  std::set<std::string> seen4;
  run_frames(app4, 3, &seen4);
  CHECK(app4.result().contains("parallel"), "no multi-GPU result: %s", app4.debug_json().c_str());
  CHECK(seen4.count("parallel") == 1, "the parallel panel was not drawn");
  const auto api = ftcost::json::parse(
      ftcost::api::estimate_json(ftcost::web::request_to_json_text(app4.effective_request())));
  CHECK(api == app4.result(), "the calculator's multi-GPU result differs from the JS API's");
}

// a recorded run (ftcost.run/1): the job becomes the run's, estimates on its GPU use the refitted stack
void check_recorded_run() {
  TestHost h3;
  ftcost::web::App app3(h3);
  run_frames(app3, 3, nullptr);
  const ftcost::json step = {{"wall_s", 1.2}, {"micro_batches", {{{"batch_size", 4}, {"seq_len", 512}}}}};
  const ftcost::json run = {{"schema", "ftcost.run/1"},
                            {"gpu", {{"id", "a40"}}},
                            {"model", {{"preset", "llama-2-7b"}}},
                            {"training", {{"method", "lora"}}},
                            {"steps", {step, step, step}}};
  app3.on_file("", "my-run.json", run.dump());
  app3.set_view(ftcost::web::View::calibrations);
  std::set<std::string> seen3;
  run_frames(app3, 3, &seen3);
  const ftcost::Request eff = app3.effective_request();
  CHECK(eff.count("run") == 1, "the run is not used for the estimate: %s", app3.debug_json().c_str());
  CHECK(app3.state().request.at("model") == "llama-2-7b", "the job did not become the run's");
  CHECK(seen3.count("run") == 1, "the run section was not drawn");
  const std::string stack_id = ftcost::web::jstr(app3.result()["inputs"], "stack");
  CHECK(stack_id.find("+run") != std::string::npos, "the estimate does not use the refitted stack: %s",
        stack_id.c_str());
}

// #16 remainder, item 1: the Top-k field shows the model's experts per token; a link with only a view is
// not broken; the result cards name the stack and its versions, the memory range and the longest context
void check_cards_and_top_k() {
  TestHost h5;
  ftcost::web::App app5(h5);  // the paper's Mixtral-8x7B (top-2) QLoRA job on the A40
  run_frames(app5, 3, nullptr);
  using ftcost::web::jat;
  using ftcost::web::jnum;
  using ftcost::web::jstr;
  const auto dbg = ftcost::json::parse(app5.debug_json());
  const std::string topk = jstr(jat(dbg, "fields"), "top-k", "(not drawn)");
  CHECK(topk == "2", "the Top-k field shows \"%s\", not Mixtral's 2 experts per token", topk.c_str());
  // An option the estimate's inputs omit at its default shows the default, not an empty box.
  const std::string dropout = jstr(jat(dbg, "fields"), "lora-dropout", "(not drawn)");
  CHECK(dropout == "0", "the LoRA dropout field shows \"%s\", not its default 0", dropout.c_str());
  const ftcost::json& cards = jat(dbg, "cards");
  auto card_has = [&](const char* id, const std::string& text) {
    for (const auto& l : jat(cards, id))
      if (l.is_string() && l.get<std::string>().find(text) != std::string::npos) return true;
    return false;
  };
  const ftcost::json& r = app5.result();
  const double max_ctx = jnum(r, "max_seq_len_batch1");
  CHECK(max_ctx > 1000, "max_seq_len_batch1 missing");
  std::string grouped = std::to_string(static_cast<long long>(max_ctx));  // 4093 -> "4,093"
  for (int i = static_cast<int>(grouped.size()) - 3; i > 0; i -= 3)
    grouped.insert(static_cast<std::size_t>(i), ",");
  CHECK(card_has("c_batch", "longest context: " + grouped + " tokens"),
        "no longest context on the batch card: %s", cards.dump().c_str());
  CHECK(card_has("c_mem", "range "), "no memory range on the memory card: %s", cards.dump().c_str());
  const std::string stack_name = jstr(jat(r, "stack"), "name");
  const std::string stack_version = jstr(jat(r, "stack"), "version");
  CHECK(!stack_version.empty(), "the default stack has no version");
  CHECK(!stack_name.empty() && card_has("stack", stack_name) && card_has("stack", stack_version),
        "the stack line lacks name/version: %s", cards.dump().c_str());
  CHECK(card_has("c_tp", "stack " + ftcost::web::jstr(ftcost::web::jat(r, "stack"), "id", "?")),
        "the throughput card does not name the stack: %s", cards.dump().c_str());
  for (const char* h : {"view=paper", "#view=paper", "v=1&view=paper"}) {
    const ftcost::web::HashDecode d = ftcost::web::decode_hash(h);
    CHECK(d.problems.empty(), "the link #%s is treated as broken: %s", h,
          d.problems.empty() ? "" : d.problems.front().c_str());
    CHECK(d.state.view == ftcost::web::View::paper, "the link #%s does not open the paper view", h);
    CHECK(d.state.request == ftcost::web::default_request(), "the link #%s does not open the default job", h);
  }
  app5.on_hash("view=calibrations");
  run_frames(app5, 2, nullptr);
  CHECK(app5.notices().empty() && app5.state().view == ftcost::web::View::calibrations,
        "#view=calibrations gives a notice or another view: %s", app5.debug_json().substr(0, 600).c_str());
}

// #16 remainder, item 2: one notice strip of fixed height (a notice never moves the controls), newest
// first, bounded, one notice per subject (a later success replaces a rejection), information fades,
// errors stay until fixed or dismissed
void check_notice_strip() {
  TestHost h6;
  ftcost::web::App app6(h6);
  run_frames(app6, 3, nullptr);
  auto anchor_y = [&](const char* name) {
    const auto dbg = ftcost::json::parse(app6.debug_json());
    const ftcost::json& a = ftcost::web::jat(ftcost::web::jat(dbg, "anchors"), name);
    return a.is_array() && a.size() == 4 ? a[1].get<double>() : -1.0;
  };
  const double y0 = anchor_y("method.lora");
  CHECK(y0 > 0 && app6.notices().empty(), "no method.lora anchor or notices at start (%g)", y0);
  app6.on_file("model", "bad-config.json", R"({"model_type":"llama"})");
  run_frames(app6, 2, nullptr);
  CHECK(app6.notices().size() == 1 && app6.notices()[0].level == ftcost::web::Notice::error,
        "a rejected config gives no error notice");
  CHECK(anchor_y("method.lora") == y0, "a notice moved the inputs (%g -> %g)", y0, anchor_y("method.lora"));
  // many bad inputs: bounded, newest first
  for (int i = 0; i < 20; ++i) {
    app6.on_file("", "junk" + std::to_string(i) + ".json", "not json");
    app6.on_file("calibration", "cal" + std::to_string(i) + ".json", "{\"meta\": 1}");
    app6.on_hash("v=1&model=mixtral-8x7b&batch=-" + std::to_string(i + 1));
  }
  run_frames(app6, 2, nullptr);
  CHECK(app6.notices().size() <= ftcost::web::App::kMaxNotices && app6.notices().size() >= 3,
        "%zu notices after 60 bad inputs", app6.notices().size());
  CHECK(app6.notices()[0].subject == "link", "the newest notice is not first: %s",
        app6.notices()[0].text.c_str());
  CHECK(anchor_y("method.lora") == y0, "notices moved the inputs (%g -> %g)", y0, anchor_y("method.lora"));
  // errors stay (10 s later), then a good config replaces the model error, and that note fades
  run_frames(app6, 600, nullptr);
  auto count_subject = [&](const std::string& subj) {
    int c = 0;
    for (const auto& n : app6.notices()) c += n.subject == subj;
    return c;
  };
  CHECK(count_subject("model") == 1 && count_subject("calibration") == 1, "an error did not stay: %s",
        app6.debug_json().substr(0, 400).c_str());
  app6.on_file("model", "tiny-llama-config.json",
               R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":1024,)"
               R"("intermediate_size":2816,"num_attention_heads":16,"num_key_value_heads":16,)"
               R"("num_hidden_layers":8,"vocab_size":32000,"max_position_embeddings":2048})");
  run_frames(app6, 2, nullptr);
  CHECK(count_subject("model") == 1 && app6.notices()[0].level == ftcost::web::Notice::info,
        "the accepted config did not replace the rejection");
  run_frames(app6, 560, nullptr);  // > kInfoSeconds at 60 frames/s
  CHECK(count_subject("model") == 0, "the note about the accepted config did not fade");
}

// #16 remainder, item 4: pin a job, change an input, both side by side — the same comparison as the CLI's
// `ftcost estimate ... --vs method=lora` (compare_jobs over the two estimates)
void check_pinned_comparison() {
  TestHost h7;
  ftcost::web::App app7(h7);
  std::set<std::string> seen7;
  run_frames(app7, 3, &seen7);
  CHECK(ftcost::web::jat(ftcost::json::parse(app7.debug_json()), "comparison").is_null(),
        "a comparison before anything was pinned");
  const ftcost::Request a = app7.state().request;
  const std::string est_a =
      ftcost::api::estimate_json(ftcost::web::request_to_json_text(app7.effective_request()));
  // pin through the UI's path: the button's function
  ftcost::Request b = a;
  b["method"] = "lora";
  auto want_b = ftcost::apply_vs("method=lora", a);
  CHECK(want_b.ok() && want_b.value() == b, "apply_vs(method=lora) is not the request with method=lora");
  app7.pin_job();
  app7.set_request(b);
  run_frames(app7, 3, &seen7);
  const ftcost::json cmp = ftcost::web::jat(ftcost::json::parse(app7.debug_json()), "comparison");
  const std::string est_b =
      ftcost::api::estimate_json(ftcost::web::request_to_json_text(app7.effective_request()));
  const ftcost::json want =
      ftcost::compare_jobs(a, ftcost::json::parse(est_a), b, ftcost::json::parse(est_b));
  CHECK(cmp == want, "the page's comparison differs from compare_jobs over the API's estimates:\n%s\n%s",
        cmp.dump().c_str(), want.dump().c_str());
  CHECK(seen7.count("pinned") == 1, "the pinned panel was not drawn");
  bool method_listed = false;
  for (const auto& d : ftcost::web::jat(cmp, "inputs"))
    method_listed =
        method_listed || (ftcost::web::jstr(d, "key") == "method" && ftcost::web::jstr(d, "a") == "qlora" &&
                          ftcost::web::jstr(d, "b") == "lora");
  CHECK(method_listed, "the changed method is not listed: %s", cmp.dump().c_str());
}

// #16 remainder, item 6: a model by Hugging Face id — the page asks the host to fetch its config.json, the
// answer goes through the model-from-config path; 404, gated and offline give clear errors
void check_hub_model() {
  TestHost h8;
  ftcost::web::App app8(h8);
  run_frames(app8, 3, nullptr);
  app8.fetch_hub_config("not an id");
  CHECK(h8.hub_requests.empty() && !app8.notices().empty() && app8.notices()[0].subject == "hub",
        "an invalid Hub id was fetched or not reported");
  app8.fetch_hub_config("TinyLlama/TinyLlama-1.1B-Chat-v1.0");
  CHECK(h8.hub_requests.size() == 1 && h8.hub_requests[0] == "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
        "the host was not asked to fetch the config");
  auto last_hub = [&]() {
    for (const auto& n : app8.notices())
      if (n.subject == "hub") return n.text;
    return std::string();
  };
  app8.on_hub_config("meta-llama/Llama-3.1-8B", 403, "");
  CHECK(last_hub().find("gated") != std::string::npos && last_hub().find("Paste") != std::string::npos,
        "403 does not say gated / paste: %s", last_hub().c_str());
  app8.on_hub_config("nobody/nothing", 404, "");
  CHECK(last_hub().find("404") != std::string::npos && last_hub().find("not found") != std::string::npos,
        "404 not explained: %s", last_hub().c_str());
  app8.on_hub_config("Qwen/Qwen3-8B", 0, "");
  CHECK(last_hub().find("offline") != std::string::npos, "no answer not explained: %s", last_hub().c_str());
  std::ifstream f(std::string(FTCOST_SOURCE_DIR) + "/tests/data/tiny-llama-config.json");
  std::stringstream text;
  text << f.rdbuf();
  app8.on_hub_config("TinyLlama/TinyLlama-1.1B-Chat-v1.0", 200, text.str());
  run_frames(app8, 3, nullptr);
  CHECK(app8.state().request.count("model") == 1 &&
            app8.state().request.at("model") == "uploaded/TinyLlama_TinyLlama-1.1B-Chat-v1.0.json" &&
            !app8.result().contains("error"),
        "the fetched config is not the model: %s", app8.debug_json().substr(0, 300).c_str());
  CHECK(last_hub().empty(), "the Hub error stayed after a successful fetch: %s", last_hub().c_str());
}

// the user's own token lengths: a dropped text file becomes the dataset, no template tokens are added,
// the upload button is drawn, and a bad file is refused with its line named
void check_own_lengths() {
  TestHost h5;
  ftcost::web::App app5(h5);
  run_frames(app5, 3, nullptr);
  app5.on_file("", "lengths.txt", "# my data\n300\n900\n4000\n");
  std::set<std::string> seen5;
  run_frames(app5, 3, &seen5);
  CHECK(app5.state().request.count("dataset") == 1 &&
            app5.state().request.at("dataset") == "dataset/lengths.txt",
        "the length file did not become the dataset: %s", app5.debug_json().c_str());
  const ftcost::json ds = app5.result()["dataset"];
  CHECK(ftcost::web::jflag(ds, "own_data", false) && ftcost::web::jnum(ds, "queries") == 3 &&
            ftcost::web::jnum(ds, "max_tokens") == 4000,
        "the estimate does not use the length file: %s", app5.result().dump().c_str());
  CHECK(ftcost::web::jnum(app5.result()["inputs"], "template_tokens") == 0,
        "template tokens added to own data");
  CHECK(app5.debug_json().find("\"dataset.upload\"") != std::string::npos,
        "no upload button beside the dataset picker");
  app5.on_file("dataset", "bad.csv", "id,length\n1,12.5\n");
  CHECK(app5.state().request.at("dataset") == "dataset/lengths.txt", "a bad file replaced the good one");

  // #36: the link carries the lengths (data=) and the pinned job (pin=); a fresh page gets the same numbers
  app5.pin_job();
  std::map<std::string, std::string> r5 = app5.state().request;
  r5["method"] = "lora";
  app5.set_request(r5);
  run_frames(app5, 2, nullptr);
  CHECK(
      h5.hash.find("&data=") != std::string::npos && h5.hash.find("&pin=method%3Dqlora") != std::string::npos,
      "the link lacks the lengths or the pinned job: %s", h5.hash.c_str());
  TestHost h6;
  ftcost::web::App app6(h6);
  app6.on_hash(h5.hash);
  run_frames(app6, 2, nullptr);
  CHECK(app6.result().dump() == app5.result().dump(), "the link's numbers differ: %s vs %s",
        app6.result().dump().substr(0, 200).c_str(), app5.result().dump().substr(0, 200).c_str());
  CHECK(h6.hash == h5.hash, "the recipient's link differs: %s", h6.hash.c_str());
  CHECK(app6.debug_json().find("\"pinned\"") != std::string::npos, "the pinned job was not restored");
  CHECK(h6.store.count("ftcost.dataset_file") == 0, "the link's lengths were stored");
  // without data=: every setting kept, the page waits for the file
  TestHost h7;
  ftcost::web::App app7(h7);
  const std::string bare = h5.hash.substr(0, h5.hash.find("&data="));
  app7.on_hash(bare + "&epochs=2");
  run_frames(app7, 2, nullptr);
  CHECK(app7.state().request.at("method") == "lora" && app7.state().request.at("epochs") == "2" &&
            app7.state().request.at("dataset") == "dataset/lengths.txt",
        "a link naming a missing length file lost its settings: %s",
        app7.debug_json().substr(0, 400).c_str());
  CHECK(app7.debug_json().find("Waiting for lengths.txt: upload it to complete") != std::string::npos,
        "no waiting notice: %s", app7.debug_json().substr(0, 400).c_str());
  app7.on_file("", "lengths.txt", "# my data\n300\n900\n4000\n");
  run_frames(app7, 2, nullptr);
  CHECK(!app7.result().contains("error") && app7.state().request.at("epochs") == "2",
        "loading the file did not complete the link");
}

// #36: the link form of a length file, lossless for exact and coarse histograms and quantile tables
void check_length_links() {
  std::string many = "# 3,000 distinct lengths: coarse bins\n";
  for (int i = 1; i <= 3000; ++i) many += std::to_string(i * 7 % 20000 + 1) + "\n";
  const std::vector<std::string> texts = {
      "120\n800\n800\n2500\n", many,
      R"({"schema": "ftcost.dataset/1", "id": "q", "queries": 5000, "source": "test",
            "quantiles": [[0, 10], [0.5, 300], [1, 4000]]})"};
  for (const auto& text : texts) {
    auto d = ftcost::parse_dataset_file(text, "dataset/x.txt");
    CHECK(d.ok(), "test data rejected");
    if (!d.ok()) continue;
    const std::string form = ftcost::web::dataset_link_encode(d.value(), text);
    auto back = ftcost::web::dataset_link_decode(form);
    CHECK(back.ok(), "link form not read back: %s", back.ok() ? "" : back.error().to_string().c_str());
    if (!back.ok()) continue;
    auto d2 = ftcost::parse_dataset_file(back.value(), "dataset/x.txt");
    CHECK(d2.ok() && d2->lengths.points() == d->lengths.points() && d2->queries == d->queries,
          "the link form changes the distribution (%zu chars)", form.size());
  }
  for (const char* bad : {"", "AA", "AQHQDw", "@@@"})
    CHECK(!ftcost::web::dataset_link_decode(bad).ok(), "damaged link data \"%s\" accepted", bad);
}

// Inputs change the result and the link; a dense full fine-tune, every option at once, a job that does not
// fit and a bad batch (the error panel) are drawn.
void check_input_changes(ftcost::web::App& app, const TestHost& host, std::set<std::string>& seen,
                         double qps0) {
  // an input change changes the result
  auto req = app.state().request;
  req["gpu"] = "h100-sxm5-80gb";
  app.set_request(req);
  run_frames(app, 5, &seen);
  CHECK(result_number(app, "throughput_queries_per_s") != qps0,
        "changing the GPU did not change the throughput");
  CHECK(host.hash.find("gpu=h100-sxm5-80gb") != std::string::npos, "URL hash not updated: %s",
        host.hash.c_str());

  // fixed batch, fixed sequence length, full fine-tuning of a dense model: other panels and warnings
  app.set_request(
      {{"model", "llama-3.1-8b"}, {"gpu", "a10"}, {"method", "full"}, {"seq", "512"}, {"batch", "64"}});
  run_frames(app, 5, &seen);
  // every option the inputs panel sets, at once (values as its widgets write them)
  app.set_request({{"model", "mixtral-8x7b"},
                   {"gpu", "a40"},
                   {"method", "qlora"},
                   {"quant", "nf4"},
                   {"lora-rank", "32"},
                   {"lora-targets", "attention,experts"},
                   {"precision", "bf16"},
                   {"optimizer", "adamw-8bit"},
                   {"checkpointing", "on"},
                   {"attention", "flash"},
                   {"moe", "sparse"},
                   {"top-k", "2"},
                   {"routing", "paper-mixtral"},
                   {"dataset", "cs15k"},
                   {"padding", "longest"},
                   {"max-length", "512"},
                   {"template-tokens", "40"},
                   {"batch", "max"},
                   {"queries", "15000"},
                   {"epochs", "10"},
                   {"stack", "hf-transformers-2024"},
                   {"provider", "cudo-compute"},
                   {"stale-days", "400"},
                   {"model-kind", "paper"}});
  run_frames(app, 5, &seen);
  CHECK(!app.result().contains("error"), "all options at once: %s", app.result().dump().c_str());
  app.set_request({{"model", "llama-2-70b"}, {"gpu", "t4"}, {"method", "full"}});  // does not fit at all
  run_frames(app, 5, &seen);
  app.set_request({{"model", "mixtral-8x7b"},
                   {"gpu", "a40"},
                   {"method", "qlora"},
                   {"batch", "nonsense"}});  // error panel
  run_frames(app, 5, &seen);

  CHECK(app.result().contains("error"), "a bad batch should give an error");
}

// The result cards of a multi-GPU job and of an unsloth MoE job.
void check_job_shape_cards(ftcost::web::App& app, std::set<std::string>& seen) {
  // issue 36: the results speak of the job's shape. A multi-GPU job and the Qwen3-30B-A3B unsloth job: the
  // cards show the typed answer (per GPU on several), the memory bar sums to the peak (not to every
  // component: the optimizer step's temporaries are another moment), and no one-GPU sentence is left.
  for (const ftcost::Request& job : {ftcost::Request{{"model", "llama-3.1-8b"},
                                                     {"gpu", "h100-sxm5-80gb"},
                                                     {"method", "full"},
                                                     {"gpus", "8"},
                                                     {"parallel", "zero3"},
                                                     {"dataset", "math14k"}},
                                     ftcost::Request{{"model", "qwen3-30b-a3b"},
                                                     {"gpu", "h100-sxm5-80gb"},
                                                     {"method", "lora"},
                                                     {"dataset", "math14k"},
                                                     {"stack", "unsloth-2024q4"}}}) {
    app.set_request(job);
    run_frames(app, 6, &seen);
    const ftcost::JobEstimate* e = app.typed_result();
    CHECK(e != nullptr, "no typed estimate for %s", job.at("model").c_str());
    if (e == nullptr) continue;
    const ftcost::JobAnswer& a = e->answer;
    const auto ui = ftcost::json::parse(app.debug_json());
    const auto& cards = ui["cards"];
    auto lines = [&](const char* id) {
      std::vector<std::string> v;
      if (cards.contains(id))
        for (const auto& l : cards[id]) v.push_back(l.get<std::string>());
      return v;
    };
    auto any = [&](const char* id, const std::string& needle) {
      for (const auto& l : lines(id))
        if (l.find(needle) != std::string::npos) return true;
      return false;
    };
    CHECK(ui["answer"] == ftcost::answer_to_json(a), "the page's answer is not the typed one");
    const auto batch = lines("c_batch");
    CHECK(batch.size() > 1 && batch[1] == std::to_string(a.batch), "batch card shows %s, the answer %lld",
          batch.size() > 1 ? batch[1].c_str() : "nothing", static_cast<long long>(a.batch));
    CHECK(!any("c_batch", "no context length fits"), "batch card: no context length fits");
    CHECK(any("c_batch", a.batch_choice.reason), "batch card lacks the reason");
    CHECK(a.gpus == 1 || any("c_mem", "per GPU") || lines("c_mem")[0].find("per GPU") != std::string::npos,
          "memory card does not say per GPU");
    CHECK(any("c_tp", "tokens/s of data ("), "throughput card lacks tokens of data");
    const auto bar = lines("memory.bar");
    double sum = 0;
    for (std::size_t i = 1; i < bar.size(); ++i)
      sum += std::atof(bar[i].substr(bar[i].rfind(' ') + 1).c_str());
    CHECK(!bar.empty() && std::fabs(sum - a.peak_gib) < 0.02 * a.peak_gib, "memory bar sums to %g, peak %g",
          sum, a.peak_gib);
    if (job.at("model") == "qwen3-30b-a3b")
      CHECK(cards.contains("memory.optimizer_step"), "the optimizer step is not drawn apart");
    CHECK(lines("warnings") == a.warnings, "the warnings are not the answer's");
    if (a.gpus > 1) {
      const auto row = lines("compare.row");
      CHECK(row.size() > 4 && row[1] == "8" && row[2] == std::to_string(a.batch),
            "the table's row of the job: %s", row.empty() ? "none" : ftcost::json(row).dump().c_str());
    }
  }
}

// Links: a shared one restores its state, invalid ones give a message and the defaults; malformed calibration
// uploads are refused naming the field.
void check_links_and_bad_uploads(ftcost::web::App& app, std::set<std::string>& seen) {
  // a shared link restores its state
  const std::string link =
      "v=1&model=olmoe-1b-7b&gpu=l40s&method=lora&lora-rank=32&dataset=cs15k&batch=max&epochs=3";
  app.on_hash("#" + link);
  run_frames(app, 3, &seen);
  CHECK(app.state().request.at("model") == "olmoe-1b-7b" && app.state().request.at("lora-rank") == "32",
        "link not restored");
  CHECK(!app.result().contains("error"), "restored link gives an error: %s", app.result().dump().c_str());

  // invalid links: a message, the defaults, no crash
  for (const char* bad :
       {"#v=99&model=x", "#garbage%zz&&==", "#v=1&model=no-such-model", "#v=1&batch=-3&frobnicate=1"}) {
    std::size_t before = app.notices().size();
    app.on_hash(bad);
    run_frames(app, 2, &seen);
    CHECK(app.notices().size() > before || !app.notices().empty(), "no message for bad link %s", bad);
    CHECK(!app.result().contains("error"), "bad link %s left an error instead of defaults", bad);
  }

  // malformed calibration uploads: the error names the field, the app keeps working
  app.set_view(ftcost::web::View::calibrations);
  app.on_file("calibration", "broken.json", "{\"meta\": ");
  run_frames(app, 3, &seen);
  CHECK(!app.calibration_error().empty(), "malformed JSON accepted");
  app.on_file("calibration", "wrong.json", "{\"meta\": {\"schema\": 42}}");
  run_frames(app, 3, &seen);
  CHECK(!app.calibration_error().empty(), "bad calibration accepted");
  std::printf("calibration error shown: %s\n", app.calibration_error().c_str());
  CHECK(app.calibrations().empty(), "a rejected calibration was kept");
}

// A model config.json upload (a good one and a bad one), then the paper view.
void check_model_upload_and_paper(ftcost::web::App& app, std::set<std::string>& seen) {
  // a model config.json (paste/upload) becomes the model
  app.on_file(
      "model", "tiny-config.json",
      R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":1024,"intermediate_size":2816,)"
      R"("num_attention_heads":16,"num_key_value_heads":16,"num_hidden_layers":8,"vocab_size":32000,)"
      R"("max_position_embeddings":2048,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})");
  app.set_view(ftcost::web::View::calculator);
  run_frames(app, 3, &seen);
  CHECK(app.state().request.count("model") && app.state().request.at("model") == "uploaded/tiny-config.json",
        "uploaded config not used");
  CHECK(!app.result().contains("error"), "uploaded config gives an error: %s", app.result().dump().c_str());
  app.on_file("model", "bad-config.json", R"({"model_type":"llama"})");
  run_frames(app, 2, &seen);

  // the paper view
  app.set_view(ftcost::web::View::paper);
  run_frames(app, 10, &seen);
}

// Every panel was drawn at least once over the run so far; what was drawn and the last state, for the log.
void check_panels_drawn(const ftcost::web::App& app, const std::set<std::string>& seen) {
  const char* expected[] = {
      "top_bar",    "inputs",      "results",         "headline",          "warnings",
      "memory",     "step_time",   "throughput_plot", "compare",           "json",
      "error",      "notices",     "calibrations",    "calibration_error", "paper_table4",
      "paper_eq1",  "paper_eq2",   "plan_view",       "plan_constraints",  "plan_front",
      "plan_table", "plan_export", "scaling"};
  for (const char* p : expected) CHECK(seen.count(p) == 1, "panel %s never drawn", p);
  std::printf("panels drawn:");
  for (const auto& p : seen) std::printf(" %s", p.c_str());
  std::printf("\nrecomputes: %d, last compute %.2f ms\n", app.recompute_count(), app.last_compute_ms());
  std::printf("state: %s\n", app.debug_json().substr(0, 300).c_str());
}

}  // namespace

int main() {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  ftcost::web::style::setup(1.0f);
  unsigned char* pixels = nullptr;
  int tw = 0, th = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &tw, &th);
  CHECK(pixels != nullptr && tw > 0 && th > 0, "font atlas not built");

  TestHost host;
  ftcost::web::App app(host);
  std::set<std::string> seen;

  // calculator view at desktop size
  run_frames(app, 30, &seen);
  CHECK(!app.result().contains("error"), "default estimate failed: %s", app.result().dump().c_str());
  const double qps0 = result_number(app, "throughput_queries_per_s");
  CHECK(qps0 > 0, "no throughput");

  // these share the app and its state, in this order; the panels drawn over them are checked after the
  // phone layout
  check_api_matches_ui(app, qps0);
  check_provider_table(app);
  check_input_changes(app, host, seen, qps0);
  check_job_shape_cards(app, seen);
  check_links_and_bad_uploads(app, seen);
  check_valid_calibration(app, host, seen);
  check_model_upload_and_paper(app, seen);
  check_plan_view(app, host, seen);
  // narrow (phone) layout
  app.set_view(ftcost::web::View::calculator);
  app.set_request(ftcost::web::default_request());
  run_frames(app, 5, &seen, 390, 844);
  check_panels_drawn(app, seen);

  // these do not use the shared app
  check_option_links();
  check_out_of_range();
  check_multi_gpu();
  check_recorded_run();
  check_cards_and_top_k();
  check_notice_strip();
  check_pinned_comparison();
  check_hub_model();
  check_own_lengths();
  check_length_links();

  ImGui::DestroyContext();
  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("web_ui_smoke: OK\n");
  return 0;
}
