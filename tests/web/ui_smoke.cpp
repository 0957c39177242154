// Headless smoke test of the calculator's UI: Dear ImGui with no platform or renderer backend (display
// size set, font atlas built, draw data produced and dropped), N frames of every view, with inputs
// changed, a shared link restored, a bad link and bad uploads given. Fails on any missing panel, a
// result that does not change when an input does, or an error where an estimate is expected.
// Run by ctest (native preset) as `web_ui_smoke`.
#include "app.hpp"
#include "engine.hpp"
#include "ftcost/api.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "option_samples.hpp"
#include "style.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

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

  // the same request through the JS API's function gives the same numbers as the UI's engine
  {
    std::string j = ftcost::api::estimate_json(ftcost::web::request_to_json_text(app.effective_request()));
    auto doc = ftcost::json::parse(j);
    CHECK(ftcost::web::jnum(doc, "max_batch_size", -1.0) == result_number(app, "max_batch_size"),
          "api and UI disagree on max batch");
    CHECK(ftcost::web::jnum(doc, "throughput_queries_per_s", -1.0) == qps0,
          "api and UI disagree on throughput");
  }

  // the GPU x provider table: rows on GPUs the paper's CUDA-only stack does not run on are flagged and never
  // "cheapest"; NVIDIA rows are not flagged
  {
    ftcost::web::Engine engine;
    auto rows = engine.compare(app.effective_request(), {});
    int flagged = 0, nvidia = 0;
    for (const auto& r : rows) {
      const auto* g = engine.db().gpu(r.gpu_id);
      CHECK(g != nullptr, "unknown GPU %s in the table", r.gpu_id.c_str());
      if (g == nullptr) continue;
      if (g->vendor == "NVIDIA") {
        ++nvidia;
        CHECK(r.stack_warning.empty(), "NVIDIA row %s flagged: %s", r.gpu_id.c_str(),
              r.stack_warning.c_str());
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

  // a valid calibration is accepted, assigned to its GPU, marked "yours" and used for that GPU's estimates
  {
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
      CHECK(!app.result().contains("error"), "estimate with the calibration failed: %s",
            app.result().dump().c_str());
      CHECK(host.store.count("ftcost.calibrations") == 1 && !host.store["ftcost.calibrations"].empty(),
            "calibration not stored");
      // a new App (a reload of the page) finds it again in storage
      ftcost::web::App reloaded(host);
      CHECK(reloaded.calibrations().size() == 1, "stored calibration not restored");
    }
  }

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
  // narrow (phone) layout
  app.set_view(ftcost::web::View::calculator);
  app.set_request(ftcost::web::default_request());
  run_frames(app, 5, &seen, 390, 844);

  const char* expected[] = {"top_bar",   "inputs",    "results",         "headline",          "warnings",
                            "memory",    "step_time", "throughput_plot", "compare",           "json",
                            "error",     "notices",   "calibrations",    "calibration_error", "paper_table4",
                            "paper_eq1", "paper_eq2"};
  for (const char* p : expected) CHECK(seen.count(p) == 1, "panel %s never drawn", p);
  std::printf("panels drawn:");
  for (const auto& p : seen) std::printf(" %s", p.c_str());
  std::printf("\nrecomputes: %d, last compute %.2f ms\n", app.recompute_count(), app.last_compute_ms());
  std::printf("state: %s\n", app.debug_json().substr(0, 300).c_str());

  // the option table: every option that links carry round-trips through the URL hash, in the table's order
  {
    const ftcost::Database& db = ftcost::Database::embedded();
    std::size_t last_pos = 0;
    for (const auto& o : ftcost::job_options()) {
      const ftcost::test::OptionSample smp = ftcost::test::option_sample(o, db);
      ftcost::web::UiState st;
      st.request = smp.request;
      const std::string h = ftcost::web::encode_hash(st);
      const ftcost::web::HashDecode d = ftcost::web::decode_hash(h);
      if (!o.in_url) {
        CHECK(h.find("&" + o.key + "=") == std::string::npos, "%s is in a link: %s", o.key.c_str(),
              h.c_str());
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
  {
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
  {
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
  {
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

  // the user's own token lengths: a dropped text file becomes the dataset, no template tokens are added,
  // the upload button is drawn, and a bad file is refused with its line named
  {
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
  }

  ImGui::DestroyContext();
  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("web_ui_smoke: OK\n");
  return 0;
}
