// HPH's planner (hph.h): the designer's layouts, each split by speed with memory-driven
// recomputation, the fastest that fits kept.
#include "strategies/planners/hph.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "core/error.h"
#include "strategies/planners/hph_partition.h"
#include "strategies/planners/hph_topology.h"

namespace stratasim::planners {
namespace {

struct Candidate {
  StageLayout layout;
  StagePartition split;
  double predicted = 0;
};

// 1F1B with m micro-batches: every stage's forward and backward once to fill and drain the
// pipeline, and the slowest stage m - 1 more times in the steady phase (transfers ignored).
double PredictIteration(const StagePartition& split, const CostProfile& profile,
                        const std::vector<int>& stage_kind, int micro_batches) {
  double fill = 0;
  for (size_t s = 0; s < stage_kind.size(); ++s) {
    fill += RangeSeconds(profile.costs[stage_kind[s]], split.bounds[s], split.bounds[s + 1]);
  }
  return fill + (micro_batches - 1) * split.max_seconds;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Joined(const std::vector<double>& v, double scale, int digits) {
  std::string text;
  for (double x : v) text += (text.empty() ? "" : ", ") + Fixed(x * scale, digits);
  return text;
}

// The most servers any stage's GPUs span.
int ServersPerStage(const PlannerInput& in, const std::vector<int>& ranks) {
  int most = 0;
  for (int st = 0; st < in.stages; ++st) {
    std::set<int> servers;
    for (int r = 0; r < in.data; ++r) {
      for (int x = 0; x < in.tensor; ++x) {
        servers.insert(in.cluster.devices[ranks[(r * in.stages + st) * in.tensor + x]].server);
      }
    }
    most = std::max(most, static_cast<int>(servers.size()));
  }
  return most;
}

std::vector<std::string> Notes(const PlannerInput& in, const HphSettings& settings,
                               const Candidate& c, size_t tried) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const StagePartition& p = c.split;
  std::vector<std::string> notes;
  notes.push_back(
      std::string("hph: ") + (c.layout.default_order ? "default layout" : "designer's layout") +
      ", stages on " + StageKindsText(in.profile, c.layout.stage_kind) + "; each stage's " +
      std::to_string(in.data * in.tensor) + " GPUs within at most " +
      std::to_string(ServersPerStage(in, c.layout.ranks)) + " server(s)");
  notes.push_back(std::string("hph: ") + (settings.speed_weighted ? "speed-weighted" : "even") +
                  " partition " + PartitionText(p.bounds) +
                  " blocks; predicted stage times per micro-batch " +
                  Joined(p.stage_seconds, 1e3, 2) + " ms");
  std::string recomputed;
  for (size_t s = 0; s < p.stage_recomputed.size(); ++s) {
    if (p.stage_recomputed[s] == 0) continue;
    recomputed += (recomputed.empty() ? "" : ", ") + std::string("stage ") + std::to_string(s) +
                  ": " + std::to_string(p.stage_recomputed[s]) + " blocks";
  }
  notes.push_back("hph: recomputation " +
                  (recomputed.empty() ? std::string("none: every stage fits")
                                      : "only where memory would overflow (" + recomputed +
                                            "), schedule " + settings.recompute_schedule) +
                  "; predicted peak per GPU " + Joined(p.stage_memory, 1 / kGiB, 1) + " GiB");
  notes.push_back("hph: " + std::to_string(tried) + " layout(s) tried; predicted iteration " +
                  Fixed(c.predicted * 1e3, 2) + " ms (transfers and all-reduces not counted)");
  return notes;
}

}  // namespace

PlannedPipeline PlanHph(const PlannerInput& in, const HphSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  CheckHphInput(in);
  std::vector<StageLayout> layouts =
      settings.topology ? DesignLayouts(in)
                        : std::vector<StageLayout>{DefaultLayout(in, settings.rank_order)};
  size_t unnumbered = 0;
  if (settings.topology && !settings.explicit_ranks) {
    const auto no_order = [&](const StageLayout& l) { return RankOrderOf(in, l.ranks).empty(); };
    const auto end = std::remove_if(layouts.begin(), layouts.end(), no_order);
    unnumbered = layouts.end() - end;
    layouts.erase(end, layouts.end());
    if (layouts.empty()) layouts.push_back(DefaultLayout(in, settings.rank_order));
  }
  std::vector<Candidate> fitting;
  for (StageLayout& layout : layouts) {
    const std::vector<int> balance =
        settings.speed_weighted ? layout.stage_kind : std::vector<int>(in.stages, 0);
    StagePartition split =
        PartitionStages(in.profile, balance, layout.stage_kind, layout.stage_budget,
                        in.micro_batches, settings.recompute);
    if (!split.fits) continue;
    const double predicted =
        PredictIteration(split, in.profile, layout.stage_kind, in.micro_batches);
    fitting.push_back({std::move(layout), std::move(split), predicted});
  }
  if (fitting.empty()) {
    throw Error("hph: no layout and split of the " + std::to_string(in.profile.Blocks()) +
                " blocks over " + std::to_string(in.stages) + " stages fits in memory" +
                (settings.recompute ? ", even recomputing every recomputable block"
                                    : " without recomputation (recompute is off)"));
  }
  // The lowest prediction; the first layout on ties, so the choice is deterministic.
  const Candidate& best = *std::min_element(
      fitting.begin(), fitting.end(),
      [](const Candidate& a, const Candidate& b) { return a.predicted < b.predicted; });

  PlannedPipeline out;
  out.stages = in.stages;
  out.tensor = in.tensor;
  out.data = in.data;
  out.bounds = best.split.bounds;
  if (!best.layout.default_order) out.ranks = best.layout.ranks;
  const bool recomputes = std::find(best.split.recompute.begin(), best.split.recompute.end(),
                                    true) != best.split.recompute.end();
  if (recomputes) out.recompute = best.split.recompute;
  out.schedule = recomputes ? settings.recompute_schedule : "1f1b";
  out.micro_batches = in.micro_batches;
  out.stage_seconds = best.split.stage_seconds;
  out.predicted_seconds = best.predicted;
  out.notes = Notes(in, settings, best, layouts.size());
  if (unnumbered > 0) {
    out.notes.push_back("hph: " + std::to_string(unnumbered) +
                        " designed layout(s) left out: no rank order numbers them and explicit "
                        "mappings are off");
  }
  out.planning_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace stratasim::planners
