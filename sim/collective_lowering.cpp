#include "sim/collective_lowering.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace stratasim::sim {
namespace {

// Ring with `steps` steps of `chunk` bytes: at step k member i sends to i+1 once it has
// received step k-1 from i-1 (the data it forwards or reduces) and finished its own send of
// step k-1 (one transfer at a time on its outgoing link). Ring all-reduce is reduce-scatter
// (N-1 steps) then all-gather (N-1 steps): 2(N-1) steps of S/N bytes (Patarasuk & Yuan 2009).
FlowProgram Ring(int n, int steps, double chunk) {
  FlowProgram p;
  if (n < 2) return p;
  p.flows.reserve(static_cast<size_t>(n) * steps);
  auto id = [n](int step, int member) { return step * n + member; };
  for (int k = 0; k < steps; ++k) {
    for (int i = 0; i < n; ++i) {
      Flow f{i, (i + 1) % n, chunk, {}};
      if (k > 0) {
        f.deps.push_back(id(k - 1, (i + n - 1) % n));
        f.deps.push_back(id(k - 1, i));
      }
      p.flows.push_back(std::move(f));
    }
  }
  return p;
}

// Pipelined chain broadcast: the root's chunks travel member to member along the ring order;
// chunk c leaves member i once it arrived there and chunk c-1 has left i.
FlowProgram Chain(int n, int root_index, double bytes) {
  FlowProgram p;
  if (n < 2) return p;
  int chunks = static_cast<int>(std::ceil(bytes / kBroadcastChunkBytes));
  chunks = std::clamp(chunks, 1, kMaxBroadcastChunks);
  const double chunk = bytes / chunks;
  const int hops = n - 1;
  auto id = [hops](int c, int hop) { return c * hops + hop; };
  for (int c = 0; c < chunks; ++c) {
    for (int h = 0; h < hops; ++h) {
      Flow f{(root_index + h) % n, (root_index + h + 1) % n, chunk, {}};
      if (h > 0) f.deps.push_back(id(c, h - 1));
      if (c > 0) f.deps.push_back(id(c - 1, h));
      p.flows.push_back(std::move(f));
    }
  }
  return p;
}

}  // namespace

FlowProgram LowerCollective(const Collective& c) {
  const int n = static_cast<int>(c.ranks.size());
  const std::string& algo = c.algorithm;
  auto unknown = [&]() {
    return Error("collective " + std::string(ToString(c.kind)) + " has no algorithm '" + algo +
                 "' (known: auto, " +
                 (c.kind == CollectiveKind::kBroadcast ? "chain" : "ring") + ")");
  };
  switch (c.kind) {
    case CollectiveKind::kAllReduce:
      if (algo != "auto" && algo != "ring") throw unknown();
      return Ring(n, 2 * (n - 1), c.bytes / n);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      if (algo != "auto" && algo != "ring") throw unknown();
      return Ring(n, n - 1, c.bytes / n);
    case CollectiveKind::kBroadcast: {
      if (algo != "auto" && algo != "chain") throw unknown();
      const int root_index =
          static_cast<int>(std::find(c.ranks.begin(), c.ranks.end(), c.root) - c.ranks.begin());
      return Chain(n, root_index, c.bytes);
    }
    case CollectiveKind::kReduce:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      throw Error("collective " + std::string(ToString(c.kind)) + " cannot be simulated yet");
  }
  throw unknown();
}

}  // namespace stratasim::sim
