#include "core/cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace stratasim::cleanup {
namespace {

constexpr int kSlots = 64;
constexpr std::chrono::minutes kStaleAfter{10};
constexpr size_t kPathBytes = 4096;

// A slot is claimed by setting `used`, filled, then published by `ready`; the handler reads
// only ready slots.
struct TempSlot {
  std::atomic<bool> used{false};
  std::atomic<bool> ready{false};
  char path[kPathBytes];
};
struct ChildSlot {
  std::atomic<bool> used{false};
  std::atomic<pid_t> pid{0};
};

TempSlot g_temps[kSlots];
ChildSlot g_children[kSlots];
std::atomic<bool> g_installed{false};

void OnSignal(int sig) {
  for (ChildSlot& c : g_children) {
    const pid_t pid = c.pid.load();
    if (pid > 0) ::kill(pid, SIGKILL);
  }
  for (TempSlot& t : g_temps) {
    if (t.ready.load()) ::unlink(t.path);
  }
  ::_exit(128 + sig);
}

}  // namespace

void InstallSignalHandlers() {
  if (g_installed.exchange(true)) return;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSignal;
  sigfillset(&sa.sa_mask);  // no second signal inside the handler
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

int TrackTempFile(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (g_temps[i].used.exchange(true)) continue;
    std::memcpy(g_temps[i].path, path.c_str(), path.size() + 1);
    g_temps[i].ready.store(true);
    return i;
  }
  return -1;
}

void ForgetTempFile(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  g_temps[slot].ready.store(false);
  g_temps[slot].used.store(false);
}

int TrackChild(pid_t pid) {
  for (int i = 0; i < kSlots; ++i) {
    if (g_children[i].used.exchange(true)) continue;
    g_children[i].pid.store(pid);
    return i;
  }
  return -1;
}

void ForgetChild(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  g_children[slot].pid.store(0);
  g_children[slot].used.store(false);
}

int RemoveStaleTempFiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // NAME.tmp.PID.XXXXXX
    const std::string name = it->path().filename().string();
    const size_t tmp = name.rfind(".tmp.");
    if (tmp == std::string::npos) continue;
    const std::string rest = name.substr(tmp + 5);
    const size_t dot = rest.find('.');
    if (dot == std::string::npos || dot == 0 || rest.size() - dot - 1 != 6) continue;
    pid_t pid = 0;
    bool digits = true;
    for (size_t i = 0; i < dot; ++i) {
      digits = digits && rest[i] >= '0' && rest[i] <= '9';
      if (digits && pid < 100000000) pid = pid * 10 + (rest[i] - '0');
    }
    if (!digits || pid <= 0) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // its writer may still be running
    // A pid is only known dead in this pid namespace: a writer in another container, or on
    // another host sharing the folder, would look dead too. Its file is fresh; a leftover is old.
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(it->path(), ec);
    if (ec || age < kStaleAfter) continue;
    if (fs::remove(it->path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace stratasim::cleanup
