#include "sim/latency_groups.h"

#include <algorithm>

namespace stratasim::sim {

void LatencyGroups::Add(int group, int flow, double fixed_s) {
  Group& g = groups_[group];
  g.flows.push_back(flow);
  g.fixed_sum_s += fixed_s;
  group_of_[flow] = group;
}

double LatencyGroups::MeanFixedSeconds(int flow) const {
  const Group& g = groups_.at(group_of_.at(flow));
  return g.fixed_sum_s / static_cast<double>(g.flows.size());
}

void LatencyGroups::Started(int flow, double now) {
  Group& g = groups_.at(group_of_.at(flow));
  g.latest_start_s = std::max(g.latest_start_s, now);
}

void LatencyGroups::TransferStarted(int flow, double now) { transfer_start_s_[flow] = now; }

std::optional<LatencyGroups::Completion> LatencyGroups::TransferDone(int flow, double now) {
  Group& g = groups_.at(group_of_.at(flow));
  g.transfer_sum_s += now - transfer_start_s_.at(flow);
  if (++g.transfers_done < static_cast<int>(g.flows.size())) return std::nullopt;
  const double count = static_cast<double>(g.flows.size());
  const double latency_path_s = g.latest_start_s + g.fixed_sum_s / count + g.transfer_sum_s / count;
  return Completion{std::max(now, latency_path_s), g.flows};
}

}  // namespace stratasim::sim
