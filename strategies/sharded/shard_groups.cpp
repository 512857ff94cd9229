#include "strategies/sharded/shard_groups.h"

#include <algorithm>
#include <map>

#include "strategies/layer_tasks.h"

namespace stratasim {

ShardGroups MakeShardGroups(const Scenario& s, bool per_server, const OptionReader& opt,
                            const std::string& key) {
  const int gpus = s.cluster.NumGpus();
  ShardGroups g;
  g.shard_of.assign(gpus, 0);
  g.replica_of.assign(gpus, -1);
  if (!per_server) {
    g.shard.emplace_back();
    for (int r = 0; r < gpus; ++r) g.shard[0].push_back(r);
    g.shard_size = gpus;
    return g;
  }
  std::map<int, std::vector<int>> by_server;
  for (int r = 0; r < gpus; ++r) by_server[s.cluster.Locate(r).server].push_back(r);
  for (auto& [server, ranks] : by_server) {
    if (ranks.size() != by_server.begin()->second.size()) {
      throw opt.Fail(key, "hybrid sharding needs servers with equal GPU counts (server " +
                              std::to_string(server) + " has " + std::to_string(ranks.size()) +
                              ", server " + std::to_string(by_server.begin()->first) + " has " +
                              std::to_string(by_server.begin()->second.size()) + ")");
    }
    for (int r : ranks) g.shard_of[r] = static_cast<int>(g.shard.size());
    g.shard.push_back(ranks);
  }
  g.shard_size = static_cast<int>(g.shard[0].size());
  if (g.shard.size() > 1) {
    for (int j = 0; j < g.shard_size; ++j) {
      std::vector<int> rep;
      for (const auto& sh : g.shard) {
        g.replica_of[sh[j]] = static_cast<int>(g.replica.size());
        rep.push_back(sh[j]);
      }
      g.replica.push_back(rep);
    }
  }
  return g;
}

std::vector<TaskId> FoldedCollectives::Add(const std::vector<std::vector<int>>& of,
                                           CollectiveKind kind, double bytes, int stream,
                                           int iteration, const Name& name,
                                           const std::vector<TaskId>& deps) const {
  std::vector<std::vector<int>> kept;
  for (const std::vector<int>& group : of) {
    if (*std::min_element(group.begin(), group.end()) < block_) kept.push_back(group);
  }
  const std::vector<TaskId> member_of =
      AddGroupCollectives(g_, kept, kind, bytes, dtype_, stream, iteration, name, deps);
  for (int r = block_; r < gpus_; ++r) {
    if (member_of[r] >= 0) g_.SetMirror(member_of[r], member_of[r % block_]);
  }
  return member_of;
}

std::string ShardedTaskName(int iteration, int micro_batch, const std::string& what) {
  return "it" + std::to_string(iteration) +
         (micro_batch >= 0 ? "/mb" + std::to_string(micro_batch) : "") + "/" + what;
}

}  // namespace stratasim
