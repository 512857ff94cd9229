#include "cli/child_pool.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace stratasim {
namespace {

// sim::WaitForAnySimulation with a time limit: the index of a child whose reply is ready (or
// who closed its end), or std::nullopt after `timeout_ms` (-1: no limit).
std::optional<size_t> WaitForAny(const std::vector<sim::SimulationProcess>& running,
                                 int timeout_ms) {
  std::vector<pollfd> fds;
  for (const sim::SimulationProcess& p : running) fds.push_back(pollfd{p.fd, POLLIN, 0});
  for (;;) {
    const int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(std::string("cannot wait for the children: ") + std::strerror(errno));
    if (n == 0) return std::nullopt;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) return i;
    }
  }
}

}  // namespace

void RunChildPool(size_t n, int at_once, const ChildPoolTasks& tasks) {
  std::vector<sim::SimulationProcess> running;
  std::vector<size_t> running_index;
  size_t next = 0;
  const size_t max_at_once = static_cast<size_t>(std::max(1, at_once));
  while (next < n || !running.empty()) {
    while (next < n && running.size() < max_at_once) {
      const size_t i = next++;
      try {
        std::optional<sim::SimulationProcess> p = tasks.start(i);
        if (!p) continue;
        running.push_back(*p);
        running_index.push_back(i);
      } catch (const Error& e) {
        tasks.fail(i, e.what());
      }
    }
    if (running.empty()) continue;
    const std::optional<size_t> k =
        WaitForAny(running, tasks.idle && tasks.idle_ms > 0 ? tasks.idle_ms : -1);
    if (!k) {
      tasks.idle();
      continue;
    }
    const size_t i = running_index[*k];
    sim::SimulationProcess process = running[*k];
    running.erase(running.begin() + static_cast<long>(*k));
    running_index.erase(running_index.begin() + static_cast<long>(*k));
    try {
      tasks.finish(i, process);
    } catch (const Error& e) {
      tasks.fail(i, e.what());
    }
  }
}

}  // namespace stratasim
