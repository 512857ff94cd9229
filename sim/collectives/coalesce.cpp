#include "sim/collectives/coalesce.h"

#include <map>
#include <tuple>
#include <vector>

namespace stratasim::sim {

void CoalesceIndependentFlows(FlowProgram* program) {
  std::vector<Flow>& flows = program->flows;
  std::vector<char> depended_on(flows.size(), 0);
  for (const Flow& f : flows) {
    for (int d : f.deps) depended_on[d] = 1;
  }
  // src, dst, delay, extra latencies, latency group (a group's mean latency must stay the
  // mean over its own edges, so flows of different groups are not merged)
  using Key = std::tuple<int, int, double, int, int>;
  std::map<Key, int> merged_into;  // key -> index in `out`
  std::vector<int> new_index(flows.size(), -1);
  std::vector<Flow> out;
  out.reserve(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    Flow& f = flows[i];
    if (f.deps.empty() && !depended_on[i]) {
      const Key key{f.src, f.dst, f.delay_s, f.extra_route_latencies, f.latency_group};
      auto it = merged_into.find(key);
      if (it != merged_into.end()) {
        out[it->second].bytes += f.bytes;
        new_index[i] = it->second;
        continue;
      }
      merged_into.emplace(key, static_cast<int>(out.size()));
    }
    new_index[i] = static_cast<int>(out.size());
    out.push_back(std::move(f));
  }
  // Only flows nothing depends on were merged, so dependencies keep their targets.
  for (Flow& f : out) {
    for (int& d : f.deps) d = new_index[d];
    if (f.follows >= 0) f.follows = new_index[f.follows];
  }
  flows = std::move(out);
}

}  // namespace stratasim::sim
