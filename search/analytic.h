// The analytic estimate of a candidate's iteration (docs/search.md), which ranks the plans
// before the best K are simulated with contention. Closed forms over the simulator's own
// costs: each block's kernels from the compute model (core/compute_model.h, the profile the
// pipeline planners use, strategies/planners/profile.h), each collective's alpha-beta time from
// the collective tuner (sim/collectives/lowering.h PredictCollectiveSeconds) with no
// contention, and the schedule's bubble in closed form.
#ifndef STRATASIM_SEARCH_ANALYTIC_H_
#define STRATASIM_SEARCH_ANALYTIC_H_

#include <map>
#include <memory>
#include <string>

#include "core/scenario.h"
#include "search/candidate.h"

namespace stratasim::search {

struct Estimate {
  double iteration_s = 0;
  double compute_s = 0;  // the slowest stage's forward, backward and recomputation, m micro-batches
  double bubble_s = 0;   // the schedule's fill and drain on the critical path
  double optimizer_s = 0;
  // Exposed communication on the critical path by category, as the simulator's categories:
  // "tp", "pp", "dp" (always present). ZeRO's and the distributed optimizer's all-gathers are
  // under "dp", as the simulator files them.
  std::map<std::string, double> exposed_comm_s;
  double model_flops = 0;        // per iteration, all GPUs
  double mfu = 0;                // model FLOP/s over the cluster's summed peak
  double peak_memory_bytes = 0;  // EstimateMemory's
};

Estimate EstimateIteration(const Scenario& s, const Candidate& c);

// EstimateIteration for many candidates of one scenario: keeps what candidates share (the
// per-layer profile of each tensor degree, sequence parallelism, micro-batch and recomputation;
// each pipeline partition; each collective's predicted time by group shape and size), so that
// ranking thousands of plans costs milliseconds each. Gives the same estimates as
// EstimateIteration. `s` must outlive the estimator. Not thread-safe.
class Estimator {
 public:
  explicit Estimator(const Scenario& s);
  ~Estimator();
  Estimator(const Estimator&) = delete;
  Estimator& operator=(const Estimator&) = delete;

  // Throws stratasim::Error for a candidate the simulator could not plan either (micro_batches
  // 0, more stage chunks than layers).
  Estimate operator()(const Candidate& c);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stratasim::search

#endif  // STRATASIM_SEARCH_ANALYTIC_H_
