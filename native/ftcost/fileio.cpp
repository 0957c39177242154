#include "fileio.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <streambuf>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace ftcost::cli {

namespace {

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// What a non-regular file is, for messages.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string human_limit(std::size_t limit) {
  if (limit % (1024u * 1024u) == 0) return std::to_string(limit / (1024u * 1024u)) + " MiB";
  return std::to_string(limit) + " bytes";
}

std::string dir_of(const std::string& p) {
  const std::size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string base_of(const std::string& p) {
  const std::size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

Error io(const std::string& path, const std::string& msg) { return make_error(Errc::io_error, path, msg); }

// Writes all of `data` to `fd`, retrying short writes and EINTR. Returns 0 or the errno.
int write_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

int write_all(int fd, const std::string& data) { return write_all(fd, data.data(), data.size()); }

// std::cout's buffer once capture_stdout() ran: writes to descriptor 1 and keeps the first write error's
// errno, which stdio's FILE loses when the failed bytes are dropped (so "No space left on device" can be
// said).
class StdoutBuf : public std::streambuf {
 public:
  StdoutBuf() { setp(buf_, buf_ + sizeof buf_); }
  int first_errno() const { return err_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const auto n = static_cast<std::size_t>(pptr() - pbase());
    setp(buf_, buf_ + sizeof buf_);  // after an error the bytes are lost either way
    if (err_ != 0) return false;
    if (n == 0) return true;
    err_ = write_all(STDOUT_FILENO, buf_, n);
    return err_ == 0;
  }
  char buf_[65536];
  int err_ = 0;
};

StdoutBuf* g_stdout_buf = nullptr;

// A symlink chain followed textually to the path it ends at (which need not exist yet), so that the
// temporary file goes next to the real target and the rename replaces it, not the link.
Result<std::string> resolve_links(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;
      return io(path,
                "cannot inspect " + (p == path ? std::string("the path") : p) + ": " + errno_text(errno));
    }
    if (!S_ISLNK(st.st_mode)) return p;
    std::vector<char> buf(4096);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n < 0) return io(path, "cannot read the symbolic link " + p + ": " + errno_text(errno));
    if (static_cast<std::size_t>(n) >= buf.size()) return io(path, "symbolic link target is too long");
    const std::string target(buf.data(), static_cast<std::size_t>(n));
    p = (!target.empty() && target[0] == '/') ? target : dir_of(p) + "/" + target;
  }
  return io(path, "too many levels of symbolic links");
}

// A character device or a FIFO that already exists: written through, never replaced.
Status write_through(const std::string& path, const std::string& content, bool fifo) {
  // A FIFO is opened without blocking: with no reader the open fails (ENXIO) instead of waiting forever.
  int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
  if (fd < 0) {
    const int e = errno;
    if (fifo && e == ENXIO) return io(path, "is a FIFO (named pipe) with no reader; nothing was written");
    return io(path, "cannot open for writing: " + errno_text(e));
  }
  if (fifo) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  const int e = write_all(fd, content);
  const int c = ::close(fd) != 0 ? errno : 0;
  if (e != 0) return io(path, "cannot write: " + errno_text(e));
  if (c != 0 && c != EINTR) return io(path, "cannot write: " + errno_text(c));
  return Ok{};
}

}  // namespace

Result<std::string> read_regular_file(const std::string& path, std::size_t limit) {
  if (path.empty()) return io(path, "empty file name");
  // stat first: opening a device or a FIFO can block or have side effects, so those are never opened.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return io(path, "no such file");
    if (e == ENOTDIR) return io(path, "no such file (a part of the path is not a folder)");
    return io(path, "cannot read: " + errno_text(e));
  }
  if (S_ISDIR(st.st_mode)) return io(path, "is a folder, not a file");
  if (!S_ISREG(st.st_mode)) return io(path, "is " + kind_of(st.st_mode) + ", not a regular file");
  if (static_cast<std::uintmax_t>(st.st_size) > limit)
    return make_error(Errc::too_large, path,
                      "file is " + std::to_string(st.st_size) + " bytes; the limit is " + human_limit(limit));
  // O_NONBLOCK: if the path was swapped for a FIFO since the stat, the open still returns at once, and the
  // fstat below refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return io(path, "cannot open: " + errno_text(errno));
  struct stat fst {};
  if (::fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
    const std::string what = S_ISDIR(fst.st_mode) ? "is a folder, not a file" : "is not a regular file";
    ::close(fd);
    return io(path, what);
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(fst.st_size));
  std::vector<char> buf(65536);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return io(path, "cannot read: " + errno_text(e));
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
    if (out.size() > limit) {
      ::close(fd);
      return make_error(Errc::too_large, path, "file is larger than " + human_limit(limit));
    }
  }
  ::close(fd);
  return out;
}

namespace {

// One output of write_files_atomic once checked: written through (a character device, a FIFO with a reader)
// or staged in a temporary file beside its real target and renamed over it at the end.
struct Staged {
  bool through = false, fifo = false;
  std::string target;  // the real file a regular output replaces (links followed)
  std::string key;     // the target's folder, resolved, and name: two outputs with one key are one file
  bool exists = false;
  struct stat st {};  // the target's, when it exists
  std::string tmp;    // the temporary file, once written
};

// What a path may be as an output (described in fileio.hpp): errors name the path.
Status check_output(const std::string& path, Staged& s) {
  if (path.empty()) return io(path, "empty file name");
  // What the path names (following links, including /proc's and /dev/fd's): anything but a regular file is
  // written through (character devices, FIFOs with a reader) or refused; it is never replaced.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return io(path, "is a folder, not a file");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      s.through = true;
      s.fifo = S_ISFIFO(st.st_mode);
      return Ok{};
    }
    return io(path, "is " + kind_of(st.st_mode) + ", not a regular file; refusing to write to it");
  }
  FTCOST_TRY(target, resolve_links(path));
  s.target = target;
  s.exists = ::lstat(target.c_str(), &s.st) == 0;
  if (s.exists && !S_ISREG(s.st.st_mode))  // a dangling link chain ending in something odd
    return io(path, "is " + kind_of(s.st.st_mode) + ", not a regular file; refusing to write to it");
  const std::string dir = dir_of(target);
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0)
    return io(path, "cannot write: the folder " + dir + " does not exist or cannot be read (" +
                        errno_text(errno) + ")");
  if (!S_ISDIR(dst.st_mode)) return io(path, "cannot write: " + dir + " is not a folder");
  char* real = ::realpath(dir.c_str(), nullptr);
  s.key = (real != nullptr ? std::string(real) : dir) + "/" + base_of(target);
  std::free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
  return Ok{};
}

// Writes `content` to a new temporary file beside s.target (the old file's permission bits, or what a plain
// create would give), flushed to the disk.
Status stage_output(const std::string& path, const std::string& content, Staged& s) {
  const std::string dir = dir_of(s.target);
  std::string tmpl = dir + "/." + base_of(s.target) + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return io(path, "cannot create a temporary file in " + dir + ": " + errno_text(errno));
  const std::string tmp(name.data());
  auto fail = [&](const std::string& what, int e) -> Status {
    ::unlink(tmp.c_str());
    return io(path, what + ": " + errno_text(e));
  };
  mode_t mode = 0;
  if (s.exists) {
    mode = s.st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = static_cast<mode_t>(0666 & ~mask);
  }
  if (::fchmod(fd, mode) != 0) {
    const int e = errno;
    ::close(fd);
    return fail("cannot set the permissions of " + tmp, e);
  }
  if (const int e = write_all(fd, content); e != 0) {
    ::close(fd);
    return fail("cannot write", e);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    if (e != EINVAL && e != EROFS) return fail("cannot write", e);
  } else if (::close(fd) != 0) {
    return fail("cannot write", errno);
  }
  s.tmp = tmp;
  return Ok{};
}

// An error of output `f`: under its label (the flag) with the path in the message, or under the path.
Error output_error(const OutputFile& f, const Error& e) {
  if (f.label.empty()) return e;
  return make_error(e.code, f.label, f.path + ": " + e.message);
}

}  // namespace

Status write_files_atomic(const std::vector<OutputFile>& files) {
  std::vector<Staged> staged(files.size());
  // 1. Every target checked before anything is written; two outputs naming one file are refused.
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (auto st = check_output(files[i].path, staged[i]); !st.ok()) return output_error(files[i], st.error());
    for (std::size_t k = 0; k < i; ++k) {
      const Staged& a = staged[k];
      const Staged& b = staged[i];
      if (a.through || b.through) continue;  // /dev/null may take every output
      const bool same_inode =
          a.exists && b.exists && a.st.st_dev == b.st.st_dev && a.st.st_ino == b.st.st_ino;
      if (a.key == b.key || same_inode)
        return output_error(files[k],
                            make_error(Errc::invalid_value, files[k].path,
                                       "is also where " + files[i].what + " goes (" + files[i].path +
                                           "): one file cannot hold both; choose another name"));
    }
  }
  // 2. Every new content in a temporary file beside its target; on a failure none is kept.
  auto discard = [&staged] {
    for (auto& s : staged)
      if (!s.tmp.empty()) ::unlink(s.tmp.c_str());
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (staged[i].through) continue;
    if (auto st = stage_output(files[i].path, files[i].content, staged[i]); !st.ok()) {
      discard();
      return output_error(files[i], st.error());
    }
  }
  // 3. Devices and FIFOs written through, then every temporary file renamed over its target.
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!staged[i].through) continue;
    if (auto st = write_through(files[i].path, files[i].content, staged[i].fifo); !st.ok()) {
      discard();
      return output_error(files[i], st.error());
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    Staged& s = staged[i];
    if (s.through) continue;
    if (::rename(s.tmp.c_str(), s.target.c_str()) != 0) {
      const int e = errno;
      discard();
      return output_error(
          files[i], io(files[i].path, (s.target == files[i].path ? std::string("cannot replace the file")
                                                                 : "cannot replace " + s.target) +
                                          ": " + errno_text(e)));
    }
    s.tmp.clear();
  }
  return Ok{};
}

Status write_file_atomic(const std::string& path, const std::string& content) {
  return write_files_atomic({OutputFile{path, content, "", "the output"}});
}

void capture_stdout() {
  if (g_stdout_buf != nullptr) return;
  g_stdout_buf = new StdoutBuf;  // never freed: std::cout may be flushed at exit, after any destructor
  std::cout.rdbuf(g_stdout_buf);
}

Status flush_stdout() {
  std::cout.flush();
  const bool cpp_bad = !std::cout;
  errno = 0;
  const int r = std::fflush(stdout);
  int e = errno;
  if (g_stdout_buf != nullptr && g_stdout_buf->first_errno() != 0) e = g_stdout_buf->first_errno();
  if (r != 0 || cpp_bad || std::ferror(stdout) || e != 0) {
    return make_error(Errc::io_error, "stdout",
                      "cannot write to stdout: " + (e != 0 ? errno_text(e) : std::string("write error")));
  }
  return Ok{};
}

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  auto esc = [&out](bool byte, unsigned v) {
    char buf[16];
    if (byte)
      std::snprintf(buf, sizeof buf, "\\x%02X", v);
    else
      std::snprintf(buf, sizeof buf, "\\u%04X", v);
    out += buf;
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    unsigned cp = 0;
    if (c < 0x80) {
      n = 1;
      cp = c;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
      cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      cp = c & 0x07u;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0u) != 0x80u) ok = false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    // overlong 3/4-byte forms, surrogates and code points past U+10FFFF are not UTF-8
    if (ok && ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
               (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
      ok = false;
    if (!ok) {
      esc(true, c);
      ++i;
      continue;
    }
    // C0, DEL, C1 controls and the bidirectional overrides/isolates (which reorder what a terminal shows)
    const bool control = cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
                         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
    if (control) {
      esc(false, cp);
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  return out;
}

std::string printable_csv(const std::string& csv) {
  std::string out;
  out.reserve(csv.size());
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < csv.size(); ++i) {
    if (csv[i] == '"') quoted = !quoted;  // "" inside a quoted field toggles twice
    if (csv[i] != '\n' || quoted) continue;
    out += printable(csv.substr(start, i - start));
    out += '\n';
    start = i + 1;
  }
  out += printable(csv.substr(start));
  return out;
}

}  // namespace ftcost::cli
