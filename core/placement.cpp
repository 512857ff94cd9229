#include "core/placement.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "core/error.h"

namespace stratasim {
namespace {

// Which GPUs are taken, and queries on servers and leaves.
class FreeGpus {
 public:
  explicit FreeGpus(const ClusterShape& c) : c_(c), free_(static_cast<size_t>(c.gpus()), 1) {}

  int InServer(int server) const {
    int n = 0;
    for (int g = server * c_.gpus_per_server; g < (server + 1) * c_.gpus_per_server; ++g) {
      n += free_[static_cast<size_t>(g)];
    }
    return n;
  }
  int InLeaf(int leaf) const {
    int n = 0;
    for (int s : ServersOf(leaf)) n += InServer(s);
    return n;
  }
  std::vector<int> ServersOf(int leaf) const {
    std::vector<int> out;
    for (int s = leaf * c_.servers_per_leaf;
         s < std::min(c_.servers, (leaf + 1) * c_.servers_per_leaf); ++s) {
      out.push_back(s);
    }
    return out;
  }
  // Groups of `t` GPUs that the free GPUs of `leaf`'s servers hold, each inside one server.
  int GroupsInLeaf(int leaf, int t) const {
    int n = 0;
    for (int s : ServersOf(leaf)) n += InServer(s) / t;
    return n;
  }
  // Takes the lowest free GPU of `server` (-1: the first free GPU of the cluster).
  int Take(int server) {
    const int lo = server < 0 ? 0 : server * c_.gpus_per_server;
    const int hi = server < 0 ? c_.gpus() : lo + c_.gpus_per_server;
    for (int g = lo; g < hi; ++g) {
      if (free_[static_cast<size_t>(g)]) {
        free_[static_cast<size_t>(g)] = 0;
        return g;
      }
    }
    throw Error("placement: no free GPU left");  // callers check capacity first
  }

 private:
  const ClusterShape& c_;
  std::vector<char> free_;
};

void CheckCapacity(const ClusterShape& c, const std::vector<PlacementJob>& jobs) {
  int need = 0;
  for (const PlacementJob& j : jobs) {
    if (j.gpus < 1) throw Error("placement: job " + j.name + " needs at least one GPU");
    need += j.gpus;
  }
  if (need > c.gpus()) {
    throw Error("placement: the jobs need " + std::to_string(need) + " GPUs, the cluster has " +
                std::to_string(c.gpus()));
  }
}

Placement Packed(const ClusterShape& c, const std::vector<PlacementJob>& jobs) {
  FreeGpus free(c);
  Placement out;
  for (const PlacementJob& j : jobs) {
    std::vector<int>& ranks = out.emplace_back();
    for (int r = 0; r < j.gpus; ++r) ranks.push_back(free.Take(-1));
  }
  return out;
}

// Servers in round-robin order across leaves: the first server of each leaf, then the second
// of each, and so on.
std::vector<int> SpreadOrder(const ClusterShape& c) {
  std::vector<int> order;
  for (int i = 0; i < c.servers_per_leaf; ++i) {
    for (int leaf = 0; leaf < c.leaves(); ++leaf) {
      const int s = leaf * c.servers_per_leaf + i;
      if (s < c.servers) order.push_back(s);
    }
  }
  return order;
}

Placement Spread(const ClusterShape& c, const std::vector<PlacementJob>& jobs) {
  FreeGpus free(c);
  const std::vector<int> order = SpreadOrder(c);
  Placement out;
  for (const PlacementJob& j : jobs) {
    std::vector<int>& ranks = out.emplace_back();
    size_t cursor = 0;  // each job starts at the first server of the cycle
    for (int r = 0; r < j.gpus; ++r) {
      for (size_t k = 0; k < order.size(); ++k) {
        const size_t at = (cursor + k) % order.size();
        if (free.InServer(order[at]) == 0) continue;
        ranks.push_back(free.Take(order[at]));
        cursor = at + 1;
        break;
      }
    }
  }
  return out;
}

// Topology-aware placement of one job: replica by replica (t x p consecutive ranks), a leaf
// that holds the whole replica with each tensor group inside one server; the job's own leaves
// and servers first, then the first (or, `best_fit`, the fullest) that fits. A replica no leaf
// holds whole has its tensor groups placed one by one in any server that holds them, and a
// group no server holds takes the first free GPUs.
std::vector<int> PlaceLocal(const ClusterShape& c, const PlacementJob& j, bool best_fit,
                            FreeGpus* free) {
  int t = j.tensor, p = j.pipeline;
  if (t < 1 || p < 1 || j.gpus % (t * p) != 0) t = p = 1;  // no layout known: GPU by GPU
  const int replicas = j.gpus / (t * p);
  std::vector<int> leaf_use(static_cast<size_t>(c.leaves()), 0);
  std::vector<int> server_use(static_cast<size_t>(c.servers), 0);
  std::vector<int> ranks;
  // The best server among `servers` holding a group of t: the job's own first, then first or
  // best fit; -1 when none holds one.
  auto pick_server = [&](const std::vector<int>& servers) {
    int best = -1;
    std::tuple<int, int, int> best_key;
    for (int s : servers) {
      const int f = free->InServer(s);
      if (f < t) continue;
      const std::tuple<int, int, int> key{server_use[static_cast<size_t>(s)] > 0 ? 0 : 1,
                                          best_fit ? f : 0, s};
      if (best < 0 || key < best_key) {
        best = s;
        best_key = key;
      }
    }
    return best;
  };
  std::vector<int> all_servers(static_cast<size_t>(c.servers));
  std::iota(all_servers.begin(), all_servers.end(), 0);
  auto place_group = [&](int server) {
    for (int k = 0; k < t; ++k) ranks.push_back(free->Take(server));
    if (server >= 0) {
      server_use[static_cast<size_t>(server)] += t;
      leaf_use[static_cast<size_t>(c.LeafOf(server))] += t;
    }
  };
  for (int q = 0; q < replicas; ++q) {
    const int rest = (replicas - q) * p;  // tensor groups still to place
    int leaf = -1;
    std::tuple<int, int, int, int> leaf_key;
    for (int l = 0; l < c.leaves(); ++l) {
      const int groups = free->GroupsInLeaf(l, t);
      if (groups < p) continue;
      const std::tuple<int, int, int, int> key{leaf_use[static_cast<size_t>(l)] > 0 ? 0 : 1,
                                               best_fit && groups < rest ? 1 : 0,
                                               best_fit ? free->InLeaf(l) : 0, l};
      if (leaf < 0 || key < leaf_key) {
        leaf = l;
        leaf_key = key;
      }
    }
    for (int stage = 0; stage < p; ++stage) {
      int server = leaf >= 0 ? pick_server(free->ServersOf(leaf)) : pick_server(all_servers);
      place_group(server);  // -1: no server holds the group; the first free GPUs
    }
  }
  return ranks;
}

Placement Local(const ClusterShape& c, const std::vector<PlacementJob>& jobs, bool ddlwmp) {
  FreeGpus free(c);
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  if (ddlwmp) {
    // Jobs whose traffic needs locality most go first (docs/multi-job.md, "ddlwmp"): tensor
    // parallel (collectives per layer), expert parallel (an all-to-all per MoE layer),
    // pipelined (a transfer per micro-batch), then data parallel; the largest first in each.
    auto key = [&](size_t i) {
      const PlacementJob& j = jobs[i];
      const int locality = j.tensor > 1 ? 0 : j.expert ? 1 : j.pipeline > 1 ? 2 : 3;
      return std::make_tuple(locality, -j.gpus, i);
    };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  }
  Placement out(jobs.size());
  for (size_t i : order) out[i] = PlaceLocal(c, jobs[i], /*best_fit=*/ddlwmp, &free);
  return out;
}

}  // namespace

const std::vector<std::string>& PlacementPolicies() {
  static const std::vector<std::string> policies = {"packed", "spread", "topology-aware", "ddlwmp"};
  return policies;
}

Placement Place(const std::string& policy, const ClusterShape& cluster,
                const std::vector<PlacementJob>& jobs) {
  CheckCapacity(cluster, jobs);
  if (policy == "packed") return Packed(cluster, jobs);
  if (policy == "spread") return Spread(cluster, jobs);
  if (policy == "topology-aware") return Local(cluster, jobs, false);
  if (policy == "ddlwmp") return Local(cluster, jobs, true);
  throw Error("placement: unknown policy '" + policy + "'");
}

}  // namespace stratasim
