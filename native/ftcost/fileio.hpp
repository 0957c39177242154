// File input and output for every ftcost command: one place that decides what a path may be.
//
// Reading: only regular files are read. The file is opened without blocking and checked with fstat on the
// open descriptor, so a FIFO, a device, a socket or a folder is reported by what it is (never read, never
// waited on), and a file larger than the limit is reported with its size.
//
// Writing: a symlinked target is resolved first, so the real file is replaced and the link stays. A
// regular (or missing) target is written to a temporary file in the real target's folder and renamed over
// it (readers never see half a file; the old file's permission bits are kept). A character device (e.g.
// /dev/null, /dev/full) is written through, never replaced; a FIFO is written through only when a reader
// is already there. A folder, a block device or a socket is refused. Every write error (ENOSPC, EIO, ...)
// is reported.
#pragma once

#include "ftcost/error.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ftcost::cli {

// Input files (model/GPU/calibration JSON, CSV points, reference rows, stack profiles) are small.
constexpr std::size_t kInputFileLimit = 8u * 1024u * 1024u;

// The whole content of a regular file of at most `limit` bytes. Errors (Errc::io_error or too_large) name
// the path and say what it is: "no such file", "is a folder, not a file", "is a FIFO (named pipe), not a
// regular file", "is 9000000 bytes; the limit is 8 MiB", ...
Result<std::string> read_regular_file(const std::string& path, std::size_t limit = kInputFileLimit);

// Writes `content` to `path` as described above. Errors name the path.
Status write_file_atomic(const std::string& path, const std::string& content);

struct OutputFile {
  std::string path;
  std::string content;
  std::string label;  // what errors name (the flag, e.g. "--out"; the path in the message); empty: the path
  std::string what;   // what the file is, for the message when two outputs name one file ("the accelerate
                      // config")
};
// Several files written together, all or none (issue 39 L1/L2): every target is checked first (what each
// path may be, as above; two outputs naming one file, through links or relative paths, are refused), every
// new content goes to a temporary file beside its target, and only when all are written are they renamed
// over their targets (devices and FIFOs are written through just before). A failure before the renames
// leaves every target as it was.
Status write_files_atomic(const std::vector<OutputFile>& files);

// Makes std::cout write to descriptor 1 through a buffer that keeps the first write error (call once, first
// thing in main).
void capture_stdout();
// Flushes stdout (C++ and C streams). On a write error (full disk, closed descriptor) returns the error
// "stdout: cannot write to stdout: <reason>".
Status flush_stdout();

// `text` made safe for a terminal: C0/C1 control characters and DEL are written as \uXXXX, bytes that are
// not UTF-8 as \xNN. Used for names and ids that come from user files.
std::string printable(const std::string& text);
// CSV text (rows ending in LF) made safe the same way, field by field: the line ends between rows stay, a
// control character inside a field (a line break in a quoted field included) is written as \uXXXX. Every
// --csv output goes through it (issue 39: ESC/BEL from a dataset's tokenizer reached the terminal).
std::string printable_csv(const std::string& csv);

}  // namespace ftcost::cli
