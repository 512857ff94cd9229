#include "sim/collectives/direct.h"

#include <string>

#include "core/error.h"

namespace stratasim::sim {

void CheckAllToAllMatrix(const Collective& c) {
  const size_t n = c.ranks.size();
  if (c.kind == CollectiveKind::kAllToAllV && c.matrix.size() != n * n) {
    throw Error("all_to_all_v of " + std::to_string(n) + " members needs a " + std::to_string(n) +
                "x" + std::to_string(n) + " size matrix, got " + std::to_string(c.matrix.size()) +
                " entries");
  }
}

double AllToAllBytes(const Collective& c, int i, int j) {
  const int n = static_cast<int>(c.ranks.size());
  return c.kind == CollectiveKind::kAllToAllV ? c.matrix[static_cast<size_t>(i) * n + j]
                                              : c.bytes / n;
}

void LowerDirect(const LowerArgs& a, FlowBuilder* b) {
  const int n = a.n();
  const Collective& c = a.c;
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather: {
      const double each = c.kind == CollectiveKind::kAllReduce ? c.bytes : c.bytes / n;
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          if (i != j) b->Add(i, j, each, {});
        }
      }
      return;
    }
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      for (int i = 0; i < n; ++i) {
        if (i == a.root) continue;
        if (c.kind == CollectiveKind::kGather)
          b->Add(i, a.root, c.bytes / n, {});
        else
          b->Add(a.root, i, c.bytes / n, {});
      }
      return;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
      CheckAllToAllMatrix(c);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          const double bytes = AllToAllBytes(c, i, j);
          if (i != j && bytes > 0) b->Add(i, j, bytes, {});
        }
      }
      return;
    default:
      throw Error("direct has no lowering for " + std::string(ToString(c.kind)));
  }
}

}  // namespace stratasim::sim
