// AutoPipe's cost model: a simulated 1F1B of per-stage times (docs/strategies.md, "autopipe").
//
// Each stage runs 1F1B's order: min(S - s - 1, M) warm-up forwards, then one forward and one
// backward in turn, then the remaining backwards. A forward waits for the previous stage's
// forward of the same micro-batch plus the transfer of its activation; a backward for the next
// stage's backward plus the transfer of the gradient. Transfers are delays on those edges (no
// link is shared in this model); the simulator measures the plan with contention afterwards.
#ifndef STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_SIM_H_
#define STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_SIM_H_

#include <vector>

namespace stratasim::planners {

// Seconds of one micro-batch per stage, for full-size micro-batches and for halves (the
// slicer's); S entries each, `send` S - 1 (stage s to s + 1, activation forward and its
// gradient back take the same time).
struct StageTimes {
  std::vector<double> forward, backward, send;
  std::vector<double> half_forward, half_backward, half_send;  // empty: no halves simulated

  int Stages() const { return static_cast<int>(forward.size()); }
};

struct Simulated1F1B {
  double iteration = 0;  // the last backward's end
  double startup = 0;    // when the last stage starts its first forward (the pipeline's fill)
  // The highest stage with no idle time in its steady phase (from its first backward to its
  // last forward); when every stage idles there, the one that idles least (AutoPipe's critical
  // stage: it sets the pace of the steady phase).
  int critical = 0;
  std::vector<double> steady_idle;  // per stage, seconds idle in its steady phase
};

// `halved[k]`: micro-batch k is a half (size micro_batch / 2); its size is the number of
// micro-batches. Needs half times when any is halved.
Simulated1F1B Simulate1F1B(const StageTimes& t, const std::vector<bool>& halved);

// M full-size micro-batches.
Simulated1F1B Simulate1F1B(const StageTimes& t, int micro_batches);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_AUTOPIPE_SIM_H_
