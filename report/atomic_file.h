// Writing output files so that a reader never sees a half-written one.
//
// Reports are often read by scripts and notebooks while a sweep is still running, and a run
// that is interrupted (Ctrl-C, out of memory, a full disk) must not leave a truncated
// results.json that parses as something else. So every report file is written to a temporary
// file beside the target and renamed over it: rename(2) within one directory is atomic.
#ifndef STRATASIM_REPORT_ATOMIC_FILE_H_
#define STRATASIM_REPORT_ATOMIC_FILE_H_

#include <string>
#include <string_view>

namespace stratasim {

// Replaces `path` with `contents`: writes `path`.tmp.XXXXXX in the same directory, flushes it
// to disk and renames it over `path`. The new file is readable by everyone (mode 0644), like
// the output of a shell redirection under the usual umask. On any failure the temporary file
// is removed, `path` is left as it was, and stratasim::Error names `path` and the system
// error.
void WriteFileAtomically(const std::string& path, std::string_view contents);

// The same in steps, for a file written piece by piece, possibly by a child process that
// inherits fd() (a streamed simulation writes its Chrome trace as it runs): the temporary
// file exists from construction, tracked for removal on a signal (core/cleanup.h), and is
// removed by the destructor unless Commit() put it in place.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);  // throws stratasim::Error naming `path`
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Appends `data`; throws stratasim::Error naming the target on failure.
  void Write(std::string_view data);
  // Flushes the file to disk and renames it over the target.
  void Commit();

 private:
  [[noreturn]] void Fail(const char* what, int err);

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

// Creates `dir` and its missing parents; an existing directory is fine. An empty `dir` means
// the current directory and does nothing. Throws stratasim::Error naming `dir` on failure
// (e.g. a component is a regular file, or permission is denied).
void CreateDirectories(const std::string& dir);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_ATOMIC_FILE_H_
