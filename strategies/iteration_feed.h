// A plan made while it is simulated (docs/scale.md, "Iterations"): the planner runs on its
// own thread and is paused before the first task of each iteration the simulation has not
// asked for yet, so that a run of many iterations never holds more than a few of them.
//
// The planner and the simulation take turns, never running at once: Through() lets the
// planner add tasks and waits until it pauses again (or finishes), and the graph may be read
// and retired only between those calls. What the planner adds therefore does not depend on
// timing, and the simulation of a scenario is the same on every run.
#ifndef STRATASIM_STRATEGIES_ITERATION_FEED_H_
#define STRATASIM_STRATEGIES_ITERATION_FEED_H_

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/scenario.h"
#include "core/task_graph.h"
#include "strategies/plan.h"

namespace stratasim {

class IterationFeed {
 public:
  // Starts PlanStrategy(s, spec) on a thread; `s` and `spec` must outlive the feed.
  IterationFeed(const Scenario& s, const StrategySpec& spec);
  // Stops a planner that has not finished.
  ~IterationFeed();
  IterationFeed(const IterationFeed&) = delete;
  IterationFeed& operator=(const IterationFeed&) = delete;

  // Lets the planner run until every task of the iterations up to `iteration` is in the graph
  // (it pauses at the first task of a later one) or it has finished. Returns false once it has
  // finished. Throws the planner's error, and stratasim::Error when it added an iteration
  // after a later one (such a plan can only be simulated whole).
  bool Through(int iteration);
  bool finished() const;

  // The graph so far (nullptr before the planner's first task), its tasks retired as the
  // simulation finishes with them; valid until the next Through().
  TaskGraph* graph();
  // The finished planner's plan, whose graph is graph(). Call after Through() returned false.
  const Plan& plan() const;

 private:
  struct Stopped {};
  void RunPlanner(const Scenario& s, const StrategySpec& spec);
  void Pause(TaskGraph* g, int iteration);

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int allowed_ = -1;     // the planner may add tasks of iterations up to this one
  bool paused_ = false;  // the planner waits to add a task of iteration paused_at_
  int paused_at_ = 0;
  int highest_ = 0;  // the highest iteration added so far
  bool out_of_order_ = false;
  bool done_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  TaskGraph* graph_ = nullptr;
  std::optional<Plan> plan_;
  std::thread thread_;
};

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_ITERATION_FEED_H_
