// Folding data-parallel replicas (docs/scale.md): when the replicas of a plan run the same
// program on isomorphic hardware, only one representative replica's work is simulated; every
// other replica keeps, as mirror tasks (Task::mirror), the traffic that can meet another
// replica's: its members of the data-parallel collectives and its transfers that leave a
// server. Its compute and its traffic inside its own servers are left out, since nothing but
// that replica ever touches those GPUs and links, and by symmetry they run as the
// representative's do.
//
// That argument holds only under the conditions FoldRefusal checks. It is exact up to ties:
// a mirror starts when its counterpart starts, which is when the full run would start it too,
// as long as its replica ran exactly as the representative did; the one difference is where a
// collective treats its members unequally (a tree's root ends earlier than its leaves), and a
// folded replica's step then follows the representative's member, not its own.
#ifndef STRATASIM_STRATEGIES_FOLD_H_
#define STRATASIM_STRATEGIES_FOLD_H_

#include <string>

#include "core/scenario.h"

namespace stratasim {

// Replicas of a plan as folding sees them: `replicas` blocks of `replica_gpus` consecutive
// ranks, replica q holding ranks [q * replica_gpus, (q + 1) * replica_gpus), its tensor groups
// `tensor` consecutive ranks.
struct ReplicaLayout {
  int replicas = 1;
  int replica_gpus = 1;
  int tensor = 1;
};

// What folding decided. The unit folded is a block: the fewest consecutive replicas that fill
// whole servers (lcm(replica GPUs, GPUs per server) GPUs), so that no server holds replicas of
// two blocks and the traffic inside a server never meets another block's. Block 0 is
// simulated in full; every other block's rank r is represented by rank r mod block_gpus.
struct FoldDecision {
  bool fold = false;
  int block_replicas = 0;  // replicas simulated in full (block 0)
  int block_gpus = 0;
  std::string refusal;  // why not, when !fold, for the report ("full: " + refusal)
};

// Refuses when folding is off, with one block, with more than one server group (GPU kinds or
// server designs may differ), when a tensor group spans servers (its traffic would cross
// links other blocks use), when GPU-to-GPU routes inside a server run over a PCIe tree that
// NIC traffic also crosses, and on a leaf-spine network whose leaves hold the blocks
// unequally.
FoldDecision DecideFold(const Scenario& s, const ReplicaLayout& layout);

// For Plan::fold and the report: "folded: N blocks of R replica(s) (G GPUs) simulated as 1",
// or "full: " and the refusal.
std::string DescribeFold(const FoldDecision& d, int gpus);

// Rank -> representative rank (block 0's rank at the same position) for TaskGraph::SetFold.
std::vector<int> FoldRepresentatives(int gpus, int block_gpus);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_FOLD_H_
