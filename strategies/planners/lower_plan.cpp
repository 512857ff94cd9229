#include "strategies/planners/lower_plan.h"

#include <cstdio>
#include <utility>

#include "models/recompute.h"
#include "strategies/planners/profile.h"

namespace stratasim::planners {
namespace {

std::string Str(int n) { return std::to_string(n); }

std::string Ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", seconds * 1e3);
  return text;
}

// Throws when the plan cannot be lowered on `gpus` GPUs over `blocks` blocks.
void CheckPlan(const PlannedPipeline& plan, int gpus, int blocks, const std::string& planner) {
  const std::string who = planner + ": ";
  if (plan.stages < 1 || plan.tensor < 1 || plan.data < 1 ||
      static_cast<long>(plan.stages) * plan.tensor * plan.data != gpus) {
    throw Error(who + "stages (" + Str(plan.stages) + ") x tensor (" + Str(plan.tensor) +
                ") x data (" + Str(plan.data) + ") must equal the GPU count (" + Str(gpus) + ")");
  }
  bool ok = static_cast<int>(plan.bounds.size()) == plan.stages + 1 && plan.bounds.front() == 0 &&
            plan.bounds.back() == blocks;
  for (size_t i = 1; ok && i < plan.bounds.size(); ++i) ok = plan.bounds[i] > plan.bounds[i - 1];
  if (!ok) {
    throw Error(who + "the partition must give each of the " + Str(plan.stages) +
                " stages at least one of the " + Str(blocks) + " blocks, in order");
  }
  if (!plan.recompute.empty() && static_cast<int>(plan.recompute.size()) != blocks) {
    throw Error(who + "recomputation is chosen for " +
                Str(static_cast<int>(plan.recompute.size())) + " blocks, not the " + Str(blocks) +
                " the model has");
  }
  if (plan.micro_batch_sizes.empty() && plan.micro_batches < 1) {
    throw Error(who + "needs at least one micro-batch");
  }
}

}  // namespace

Plan LowerPlannedPipeline(const Scenario& s, PipelineShape o, const PlannedPipeline& plan,
                          const std::string& planner) {
  Workload w = PlannerBlocks(s, plan.tensor, o.sp, s.training.micro_batch);
  const int blocks = static_cast<int>(w.layers.size());
  CheckPlan(plan, s.cluster.NumGpus(), blocks, planner);
  if (!plan.ranks.empty()) {
    throw Error(planner + ": an explicit stage-to-GPU mapping cannot be lowered yet");
  }
  if (!plan.micro_batch_sizes.empty()) {
    throw Error(planner + ": micro-batches of different sizes cannot be lowered yet");
  }
  o.p = plan.stages;
  o.t = plan.tensor;
  o.d = plan.data;
  o.v = 1;
  o.m = plan.micro_batches;
  o.schedule = plan.schedule;
  o.tp_subpipeline = plan.tp_subpipeline;
  o.partition = PartitionText(plan.bounds);
  o.recompute.clear();
  int recomputed = 0;
  for (bool r : plan.recompute) recomputed += r;
  if (recomputed > 0) ApplyRecompute(w, Recompute::kFull, plan.recompute);
  Plan p = PipelineLowering(s, o, std::move(w), {}, plan.bounds).Lower();
  std::vector<std::string> notes = plan.notes;
  notes.push_back(planner + " partition (sub-layer blocks per stage): " + o.partition +
                  (recomputed > 0 ? "; " + Str(recomputed) + " blocks fully recomputed" : "") +
                  "; planned in " + Ms(plan.planning_seconds) +
                  (plan.predicted_seconds > 0
                       ? ", its own estimate of the iteration " + Ms(plan.predicted_seconds)
                       : ""));
  notes.insert(notes.end(), p.notes.begin(), p.notes.end());
  p.notes = std::move(notes);
  return p;
}

}  // namespace stratasim::planners
