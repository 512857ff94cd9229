// Tree algorithms as NCCL runs them: all-reduce over a double binary tree (Sanders, Speck &
// Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan", Parallel
// Computing 2009): two complementary binary trees, each reducing half of the buffer up to its
// root and broadcasting it back down, pipelined in chunks; broadcast and reduce over one
// pipelined binary tree rooted at the root. Across servers the binary trees join servers and
// each server is a chain hanging from a head GPU (NCCL's intra-node chain); each channel and
// tree picks a different head, so their inter-server edges use different NICs.
#ifndef STRATASIM_SIM_COLLECTIVES_TREE_H_
#define STRATASIM_SIM_COLLECTIVES_TREE_H_

#include <vector>

#include "sim/collectives/flow_builder.h"
#include "sim/collectives/lower_args.h"

namespace stratasim::sim {

// Parent of each of `n` positions in a binary tree rooted at position 0 whose leaves are the
// odd positions (position r hangs below the neighbour that clears its lowest set bit); -1 for
// the root.
std::vector<int> BinaryTreeParents(int n);

// The complementary tree: position p of the second tree is position m(p) of the first, with
// m(p) = n-1-p for even n (mirror) and p-1 mod n for odd n (shift), so a node that is a leaf of
// one tree is interior in the other (Sanders et al. 2009).
std::vector<int> MirroredTreeParents(int n);

enum class TreeDirection { kUp, kDown, kUpDown };

// Moves `bytes` over the member tree `parent` (member index -> parent member, -1 at the root)
// in PipelineChunks(bytes) chunks: up (reduce: a node forwards chunk c once its children's
// chunk c arrived), down (broadcast: chunk c moves on once it arrived), or up then down (the
// root sends chunk c down once its children's chunk c arrived). `stream`: one flow per tree
// edge and direction, all at once.
void TreePipeline(const std::vector<int>& parent, double bytes, TreeDirection direction,
                  bool stream, FlowBuilder* b);

// all_reduce (double binary tree), broadcast and reduce; throws stratasim::Error otherwise.
void LowerTree(const LowerArgs& a, FlowBuilder* b);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_TREE_H_
