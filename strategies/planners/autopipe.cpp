// AutoPipe: partition, recomputation where memory needs it, and the micro-batch slicer
// (autopipe.h).
#include "strategies/planners/autopipe.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "core/error.h"

namespace stratasim::planners {
namespace {

// The profile of micro-batches of half the size when none was measured: block times and bytes
// scale with the samples, parameters do not.
CostProfile HalveProfile(const CostProfile& p) {
  CostProfile half = p;
  half.micro_batch = p.micro_batch / 2;
  for (std::vector<BlockCost>& costs : half.costs) {
    for (BlockCost& b : costs) {
      b.forward_s /= 2;
      b.backward_s /= 2;
      b.recompute_s /= 2;
      b.activation_bytes /= 2;
      b.checkpoint_bytes /= 2;
      b.output_bytes /= 2;
    }
  }
  return half;
}

// The first `sliced` micro-batches, each cut into two halves, then the rest whole.
std::vector<bool> Halved(int micro_batches, int sliced) {
  std::vector<bool> halved(micro_batches + sliced, false);
  std::fill(halved.begin(), halved.begin() + 2 * sliced, true);
  return halved;
}

std::string GiB(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

std::string Describe(const StagePlan& p) {
  return PartitionText(p.bounds) + " (" + Millis(p.simulated.iteration) + ", critical stage " +
         std::to_string(p.simulated.critical) + ")";
}

int CountTrue(const std::vector<bool>& v) {
  return static_cast<int>(std::count(v.begin(), v.end(), true));
}

// Why no partition fits: the stage of the dynamic program's seed that needs the most beyond
// its GPUs' memory, even with every recomputable block recomputed when allowed.
std::string WhyNoneFits(const CostProfile& profile, const StagePlacement& place,
                        const StagePlan& seed, bool recompute) {
  std::vector<bool> all(profile.Blocks(), false);
  for (int i = 0; recompute && i < profile.Blocks(); ++i) {
    all[i] = profile.costs[0][i].recomputable;
  }
  std::string worst;
  double over = 0;
  for (int s = 0; s < place.Stages(); ++s) {
    for (const StagePlacement::Gpu& g : place.gpus[s]) {
      const double need = StageMemoryBytes(profile, g.kind, seed.bounds[s], seed.bounds[s + 1],
                                           place.Stages() - s, all);
      if (need - g.memory_bytes > over) {
        over = need - g.memory_bytes;
        worst = "stage " + std::to_string(s) + " of " + PartitionText(seed.bounds) + " needs " +
                GiB(need) + " of " + GiB(g.memory_bytes);
      }
    }
  }
  return worst;
}

}  // namespace

std::string Millis(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

PlannedPipeline PlanAutoPipeOn(const PlannerInput& in, const StagePlacement& place,
                               const AutoPipeSettings& settings) {
  const CostProfile& profile = in.profile;
  const PartitionResult part =
      PartitionAutoPipe(profile, place, in.micro_batches, settings.partition);
  if (!part.best.fits) {
    throw Error("autopipe: no partition into " + std::to_string(in.stages) +
                " stages fits in memory" +
                (settings.partition.recompute ? " even with recomputation" : "") + ": " +
                WhyNoneFits(profile, place, part.seed, settings.partition.recompute));
  }
  const StagePlan& best = part.best;
  const StagePlan even = EvaluatePartition(profile, place, EvenBounds(profile.Blocks(), in.stages),
                                           in.micro_batches, settings.partition.recompute);

  PlannedPipeline out;
  out.stages = in.stages;
  out.tensor = in.tensor;
  out.data = in.data;
  out.bounds = best.bounds;
  out.recompute = best.recompute;
  out.micro_batches = in.micro_batches;
  for (int s = 0; s < in.stages; ++s) {
    out.stage_seconds.push_back(best.times.forward[s] + best.times.backward[s]);
  }
  out.notes.push_back(
      "autopipe: dynamic program's seed " + Describe(part.seed) + "; searched " +
      std::to_string(part.plans_evaluated) + " partitions around the critical " + "stage; chose " +
      Describe(best) + "; even split " +
      (even.fits ? Describe(even) : PartitionText(even.bounds) + " does not fit in memory"));
  if (!best.recompute.empty()) {
    out.notes.push_back("autopipe: recomputes " + std::to_string(CountTrue(best.recompute)) +
                        " of " + std::to_string(profile.Blocks()) +
                        " blocks, on the stages that would not fit in memory otherwise");
  }

  // The slicer: halve the first k micro-batches, k by the simulated 1F1B (ties: fewer).
  Simulated1F1B chosen = best.simulated;
  int sliced = 0;
  if (!settings.slicer) {
    out.notes.push_back("autopipe: micro-batch slicer off");
  } else if (profile.micro_batch < 2 || profile.micro_batch % 2 != 0) {
    out.notes.push_back("autopipe: micro-batch slicer skipped: micro-batches of " +
                        std::to_string(profile.micro_batch) + " samples cannot be halved");
  } else {
    const bool measured = !settings.half_profile.costs.empty();
    const CostProfile half = measured ? settings.half_profile : HalveProfile(profile);
    if (half.costs.size() != profile.costs.size() || half.Blocks() != profile.Blocks()) {
      throw Error("autopipe: the half-size profile's kinds or blocks differ from the profile's");
    }
    StageTimes times = best.times;
    const StageTimes half_times = TimesOf(half, place, best.bounds, best.recompute);
    times.half_forward = half_times.forward;
    times.half_backward = half_times.backward;
    times.half_send = half_times.send;
    const int most =
        std::min(settings.max_sliced < 0 ? in.stages - 1 : settings.max_sliced, in.micro_batches);
    for (int k = 1; k <= most; ++k) {
      const Simulated1F1B sim = Simulate1F1B(times, Halved(in.micro_batches, k));
      if (sim.iteration < chosen.iteration) chosen = sim, sliced = k;
    }
    out.notes.push_back("autopipe: micro-batch slicer halves the first " + std::to_string(sliced) +
                        " of " + std::to_string(in.micro_batches) + " micro-batches (" +
                        (measured ? "half-size costs from the profile" : "times scaled by half") +
                        "): start-up " + Millis(best.simulated.startup) + " -> " +
                        Millis(chosen.startup) + ", iteration " + Millis(best.simulated.iteration) +
                        " -> " + Millis(chosen.iteration));
    if (sliced > 0) {
      out.micro_batch_sizes.assign(2 * sliced, profile.micro_batch / 2);
      out.micro_batch_sizes.resize(in.micro_batches + sliced, profile.micro_batch);
      out.micro_batches = static_cast<int>(out.micro_batch_sizes.size());
    }
  }
  out.predicted_seconds = chosen.iteration;
  return out;
}

PlannedPipeline PlanAutoPipe(const PlannerInput& in, const AutoPipeSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  CheckPlannerInput(in);
  PlannedPipeline out = PlanAutoPipeOn(in, PlacementOf(in, DefaultRanks(in)), settings);
  out.planning_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace stratasim::planners
