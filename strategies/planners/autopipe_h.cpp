// AutoPipe-H: the device mapping search around AutoPipe's partitioner (autopipe_h.h).
#include "strategies/planners/autopipe_h.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include "core/error.h"
#include "strategies/planners/stage_placement.h"

namespace stratasim::planners {
namespace {

// Ranks of positions given the tensor group each one takes (group g: ranks g*T .. g*T+T-1).
std::vector<int> Expand(int tensor, const std::vector<int>& groups) {
  std::vector<int> ranks;
  for (int g : groups) {
    for (int t = 0; t < tensor; ++t) ranks.push_back(g * tensor + t);
  }
  return ranks;
}

// What the partitioner sees of a placement; mappings that look alike share one partition.
std::vector<double> PlacementKey(const StagePlacement& p) {
  std::vector<double> key;
  for (const std::vector<StagePlacement::Gpu>& stage : p.gpus) {
    std::vector<std::pair<int, double>> gpus;
    for (const StagePlacement::Gpu& g : stage) gpus.emplace_back(g.kind, g.memory_bytes);
    std::sort(gpus.begin(), gpus.end());
    key.push_back(-1);  // stage separator
    for (const auto& [kind, memory] : gpus) key.insert(key.end(), {double(kind), memory});
  }
  key.insert(key.end(), p.send_Bps.begin(), p.send_Bps.end());
  key.insert(key.end(), p.send_latency.begin(), p.send_latency.end());
  return key;
}

class Scorer {
 public:
  Scorer(const PlannerInput& in, const AutoPipeHSettings& s) : in_(in), s_(s) {}

  MappingScore Score(const std::vector<int>& ranks) {
    ++scored_;
    const StagePlacement place = PlacementOf(in_, ranks);
    auto [it, fresh] = partitions_.try_emplace(PlacementKey(place));
    if (fresh) {
      const PartitionResult r =
          PartitionAutoPipe(in_.profile, place, in_.micro_batches, s_.autopipe.partition);
      it->second = {r.best.bounds, r.best.fits ? r.best.simulated.iteration
                                               : std::numeric_limits<double>::infinity()};
    }
    MappingScore m;
    m.ranks = ranks;
    m.bounds = it->second.first;
    m.pipeline_seconds = it->second.second;
    m.busiest = BusiestLink(in_, ranks, m.bounds, s_.gradient_bytes_per_param);
    return m;
  }

  int scored() const { return scored_; }

 private:
  const PlannerInput& in_;
  const AutoPipeHSettings& s_;
  std::map<std::vector<double>, std::pair<std::vector<int>, double>> partitions_;
  int scored_ = 0;
};

// Lower total, then a lighter busiest link; near-equal counts as equal (rounding).
bool Better(const MappingScore& a, const MappingScore& b) {
  const double eps = 1e-12;
  if (a.Total() < b.Total() * (1 - eps)) return true;
  if (a.Total() > b.Total() * (1 + eps)) return false;
  return a.busiest.seconds < b.busiest.seconds * (1 - eps);
}

// Swaps pairs of positions' tensor groups while that improves the score, in a fixed order.
MappingScore Improve(const PlannerInput& in, std::vector<int> groups, Scorer& scorer,
                     int max_mappings) {
  MappingScore best = scorer.Score(Expand(in.tensor, groups));
  const int positions = static_cast<int>(groups.size());
  for (bool improved = true; improved;) {
    improved = false;
    for (int i = 0; i < positions; ++i) {
      for (int j = i + 1; j < positions; ++j) {
        if (scorer.scored() >= max_mappings) return best;
        std::swap(groups[i], groups[j]);
        MappingScore s = scorer.Score(Expand(in.tensor, groups));
        if (Better(s, best)) {
          best = std::move(s);
          improved = true;
        } else {
          std::swap(groups[i], groups[j]);
        }
      }
    }
  }
  return best;
}

std::vector<int> Groups(const PlannerInput& in, bool stage_major) {
  std::vector<int> groups;
  for (int r = 0; r < in.data; ++r) {
    for (int s = 0; s < in.stages; ++s)
      groups.push_back(stage_major ? s * in.data + r : r * in.stages + s);
  }
  return groups;
}

std::string KindsText(const PlannerInput& in, const std::vector<int>& ranks) {
  std::string text;
  for (int s = 0; s < in.stages; ++s) {
    std::vector<std::string> kinds;
    for (int r = 0; r < in.data; ++r) {
      const std::string& k =
          in.profile.kinds[in.cluster.devices[ranks[(r * in.stages + s) * in.tensor]].kind];
      if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
    }
    text += s > 0 ? "," : "";
    for (size_t i = 0; i < kinds.size(); ++i) text += (i > 0 ? "/" : "") + kinds[i];
  }
  return text;
}

std::string LinkText(const LinkLoad& l) {
  if (l.link.empty()) return "no shared link carries traffic";
  char gb[32];
  std::snprintf(gb, sizeof gb, "%.3f GB", l.bytes / 1e9);
  return "busiest shared link " + l.link + " carries " + gb + " per iteration (" +
         Millis(l.seconds) + ")";
}

void CheckGroups(const PlannerInput& in) {
  const int groups = in.data * in.stages;
  for (int g = 0; g < groups; ++g) {
    const int server = in.cluster.devices[g * in.tensor].server;
    for (int t = 1; t < in.tensor; ++t) {
      if (in.cluster.devices[g * in.tensor + t].server != server) {
        throw Error("autopipe-h: tensor group " + std::to_string(g) + " spans servers (tensor " +
                    std::to_string(in.tensor) + " must divide the GPUs per server)");
      }
    }
  }
}

}  // namespace

std::vector<int> NaiveRanks(const PlannerInput& in) { return Expand(in.tensor, Groups(in, false)); }

std::vector<int> StageMajorRanks(const PlannerInput& in) {
  return Expand(in.tensor, Groups(in, true));
}

MappingScore ScoreMapping(const PlannerInput& in, const std::vector<int>& ranks,
                          const AutoPipeHSettings& settings) {
  Scorer scorer(in, settings);
  return scorer.Score(ranks);
}

PlannedPipeline PlanAutoPipeH(const PlannerInput& in, const AutoPipeHSettings& settings) {
  const auto start = std::chrono::steady_clock::now();
  CheckPlannerInput(in);
  CheckGroups(in);
  Scorer scorer(in, settings);
  const MappingScore naive = scorer.Score(NaiveRanks(in));
  MappingScore chosen = naive;
  if (settings.mapping == DeviceMapping::kContention) {
    chosen = Improve(in, Groups(in, false), scorer, settings.max_mappings);
    MappingScore staged = Improve(in, Groups(in, true), scorer, settings.max_mappings);
    if (Better(staged, chosen)) chosen = std::move(staged);
  }

  PlannedPipeline out = PlanAutoPipeOn(in, PlacementOf(in, chosen.ranks), settings.autopipe);
  // The rank order is the lowering's default: leave ranks empty then.
  if (chosen.ranks != NaiveRanks(in)) out.ranks = chosen.ranks;
  const LinkLoad busiest =
      BusiestLink(in, chosen.ranks, out.bounds, settings.gradient_bytes_per_param);
  out.predicted_seconds += busiest.seconds;
  const bool contention = settings.mapping == DeviceMapping::kContention;
  std::string note = std::string("autopipe-h: ") +
                     (contention ? "contention-aware mapping (" + std::to_string(scorer.scored()) +
                                       " mappings scored)"
                                 : "naive mapping (rank order)") +
                     ": stage kinds " + KindsText(in, chosen.ranks) + "; " + LinkText(busiest) +
                     "; simulated pipeline " + Millis(chosen.pipeline_seconds);
  if (contention) {
    note += "; the rank order would give stage kinds " + KindsText(in, naive.ranks) + ", " +
            LinkText(naive.busiest) + ", simulated pipeline " + Millis(naive.pipeline_seconds);
  }
  out.notes.insert(out.notes.begin(), note);
  out.planning_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace stratasim::planners
