// How much memory this run may still take: the least of the machine's MemAvailable, the
// headroom under the cgroup's memory.max (containers, Slurm jobs) and the headroom under the
// address-space limit (ulimit -v). A plan is sized against it before it is built (docs/limits.md).
#ifndef STRATASIM_CORE_RESOURCES_H_
#define STRATASIM_CORE_RESOURCES_H_

#include <string>

namespace stratasim {

struct MemoryHeadroom {
  double bytes = 0;   // 0 when nothing could be read
  std::string bound;  // which limit it is: "MemAvailable", "cgroup memory.max", "ulimit -v"
};

MemoryHeadroom ReadMemoryHeadroom();

// The parts, from the files' text, for tests: kB of "MemAvailable:" in /proc/meminfo (0 when
// absent); cgroup v2 memory.max minus memory.current in bytes ("max": no limit, -1); kB of
// "VmSize:" in /proc/self/status.
double MemAvailableBytes(const std::string& meminfo);
double CgroupHeadroomBytes(const std::string& memory_max, const std::string& memory_current);
double VmSizeBytes(const std::string& status);

}  // namespace stratasim

#endif  // STRATASIM_CORE_RESOURCES_H_
