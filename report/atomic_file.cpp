#include "report/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/cleanup.h"
#include "core/error.h"

namespace stratasim {
namespace {

[[noreturn]] void ThrowSystemError(const std::string& what, const std::string& path, int err) {
  throw Error(what + " " + path + ": " + std::strerror(err));
}

// Writes all of `data`, retrying short writes and interrupted calls, which write(2) may
// return for large buffers or when a signal arrives. Returns 0 or an errno value.
int WriteAll(int fd, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

// The directory entry made by rename(2) is only durable once the directory itself is synced.
// This is best effort: the file is already complete and in place, and some file systems
// refuse fsync on a directory, so a failure here is not reported.
void SyncParentDirectory(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  int dir_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return;
  ::fsync(dir_fd);
  ::close(dir_fd);
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  // mkstemp picks a name no other writer uses, so concurrent runs writing the same target
  // never clobber each other's temporary file; the last rename wins, whole. The writer's pid
  // in the name lets a later run remove what a killed one left (core/cleanup.h).
  std::string temp_template = path + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
  std::vector<char> temp_name(temp_template.begin(), temp_template.end());
  temp_name.push_back('\0');
  fd_ = ::mkstemp(temp_name.data());
  if (fd_ < 0) ThrowSystemError("cannot write", path, errno);
  temp_path_ = temp_name.data();
  // A signal from here on removes the temporary file (core/cleanup.h).
  slot_ = cleanup::TrackTempFile(temp_path_);
  // mkstemp creates the file 0600; reports are meant to be shared and read by other tools.
  if (::fchmod(fd_, 0644) != 0) Fail("cannot write", errno);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(temp_path_.c_str());
  }
  cleanup::ForgetTempFile(slot_);
}

// Undoes the temporary file and reports `err`; the target is untouched at this point.
void AtomicFile::Fail(const char* what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temp_path_.c_str());
  committed_ = true;  // nothing left to undo
  ThrowSystemError(what, path_, err);
}

void AtomicFile::Write(std::string_view data) {
  if (int err = WriteAll(fd_, data); err != 0) Fail("cannot write", err);
}

void AtomicFile::Commit() {
  // Without fsync a crash after the rename could leave an empty file under the final name.
  if (::fsync(fd_) != 0) Fail("cannot flush", errno);
  // close can report a deferred write error (e.g. on NFS), so its result matters.
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) Fail("cannot write", errno);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) Fail("cannot replace", errno);
  committed_ = true;
  SyncParentDirectory(path_);
}

void WriteFileAtomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  file.Write(contents);
  file.Commit();
}

void CreateDirectories(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create directory " + dir + ": " + ec.message());
  // create_directories reports success for an existing non-directory on some library
  // versions; a later write into it would fail with a less helpful message.
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Error("cannot create directory " + dir + ": " + std::strerror(ENOTDIR));
  }
}

}  // namespace stratasim
