#include "strategies/iteration_feed.h"

#include "core/error.h"

namespace stratasim {

IterationFeed::IterationFeed(const Scenario& s, const StrategySpec& spec)
    : thread_([this, &s, &spec] { RunPlanner(s, spec); }) {}

IterationFeed::~IterationFeed() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void IterationFeed::RunPlanner(const Scenario& s, const StrategySpec& spec) {
  TaskGraph::SetThreadAddHook([this](TaskGraph* g, int iteration) { Pause(g, iteration); });
  std::optional<Plan> plan;
  std::exception_ptr error;
  try {
    plan = PlanStrategy(s, spec);
  } catch (const Stopped&) {
  } catch (...) {
    error = std::current_exception();
  }
  TaskGraph::SetThreadAddHook(nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  if (plan) {
    plan_ = std::move(plan);
    graph_ = &plan_->graph;  // the planner's graph, moved: its tasks stay where they were
  }
  error_ = error;
  done_ = true;
  cv_.notify_all();
}

void IterationFeed::Pause(TaskGraph* g, int iteration) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (graph_ == nullptr) graph_ = g;
  if (g != graph_) return;  // a planner's scratch graph, if one ever makes one
  if (iteration < highest_) out_of_order_ = true;
  highest_ = std::max(highest_, iteration);
  if (stop_) throw Stopped{};
  if (iteration <= allowed_ && !out_of_order_) return;
  paused_ = true;
  paused_at_ = iteration;
  cv_.notify_all();
  cv_.wait(lock, [&] { return stop_ || (iteration <= allowed_ && !out_of_order_); });
  paused_ = false;
  if (stop_) throw Stopped{};
}

bool IterationFeed::Through(int iteration) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_) {
    allowed_ = std::max(allowed_, iteration);
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_ || (paused_ && (paused_at_ > allowed_ || out_of_order_)); });
  }
  if (out_of_order_) {
    throw Error(std::string("simulating while planning: the planner added a task of an earlier "
                            "iteration after a later one; ") +
                kSimulateWhole);
  }
  if (error_) std::rethrow_exception(error_);
  return !done_;
}

bool IterationFeed::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

TaskGraph* IterationFeed::graph() {
  std::lock_guard<std::mutex> lock(mutex_);
  return graph_;
}

const Plan& IterationFeed::plan() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!plan_) throw Error("IterationFeed::plan: the planner has not finished");
  return *plan_;
}

}  // namespace stratasim
