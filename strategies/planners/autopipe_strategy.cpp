// The strategy kinds `autopipe` and `autopipe-h` (autopipe_strategy.h).
#include "strategies/planners/autopipe_strategy.h"

#include "core/limits.h"
#include "strategies/planners/autopipe_h.h"
#include "strategies/planners/lower_plan.h"
#include "strategies/planners/planner_options.h"
#include "strategies/planners/profile.h"

namespace stratasim {
namespace {

OptionSpecs AutoPipeOwn() {
  return {
      Flag("slicer",
           "AutoPipe's micro-batch slicer: halve the first micro-batches (micro_batch must be "
           "even), as many as the planner's simulated 1F1B says shortens the iteration, with "
           "half-size costs from the profile")
          .Default("true"),
      Integer("max_sliced", 0, limits::kMaxGpus, "the most micro-batches the slicer may halve")
          .Derived("stages - 1, the micro-batches of the start-up"),
      Flag("recompute",
           "recompute blocks (the fewest, largest activations first) of a stage that would not "
           "fit in memory otherwise; false: such partitions are never chosen")
          .Default("true"),
      Integer("max_plans", 1, 1 << 24,
              "partitions the search around the critical stage evaluates at most")
          .Default("4096"),
  };
}

// The settings both kinds share; `base` carries the degrees read by ReadPlannerShape.
planners::AutoPipeSettings ReadAutoPipe(const Scenario& s, OptionReader& opt,
                                        const planners::PlannerDegrees& d) {
  planners::AutoPipeSettings a;
  a.slicer = opt.Bool("slicer");
  a.max_sliced = opt.Int("max_sliced", -1);
  if (!a.slicer && opt.Given("max_sliced")) {
    throw opt.Fail("max_sliced", "applies only with slicer: true");
  }
  a.partition.recompute = opt.Bool("recompute");
  a.partition.max_plans = opt.Int("max_plans");
  const int mb = s.training.micro_batch;
  if (a.slicer && mb >= 2 && mb % 2 == 0) {
    const Workload half = planners::PlannerBlocks(s, d.tensor, d.sequence_parallel, mb / 2);
    a.half_profile = planners::ProfileBlocks(s, half, d.tensor, d.sequence_parallel);
  }
  return a;
}

}  // namespace

const OptionSpecs& AutoPipeOptions() {
  static const OptionSpecs specs = Join(planners::PlannerOptions(), AutoPipeOwn());
  return specs;
}

const OptionSpecs& AutoPipeHOptions() {
  static const OptionSpecs specs = Join(
      AutoPipeOptions(),
      {OneOf("mapping", {"contention", "naive"},
             "contention: map (replica, stage) positions to GPUs to lighten the busiest NIC or "
             "PCIe switch and run each stage on GPUs of one kind where possible; naive: rank order")
           .Default("contention")});
  return specs;
}

Plan PlanAutoPipeStrategy(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, AutoPipeOptions());
  planners::PlannerDegrees d;
  const PipelineShape base = planners::ReadPlannerShape(s, opt, d);
  const planners::AutoPipeSettings settings = ReadAutoPipe(s, opt, d);
  opt.Finish();
  const planners::PlannerInput in = planners::BuildPlannerInput(s, d);
  return planners::LowerPlannedPipeline(s, base, planners::PlanAutoPipe(in, settings), "autopipe");
}

Plan PlanAutoPipeHStrategy(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, AutoPipeHOptions());
  planners::PlannerDegrees d;
  const PipelineShape base = planners::ReadPlannerShape(s, opt, d);
  planners::AutoPipeHSettings settings;
  settings.autopipe = ReadAutoPipe(s, opt, d);
  settings.mapping = opt.Choice("mapping") == "naive" ? planners::DeviceMapping::kNaive
                                                      : planners::DeviceMapping::kContention;
  settings.gradient_bytes_per_param = base.optimizer.GradBytes(s.training.precision);
  opt.Finish();
  const planners::PlannerInput in = planners::BuildPlannerInput(s, d);
  return planners::LowerPlannedPipeline(s, base, planners::PlanAutoPipeH(in, settings),
                                        "autopipe-h");
}

}  // namespace stratasim
