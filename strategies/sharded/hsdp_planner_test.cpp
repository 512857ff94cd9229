#include "strategies/sharded/hsdp_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace stratasim {
namespace {

// A random instance: `units` x `choices` seconds and state bytes, and a memory limit between
// the least and the most any split needs (so that the memory row binds).
HsdpSplitProblem RandomProblem(std::mt19937& rng, int units, int choices) {
  std::uniform_real_distribution<double> seconds(1e-4, 5e-2), gib(0.1, 8);
  HsdpSplitProblem p;
  for (int k = 0; k < choices; ++k) p.fractions.push_back(static_cast<double>(k) / choices);
  double least = 0, most = 0;
  for (int u = 0; u < units; ++u) {
    p.seconds.emplace_back();
    p.state_bytes.emplace_back();
    double lo = 1e300, hi = 0;
    for (int k = 0; k < choices; ++k) {
      p.seconds.back().push_back(seconds(rng));
      p.state_bytes.back().push_back(gib(rng) * (1 << 30));
      lo = std::min(lo, p.state_bytes.back().back());
      hi = std::max(hi, p.state_bytes.back().back());
    }
    least += lo;
    most += hi;
  }
  p.fixed_bytes = 3.0 * (1 << 30);
  p.limit_bytes =
      p.fixed_bytes + least + std::uniform_real_distribution<double>(0, 1)(rng) * (most - least);
  return p;
}

TEST(HsdpPlanner, MilpEqualsBruteForceOnSmallInstances) {
  std::mt19937 rng(21);
  int binding = 0;
  for (int i = 0; i < 60; ++i) {
    const int units = 1 + i % 5, choices = 2 + i % 4;
    const HsdpSplitProblem p = RandomProblem(rng, units, choices);
    const HsdpSplit brute = BruteForceHsdpSplit(p);
    const HsdpSplit milp = SolveHsdpSplit(p);
    SCOPED_TRACE("instance " + std::to_string(i));
    ASSERT_TRUE(brute.feasible);
    ASSERT_TRUE(milp.feasible);
    EXPECT_TRUE(milp.proven_optimal);
    EXPECT_NEAR(milp.predicted_s, brute.predicted_s, 1e-9 * brute.predicted_s);
    EXPECT_EQ(milp.choice, brute.choice);  // continuous random costs: the optimum is unique
    EXPECT_LE(milp.memory_bytes, p.limit_bytes);
    // The unconstrained optimum (each unit's fastest choice) breaks the limit: memory binds.
    double fastest_memory = p.fixed_bytes;
    for (size_t u = 0; u < p.seconds.size(); ++u) {
      size_t best = 0;
      for (size_t k = 1; k < p.fractions.size(); ++k) {
        if (p.seconds[u][k] < p.seconds[u][best]) best = k;
      }
      fastest_memory += p.state_bytes[u][best];
    }
    binding += fastest_memory > p.limit_bytes;
  }
  EXPECT_GT(binding, 10);  // the comparison covers constrained instances, not only easy ones
}

TEST(HsdpPlanner, InfeasibleInstanceSaysNoFeasiblePlanWithTheEstimate) {
  HsdpSplitProblem p;
  p.fractions = {0, 0.5, 1};
  p.seconds = {{3, 2, 1}, {3, 2, 1}};
  p.state_bytes = {{4.0 * (1 << 30), 3.0 * (1 << 30), 2.0 * (1 << 30)},
                   {4.0 * (1 << 30), 3.0 * (1 << 30), 2.0 * (1 << 30)}};
  p.fixed_bytes = 1.0 * (1 << 30);
  p.limit_bytes = 4.5 * (1 << 30);
  EXPECT_FALSE(SolveHsdpSplit(p).feasible);
  EXPECT_FALSE(BruteForceHsdpSplit(p).feasible);
  EXPECT_DOUBLE_EQ(LeastHsdpMemoryBytes(p), 5.0 * (1 << 30));
  EXPECT_EQ(HsdpNoFeasiblePlanText(p),
            "no feasible plan: the least memory any split needs is an estimated 5.00 GiB per GPU "
            "(model states 4.00 GiB at each unit's most memory-saving fraction, plus 1.00 GiB of "
            "gathered weights, unit gradients and activations), over the limit of 4.50 GiB "
            "(memory_fraction x GPU memory)");
  // With room for both units at alpha = 1 it is feasible, and the cheapest.
  p.limit_bytes = 5.0 * (1 << 30);
  const HsdpSplit s = SolveHsdpSplit(p);
  ASSERT_TRUE(s.feasible);
  EXPECT_EQ(s.choice, (std::vector<int>{2, 2}));
}

// Two servers of 4 GPUs, NVSwitch at 100 GB/s, a 25 GB/s NIC per GPU. With one micro-batch,
// alpha's cost is 3 max(T_ring(4 GPUs, alpha P e), T_ring(2 servers, (1 - alpha) P e)) plus
// the shards' all-reduces.
planners::ClusterView TwoByFour() {
  planners::ClusterView c;
  for (int r = 0; r < 8; ++r) {
    planners::ClusterView::Device d;
    d.server = r / 4;
    d.nic = r;
    d.memory_bytes = 80e9;
    c.devices.push_back(d);
  }
  c.intra_Bps = {100e9, 100e9};
  c.nic_Bps.assign(8, 25e9);
  c.intra_latency_s = 0;
  c.inter_latency_s = 0;
  return c;
}

TEST(HsdpPlanner, CostsFollowTheRingModelAndBalanceTheLinks) {
  HsdpCostInput in;
  in.cluster = TwoByFour();
  in.intra = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  in.inter = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  in.unit_params = {1e9};
  in.levels = 8;
  in.limit_bytes = 1e12;
  const HsdpSplitProblem p = BuildHsdpSplitProblem(in);
  ASSERT_EQ(p.fractions.size(), 9u);
  const double full = 2e9;
  auto nvl = [&](double bytes) { return 3.0 / 4 * bytes / 100e9; };
  auto nic = [&](double bytes) { return 1.0 / 2 * bytes / 25e9; };
  for (size_t k = 0; k < p.fractions.size(); ++k) {
    const double a = p.fractions[k];
    const double expected = 3 * std::max(nvl(a * full), nic((1 - a) * full)) +
                            std::max(2 * nic(a * full / 4), 2 * nvl((1 - a) * full / 2));
    EXPECT_NEAR(p.seconds[0][k], expected, 1e-12) << a;
    EXPECT_NEAR(p.state_bytes[0][k], 16 * 1e9 * (a / 4 + (1 - a) / 2), 1) << a;
  }
  // Balance: 0.75 a / 100 = 0.5 (1 - a) / 25, a = 8/11 = 0.727: the planner takes 0.75, and
  // each fragment alone (a = 0 or 1) costs more.
  const HsdpSplit s = SolveHsdpSplit(p);
  ASSERT_TRUE(s.feasible);
  EXPECT_DOUBLE_EQ(p.fractions[s.choice[0]], 0.75);
  EXPECT_LT(s.predicted_s, p.seconds[0][0]);
  EXPECT_LT(s.predicted_s, p.seconds[0][8]);
  // Tight memory pushes it to the more-sharded side (A over 4 GPUs needs less than B over 2).
  in.limit_bytes = 16 * 1e9 * (1.0 / 4 * 0.875 + 0.125 / 2) + 1;
  const HsdpSplit tight = SolveHsdpSplit(BuildHsdpSplitProblem(in));
  ASSERT_TRUE(tight.feasible);
  EXPECT_GE(p.fractions[tight.choice[0]], 0.875);
}

}  // namespace
}  // namespace stratasim
