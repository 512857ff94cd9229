// Runs the stratasim program from a test (STRATASIM_BINARY, set by tests/CMakeLists.txt), or
// any command, and reads what it wrote.
#ifndef STRATASIM_TESTS_CLI_RUNNER_H_
#define STRATASIM_TESTS_CLI_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace stratasim::testing {

struct CliResult {
  int status;          // the exit status; -1 when the program did not exit normally
  std::string output;  // stdout and stderr
};

// Runs a shell command line, stderr with stdout.
inline CliResult RunCommand(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

#ifdef STRATASIM_BINARY
inline CliResult RunCli(const std::string& args) {
  return RunCommand(std::string(STRATASIM_BINARY) + " " + args);
}
#endif

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh, empty folder under the system's temporary folder, unique to this process.
inline std::filesystem::path TempDir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() /
               ("stratasim-" + prefix + "-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace stratasim::testing

#endif  // STRATASIM_TESTS_CLI_RUNNER_H_
