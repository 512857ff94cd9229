#include "cli/trace_options.h"

#include <algorithm>
#include <cctype>

#include "cli/exit_status.h"

namespace stratasim {
namespace {

// A GPU number: decimal digits only, at most 9 of them (a larger number is out of any
// cluster's range, and must not overflow int).
bool ParseNumber(const std::string& s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *out = std::stoi(s);
  return true;
}

}  // namespace

std::vector<int> ParseTraceGpus(const std::string& list, int num_gpus) {
  const std::string prefix = "--trace-gpus " + list + ": ";
  const std::string cluster =
      "the cluster has " + std::to_string(num_gpus) + " GPUs, 0-" + std::to_string(num_gpus - 1);
  if (list.empty()) throw UsageError("--trace-gpus must not be empty (e.g. 0-7,64)");
  std::vector<bool> keep(static_cast<size_t>(std::max(num_gpus, 0)), false);
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(start, comma - start);
    const size_t dash = item.find('-');
    int first = 0, last = 0;
    const bool ok = dash == std::string::npos
                        ? ParseNumber(item, &first) && ParseNumber(item, &last)
                        : ParseNumber(item.substr(0, dash), &first) &&
                              ParseNumber(item.substr(dash + 1), &last);
    if (!ok) {
      throw UsageError(prefix + "\"" + item +
                       "\" is not a GPU number or a range FIRST-LAST (e.g. 0-7,64)");
    }
    if (last < first) throw UsageError(prefix + "\"" + item + "\" ends before it starts");
    if (last >= num_gpus) {
      throw UsageError(prefix + "GPU " + std::to_string(last) + " is not in the cluster (" +
                       cluster + ")");
    }
    for (int g = first; g <= last; ++g) keep[static_cast<size_t>(g)] = true;
    start = comma + 1;
  }
  std::vector<int> gpus;
  for (int g = 0; g < num_gpus; ++g) {
    if (keep[static_cast<size_t>(g)]) gpus.push_back(g);
  }
  return gpus;
}

bool ParseTraceGzip(const std::string& format) {
  if (format == "json") return false;
  if (format == "json.gz") return true;
  throw UsageError("--trace-format " + format + ": must be json or json.gz");
}

}  // namespace stratasim
