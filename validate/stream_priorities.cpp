#include "validate/stream_priorities.h"

#include <algorithm>

namespace stratasim::validate {

std::vector<int> CudaStreamPriorities(const std::vector<int>& graph_priorities, int least,
                                      int greatest) {
  std::vector<int> levels = graph_priorities;
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  std::vector<int> out;
  out.reserve(graph_priorities.size());
  for (int p : graph_priorities) {
    const int step =
        static_cast<int>(std::lower_bound(levels.begin(), levels.end(), p) - levels.begin());
    out.push_back(std::max(greatest, least - step));
  }
  return out;
}

}  // namespace stratasim::validate
