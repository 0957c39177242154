// The calculator's UI: one App draws every panel with Dear ImGui, the same in the browser, on the
// desktop and in the headless smoke test. It owns the input state, asks the Engine for results when
// an input changes, and talks to its surroundings only through Host.
#pragma once

#include "engine.hpp"
#include "host.hpp"
#include "state.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ftcost::web {

struct YourCalibration {
  std::string name;     // file name as uploaded
  std::string gpu;      // database GPU id it belongs to
  std::string device;   // device name in the file
  std::string summary;  // what the check said
  std::string added;    // date (YYYY-MM-DD)
  bool enabled = true;  // used for estimates on `gpu`
  std::string text;     // the file
};

struct Notice {
  enum Level { info, warning, error } level = info;
  std::string text;
};

class App {
 public:
  explicit App(Host& host);

  // Draws one frame of the UI (call between ImGui::NewFrame and ImGui::Render).
  void frame();

  // ---- events from the platform ----
  // A file from the picker or dropped on the page. purpose: "calibration", "model" or "" (decide by content).
  void on_file(const std::string& purpose, const std::string& name, const std::string& text);
  // The URL's hash at start-up or after the user edited it.
  void on_hash(const std::string& hash);
  void on_clipboard_text(const std::string& text);

  // ---- state, for the JS API, tests and the desktop's command line ----
  const UiState& state() const { return state_; }
  void set_request(const Request& r);
  void set_view(View v);
  Request effective_request() const;  // the state's request + the user's calibration for this GPU
  const json& result() const { return result_; }
  const std::vector<Notice>& notices() const { return notices_; }
  const std::vector<YourCalibration>& calibrations() const { return calibrations_; }
  std::string calibration_error() const { return calibration_error_; }
  // A JSON summary of the UI's state (request, view, hash, notices, key results) for tests.
  std::string debug_json() const;
  // The panels drawn by the last frame() (headless test: every panel is drawn).
  const std::set<std::string>& panels_drawn() const { return panels_; }
  int recompute_count() const { return recompute_count_; }
  // Work is pending (an estimate to compute): the platform should draw a frame even without input.
  bool needs_frame() const { return dirty_ || frames_ < 3; }
  double last_compute_ms() const { return last_compute_ms_; }

 private:
  // app.cpp
  void recompute();
  void changed();  // an input changed: recompute next frame, update the URL
  void notify(Notice::Level level, std::string text);
  void load_persisted();
  void save_calibrations();
  void add_calibration(const std::string& name, const std::string& text);
  // A recorded training run (ftcost.run/1): the job is set to the run's, estimates on its GPU use the stack
  // refitted to it (`run` option), and the Calibrations page shows measured vs predicted.
  void add_run(const std::string& name, const std::string& text);
  void draw_run_section();
  void set_model_config(const std::string& name, const std::string& text);
  // The user's own token lengths (--dataset FILE): checked by the core's parser, served as "dataset/<name>".
  void set_dataset_file(const std::string& name, const std::string& text);
  void draw_top_bar();
  void draw_notices();
  void draw_calibrations_view();
  void mark(const char* panel) { panels_.insert(panel); }
  // Records the last widget's rectangle under `name` (UI pixels): tests click real widgets with it.
  void anchor(const char* name);
  std::string effective(const std::string& key) const;  // request value, else what the core used
  void set_key(const std::string& key, const std::string& value);
  // After `key` changed: clear the keys its option invalidates that no longer apply (option table).
  void drop_invalidated(const std::string& key);
  void erase_key(const std::string& key);
  // app_inputs.cpp: the option table drawn by kind; special widgets by hand
  void draw_inputs();
  void draw_option(const Option& o);
  bool option_shown(const Option& o) const;
  void draw_model_input();
  void draw_dataset_input();
  void draw_gpu_input();
  void draw_lengths_mode();
  void draw_batch_input();
  void draw_price_input();
  void draw_generic(const Option& o);
  void draw_number_field(const Option& o);
  // app_results.cpp
  void draw_results();
  void draw_headline();
  void draw_parallel();
  void draw_memory();
  void draw_step_time();
  void draw_throughput_plot();
  void draw_compare();
  void draw_json();
  // app_paper.cpp
  void draw_paper_view();

  Host& host_;
  Engine engine_;
  UiState state_;
  std::string last_hash_;
  bool dirty_ = true;
  json result_;
  Resolution resolution_;                            // of the effective request, for the inputs panel
  std::map<std::string, std::string> edits_;         // text typed into a number field
  std::map<std::string, std::string> field_errors_;  // why that text was not applied
  Sweep sweep_;
  std::vector<CompareRow> compare_;
  std::vector<int> compare_order_;
  bool compare_sort_dirty_ = true;
  bool compare_fits_only_ = false;
  bool compare_spot_ = false;  // one default for spot everywhere: off (core/options.cpp)
  std::vector<Notice> notices_;
  std::vector<YourCalibration> calibrations_;
  std::string calibration_error_;
  std::string run_name_, run_gpu_, run_error_;
  json run_fit_;  // api::fit_run_json of the loaded run
  bool run_enabled_ = true;
  std::string model_config_name_;
  std::string model_config_text_;
  std::string dataset_file_name_;  // the last loaded length file (kept in the browser's storage)
  std::string paste_buffer_;
  bool show_paste_ = false;
  bool plot_tokens_ = false;
  bool skip_headline_ = false;  // narrow layout: the headline is drawn above the inputs
  std::string lora_custom_;
  int recompute_count_ = 0;
  long frames_ = 0;
  double last_compute_ms_ = 0;
  std::set<std::string> panels_;
  std::map<std::string, std::vector<float>> anchors_;
  // paper view inputs
  int eq1_coeffs_ = 0;
  float eq1_model_mem_gb_ = 23.35f;
  bool eq1_dense_ = false;
  double paper_queries_ = 15000, paper_epochs_ = 10;
};

}  // namespace ftcost::web
