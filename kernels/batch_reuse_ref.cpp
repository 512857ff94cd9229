#include "kernels/batch_reuse_ref.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.h"

namespace stratasim::kernels::batch_reuse {
namespace {

void CheckSize(const std::vector<std::int64_t>& ids, const char* which) {
  if (static_cast<std::int64_t>(ids.size()) > kMaxBatchVertices) {
    throw Error(std::string("batch reuse: the ") + which + " batch has " +
                std::to_string(ids.size()) + " vertices, more than " +
                std::to_string(kMaxBatchVertices));
  }
}

}  // namespace

SortedIds SortWithSlots(const std::vector<std::int64_t>& previous) {
  CheckSize(previous, "previous");
  std::vector<std::int32_t> order(previous.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::int32_t a, std::int32_t b) { return previous[a] < previous[b]; });
  SortedIds sorted;
  sorted.ids.reserve(previous.size());
  sorted.slots = order;
  for (std::int32_t s : order) sorted.ids.push_back(previous[s]);
  const auto repeat = std::adjacent_find(sorted.ids.begin(), sorted.ids.end());
  if (repeat != sorted.ids.end()) {
    throw Error("batch reuse: vertex " + std::to_string(*repeat) +
                " appears twice in the previous batch (its vertex list must be deduplicated)");
  }
  return sorted;
}

Reuse FindReuse(const std::vector<std::int64_t>& previous,
                const std::vector<std::int64_t>& current) {
  CheckSize(current, "current");
  const SortedIds sorted = SortWithSlots(previous);
  Reuse r;
  r.hit_slot.resize(current.size(), -1);
  for (size_t i = 0; i < current.size(); ++i) {
    const auto it = std::lower_bound(sorted.ids.begin(), sorted.ids.end(), current[i]);
    if (it != sorted.ids.end() && *it == current[i]) {
      r.hit_slot[i] = sorted.slots[it - sorted.ids.begin()];
    } else {
      r.misses.push_back(static_cast<std::int32_t>(i));
    }
  }
  return r;
}

}  // namespace stratasim::kernels::batch_reuse
