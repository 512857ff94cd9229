// The FSDP-unit lowering that ZeRO-3/FSDP (zero.h) and HSDP (hsdp.h) share: per micro-batch,
// each unit's weights are all-gathered before its forward and again before its backward and
// freed after each use; its gradients are reduce-scattered right after its backward; after the
// last micro-batch each shard may be all-reduced over the ranks that hold the same shard; then
// the Adam step runs on each rank's shards.
//
// A unit's flat parameters are split into fragments, each sharded over its own groups with its
// own streams. ZeRO-3 has one fragment (the whole unit over all GPUs, or over each server with
// replica all-reduces across servers: hybrid sharding). HSDP has two, one sharded inside the
// servers and one across them, whose collectives run at once on their own streams; SimGrid
// then shares or separates the links they cross.
//
// Memory: "gathered_weights" allocated on each fragment's gather stream before its all-gather
// and freed after the unit's compute; the unit's full gradient ("gradients") allocated when
// its backward starts and freed fragment by fragment as each reduce-scatter ends.
#ifndef STRATASIM_STRATEGIES_SHARDED_FSDP_UNITS_H_
#define STRATASIM_STRATEGIES_SHARDED_FSDP_UNITS_H_

#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"
#include "models/memory.h"
#include "models/workload.h"
#include "strategies/sharded/shard_groups.h"

namespace stratasim {

struct FsdpFragment {
  // Appended to the fragment's task names ("…/all_gather/intra"); empty with one fragment.
  std::string tag;
  std::vector<std::vector<int>> shard;  // groups that all-gather and reduce-scatter it
  // Groups that all-reduce each reduced shard after the last micro-batch (those holding the
  // same shard); empty: none.
  std::vector<std::vector<int>> replica;
  int shard_size = 1;  // members of each shard group: a rank holds 1/shard_size of the fragment
  // Per unit, the share of the unit's parameters in this fragment (a unit's shares sum to 1).
  std::vector<double> unit_fraction;
  int gather_stream = 0;   // its all-gathers
  int scatter_stream = 0;  // its reduce-scatters and replica all-reduces
};

struct FsdpUnits {
  std::vector<std::vector<int>> units;  // each unit's layers (indices into the workload)
  std::vector<FsdpFragment> fragments;
  // Issue unit i+1's all-gathers when unit i's compute starts (FSDP's one-unit prefetch);
  // false: when it ends.
  bool prefetch = true;
  int compute_stream = 0;
  int micro_batches = 1;
  int iterations = 1;
  // The model states each rank holds (AddModelStates: `state_params` parameters sharded as
  // `sharding`) and the parameters its Adam step updates.
  double state_params = 0;
  StateSharding sharding;
  double step_params = 0;
};

// Units of one layer each (`per_layer`) or one unit of the whole model.
std::vector<std::vector<int>> FsdpUnitLayers(int layers, bool per_layer);

// Adds the iterations to `g` (ranks >= collectives.block() are folded: only their collective
// members are added, as mirrors). `e` is bytes per parameter of the gathered weights and
// gradients. Returns the bytes each rank moves over all iterations in all-gathers and
// reduce-scatters, as ring algorithms move them ((n - 1) / n of each buffer).
double LowerFsdpUnits(TaskGraph& g, const Workload& w, DType precision, DType act, double e,
                      const FsdpUnits& p, const FoldedCollectives& collectives);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_SHARDED_FSDP_UNITS_H_
