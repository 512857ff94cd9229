#include "strategies/moe/placement.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

void CheckShape(const TokenMatrix& t, int experts_per_rank) {
  if (t.empty() || experts_per_rank < 1) throw Error("MoE placement: empty routing matrix");
  const size_t experts = t.size() * experts_per_rank;
  for (const auto& row : t) {
    if (row.size() != experts) {
      throw Error("MoE placement: a routing row has " + std::to_string(row.size()) +
                  " experts, expected ranks x experts_per_rank = " + std::to_string(experts));
    }
  }
}

LayerDecision Empty(int n) {
  LayerDecision d;
  d.ranks = n;
  d.a2a_tokens.assign(static_cast<size_t>(n) * n, 0);
  d.replica_tokens.assign(n, 0);
  d.weight_sets.assign(n, 0);
  return d;
}

std::vector<double> OwnerLoads(const TokenMatrix& t, int experts_per_rank) {
  std::vector<double> load(t.size(), 0);
  for (const auto& row : t) {
    for (size_t x = 0; x < row.size(); ++x) load[x / experts_per_rank] += row[x];
  }
  return load;
}

}  // namespace

std::vector<double> LayerDecision::ComputedTokens() const {
  std::vector<double> c(replica_tokens);
  for (int s = 0; s < ranks; ++s) {
    for (int d = 0; d < ranks; ++d) c[d] += a2a_tokens[static_cast<size_t>(s) * ranks + d];
  }
  return c;
}

double StdDev(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / v.size());
}

LayerDecision OwnerPlacement(const TokenMatrix& t, int experts_per_rank, double capacity,
                             bool padded) {
  CheckShape(t, experts_per_rank);
  const int n = static_cast<int>(t.size());
  LayerDecision d = Empty(n);
  for (int r = 0; r < n; ++r) d.weight_sets[r] = experts_per_rank;
  for (int s = 0; s < n; ++s) {
    for (size_t x = 0; x < t[s].size(); ++x) {
      double sent = t[s][x];
      if (capacity > 0) {
        sent = std::min(sent, capacity);
        d.dropped_tokens += t[s][x] - sent;
        if (padded) sent = capacity;
      }
      d.a2a_tokens[static_cast<size_t>(s) * n + x / experts_per_rank] += sent;
    }
  }
  d.padded_capacity = padded ? capacity : 0;
  d.load_before = OwnerLoads(t, experts_per_rank);
  d.load_after = d.load_before;
  return d;
}

LayerDecision ReplicatedPlacement(const TokenMatrix& t, int experts_per_rank,
                                  const std::vector<Replica>& replicas, bool spread) {
  CheckShape(t, experts_per_rank);
  const int n = static_cast<int>(t.size());
  const int experts = n * experts_per_rank;
  // holders[x]: owner first, then the replicas' holders.
  std::vector<std::vector<int>> holders(experts);
  for (int x = 0; x < experts; ++x) holders[x] = {x / experts_per_rank};
  for (const Replica& r : replicas) {
    if (r.expert < 0 || r.expert >= experts || r.owner != r.expert / experts_per_rank) {
      throw Error("MoE placement: replica of expert " + std::to_string(r.expert) +
                  " names the wrong owner");
    }
    for (int h : r.holders) {
      if (h < 0 || h >= n ||
          std::find(holders[r.expert].begin(), holders[r.expert].end(), h) !=
              holders[r.expert].end()) {
        throw Error("MoE placement: replica holder " + std::to_string(h) + " of expert " +
                    std::to_string(r.expert) + " is out of range or repeated");
      }
      holders[r.expert].push_back(h);
    }
  }
  LayerDecision d = Empty(n);
  d.replicas = replicas;
  for (int x = 0; x < experts; ++x) {
    const std::vector<int>& h = holders[x];
    for (int rank : h) d.weight_sets[rank] += 1;
    for (int s = 0; s < n; ++s) {
      const double tokens = t[s][x];
      if (tokens <= 0) continue;
      const bool holds = std::find(h.begin(), h.end(), s) != h.end();
      if (holds && s != h[0]) {
        d.replica_tokens[s] += tokens;  // computed on the local copy, no all-to-all
      } else if (holds || !spread || h.size() == 1) {
        d.a2a_tokens[static_cast<size_t>(s) * n + h[0]] += tokens;
      } else {
        // Whole tokens split evenly; the remainder goes to the holders after position s % k.
        const double k = static_cast<double>(h.size());
        const double share = std::floor(tokens / k);
        const int extra = static_cast<int>(tokens - share * k);
        for (size_t i = 0; i < h.size(); ++i) {
          const bool more = static_cast<int>((i + h.size() - s % h.size()) % h.size()) < extra;
          d.a2a_tokens[static_cast<size_t>(s) * n + h[i]] += share + (more ? 1 : 0);
        }
      }
    }
  }
  d.load_before = OwnerLoads(t, experts_per_rank);
  d.load_after = d.ComputedTokens();
  return d;
}

}  // namespace stratasim
