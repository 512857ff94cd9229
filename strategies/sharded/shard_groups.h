// The groups sharded data parallelism shards and replicates over, and its collectives on a
// folded graph: what ZeRO/FSDP (zero.h) and HSDP (hsdp.h) share.
#ifndef STRATASIM_STRATEGIES_SHARDED_SHARD_GROUPS_H_
#define STRATASIM_STRATEGIES_SHARDED_SHARD_GROUPS_H_

#include <string>
#include <vector>

#include "core/strategy_options.h"
#include "core/task_graph.h"

namespace stratasim {

// Each rank shards its states over shard[shard_of[r]]; with per-server groups it is also in
// replica[replica_of[r]]: the ranks of the same local index on every server (one per server,
// a "rail"), which hold the same shard.
struct ShardGroups {
  std::vector<std::vector<int>> shard, replica;
  std::vector<int> shard_of, replica_of;
  int shard_size = 1;
};

// per_server false: one shard group of every GPU, no replica groups. true: one shard group per
// server and, with more than one server, one replica group per local index. Servers with
// unequal GPU counts are a ConfigError located at option `key` ("" for the strategy).
ShardGroups MakeShardGroups(const Scenario& s, bool per_server, const OptionReader& opt,
                            const std::string& key);

// Adds collectives to a graph that may be folded (strategies/fold.h): a group is kept when it
// has a member in block 0 (ranks below `block`); its members beyond block 0 become mirrors of
// the block-0 rank at the same position. Groups wholly inside a folded block are left out.
class FoldedCollectives {
 public:
  FoldedCollectives(TaskGraph& g, int gpus, int block, DType dtype)
      : g_(g), gpus_(gpus), block_(block), dtype_(dtype) {}

  // AddGroupCollectives (layer_tasks.h) over the kept groups of `of`; each rank's member id,
  // -1 for ranks in no kept group.
  std::vector<TaskId> Add(const std::vector<std::vector<int>>& of, CollectiveKind kind,
                          double bytes, int stream, int iteration, const Name& name,
                          const std::vector<TaskId>& deps) const;

  int block() const { return block_; }

 private:
  TaskGraph& g_;
  int gpus_, block_;
  DType dtype_;
};

// "it3/mb1/what", or "it3/what" for mb < 0: the names of sharded data parallelism's tasks.
std::string ShardedTaskName(int iteration, int micro_batch, const std::string& what);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_SHARDED_SHARD_GROUPS_H_
