#include "strategies/planners/oases_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "core/error.h"

namespace stratasim::planners {
namespace {

using ::testing::HasSubstr;

// A profile of n sub-layers over `degrees`, in the shape Oases' trade-off has: a larger degree
// computes a sub-layer a little faster per GPU (more samples per group, 1/t of the work each),
// communicates more, holds 1/t of the states; figures drawn from `seed`.
OasesProfile RandomProfile(int n, const std::vector<int>& degrees, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  OasesProfile p;
  p.degrees = degrees;
  const int k = static_cast<int>(degrees.size());
  for (int i = 0; i < n; ++i) {
    p.names.push_back("layer" + std::to_string(i / 2) + (i % 2 == 0 ? ".attn" : ".mlp"));
    std::vector<OasesCost>& row = p.costs.emplace_back();
    for (int a = 0; a < k; ++a) {
      const double t = degrees[a];
      OasesCost c;
      c.forward_s = 1e-3 * u(rng) / std::sqrt(t);
      c.backward_s = 2 * c.forward_s * u(rng);
      c.recompute_s = c.forward_s;
      c.forward_comm_s = t == 1 ? 0 : 0.6e-3 * u(rng) * std::log2(t);
      c.backward_comm_s = t == 1 ? 0 : 0.6e-3 * u(rng) * std::log2(t);
      c.state_bytes = 8e9 * u(rng) / t;
      c.kept_bytes = 1e9 * u(rng);
      c.working_bytes = 3e9 * u(rng) / t;
      row.push_back(c);
    }
  }
  for (int i = 0; i + 1 < n; ++i) {
    std::vector<std::vector<double>>& r = p.reshard_s.emplace_back(k, std::vector<double>(k, 0));
    for (int a = 0; a < k; ++a) {
      for (int b = a + 1; b < k; ++b) r[a][b] = r[b][a] = 0.4e-3 * u(rng);
    }
  }
  return p;
}

// Every assignment of a degree index per sub-layer.
std::vector<std::vector<int>> AllChoices(int n, int k) {
  std::vector<std::vector<int>> all;
  std::vector<int> c(n, 0);
  while (true) {
    all.push_back(c);
    int i = 0;
    while (i < n && ++c[i] == k) c[i++] = 0;
    if (i == n) return all;
  }
}

struct Best {
  double seconds = std::numeric_limits<double>::infinity();
  std::vector<int> choice;
};

// The fastest assignment within the limit; with `required` >= 0, among those that give some
// sub-layer that degree index.
Best BruteForce(const OasesProfile& p, double limit_bytes, int required = -1) {
  Best best;
  for (const std::vector<int>& c : AllChoices(p.SubLayers(), p.Degrees())) {
    if (OasesMemoryBytes(p, c) > limit_bytes) continue;
    if (required >= 0 && std::find(c.begin(), c.end(), required) == c.end()) continue;
    const double t = OasesSeconds(p, c);
    if (t < best.seconds) best = Best{t, c};
  }
  return best;
}

TEST(OasesPlanner, ObjectiveIsTheTwoSubBatchAlternationOfTheHeader) {
  // Two sub-layers at one degree, figures chosen so that every max() picks a different side.
  OasesProfile p;
  p.degrees = {2};
  p.names = {"layer0.attn", "layer0.mlp"};
  OasesCost a, m;
  a.forward_s = 1, a.backward_s = 2, a.recompute_s = 1, a.forward_comm_s = 3, a.backward_comm_s = 1;
  m.forward_s = 2, m.backward_s = 4, m.recompute_s = 2, m.forward_comm_s = 1, m.backward_comm_s = 7;
  p.costs = {{a}, {m}};
  p.reshard_s = {{{0}}};
  // Forward: c0 + max(c0, m0) + max(c1, m0) + max(c1, m1) + m1 = 1 + 3 + 3 + 2 + 1 = 10.
  // Backward: r1 + max(r1, n1) + max(r0, n1) + max(r0, n0) + n0 = 6 + 7 + 7 + 3 + 1 = 24.
  EXPECT_DOUBLE_EQ(OasesSeconds(p, {0, 0}), 34);
  const OasesPlan plan = PlanOases(p, 1e9);
  EXPECT_DOUBLE_EQ(plan.objective_s, 34);
  EXPECT_EQ(plan.status, milp::Status::kOptimal);
}

TEST(OasesPlanner, MemoryIsStatesAndKeptActivationsPlusTheLargestWorkingSet) {
  OasesProfile p = RandomProfile(3, {1, 2}, 7);
  const std::vector<int> c = {0, 1, 0};
  double expected = 0, working = 0;
  for (int i = 0; i < 3; ++i) {
    expected += p.costs[i][c[i]].state_bytes + p.costs[i][c[i]].kept_bytes;
    working = std::max(working, p.costs[i][c[i]].working_bytes);
  }
  EXPECT_DOUBLE_EQ(OasesMemoryBytes(p, c), expected + working);
}

TEST(OasesPlanner, MilpEqualsBruteForceWithoutAMemoryLimit) {
  for (int n = 2; n <= 4; ++n) {
    for (const std::vector<int>& degrees : {std::vector<int>{1, 2}, std::vector<int>{1, 2, 4}}) {
      for (unsigned seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(degrees.size()) +
                     " seed=" + std::to_string(seed));
        const OasesProfile p = RandomProfile(n, degrees, seed * 100 + n);
        const Best best = BruteForce(p, 1e30);
        const OasesPlan plan = PlanOases(p, 1e30);
        EXPECT_EQ(plan.status, milp::Status::kOptimal);
        EXPECT_NEAR(plan.objective_s, best.seconds, 1e-9 * best.seconds);
        EXPECT_NEAR(OasesSeconds(p, plan.choice), best.seconds, 1e-9 * best.seconds);
        ASSERT_EQ(plan.degrees.size(), static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) EXPECT_EQ(plan.degrees[i], degrees[plan.choice[i]]);
      }
    }
  }
}

TEST(OasesPlanner, MilpEqualsBruteForceUnderABindingMemoryLimit) {
  int binding = 0;
  for (int n = 2; n <= 4; ++n) {
    for (const std::vector<int>& degrees : {std::vector<int>{1, 2}, std::vector<int>{1, 2, 4}}) {
      for (unsigned seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(degrees.size()) +
                     " seed=" + std::to_string(seed));
        const OasesProfile p = RandomProfile(n, degrees, seed * 100 + n);
        // A limit between the least memory any assignment needs and what the unconstrained
        // optimum needs, so that it cuts the optimum off.
        const Best free = BruteForce(p, 1e30);
        double least = 1e30;
        for (const std::vector<int>& c : AllChoices(n, p.Degrees())) {
          least = std::min(least, OasesMemoryBytes(p, c));
        }
        const double needed = OasesMemoryBytes(p, free.choice);
        if (needed <= least) continue;  // the fastest plan is also the leanest: nothing to bind
        const double limit = (least + needed) / 2;
        const Best best = BruteForce(p, limit);
        ASSERT_FALSE(best.choice.empty());
        EXPECT_GT(best.seconds, free.seconds);
        const OasesPlan plan = PlanOases(p, limit);
        EXPECT_EQ(plan.status, milp::Status::kOptimal);
        EXPECT_NEAR(plan.objective_s, best.seconds, 1e-9 * best.seconds);
        EXPECT_LE(plan.memory_bytes, limit);
        EXPECT_DOUBLE_EQ(plan.memory_bytes, OasesMemoryBytes(p, plan.choice));
        ++binding;
      }
    }
  }
  EXPECT_GE(binding, 10);  // the generator's trade-off makes most instances bind
}

TEST(OasesPlanner, MilpEqualsBruteForceWithARequiredDegree) {
  for (int n = 2; n <= 4; ++n) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const OasesProfile p = RandomProfile(n, {1, 2, 4}, seed * 100 + n);
      const Best best = BruteForce(p, 1e30, 2);
      const OasesPlan plan = PlanOases(p, 1e30, 4);
      EXPECT_NEAR(plan.objective_s, best.seconds, 1e-9 * best.seconds);
      EXPECT_NE(std::find(plan.degrees.begin(), plan.degrees.end(), 4), plan.degrees.end());
    }
  }
  EXPECT_THROW(
      {
        try {
          PlanOases(RandomProfile(2, {1, 2}, 1), 1e30, 4);
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "oases planner: the required degree 4 is not a candidate");
          throw;
        }
      },
      Error);
}

TEST(OasesPlanner, NeighboursWhoseDegreesDoNotDivideAreNeverAdjacent) {
  // 2 and 3: neither divides the other, so no re-shard group exists between them.
  EXPECT_TRUE(OasesCompatible(2, 4));
  EXPECT_TRUE(OasesCompatible(6, 3));
  EXPECT_FALSE(OasesCompatible(2, 3));
  for (int n = 2; n <= 4; ++n) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      OasesProfile p = RandomProfile(n, {2, 3}, seed * 10 + n);
      // Make degree 3 the faster for odd sub-layers and 2 for even ones, so that alternating
      // would win if it were allowed.
      for (int i = 0; i < n; ++i) p.costs[i][i % 2 == 0 ? 1 : 0].forward_s *= 10;
      const Best best = BruteForce(p, 1e30);
      const OasesPlan plan = PlanOases(p, 1e30);
      EXPECT_NEAR(plan.objective_s, best.seconds, 1e-9 * best.seconds);
      for (int i = 0; i + 1 < n; ++i) EXPECT_EQ(plan.degrees[i], plan.degrees[i + 1]);
    }
  }
}

TEST(OasesPlanner, ReshardCostKeepsNeighboursOnOneDegree) {
  // Sub-layer 1 alone would prefer degree 2; the re-shard on both of its edges outweighs that.
  OasesProfile p;
  p.degrees = {1, 2};
  p.names = {"layer0.attn", "layer0.mlp", "layer1.attn"};
  OasesCost one, two;
  one.forward_s = 1, one.backward_s = 2;
  two.forward_s = 0.9, two.backward_s = 1.8, two.forward_comm_s = 0.5, two.backward_comm_s = 0.5;
  OasesCost two_slow = two;
  two_slow.forward_s = two_slow.backward_s = 5;  // sub-layers 0 and 2 are slow at degree 2
  p.costs = {{one, two_slow}, {one, two}, {one, two_slow}};
  p.reshard_s = {{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}};
  EXPECT_EQ(PlanOases(p, 1e30).degrees, (std::vector<int>{1, 2, 1}));
  p.reshard_s = {{{0, 1}, {1, 0}}, {{0, 1}, {1, 0}}};
  EXPECT_EQ(PlanOases(p, 1e30).degrees, (std::vector<int>{1, 1, 1}));
}

TEST(OasesPlanner, MemoryInfeasibleInstanceSaysNoFeasiblePlanAndTheMemoryNeeded) {
  OasesProfile p;
  p.degrees = {1, 2};
  p.names = {"layer0.attn", "layer0.mlp"};
  OasesCost one, two;
  one.forward_s = two.forward_s = 1;
  one.state_bytes = 4.0 * (1 << 30), two.state_bytes = 2.0 * (1 << 30);
  two.working_bytes = 0.5 * (1 << 30);
  p.costs = {{one, two}, {one, two}};
  p.reshard_s = {{{0, 0}, {0, 0}}};
  // Least: both at degree 2, 2 + 2 + 0.5 GiB.
  try {
    PlanOases(p, 3.0 * (1 << 30));
    FAIL() << "no error";
  } catch (const OasesNoPlan& e) {
    EXPECT_DOUBLE_EQ(e.needed_bytes, 4.5 * (1 << 30));
    EXPECT_DOUBLE_EQ(e.limit_bytes, 3.0 * (1 << 30));
    EXPECT_EQ(std::string(e.what()),
              "oases planner: no feasible plan: the least memory any TP degree assignment of 2 "
              "sub-layers needs is 4.50 GiB per GPU (layer0.attn-layer0.mlp t=2), above the "
              "limit of 3.00 GiB");
  }
}

TEST(OasesPlanner, BadProfilesAreNamed) {
  OasesProfile p = RandomProfile(2, {1, 2}, 3);
  auto error = [](const OasesProfile& q) {
    try {
      CheckOasesProfile(q);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(p), "no error");
  OasesProfile q = p;
  q.degrees = {2, 1};
  EXPECT_EQ(error(q), "oases planner: the candidate degrees must be >= 1 and increasing");
  q = p;
  q.costs[1].pop_back();
  EXPECT_EQ(error(q), "oases planner: layer0.mlp has 1 costs for 2 degrees");
  q = p;
  q.costs[0][1].forward_comm_s = -1;
  EXPECT_THAT(error(q), HasSubstr("layer0.attn at t=2: forward_comm_s = -1"));
  q = p;
  q.reshard_s.clear();
  EXPECT_EQ(error(q), "oases planner: 0 re-shard tables for 1 edges");
  q = p;
  q.reshard_s[0][0].pop_back();
  EXPECT_EQ(error(q), "oases planner: the re-shard table after layer0.attn is not 2 x 2");
  EXPECT_THAT(error(OasesProfile{}), HasSubstr("no sub-layer"));
  try {
    PlanOases(p, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the memory limit must be > 0"));
  }
}

TEST(OasesPlanner, DegreesTextGroupsRuns) {
  OasesProfile p = RandomProfile(4, {1, 2}, 1);
  EXPECT_EQ(OasesDegreesText(p.names, {2, 2, 1, 2}),
            "layer0.attn-layer0.mlp t=2, layer1.attn t=1, layer1.mlp t=2");
}

}  // namespace
}  // namespace stratasim::planners
