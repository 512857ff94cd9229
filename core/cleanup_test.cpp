#include "core/cleanup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace stratasim::cleanup {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() /
               ("stratasim-cleanup-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A process in the state 'Z' (dead, not reaped) or gone.
bool Dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

// In a child process: a tracked temporary file and a tracked process, then SIGTERM.
TEST(Cleanup, SigtermRemovesTemporariesKillsChildrenAndExits143) {
  const fs::path dir = TempDir("sigterm");
  const fs::path temp = dir / "results.json.tmp.1.abcdef";
  std::ofstream(temp) << "half";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    InstallSignalHandlers();
    const pid_t sleeper = fork();
    if (sleeper == 0) {
      pause();
      _exit(0);
    }
    TrackChild(sleeper);
    TrackTempFile(temp.string());
    if (write(fds[1], &sleeper, sizeof sleeper) != sizeof sleeper) _exit(1);
    raise(SIGTERM);
    _exit(0);  // not reached: the handler exits 128 + 15
  }
  close(fds[1]);
  pid_t sleeper = 0;
  ASSERT_EQ(read(fds[0], &sleeper, sizeof sleeper), static_cast<ssize_t>(sizeof sleeper));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_FALSE(fs::exists(temp));
  bool dead = false;
  for (int i = 0; i < 200 && !(dead = Dead(sleeper)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(dead) << "pid " << sleeper;
  if (!dead) kill(sleeper, SIGKILL);
}

TEST(Cleanup, ForgottenTemporariesStay) {
  const fs::path dir = TempDir("forget");
  const fs::path kept = dir / "kept";
  std::ofstream(kept) << "whole";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    InstallSignalHandlers();
    ForgetTempFile(TrackTempFile(kept.string()));
    raise(SIGTERM);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_TRUE(fs::exists(kept));
}

TEST(Cleanup, OnlyOldTemporariesOfDeadWritersAreStale) {
  const fs::path dir = TempDir("stale");
  // 4194304 is above Linux's largest pid (PID_MAX_LIMIT, 2^22): never alive.
  const fs::path old_dead = dir / "a.json.tmp.4194304.abcdef";
  const fs::path fresh_dead = dir / "b.json.tmp.4194304.abcdef";
  const fs::path old_alive = dir / ("c.json.tmp." + std::to_string(getpid()) + ".abcdef");
  const fs::path other = dir / "notes.tmp.txt";
  for (const fs::path& p : {old_dead, fresh_dead, old_alive, other}) std::ofstream(p) << "x";
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const fs::path& p : {old_dead, old_alive, other}) fs::last_write_time(p, hour_ago);
  EXPECT_EQ(RemoveStaleTempFiles(dir.string()), 1);
  EXPECT_FALSE(fs::exists(old_dead));
  EXPECT_TRUE(fs::exists(fresh_dead));  // another namespace's writer may be at work
  EXPECT_TRUE(fs::exists(old_alive));
  EXPECT_TRUE(fs::exists(other));
}

}  // namespace
}  // namespace stratasim::cleanup
