#include "strategies/moe/ep_groups.h"

#include <string>

#include "core/error.h"

namespace stratasim {

std::vector<int> ExpertParallelGroup(int group, int ep) {
  std::vector<int> members;
  for (int i = 0; i < ep; ++i) members.push_back(group * ep + i);
  return members;
}

std::vector<int> ExpertDataParallelGroup(int position, int ep, int ranks) {
  std::vector<int> members;
  for (int r = position; r < ranks; r += ep) members.push_back(r);
  return members;
}

TokenMatrix GroupRows(const TokenMatrix& t, int group, int ep) {
  if (ep < 1 || (group + 1) * static_cast<size_t>(ep) > t.size()) {
    throw Error("MoE expert-parallel group " + std::to_string(group) + " of " + std::to_string(ep) +
                " ranks is outside the " + std::to_string(t.size()) + " routing rows");
  }
  return TokenMatrix(t.begin() + static_cast<long>(group) * ep,
                     t.begin() + static_cast<long>(group + 1) * ep);
}

std::vector<Replica> GroupReplicas(const std::vector<Replica>& all, int group, int ep) {
  const int base = group * ep;
  std::vector<Replica> out;
  for (Replica rep : all) {
    if (rep.owner < base || rep.owner >= base + ep) continue;
    rep.owner -= base;
    for (int& h : rep.holders) h -= base;
    out.push_back(std::move(rep));
  }
  return out;
}

LayerDecision JoinGroups(const std::vector<LayerDecision>& groups) {
  if (groups.size() == 1) return groups.front();
  LayerDecision d;
  for (const LayerDecision& g : groups) d.ranks += g.ranks;
  const int n = d.ranks;
  d.a2a_tokens.assign(static_cast<size_t>(n) * n, 0);
  int base = 0;
  for (const LayerDecision& g : groups) {
    const int m = g.ranks;
    for (int s = 0; s < m; ++s) {
      for (int t = 0; t < m; ++t) {
        d.a2a_tokens[static_cast<size_t>(base + s) * n + base + t] =
            g.a2a_tokens[static_cast<size_t>(s) * m + t];
      }
    }
    d.replica_tokens.insert(d.replica_tokens.end(), g.replica_tokens.begin(),
                            g.replica_tokens.end());
    d.weight_sets.insert(d.weight_sets.end(), g.weight_sets.begin(), g.weight_sets.end());
    d.load_before.insert(d.load_before.end(), g.load_before.begin(), g.load_before.end());
    d.load_after.insert(d.load_after.end(), g.load_after.begin(), g.load_after.end());
    for (Replica rep : g.replicas) {
      rep.owner += base;
      for (int& h : rep.holders) h += base;
      d.replicas.push_back(std::move(rep));
    }
    // Every group pads to the same capacity (DeepSpeed takes the maximum over all ranks).
    d.padded_capacity = g.padded_capacity;
    d.dropped_tokens += g.dropped_tokens;
    base += m;
  }
  return d;
}

LayerDecision PerExpertParallelGroup(
    const TokenMatrix& t, int ep,
    const std::function<LayerDecision(int, const TokenMatrix&)>& plan) {
  if (ep < 1 || t.size() % static_cast<size_t>(ep) != 0) {
    throw Error("MoE expert-parallel groups of " + std::to_string(ep) + " ranks do not divide " +
                std::to_string(t.size()) + " ranks");
  }
  const int groups = static_cast<int>(t.size()) / ep;
  if (groups == 1) return plan(0, t);
  std::vector<LayerDecision> each;
  for (int g = 0; g < groups; ++g) each.push_back(plan(g, GroupRows(t, g, ep)));
  return JoinGroups(each);
}

}  // namespace stratasim
