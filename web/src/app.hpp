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
  std::string name;         // file name as uploaded
  std::string gpu;          // database GPU id it belongs to
  std::string device;       // device name in the file
  std::string summary;      // what the check said
  std::string added;        // date (YYYY-MM-DD)
  bool enabled = true;      // used for estimates on `gpu`
  std::string text;         // the file
  std::string fingerprint;  // of its compact form (ftcost/calibration_share.hpp)
  std::string link;         // the compact form for links (base64url); "" when too long: the fingerprint goes
  std::string flags;        // "synthetic (...), partial (...)" or ""
  bool from_link = false;   // came with the link that opened the page: used, not stored
  bool suspended = false;   // set aside while a link's calibration for the same GPU is shown
  bool in_use() const { return enabled && !suspended; }
};

// A message in the notice strip. `subject` names what it is about ("link", "calibration", "model", "run",
// ...): a newer notice about the same subject replaces the older one (a rejection is gone after a later
// success). Information fades after kInfoSeconds; warnings and errors stay until dismissed or replaced.
struct Notice {
  enum Level { info, warning, error } level = info;
  std::string text;
  std::string subject;
  double at = 0;  // ImGui time when it was raised
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
  // The Hub's answer for a model id: HTTP status (0: no answer, the request failed) and the body.
  void on_hub_config(const std::string& model_id, int status, const std::string& text);
  // Asks the host to fetch `model_id`'s config.json from the Hugging Face Hub (the "Fetch" button).
  void fetch_hub_config(const std::string& model_id);

  // ---- state, for the JS API, tests and the desktop's command line ----
  const UiState& state() const { return state_; }
  void set_request(const Request& r);
  void set_view(View v);
  // Pins the current job for the side-by-side comparison (what the "Pin this job" button does).
  void pin_job() { pin_current(); }
  // Downloads the current job (request JSON, link, CLI command): the Export menu's "This job".
  void export_job_for_test() { export_job(); }
  Request effective_request() const;      // the state's request + the user's calibration for this GPU
  Request effective_of(Request r) const;  // `r` + the user's calibration (and run) for its GPU
  const json& result() const { return result_; }
  // The same estimate, typed (nullptr when the inputs give none): every card, the memory bar, the warnings
  // and the table's row of this job read its JobAnswer, so a renamed field fails to compile.
  const JobEstimate* typed_result() const { return has_est_ ? &est_ : nullptr; }
  // Newest first; at most kMaxNotices.
  const std::vector<Notice>& notices() const { return notices_; }
  static constexpr std::size_t kMaxNotices = 8;
  static constexpr double kInfoSeconds = 8.0;
  const std::vector<YourCalibration>& calibrations() const { return calibrations_; }
  std::string calibration_error() const { return calibration_error_; }
  // A JSON summary of the UI's state (request, view, hash, notices, key results) for tests.
  std::string debug_json() const;
  // The panels drawn by the last frame() (headless test: every panel is drawn).
  const std::set<std::string>& panels_drawn() const { return panels_; }
  int recompute_count() const { return recompute_count_; }
  // Work is pending (an estimate to compute): the platform should draw a frame even without input.
  bool needs_frame() const { return dirty_ || tables_pending_ > 0 || frames_ < 3 || plan_pending_; }
  // The last change's compute time, all its frames together (the estimate, then one table per frame).
  double last_compute_ms() const { return last_compute_ms_; }
  // An input changed and its estimate or tables are not all computed yet ("updating...").
  bool updating() const { return dirty_ || tables_pending_ > 0; }
  // ---- the Plan view (app_plan.cpp) ----
  // The plan request: the calculator's job keys (minus those the plan chooses) + the view's constraints.
  Request plan_request() const;
  void set_plan_constraint(const std::string& key, const std::string& value);  // "" clears it
  // The last search's result (`ftcost plan --json`), {} before the first search.
  const json& plan_result() const { return plan_result_; }
  // Runs the search now if the plan request changed since the last one (the view defers it by a frame).
  void update_plan_now();
  // Loads the plan with this id (from the front) into the calculator; false when there is no such plan.
  bool load_plan(int id);
  // Downloads file `file` (0: the main config) of plan `id`'s runnable config for `stack`; false (and a
  // notice) when the stack cannot run it.
  bool export_plan_config(int id, const std::string& stack, int file = 0);
  const json& scaling_result() const { return scaling_; }
  // The files given to this page ("dataset/<name>", "uploaded/<name>", ...), as the core reads them.
  FileReader file_reader() const { return engine_.reader(); }

 private:
  // app.cpp
  void recompute();       // the estimate and its sweep; the other tables on the next frames
  void compute_table();   // the next of those: the scaling series, then the comparison of every shape
  void recompute_done();  // all of a change is computed
  void changed();         // an input changed: recompute next frame, update the URL
  void write_hash();  // the URL from the state (the link's calibration, pinned job and length file synced)
  void notify(Notice::Level level, std::string text, const std::string& subject = std::string());
  void expire_notices();
  void load_persisted();
  void save_calibrations();
  void add_calibration(const std::string& name, const std::string& text);
  // The calibration in use for the request's GPU (nullptr: spec sheet).
  const YourCalibration* calibration_in_use() const;
  // The link's "cal" / "cal-id" (state_.cal, state_.cal_id) after a hash was read: use the embedded one, or
  // find the user's file with that fingerprint, or say that it is missing and show spec-sheet numbers.
  void apply_link_calibration();
  // state_.cal / cal_id from the calibration in use (called before the hash is written).
  void sync_link_calibration();
  // The user's own length file in links: the path the job names ("dataset/<name>", else ""); the name of that
  // file when the page lacks it (the link waits for it); the link's embedded file given to the engine (or a
  // problem); state_.data from the file in use (empty when it would make the link too long).
  std::string own_dataset_path() const;
  std::string missing_dataset_file() const;
  void apply_link_data(std::vector<std::string>& problems);
  void sync_link_data();
  // The pinned job in links: state_.pin from the pinned job; the pinned job from a link's state_.pin.
  void sync_link_pin();
  void apply_link_pin();
  // The "calibrated" badge after the last item: tooltip names the file, device, GPU, fingerprint, flags.
  void calibrated_badge(const char* what);
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
  std::string table_default(const std::string& key) const;
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
  // A number field's text is checked as it is typed and applied on Enter, when the field loses focus, or
  // after a pause in the typing (kEditPauseSeconds): typing "128" is one estimate, not three (issue 36).
  void check_number_edit(const Option& o, const std::string& text);
  void apply_number_edit(const Option& o, bool field_left);
  static constexpr double kEditPauseSeconds = 0.5;
  // An input's label on the left (with its tooltip; muted when the value is the default), the widget to its
  // right at the label column, full width.
  void label(const char* text, const char* tooltip, bool is_default = false) const;
  // Starts a line at the widget column (for the buttons under a field).
  void indent_to_field() const;
  // app_results.cpp
  void draw_results();
  void draw_headline();
  void draw_parallel();
  void draw_memory();
  void draw_step_time();
  void draw_step_ops();   // app_step_ops.cpp: top ops, device vs host per stage
  void draw_objective();  // app_objective.cpp
  void draw_throughput_plot();
  void draw_compare();
  void draw_json();
  void draw_pinned();               // the pinned job vs this one (compare_jobs), with pin/unpin
  void draw_waiting_for_dataset();  // in place of the results while the job's own length file is missing
  void pin_current();
  void draw_comparison_table(const char* id, const json& cmp);
  void draw_calibrated_vs_spec();
  void export_job();  // the current job as a file: request JSON, link and the CLI command
  // app_paper.cpp
  void draw_paper_view();
  void draw_paper_table4();
  void draw_paper_eq1(float pw);
  // app_plan.cpp
  void draw_plan_view();
  void draw_plan_constraints();
  std::string plan_job_text() const;
  void draw_plan_front();
  void draw_plan_table();
  void draw_plan_export();
  // app_scaling.cpp
  void draw_scaling();

  Host& host_;
  Engine engine_;
  UiState state_;
  std::string last_hash_;
  bool dirty_ = true;
  json result_;
  JobEstimate est_;  // result_'s JobEstimate (has_est_: result_ is an estimate, not an error)
  bool has_est_ = false;
  Resolution resolution_;                              // of the effective request, for the inputs panel
  std::map<std::string, std::string> table_defaults_;  // option key -> its default rule's value (recompute)
  std::map<std::string, std::string> edits_;           // text typed into a number field
  std::map<std::string, std::string> field_errors_;    // why that text was not applied
  std::map<std::string, double> edit_times_;           // when it was last typed (ImGui::GetTime())
  Sweep sweep_;
  std::vector<CompareRow> compare_;
  std::vector<int> compare_order_;
  bool compare_sort_dirty_ = true;
  bool compare_fits_only_ = false;
  bool compare_spot_ = false;  // one default for spot everywhere: off (core/options.cpp)
  // A pinned job (its request and estimate when pinned) compared with the current one.
  bool pinned_ = false;
  Request pinned_request_;
  json pinned_result_;
  json comparison_;  // compare_jobs(pinned, current), refreshed with every estimate
  // With your calibration or run in use: the spec-only estimate (A) vs the calibrated one (B).
  json calibration_comparison_;
  std::vector<Notice> notices_;  // newest first
  bool notices_open_ = false;    // the list of all notices is shown (over the page)
  std::vector<YourCalibration> calibrations_;
  std::string calibration_error_;
  // A link's calibration fingerprint whose file this browser lacks (and its GPU): spec-sheet numbers until a
  // file with that fingerprint is loaded; the link keeps carrying it.
  std::string missing_cal_id_, missing_cal_gpu_;
  std::string run_name_, run_gpu_, run_error_;
  json run_fit_;  // api::fit_run_json of the loaded run
  bool run_enabled_ = true;
  std::string model_config_name_;
  std::string model_config_text_;
  std::string dataset_file_name_;  // the last loaded length file (kept in the browser's storage)
  std::string link_dataset_name_;  // the length file a link carried (used, not stored)
  std::string link_data_text_;     // the file state_.data was made from, and its link form
  std::string link_data_;
  bool link_data_omitted_ = false;  // the file is too long for the link: the recipient is asked for it
  std::string paste_buffer_;        // clipboard text waiting to go into the paste field
  // the inputs panel's own state
  float label_w_ = 120;                               // the label column's width (fits the longest label)
  std::map<std::string, std::string> combo_filters_;  // a combo's type-ahead text, by combo id
  static constexpr std::size_t kPasteBytes = 65536;   // the paste field's capacity
  std::vector<char> paste_text_;                      // the paste field's text (allocated when first shown)
  char hub_id_[128] = {};
  std::string hub_status_;  // the last fetch: what happened
  bool show_paste_ = false;
  bool plot_tokens_ = false;
  bool skip_headline_ = false;  // narrow layout: the headline is drawn above the inputs
  std::string lora_custom_;
  int recompute_count_ = 0;
  long frames_ = 0;
  double last_compute_ms_ = 0;
  double last_longest_compute_ms_ = 0;
  // The change being computed: its request, tables still to compute (one per frame), time so far, and the
  // longest part in one frame.
  Request tables_request_;
  int tables_pending_ = 0;
  double compute_ms_ = 0;
  double longest_compute_ms_ = 0;
  std::set<std::string> panels_;
  std::map<std::string, std::vector<float>> anchors_;
  // What the last frame showed, for tests: a number field's text by option key, a result card's lines by id.
  std::map<std::string, std::string> fields_;
  std::map<std::string, std::vector<std::string>> cards_;
  // the JSON panel's text (result_ indented) and the estimate it was made for (recompute_count_)
  std::string json_text_;
  int json_text_for_ = -1;
  // plan view
  json plan_result_;
  std::string plan_key_;  // the request text the result is for
  bool plan_pending_ = false;
  std::string plan_pending_key_;
  double plan_pending_since_ = 0;
  double plan_ms_ = 0;  // wall time of the last search in this UI
  int plan_export_id_ = -1;
  int plan_stack_ = 0;
  json plan_config_;  // api::plan_config_json of (plan_config_for_, stack)
  std::string plan_config_for_;
  // scaling series of the current job (Engine::scaling)
  json scaling_;
  // paper view inputs
  int eq1_coeffs_ = 0;
  float eq1_model_mem_gb_ = 23.35f;
  bool eq1_dense_ = false;
  double paper_queries_ = 15000, paper_epochs_ = 10;
  double table4_queries_ = 15000, table4_epochs_ = 10;  // the last valid values (the table shows these)
};

}  // namespace ftcost::web
