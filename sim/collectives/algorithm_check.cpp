#include "sim/collectives/algorithm_check.h"

#include "core/collective_names.h"
#include "core/error.h"

namespace stratasim::sim {

void CheckAlgorithm(CollectiveKind kind, const std::string& name, bool allow_auto) {
  if (IsCollectiveAlgorithm(kind, name) && (allow_auto || name != "auto")) return;
  std::string known;
  for (const std::string& a : CollectiveAlgorithms(kind)) {
    if (a == "auto" && !allow_auto) continue;
    known += (known.empty() ? "" : ", ") + a;
  }
  throw Error("collective " + std::string(ToString(kind)) + " has no algorithm '" + name +
              "' (known: " + known + ")");
}

}  // namespace stratasim::sim
