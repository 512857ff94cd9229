// Where the tokens of one MoE layer are computed in one iteration: the expert placement a
// strategy chose (owners, plus replicas of popular experts) applied to the routing.
#ifndef STRATASIM_STRATEGIES_MOE_PLACEMENT_H_
#define STRATASIM_STRATEGIES_MOE_PLACEMENT_H_

#include <vector>

namespace stratasim {

using TokenMatrix = std::vector<std::vector<double>>;  // [source rank][expert]

// A copy of `expert` (owned by `owner`) made on `holders` for one layer of one iteration: its
// parameters are sent there before the layer's forward, its gradients reduced back to the
// owner after the layer's backward (only the owner keeps optimizer state and updates it).
struct Replica {
  int expert = 0;
  int owner = 0;
  std::vector<int> holders;  // not including the owner
};

struct LayerDecision {
  int ranks = 0;
  // [src * ranks + dst]: tokens src sends through the all-to-all to be computed on dst
  // (the diagonal: tokens computed where they are, which still cross the all-to-all's local copy).
  std::vector<double> a2a_tokens;
  // Per rank: tokens computed on a local replica without crossing the all-to-all (a holder's
  // own tokens for a replicated expert).
  std::vector<double> replica_tokens;
  // Per rank: distinct expert weight sets used (the grouped GEMM's batch).
  std::vector<int> weight_sets;
  std::vector<Replica> replicas;
  // DeepSpeed-MoE's padded dispatch: > 0 when every (source, expert) block of the all-to-all
  // holds exactly this many token slots (padding included), computed as such.
  double padded_capacity = 0;
  double dropped_tokens = 0;
  std::vector<double> load_before;  // tokens each rank would compute with owners only
  std::vector<double> load_after;   // tokens each rank computes under this decision

  // Tokens received from the all-to-all plus replica tokens, per rank.
  std::vector<double> ComputedTokens() const;
  double ReplicatedExperts() const { return static_cast<double>(replicas.size()); }
};

// Experts on their owners (expert x on rank x / experts_per_rank), every token sent there.
// `capacity` > 0 caps each (source, expert) block at that many tokens, dropping the rest (the
// per-rank capacity of DeepSpeed-MoE's gate); `padded` then sends and computes every block at
// its full capacity (DeepSpeed's dispatch buffer [E, C, M]).
LayerDecision OwnerPlacement(const TokenMatrix& t, int experts_per_rank, double capacity = 0,
                             bool padded = false);

// Owners plus `replicas`. A holder of a replica computes its own tokens for that expert
// locally. A source that holds no copy sends them to the owner, or, with `spread`, splits them
// evenly over the owner and the holders (ties to the ranks after the source, deterministic).
LayerDecision ReplicatedPlacement(const TokenMatrix& t, int experts_per_rank,
                                  const std::vector<Replica>& replicas, bool spread);

// Population standard deviation of `v`.
double StdDev(const std::vector<double>& v);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_PLACEMENT_H_
