// Writing the calibration: atomic file write, the summary table, metadata helpers (host-only).
#pragma once

#include "ftcost/calibration.hpp"
#include "ftcost/error.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ftcost::calib {

// Writes `text` to `path` atomically: a temporary file in the real target's folder (symlinks resolved),
// flushed to disk, then renamed over it; a character device (/dev/null) is written through, never replaced
// (native/ftcost/fileio.hpp, write_file_atomic). On failure nothing is left behind and `path` is untouched.
Status atomic_write_file(const std::string& path, const std::string& text);

// Checks a finished calibration with the core's loader (round trip through JSON) and writes it
// atomically. Returns the loader's error (nothing written) if it rejects the document.
Status check_and_write(const Calibration& cal, const std::string& path);

// Partial results are results: like check_and_write, but a row the loader rejects
// ("measurements.<section>[i]...") is dropped, with a note in meta.notes naming it and why, `derived` is
// recomputed and the rest is checked again (at most `max_drops` rows). `dropped` lists the notes. An
// error outside the measurement rows (meta, device, ...) is returned as before: nothing written.
struct WriteOutcome {
  Status status = Ok{};
  std::vector<std::string> dropped;
};
WriteOutcome check_drop_and_write(Calibration& cal, const std::string& path, int max_drops = 1000);

// The end of a run: writes what was measured (check_drop_and_write), prints the summary table to `out`
// and what happened to `err` ("ftcost-calibrate: wrote ...", dropped rows, the fatal error, failures), and
// returns the exit code (docs/calibrate.md "Exit codes"): 1 when nothing could be written, a fatal error
// stopped the run or a measurement failed; 130 when interrupted; 4 when rows were dropped; else 0.
// meta.partial is set when cancelled or stopped.
constexpr int kExitPartialRows = 4;
int write_and_exit_code(Calibration& cal, const std::string& path, const std::string& fatal, int failures,
                        bool cancelled, std::FILE* out, std::FILE* err);

// Before measuring: can a file be created beside `path`? Returns the path to write to: `path` itself,
// or, when its folder is missing or not writable, the same file name in the current directory (and a
// message in `note`). An error when neither works.
Result<std::string> choose_output_path(const std::string& path, std::string* note);

std::string sha256_hex(const std::string& data);
// "sha256:<hex>" of the device UUID with a fixed salt: identifies the same device across runs
// without publishing the UUID.
std::string uuid_hash(const unsigned char uuid[16]);

std::string utc_now_iso();  // "2025-06-01T12:00:00Z"
// "calibration-<device-slug>-<YYYYMMDDTHHMMSSZ>.json"
std::string default_output_name(const std::string& device_name, const std::string& created_utc);
std::string slugify(const std::string& s);
std::string host_cpu_name();  // /proc/cpuinfo "model name", else "unknown"
std::string shell_join(const std::vector<std::string>& args);

// Version of this tool and the git revision it was built from (configure time).
std::string tool_version();
std::string git_revision();
bool git_dirty();

// The table printed at the end of a run (one line per family: the numbers a reader looks for).
std::string summary_table(const Calibration& cal);

}  // namespace ftcost::calib
