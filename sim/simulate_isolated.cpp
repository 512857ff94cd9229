// Simulate(): one SimGrid run in a forked child process, its trace handed back over a pipe.
// SimGrid 3.32 allows one Engine per process and aborts (rather than throws) on some errors;
// a child keeps both from reaching the caller.
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "core/cleanup.h"
#include "core/error.h"
#include "sim/executor.h"
#include "sim/trace_wire.h"

namespace stratasim::sim {
namespace {

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  size_t off = 0;
  while (off < size) {
    ssize_t n = write(fd, p + off, size - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

bool ReadExact(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  size_t off = 0;
  while (off < size) {
    ssize_t n = read(fd, p + off, size - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
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

SimulationProcess StartSimulation(const TaskGraph& g, const ClusterSpec& cluster,
                                  const SimulationSpec& spec) {
  SimulationProcess p =
      StartChild([&](const WireWrite& write) { SimulateInProcessToWire(g, cluster, spec, write); });
  p.max_records = g.tasks().size();
  return p;
}

SimulationProcess StartChild(const std::function<void(const WireWrite&)>& work) {
  int fds[2];
  if (pipe(fds) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // or the child would flush the parent's buffered output again
  const pid_t parent = getpid();
  // The clean-up signals wait until the child is tracked (parent) or has dropped the parent's
  // handler (child): in between, a signal would run the parent's handler in the child, or
  // miss the child in the parent.
  sigset_t block, previous;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw Error(std::string("cannot fork the simulation: ") + std::strerror(err));
  }
  if (pid == 0) {
    // The child dies with its parent: a killed run leaves no simulation holding gigabytes. The
    // parent may have died before prctl: then it is gone already.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    // The parent's handlers would remove its temporaries from the child: the child has none.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    // The reply: 'T' and the trace in its binary form (sim/trace_wire.h), or 'E' and the
    // error's message.
    close(fds[0]);
    int code = 0;
    try {
      // The tag goes first only once the simulation succeeded: an error is written instead.
      bool tagged = false;
      work([&](const void* p, size_t n) {
        if (!tagged) {
          const char tag = 'T';
          tagged = true;
          if (!WriteAll(fds[1], &tag, 1)) return false;
        }
        return WriteAll(fds[1], p, n);
      });
    } catch (const std::bad_alloc&) {
      const char out[] =
          "Eout of memory while simulating (docs/limits.md: fewer iterations, micro-batches or "
          "layers, simulation.fold: auto, or fewer jobs at once with -j)";
      WriteAll(fds[1], out, sizeof out - 1);
      code = 1;
    } catch (const std::exception& e) {
      const std::string out = std::string("E") + e.what();
      WriteAll(fds[1], out.data(), out.size());
      code = 1;
    }
    close(fds[1]);
    _exit(code);  // no atexit handlers, no second flush of inherited buffers
  }
  close(fds[1]);
  const SimulationProcess process{pid, fds[0], 0, cleanup::TrackChild(pid)};
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return process;
}

size_t WaitForAnySimulation(const std::vector<SimulationProcess>& running) {
  std::vector<pollfd> fds;
  for (const SimulationProcess& p : running) fds.push_back(pollfd{p.fd, POLLIN, 0});
  for (;;) {
    const int n = poll(fds.data(), fds.size(), -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(std::string("cannot wait for the simulations: ") + std::strerror(errno));
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) return i;  // data, or the child closed its end
    }
  }
}

ExecutionTrace FinishSimulation(SimulationProcess& p) {
  const unsigned long long max_records = p.max_records;
  ExecutionTrace trace;
  FinishChild(p, [&](const WireRead& read) { trace = ReadTraceWire(read, max_records); });
  return trace;
}

void FinishChild(SimulationProcess& p, const std::function<void(const WireRead&)>& read) {
  const pid_t pid = p.pid;
  int fds[1] = {p.fd};
  const SimulationProcess process = p;
  p = SimulationProcess{};
  char tag = 0;
  const bool got_tag = ReadExact(fds[0], &tag, 1);
  std::string message;  // the child's error, or why its reply could not be read
  if (got_tag && tag == 'T') {
    try {
      read([&](void* p, size_t n) { return ReadExact(fds[0], p, n); });
    } catch (const Error& e) {
      message = e.what();
    }
  } else if (got_tag && tag == 'E') {
    message = ReadAll(fds[0]);
  }
  close(fds[0]);
  // Forgotten before it is reaped, so that the handler never kills a pid reused after it; a
  // signal in between still ends the child, which dies with its parent.
  cleanup::ForgetChild(process.cleanup_slot);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A child killed by SIGPIPE wrote into the pipe after a bad stream made us stop reading: the
  // message says why.
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && message.empty()) {
    throw Error(
        "the simulation process was killed (SIGKILL), most likely by the kernel's out-of-memory "
        "killer: docs/limits.md (fewer iterations, micro-batches or layers, or fewer jobs at "
        "once with -j)");
  }
  if (WIFSIGNALED(status) && !(WTERMSIG(status) == SIGPIPE && !message.empty())) {
    throw Error("the simulation process died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                strsignal(WTERMSIG(status)) + "); SimGrid's message is above");
  }
  if (got_tag && tag == 'E') throw Error(message);
  if (!message.empty()) throw Error(message);
  if (!got_tag || tag != 'T' || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error("the simulation process ended without a result (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
}

ExecutionTrace Simulate(const TaskGraph& g, const ClusterSpec& cluster,
                        const SimulationSpec& spec) {
  SimulationProcess p = StartSimulation(g, cluster, spec);
  return FinishSimulation(p);
}

}  // namespace stratasim::sim
