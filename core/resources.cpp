#include "core/resources.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>

namespace stratasim {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The kB figure on the line starting with `key` ("MemAvailable:"), in bytes; 0 when absent.
double KibField(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    double kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return 0;
}

// This process's cgroup (v2: one "0::/path" line), or "" when there is none.
std::string CgroupPath() {
  std::istringstream lines(Slurp("/proc/self/cgroup"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

}  // namespace

double MemAvailableBytes(const std::string& meminfo) { return KibField(meminfo, "MemAvailable:"); }

double VmSizeBytes(const std::string& status) { return KibField(status, "VmSize:"); }

double CgroupHeadroomBytes(const std::string& memory_max, const std::string& memory_current) {
  double max = 0, current = 0;
  std::istringstream m(memory_max), c(memory_current);
  if (!(m >> max)) return -1;  // "max", or unreadable: no limit
  if (!(c >> current)) current = 0;
  return max > current ? max - current : 0;
}

MemoryHeadroom ReadMemoryHeadroom() {
  MemoryHeadroom h{MemAvailableBytes(Slurp("/proc/meminfo")), "MemAvailable"};
  auto consider = [&](double bytes, const char* bound) {
    if (bytes < 0) return;
    if (h.bytes <= 0 || bytes < h.bytes) h = MemoryHeadroom{bytes, bound};
  };
  // Every cgroup from this process's up to the root: a limit may sit on an ancestor (Slurm
  // sets it on the job, its tasks run in child cgroups), and without a cgroup namespace the
  // path names the host's hierarchy, of which only the root is visible here.
  std::string cgroup = CgroupPath();
  while (!cgroup.empty()) {
    const std::string dir = "/sys/fs/cgroup" + (cgroup == "/" ? std::string() : cgroup);
    const std::string max = Slurp(dir + "/memory.max");
    if (!max.empty()) {
      consider(CgroupHeadroomBytes(max, Slurp(dir + "/memory.current")), "cgroup memory.max");
    }
    if (cgroup == "/") break;
    const size_t slash = cgroup.find_last_of('/');
    cgroup = slash == 0 || slash == std::string::npos ? "/" : cgroup.substr(0, slash);
  }
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const double vm = VmSizeBytes(Slurp("/proc/self/status"));
    const double limit = static_cast<double>(as.rlim_cur);
    consider(limit > vm ? limit - vm : 0, "ulimit -v");
  }
  return h;
}

}  // namespace stratasim
