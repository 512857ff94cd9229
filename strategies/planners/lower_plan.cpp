#include "strategies/planners/lower_plan.h"

#include <cstdio>
#include <utility>

#include "strategies/pipeline/stage_workload.h"
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
  o.t = plan.tensor;
  o.c = 1;
  const int blocks =
      static_cast<int>(PlannerBlocks(s, plan.tensor, o.sp, s.training.micro_batch).layers.size());
  CheckPlan(plan, s.cluster.NumGpus(), blocks, planner);
  int recomputed = 0;
  for (bool r : plan.recompute) recomputed += r;
  // The blocks of a micro-batch of `samples`, with the plan's recomputation.
  auto blocks_of = [&](int samples) {
    StageWorkloadChoice choice;
    choice.micro_batch = samples;
    choice.sub_layers = true;
    choice.recompute = recomputed > 0 ? Recompute::kFull : Recompute::kNone;
    if (recomputed > 0) choice.recompute_layers = plan.recompute;
    return PipelineStageWorkload(s, o, choice);
  };
  o.p = plan.stages;
  o.t = plan.tensor;
  o.d = plan.data;
  o.v = 1;
  o.m = plan.micro_batch_sizes.empty() ? plan.micro_batches
                                       : static_cast<int>(plan.micro_batch_sizes.size());
  o.schedule = plan.schedule;
  o.tp_subpipeline = plan.tp_subpipeline;
  o.partition = PartitionText(plan.bounds);
  o.recompute.clear();
  o.ranks = plan.ranks;
  o.micro_batch_sizes = plan.micro_batch_sizes;
  PipelineLowering lowering(s, o, blocks_of(s.training.micro_batch), {}, plan.bounds);
  std::vector<MicroBatchWorkload> sized;
  for (int samples : plan.micro_batch_sizes) {
    bool known = samples == s.training.micro_batch;
    for (const MicroBatchWorkload& m : sized) known = known || m.samples == samples;
    if (!known) sized.push_back(MicroBatchWorkload{samples, blocks_of(samples), {}});
  }
  if (!sized.empty()) lowering.SetMicroBatchWorkloads(std::move(sized));
  Plan p = lowering.Lower();
  // The report's figures: the partition in blocks (the embedding and the head count as one
  // each), who chose it, how long it took (printed, never written: it is wall-clock) and what
  // the planner predicted.
  PipelineFigures& f = p.pipeline.emplace();
  f.partition = o.partition;
  f.partition_unit = "blocks";
  f.stages = plan.stages;
  f.planner = planner;
  f.planning_s = plan.planning_seconds;
  f.predicted_stage_s = plan.stage_seconds;
  f.predicted_iteration_s = plan.predicted_seconds;
  std::vector<std::string> notes = plan.notes;
  notes.push_back(planner + " partition (sub-layer blocks per stage, embedding and head " +
                  "included): " + o.partition +
                  (recomputed > 0 ? "; " + Str(recomputed) + " blocks fully recomputed" : "") +
                  (plan.predicted_seconds > 0
                       ? "; its own estimate of the iteration " + Ms(plan.predicted_seconds)
                       : ""));
  notes.insert(notes.end(), p.notes.begin(), p.notes.end());
  p.notes = std::move(notes);
  return p;
}

}  // namespace stratasim::planners
