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

// Creates `dir` and its missing parents; an existing directory is fine. An empty `dir` means
// the current directory and does nothing. Throws stratasim::Error naming `dir` on failure
// (e.g. a component is a regular file, or permission is denied).
void CreateDirectories(const std::string& dir);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_ATOMIC_FILE_H_
