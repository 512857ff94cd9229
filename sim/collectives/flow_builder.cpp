#include "sim/collectives/flow_builder.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.h"

namespace stratasim::sim {

int PipelineChunks(double bytes, int hops) {
  const double chunks = std::ceil(bytes / kPipelineChunkBytes);
  const int most = std::max(kMaxPipelineChunks, kChunksPerPipelineHop * hops);
  return static_cast<int>(std::clamp(chunks, 1.0, static_cast<double>(most)));
}

int FlowBuilder::Add(int src, int dst, double bytes, std::vector<int> deps, int latency_steps,
                     int extra_route_latencies) {
  Flow f;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.deps = std::move(deps);
  f.extra_route_latencies = extra_route_latencies;
  program_.flows.push_back(std::move(f));
  latency_steps_.push_back(latency_steps);
  return size() - 1;
}

void FlowBuilder::SetFollows(int id, int ahead) {
  Flow& f = program_.flows[id];
  const Flow& a = program_.flows[ahead];
  if (a.src != f.src || a.dst != f.dst) {
    throw Error("flow " + std::to_string(id) + " cannot follow flow " + std::to_string(ahead) +
                ": they are not on the same connection");
  }
  f.follows = ahead;
  f.deps.push_back(ahead);
}

std::vector<int> Union(const MemberFlows& flows, std::initializer_list<int> members) {
  std::vector<int> out;
  if (flows.empty()) return out;
  for (int m : members) out.insert(out.end(), flows[m].begin(), flows[m].end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace stratasim::sim
