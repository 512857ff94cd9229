// Simulate(): one SimGrid run in a forked child process, its trace handed back over a pipe.
// SimGrid 3.32 allows one Engine per process and aborts (rather than throws) on some errors;
// a child keeps both from reaching the caller.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.h"
#include "sim/executor.h"

namespace stratasim::sim {
namespace {

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

ExecutionTrace Simulate(const TaskGraph& g, const ClusterSpec& cluster,
                        const SimulationSpec& spec) {
  int fds[2];
  if (pipe(fds) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // or the child would flush the parent's buffered output again
  const pid_t pid = fork();
  if (pid < 0) throw Error(std::string("cannot fork the simulation: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    std::string out;
    try {
      out = "T" + TraceToJson(SimulateInProcess(g, cluster, spec));
    } catch (const std::exception& e) {
      out = std::string("E") + e.what();
      code = 1;
    }
    WriteAll(fds[1], out);
    close(fds[1]);
    _exit(code);  // no atexit handlers, no second flush of inherited buffers
  }
  close(fds[1]);
  std::string reply = ReadAll(fds[0]);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    throw Error("the simulation process died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                strsignal(WTERMSIG(status)) + "); SimGrid's message is above");
  }
  if (!reply.empty() && reply[0] == 'E') throw Error(reply.substr(1));
  if (reply.empty() || reply[0] != 'T' || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error("the simulation process ended without a result (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  return TraceFromJson(reply.substr(1));
}

}  // namespace stratasim::sim
