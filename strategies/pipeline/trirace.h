// TriRace: communication scheduling for asynchronous pipeline (PipeDream-2BW) plus data
// parallelism over three classes of traffic, with a topology-aware runtime (abstract only:
// no public code or full text; its ancestor is EmbRace, Li et al. 2021, arXiv 2110.09132).
// docs/strategies.md, "trirace", lists every assumption; in short:
//
//   * the pipeline is PipeDream-2BW (Narayanan et al. 2021, ICML, §3.1; strategies/pipeline/
//     pipeline.h): 1F1B without a flush, two weight versions, no tensor parallelism;
//   * class 1, point to point (activations forward, their gradients back): the four p2p
//     streams, priority 2;
//   * class 2, the dense data-parallel all-reduce, per gradient bucket on stream "dp",
//     priority 0, deferred within the accumulation window: the step of batch k waits until the
//     stage's first forward of batch k + 2 (2BW's one-version delay), so the all-reduce spreads
//     over batch k + 1 instead of stalling the compute stream (one more gradient buffer);
//   * class 3, the sparse embedding gradient (models with sparse_embedding: true): stage 0's
//     replicas exchange only the rows of their batch's distinct token ids plus an int64 index
//     each, as an all-to-all-v (a sparse all-gather), on stream "sparse", priority 1; the token
//     table leaves the dense all-reduce;
//   * the simulator's priority gate holds a rank's lower-priority communication while a higher
//     one is in flight on it (TaskGraph::SetStreamPriority); topology-aware: a class's group
//     is put on a gated stream only when its transfers share a link with a member's
//     point-to-point traffic (trirace_links.h); elsewhere it runs free.
#ifndef STRATASIM_STRATEGIES_PIPELINE_TRIRACE_H_
#define STRATASIM_STRATEGIES_PIPELINE_TRIRACE_H_

#include "strategies/plan.h"

namespace stratasim {

Plan PlanTriRace(const Scenario& s, const StrategySpec& spec);
const OptionSpecs& TriRaceOptions();

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_TRIRACE_H_
