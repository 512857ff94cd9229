// Strategy kinds dapple and piper (baselines.h).
#include "strategies/planners/baselines.h"

#include <algorithm>
#include <utility>

#include "models/memory.h"
#include "strategies/planners/dapple.h"
#include "strategies/planners/lower_plan.h"
#include "strategies/planners/piper.h"
#include "strategies/planners/planner_options.h"
#include "strategies/planners/profile.h"

namespace stratasim::planners {
namespace {

// The tensor degrees Piper tries: those that split the model's heads and fit in the smallest
// server, up to `at_most`.
std::vector<int> TensorDegrees(const Scenario& s, int at_most) {
  const bool transformer =
      s.model.kind == "gpt" || s.model.kind == "bert" || s.model.kind == "llama";
  int server = s.cluster.groups.front().gpus_per_server;
  for (const ServerGroup& g : s.cluster.groups) server = std::min(server, g.gpus_per_server);
  std::vector<int> out = {1};
  for (int t = 2; transformer && t <= std::min(server, at_most); ++t) {
    if (server % t != 0 || s.model.heads % t != 0) continue;
    if (s.model.kv_heads > 0 && s.model.kv_heads % t != 0) continue;
    out.push_back(t);
  }
  return out;
}

}  // namespace

const OptionSpecs& DappleOptions() {
  static const OptionSpecs o = Join(
      PlannerOptions(),
      {Flag("choose_stages",
            "DAPPLE's planner chooses the number of stages (every count whose tensor x stages "
            "divides the GPUs and whose data degree divides the batch's micro-batches), and the "
            "data degree that follows; false: it plans for the given stages and data")
           .Default("true"),
       Integer("max_placements", 1, 1000000,
               "placements (sequences of fresh-first, append-first and scatter-first, one per "
               "stage) tried per stage count")
           .Default("512")});
  return o;
}

Plan PlanDappleStrategy(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, DappleOptions());
  if (opt.Given("rank_order")) {
    throw opt.Fail("rank_order",
                   "dapple places the stages on the GPUs itself (its placement policies)");
  }
  PlannerDegrees degrees;
  PipelineShape base = ReadPlannerShape(s, opt, degrees);
  DappleSettings settings;
  settings.choose_stages = opt.Bool("choose_stages");
  settings.max_placements = opt.Int("max_placements");
  settings.grad_bytes_per_param = TrainingBytesPerParam(s.training.precision);
  opt.Finish();
  PlannedPipeline plan = PlanDapple(BuildPlannerInput(s, degrees), settings);
  base.order = TakeRankOrder(plan);
  return LowerPlannedPipeline(s, base, plan, "dapple");
}

const OptionSpecs& PiperOptions() {
  static const OptionSpecs o = Join(
      PlannerOptions(),
      {Flag("choose_degrees",
            "Piper's planner chooses the tensor degree (those up to max_tensor that divide the "
            "model's heads and the smallest server's GPUs), the data degree and so the stages; "
            "false: it plans for the given tensor, data and stages")
           .Default("true"),
       Integer("max_tensor", 1, 1048576, "with choose_degrees: the largest tensor degree tried")
           .Derived("the GPUs of the smallest server"),
       Flag("recomputation",
            "Piper's knapsack may recompute blocks to fit a stage in memory; false: it never "
            "recomputes, and a stage that does not fit is not a candidate")
           .Default("true")});
  return o;
}

Plan PlanPiperStrategy(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, PiperOptions());
  if (opt.Given("rank_order")) {
    throw opt.Fail("rank_order", "piper plans for the default rank order (tpd)");
  }
  PlannerDegrees degrees;
  PipelineShape base = ReadPlannerShape(s, opt, degrees);
  const bool choose = opt.Bool("choose_degrees");
  if (!choose && opt.Given("max_tensor")) {
    throw opt.Fail("max_tensor", "only applies with choose_degrees: true");
  }
  const int max_tensor = opt.Int("max_tensor", s.cluster.NumGpus());
  const bool recomputation = opt.Bool("recomputation");
  opt.Finish();
  PiperInput in;
  in.global_micro_batches = degrees.micro_batches * degrees.data;
  in.grad_bytes_per_param = TrainingBytesPerParam(s.training.precision);
  in.min_stages = 2;
  if (!choose) in.data = degrees.data;
  const std::vector<int> tensors =
      choose ? TensorDegrees(s, max_tensor) : std::vector<int>{degrees.tensor};
  for (int t : tensors) {
    PlannerDegrees d = degrees;
    d.tensor = t;
    d.sequence_parallel = degrees.sequence_parallel && t > 1;
    PlannerInput one = BuildPlannerInput(s, d);
    if (!recomputation) {
      for (std::vector<BlockCost>& costs : one.profile.costs) {
        for (BlockCost& b : costs) b.recomputable = false;
      }
    }
    if (in.profiles.empty()) in.cluster = std::move(one.cluster);
    in.profiles.push_back(std::move(one.profile));
  }
  const PlannedPipeline plan = PlanPiper(in);
  base.sp = base.sp && plan.tensor > 1;
  return LowerPlannedPipeline(s, base, plan, "piper");
}

}  // namespace stratasim::planners
