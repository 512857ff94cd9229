#include "strategies/planners/merak.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/planners/lower_plan.h"
#include "strategies/planners/planner_options.h"
#include "strategies/planners/profile.h"

namespace stratasim::planners {

std::vector<double> StageAwareRecomputeRatios(double r0, int stages) {
  std::vector<double> r(std::max(stages, 0), 0.0);
  for (int i = 0; i + 1 < stages; ++i) {
    const double ratio = 1 - (1 - r0) * (stages - 1) / (stages - 1 - i);
    r[i] = std::clamp(ratio, 0.0, 1.0);
  }
  return r;
}

int CheckpointedLayers(double ratio, int layers) {
  return static_cast<int>(std::floor(std::clamp(ratio, 0.0, 1.0) * layers + 1e-9));
}

namespace {

std::string Fixed(double x, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, x);
  return text;
}

// Each stage's GPU kind: the kind of the first GPU of replica 0's stage in the default order
// (tensor fastest, then stages).
std::vector<int> StageKinds(const PlannerInput& in) {
  std::vector<int> kinds(in.stages, 0);
  for (int st = 0; st < in.stages; ++st) {
    const int rank = st * in.tensor;
    if (rank < in.cluster.Gpus()) kinds[st] = in.cluster.devices[rank].kind;
  }
  return kinds;
}

// The stage-aware ratios for `r0`, with Merak's adjustment for its schedule.
std::vector<double> Ratios(double r0, int stages, const std::string& schedule) {
  std::vector<double> r = StageAwareRecomputeRatios(r0, stages);
  if (schedule == "shifted_critical_path" && stages > 2) r[stages - 2] = r[stages - 3];
  return r;
}

}  // namespace

std::vector<int> MerakPartition(const CostProfile& profile, int stages,
                                const std::string& partition) {
  const std::vector<BlockCost>& costs = profile.costs.front();
  const int n = static_cast<int>(costs.size());
  if (stages > n) {
    throw Error("cannot split " + std::to_string(n) + " blocks into " + std::to_string(stages) +
                " pipeline stages");
  }
  std::vector<int> bounds(stages + 1, n);
  bounds[0] = 0;
  if (partition == "params") {
    // Min-max of the stages' parameters over contiguous splits, each stage one block at least.
    std::vector<double> prefix(n + 1, 0);
    for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + costs[i].params;
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
    std::vector<std::vector<int>> cut(stages + 1, std::vector<int>(n + 1, 0));
    best[0][0] = 0;
    for (int k = 1; k <= stages; ++k) {
      for (int j = k; j <= n; ++j) {
        for (int i = k - 1; i < j; ++i) {
          const double v = std::max(best[k - 1][i], prefix[j] - prefix[i]);
          if (v < best[k][j]) best[k][j] = v, cut[k][j] = i;
        }
      }
    }
    for (int k = stages; k >= 1; --k) bounds[k - 1] = cut[k][bounds[k]];
    return bounds;
  }
  // Uniform over the transformer blocks (the recomputable ones, contiguous in a transformer).
  int first = -1, last = -1;
  for (int i = 0; i < n; ++i) {
    if (!costs[i].recomputable) continue;
    if (first < 0) first = i;
    last = i;
  }
  if (first < 0 || last - first + 1 < stages) {
    for (int k = 1; k < stages; ++k) bounds[k] = k * n / stages;
    return bounds;
  }
  const int blocks = last - first + 1;
  int at = first;
  for (int k = 1; k < stages; ++k) {
    at += blocks / stages + (k - 1 < blocks % stages ? 1 : 0);
    bounds[k] = at;
  }
  return bounds;
}

std::vector<bool> StageAwareRecompute(const CostProfile& profile, const std::vector<int>& bounds,
                                      const std::vector<double>& ratios) {
  const std::vector<BlockCost>& costs = profile.costs.front();
  std::vector<bool> recompute(costs.size(), false);
  for (size_t st = 0; st + 1 < bounds.size(); ++st) {
    int blocks = 0;
    for (int i = bounds[st]; i < bounds[st + 1]; ++i) blocks += costs[i].recomputable ? 1 : 0;
    int left = CheckpointedLayers(ratios[st], blocks);
    for (int i = bounds[st]; i < bounds[st + 1] && left > 0; ++i) {
      if (costs[i].recomputable) recompute[i] = true, --left;
    }
  }
  return recompute;
}

PlannedPipeline PlanMerakPipeline(const PlannerInput& in, const MerakSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  const int S = in.stages;
  PlannedPipeline out;
  out.stages = S;
  out.tensor = in.tensor;
  out.data = in.data;
  out.micro_batches = in.micro_batches;
  out.schedule = settings.schedule;
  out.tp_subpipeline = settings.tp_subpipeline;
  out.bounds = MerakPartition(in.profile, S, settings.partition);
  const std::vector<int> kinds = StageKinds(in);

  // Peak bytes of each stage under 1F1B (stage i holds min(S - i, M) micro-batches; a
  // schedule's checkpointed micro-batches only lower that) with recomputation `recompute`.
  auto peaks = [&](const std::vector<bool>& recompute) {
    std::vector<double> peak(S, 0);
    for (int st = 0; st < S; ++st) {
      peak[st] = StageMemoryBytes(in.profile, kinds[st], out.bounds[st], out.bounds[st + 1],
                                  std::min(S - st, in.micro_batches), recompute);
    }
    return peak;
  };
  auto fits = [&](const std::vector<double>& peak) {
    for (int st = 0; st < S; ++st) {
      const int rank = st * in.tensor;
      const double memory = rank < in.cluster.Gpus() ? in.cluster.devices[rank].memory_bytes : 0;
      if (memory > 0 && peak[st] > in.memory_fraction * memory) return false;
    }
    return true;
  };

  double r0 = settings.recompute_ratio;
  bool fit = true;
  if (r0 < 0) {
    // Stage-aware recomputation recomputes as little as fits: the smallest r0 on a 0.05 grid.
    r0 = 1;
    fit = false;
    for (int k = 0; k <= 20; ++k) {
      const double trial = k / 20.0;
      if (fits(peaks(
              StageAwareRecompute(in.profile, out.bounds, Ratios(trial, S, settings.schedule))))) {
        r0 = trial;
        fit = true;
        break;
      }
    }
  }
  const std::vector<double> ratios = Ratios(r0, S, settings.schedule);
  out.recompute = StageAwareRecompute(in.profile, out.bounds, ratios);
  const std::vector<double> peak = peaks(out.recompute);
  if (settings.recompute_ratio >= 0) fit = fits(peak);

  double slowest = 0;
  std::string ratio_text, checkpointed_text, memory_text;
  for (int st = 0; st < S; ++st) {
    const double t = RangeSeconds(in.profile.costs[kinds[st]], out.bounds[st], out.bounds[st + 1],
                                  out.recompute);
    out.stage_seconds.push_back(t);
    slowest = std::max(slowest, t);
    int checkpointed = 0;
    for (int i = out.bounds[st]; i < out.bounds[st + 1]; ++i) checkpointed += out.recompute[i];
    const std::string sep = st ? "," : "";
    ratio_text += sep + Fixed(ratios[st], 2);
    checkpointed_text += sep + std::to_string(checkpointed);
    memory_text += sep + Fixed(peak[st] / 1073741824.0, 1);
  }
  // 1F1B: M rounds of the slowest stage plus the fill and drain of the others.
  out.predicted_seconds = (in.micro_batches - 1) * slowest;
  for (double t : out.stage_seconds) out.predicted_seconds += t;

  out.notes.push_back("merak: partition " + settings.partition + " " + PartitionText(out.bounds) +
                      " blocks per stage, schedule " + settings.schedule +
                      (settings.tp_subpipeline > 0 ? ", sub-pipelined tensor parallelism level " +
                                                         std::to_string(settings.tp_subpipeline)
                                                   : ""));
  out.notes.push_back("merak: stage-aware recomputation r0 = " + Fixed(r0, 2) +
                      (settings.recompute_ratio < 0 ? " (smallest that fits)" : "") + ": ratios " +
                      ratio_text + ", checkpointed blocks " + checkpointed_text +
                      ", predicted peak GiB " + memory_text +
                      (fit ? "" : " (does not fit the GPUs' memory)"));
  out.planning_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

const OptionSpecs& MerakOptions() {
  static const OptionSpecs options = Join(
      PlannerOptions(),
      {
          OneOf("schedule", {"1f1b", "last_no_recompute", "pre_recompute", "shifted_critical_path"},
                "Merak's pipeline schedules (strategies/pipeline/merak_schedule.cpp): 1f1b; "
                "last_no_recompute (the last stage never recomputes); pre_recompute (cool-down "
                "micro-batches recomputed before their gradient arrives); shifted_critical_path "
                "(stage p-2 runs its third forward before its first backward; micro_batches >= "
                "4). The last three need micro_batches >= stages")
              .Default("shifted_critical_path"),
          Number("recompute_ratio", 0, 1,
                 "r0 of stage-aware recomputation: stage i < p-1 checkpoints its first "
                 "floor(r_i x blocks) transformer blocks, r_i = 1 - (1 - r0)(p - 1)/(p - 1 - i) "
                 "clipped to [0, 1]; the last stage none")
              .Derived("the smallest multiple of 0.05 with which every stage's predicted peak "
                       "fits its GPUs' memory"),
          Integer("tp_subpipeline", 0, 3,
                  "sub-pipelined tensor parallelism (tensor > 1, no sequence_parallel): 1 splits "
                  "each row-parallel GEMM in halves, 2 runs each layer as two sub-micro-batches, "
                  "3 carries them across layers; 0 off")
              .Derived("3 when tensor > 1 without sequence_parallel, else 0"),
          OneOf("partition", {"uniform", "params"},
                "uniform: equal transformer blocks (attention and MLP halves) per stage; params: "
                "stages balanced by parameters")
              .Default("uniform"),
      });
  return options;
}

Plan PlanMerak(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, MerakOptions());
  PlannerDegrees degrees;
  const PipelineShape base = ReadPlannerShape(s, opt, degrees);
  MerakSettings settings;
  settings.schedule = opt.Choice("schedule");
  settings.partition = opt.Choice("partition");
  settings.recompute_ratio = opt.Double("recompute_ratio", -1);
  const bool can_subpipeline = degrees.tensor > 1 && !degrees.sequence_parallel;
  settings.tp_subpipeline = opt.Int("tp_subpipeline", can_subpipeline ? 3 : 0);
  if (settings.tp_subpipeline > 0 && degrees.tensor == 1) {
    throw opt.Fail("tp_subpipeline", "needs tensor > 1");
  }
  if (settings.tp_subpipeline > 0 && degrees.sequence_parallel) {
    throw opt.Fail("tp_subpipeline", "does not combine with sequence_parallel");
  }
  const std::string m = std::to_string(degrees.micro_batches);
  if (settings.schedule != "1f1b" && degrees.micro_batches < degrees.stages) {
    throw opt.Fail("micro_batches", "schedule " + settings.schedule + " needs micro_batches (" + m +
                                        ") >= stages (" + std::to_string(degrees.stages) +
                                        "), as Merak does");
  }
  if (settings.schedule == "shifted_critical_path" && degrees.micro_batches < 4) {
    throw opt.Fail("micro_batches",
                   "schedule shifted_critical_path needs micro_batches (" + m + ") >= 4");
  }
  opt.Finish();
  const PlannerInput in = BuildPlannerInput(s, degrees);
  if (degrees.stages > in.profile.Blocks()) {
    throw opt.Fail("stages", "the model has " + std::to_string(in.profile.Blocks()) +
                                 " blocks, fewer than stages (" + std::to_string(degrees.stages) +
                                 ")");
  }
  return LowerPlannedPipeline(s, base, PlanMerakPipeline(in, settings), "merak");
}

}  // namespace stratasim::planners
