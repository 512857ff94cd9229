// Piper's planner (piper.h).
#include "strategies/planners/piper.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.h"
#include "strategies/planners/link_costs.h"

namespace stratasim::planners {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Combinations of group counts the exact knapsack enumerates; beyond, it takes blocks greedily
// by recomputation seconds per byte saved.
constexpr double kMaxCombinations = 200000;

// Recomputable blocks with the same bytes and recomputation time, in block order.
struct Group {
  double activation = 0, checkpoint = 0, recompute = 0;
  std::vector<int> blocks;
};

std::vector<Group> Groups(const std::vector<BlockCost>& costs, int first, int end) {
  std::map<std::tuple<double, double, double>, size_t> index;
  std::vector<Group> groups;
  for (int i = first; i < end; ++i) {
    const BlockCost& b = costs[i];
    if (!b.recomputable || b.activation_bytes <= b.checkpoint_bytes) continue;
    const auto key = std::make_tuple(b.activation_bytes, b.checkpoint_bytes, b.recompute_s);
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back({b.activation_bytes, b.checkpoint_bytes, b.recompute_s, {}});
    groups[it->second].blocks.push_back(i);
  }
  return groups;
}

std::string Ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f ms", seconds * 1e3);
  return buf;
}

// One (t, d) pair's best plan.
struct PairPlan {
  double objective = kInf;  // the slowest stage's seconds per sample
  std::vector<int> bounds;
  std::vector<bool> recompute;
  std::vector<double> stage_seconds;
  int stages = 0, tensor = 0, data = 0, micro_batches = 0;
};

class PairPlanner {
 public:
  PairPlanner(const PiperInput& in, const CostProfile& p, int d)
      : in_(in),
        p_(p),
        c_(in.cluster),
        t_(p.tensor),
        d_(d),
        S_(c_.Gpus() / (p.tensor * d)),
        M_(in.global_micro_batches / d),
        B_(p.Blocks()),
        samples_(static_cast<double>(in.global_micro_batches) * p.micro_batch) {
    for (int s = 0; s < S_; ++s) {
      std::vector<int> gpus;
      for (int r = 0; r < d_; ++r) {
        for (int x = 0; x < t_; ++x) gpus.push_back(Rank(r, s, x));
      }
      gpus_.push_back(gpus);
    }
    // What every stage's TPS reads, once: the boundaries' transfer costs, the data groups'
    // bandwidth, the parameters' prefix sums.
    cuts_.resize(S_);
    for (int s = 0; s + 1 < S_; ++s) {
      std::vector<std::pair<int, int>> pairs;
      for (size_t k = 0; k < gpus_[s].size(); ++k) pairs.emplace_back(gpus_[s][k], gpus_[s + 1][k]);
      cuts_[s] = TransferCost(c_, pairs);
    }
    for (int s = 0; s < S_; ++s) {
      std::vector<std::vector<int>> groups(t_);
      for (int r = 0; r < d_; ++r) {
        for (int x = 0; x < t_; ++x) groups[x].push_back(Rank(r, s, x));
      }
      all_reduce_Bps_.push_back(d_ < 2 ? 0 : AllReduceBps(c_, groups));
    }
    for (const std::vector<BlockCost>& costs : p_.costs) prefix_.push_back(PrefixTimes(costs));
    for (int s = 0; s < S_; ++s) {
      std::vector<int> kinds;
      int small = gpus_[s].front();
      for (int r : gpus_[s]) {
        kinds.push_back(c_.devices[r].kind);
        if (c_.devices[r].memory_bytes < c_.devices[small].memory_bytes) small = r;
      }
      std::sort(kinds.begin(), kinds.end());
      kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
      kinds_.push_back(kinds);
      smallest_.push_back(small);
    }
    params_.assign(B_ + 1, 0);
    for (int i = 0; i < B_; ++i) params_[i + 1] = params_[i] + p_.costs[0][i].params;
  }

  PairPlan Plan() {
    // dp[s][j]: the smallest slowest-stage seconds per sample of blocks [0, j) on stages [0, s).
    std::vector<std::vector<double>> dp(S_ + 1, std::vector<double>(B_ + 1, kInf));
    std::vector<std::vector<int>> from(S_ + 1, std::vector<int>(B_ + 1, -1));
    std::vector<std::vector<PiperStage>> chosen(S_ + 1, std::vector<PiperStage>(B_ + 1));
    dp[0][0] = 0;
    for (int s = 1; s <= S_; ++s) {
      for (int j = s; j <= B_ - (S_ - s); ++j) {
        for (int i = s - 1; i < j; ++i) {
          if (dp[s - 1][i] >= dp[s][j]) continue;
          PiperStage stage;
          const double tps = Tps(s - 1, i, j, dp[s][j], stage);
          const double v = std::max(dp[s - 1][i], tps);
          if (v >= dp[s][j]) continue;
          dp[s][j] = v;
          from[s][j] = i;
          chosen[s][j] = std::move(stage);
        }
      }
    }
    PairPlan out;
    if (dp[S_][B_] == kInf) return out;
    out.objective = dp[S_][B_];
    out.stages = S_;
    out.tensor = t_;
    out.data = d_;
    out.micro_batches = M_;
    out.bounds.assign(S_ + 1, B_);
    out.recompute.assign(B_, false);
    out.stage_seconds.assign(S_, 0);
    for (int s = S_; s > 0; --s) {
      const int end = out.bounds[s], first = from[s][end];
      out.bounds[s - 1] = first;
      const PiperStage& st = chosen[s][end];
      for (int i = first; i < end; ++i) out.recompute[i] = st.recompute[i - first];
      out.stage_seconds[s - 1] = st.seconds;
    }
    return out;
  }

 private:
  // The default mapping: tensor index fastest, then stages, then replicas.
  int Rank(int r, int s, int x) const { return (r * S_ + s) * t_ + x; }

  // Seconds per sample of one micro-batch's boundary tensor and its gradient between stages s
  // and s + 1, for every replica's lanes at once.
  double BoundaryPerSample(int s, int last_block) const {
    const double bytes = p_.costs[c_.devices[gpus_[s].front()].kind][last_block].output_bytes;
    return 2 * cuts_[s].Seconds(bytes) / (static_cast<double>(d_) * p_.micro_batch);
  }

  // Piper's all-reduce term per sample: 4 (d - 1) w / (d N) over the data groups' bandwidth.
  double AllReducePerSample(int s, int first, int end) const {
    if (d_ < 2) return 0;
    const double w = (params_[end] - params_[first]) * in_.grad_bytes_per_param;
    return 4.0 * (d_ - 1) * w / (d_ * samples_) / all_reduce_Bps_[s];
  }

  // Stage s = blocks [first, end): its seconds per sample with the knapsack's recomputation
  // (kInf when it cannot fit); `bound`: a value at or above which the caller has no use for it.
  double Tps(int s, int first, int end, double bound, PiperStage& stage) const {
    double comm = AllReducePerSample(s, first, end);
    if (s > 0) comm += BoundaryPerSample(s - 1, first - 1);
    if (s < S_ - 1) comm += BoundaryPerSample(s, end - 1);
    const double per_sample = 1.0 / (static_cast<double>(d_) * p_.micro_batch);
    // The stage's kinds: time on the slowest, memory on the smallest.
    double slowest_plain = 0;
    for (int k : kinds_[s])
      slowest_plain = std::max(slowest_plain, prefix_[k][end] - prefix_[k][first]);
    if (slowest_plain * per_sample + comm >= bound) return kInf;  // recomputation only adds
    const int in_flight = std::min(S_ - s, M_);
    const ClusterView::Device& small = c_.devices[smallest_[s]];
    stage = PiperKnapsack(p_, small.kind, first, end, in_flight,
                          in_.memory_fraction * small.memory_bytes);
    if (!stage.fits) return kInf;
    if (kinds_[s].size() > 1) {
      std::vector<bool> recompute(static_cast<size_t>(B_), false);
      for (int i = first; i < end; ++i) recompute[i] = stage.recompute[i - first];
      for (int k : kinds_[s]) {
        stage.seconds = std::max(stage.seconds, RangeSeconds(p_.costs[k], first, end, recompute));
      }
    }
    return stage.seconds * per_sample + comm;
  }

  const PiperInput& in_;
  const CostProfile& p_;
  const ClusterView& c_;
  const int t_, d_, S_, M_, B_;
  const double samples_;
  std::vector<std::vector<int>> gpus_;       // per stage
  std::vector<TransferCost> cuts_;           // cuts_[s]: from stage s to stage s + 1
  std::vector<double> all_reduce_Bps_;       // per stage
  std::vector<double> params_;               // prefix sums over the blocks
  std::vector<std::vector<double>> prefix_;  // per kind: PrefixTimes
  std::vector<std::vector<int>> kinds_;      // per stage: its GPUs' kinds
  std::vector<int> smallest_;                // per stage: its GPU with the least memory
};

}  // namespace

PiperStage PiperKnapsack(const CostProfile& profile, int kind, int first, int end, int in_flight,
                         double capacity) {
  const std::vector<BlockCost>& costs = profile.costs[kind];
  PiperStage out;
  out.recompute.assign(end - first, false);
  out.seconds = RangeSeconds(costs, first, end);
  out.memory_bytes = StageMemoryBytes(profile, kind, first, end, in_flight);
  if (out.memory_bytes <= capacity) {
    out.fits = true;
    return out;
  }
  const std::vector<Group> groups = Groups(costs, first, end);
  // Memory with counts[g] blocks of each group recomputed: each saves in_flight x (activation -
  // checkpoint) and the largest recomputed activation is held once more during its backward.
  auto memory = [&](const std::vector<int>& counts) {
    double m = out.memory_bytes, largest = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (counts[g] == 0) continue;
      m -= counts[g] * in_flight * (groups[g].activation - groups[g].checkpoint);
      largest = std::max(largest, groups[g].activation);
    }
    return m + largest;
  };
  auto cost = [&](const std::vector<int>& counts) {
    double c = 0;
    for (size_t g = 0; g < groups.size(); ++g) c += counts[g] * groups[g].recompute;
    return c;
  };
  double combinations = 1;
  for (const Group& g : groups) combinations *= static_cast<double>(g.blocks.size()) + 1;

  std::vector<int> best;
  double best_cost = kInf;
  int best_blocks = 0;
  if (combinations <= kMaxCombinations) {
    std::vector<int> counts(groups.size(), 0);
    for (;;) {
      const double c = cost(counts);
      int blocks = 0;
      for (int n : counts) blocks += n;
      if ((c < best_cost || (c == best_cost && blocks < best_blocks)) &&
          memory(counts) <= capacity) {
        best = counts;
        best_cost = c;
        best_blocks = blocks;
      }
      size_t g = 0;  // the next combination, mixed radix
      while (g < groups.size() && counts[g] == static_cast<int>(groups[g].blocks.size())) {
        counts[g++] = 0;
      }
      if (g == groups.size()) break;
      ++counts[g];
    }
  } else {
    // Greedy: the cheapest seconds per byte saved first, one block at a time.
    std::vector<size_t> order(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) order[g] = g;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return groups[a].recompute / (groups[a].activation - groups[a].checkpoint) <
             groups[b].recompute / (groups[b].activation - groups[b].checkpoint);
    });
    std::vector<int> counts(groups.size(), 0);
    for (size_t g : order) {
      while (counts[g] < static_cast<int>(groups[g].blocks.size()) && memory(counts) > capacity) {
        ++counts[g];
      }
    }
    if (memory(counts) <= capacity) best = counts;
  }
  if (best.empty()) return out;  // does not fit even recomputing everything that helps
  std::vector<bool> recompute(costs.size(), false);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (int n = 0; n < best[g]; ++n) recompute[groups[g].blocks[n]] = true;
  }
  for (int i = first; i < end; ++i) out.recompute[i - first] = recompute[i];
  out.fits = true;
  out.seconds = RangeSeconds(costs, first, end, recompute);
  out.memory_bytes = StageMemoryBytes(profile, kind, first, end, in_flight, recompute);
  return out;
}

PlannedPipeline PlanPiper(const PiperInput& in) {
  const auto start = std::chrono::steady_clock::now();
  const int G = in.cluster.Gpus();
  PairPlan best;
  std::vector<std::string> tried;
  for (const CostProfile& p : in.profiles) {
    const int t = p.tensor;
    for (int d = 1; t * d <= G; ++d) {
      if (G % (t * d) != 0 || in.global_micro_batches % d != 0) continue;
      if (in.data > 0 && d != in.data) continue;
      const int S = G / (t * d);
      if (S < in.min_stages || S > p.Blocks()) continue;
      PairPlan plan = PairPlanner(in, p, d).Plan();
      tried.push_back("t" + std::to_string(t) + " d" + std::to_string(d) + " S" +
                      std::to_string(S) + ": " +
                      (plan.bounds.empty() ? "does not fit" : Ms(plan.objective) + "/sample"));
      if (plan.objective < best.objective) best = std::move(plan);
    }
  }
  if (best.bounds.empty()) {
    std::string what;
    for (const std::string& t : tried) what += (what.empty() ? "" : "; ") + t;
    throw Error("piper: no plan fits in memory (" + (what.empty() ? "no (t, d) applies" : what) +
                ")");
  }
  PlannedPipeline out;
  out.stages = best.stages;
  out.tensor = best.tensor;
  out.data = best.data;
  out.bounds = best.bounds;
  // Piper's memory model keeps S - s micro-batches on stage s: PipeDream-Flush's (1F1B) order.
  out.schedule = "1f1b";
  out.micro_batches = best.micro_batches;
  out.stage_seconds = best.stage_seconds;
  int recomputed = 0;
  for (bool r : best.recompute) recomputed += r;
  if (recomputed > 0) out.recompute = best.recompute;
  // Piper's objective has no bubble: its estimate is the slowest stage's time per sample times
  // the samples of the batch.
  const double samples =
      static_cast<double>(in.global_micro_batches) * in.profiles.front().micro_batch;
  out.predicted_seconds = best.objective * samples;
  out.notes.push_back("piper: tensor " + std::to_string(best.tensor) + " x data " +
                      std::to_string(best.data) + " x " + std::to_string(best.stages) +
                      " stages, partition " + PartitionText(best.bounds) + " blocks, " +
                      std::to_string(recomputed) + " blocks recomputed, slowest stage " +
                      Ms(best.objective) + " per sample");
  std::string all;
  for (const std::string& t : tried) all += (all.empty() ? "" : "; ") + t;
  out.notes.push_back("piper: (t, d) tried: " + all);
  out.planning_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace stratasim::planners
