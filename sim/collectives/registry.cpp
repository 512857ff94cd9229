#include "sim/collectives/registry.h"

#include <string_view>

#include "core/collective_names.h"
#include "core/error.h"

namespace stratasim::sim {
namespace {

struct Registered {
  std::string_view name;
  const CollectiveAlgorithm* entry;
};

// The list of core/collective_algorithms.def with the entries: referencing each entry here
// also keeps the linker from dropping its file from the static library.
constexpr Registered kRegistered[] = {
#define STRATASIM_COLLECTIVE_ALGORITHM(name, ...) {#name, &collective_algorithms::name},
#include "core/collective_algorithms.def"
#undef STRATASIM_COLLECTIVE_ALGORITHM
};

}  // namespace

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

const CollectiveAlgorithm& FindCollectiveAlgorithm(CollectiveKind kind, const std::string& name) {
  CheckAlgorithm(kind, name, false);
  for (const Registered& r : kRegistered) {
    if (r.name == name) return *r.entry;
  }
  throw Error("collective algorithm '" + name + "' has no entry");  // unreachable: one list
}

std::vector<std::string> AutoCandidates(CollectiveKind kind, const GroupView& view) {
  std::vector<std::string> out;
  for (const Registered& r : kRegistered) {
    const std::string name(r.name);
    if (!IsCollectiveAlgorithm(kind, name) || !r.entry->chosen_by_auto) continue;
    if (r.entry->auto_fits && !r.entry->auto_fits(view)) continue;
    out.push_back(name);
  }
  return out;
}

}  // namespace stratasim::sim
