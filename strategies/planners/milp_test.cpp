#include "strategies/planners/milp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.h"

namespace stratasim::milp {
namespace {

using ::testing::HasSubstr;

// A 0-1 knapsack, as a minimisation of the negated value: GLPK's optimum must equal the best
// of all 2^n subsets.
TEST(Milp, KnapsackMatchesBruteForce) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> weight(1, 20), value(1, 30);
  for (int instance = 0; instance < 20; ++instance) {
    const int n = 10;
    std::vector<int> w(n), v(n);
    for (int i = 0; i < n; ++i) w[i] = weight(rng), v[i] = value(rng);
    const int capacity = 40;
    Problem p("knapsack");
    std::vector<std::pair<int, double>> row;
    for (int i = 0; i < n; ++i) row.push_back({p.AddBinary("x" + std::to_string(i), -v[i]), w[i]});
    p.AddRow("capacity", row, -kInfinity, capacity);
    const Solution s = Solve(p);
    ASSERT_EQ(s.status, Status::kOptimal);

    int best = 0;
    for (int mask = 0; mask < (1 << n); ++mask) {
      int weight_sum = 0, value_sum = 0;
      for (int i = 0; i < n; ++i) {
        if (mask >> i & 1) weight_sum += w[i], value_sum += v[i];
      }
      if (weight_sum <= capacity) best = std::max(best, value_sum);
    }
    EXPECT_DOUBLE_EQ(s.objective, -best) << "instance " << instance;
    int chosen_weight = 0;
    for (int i = 0; i < n; ++i) chosen_weight += static_cast<int>(s.Integer(i)) * w[i];
    EXPECT_LE(chosen_weight, capacity);
  }
}

TEST(Milp, GeneralIntegersAndContinuousColumns) {
  // max 5x + 4y s.t. 6x + 4y <= 24, x + 2y <= 6, x, y >= 0: LP optimum (3, 1.5) = 21; with x, y
  // integer the optimum is 20 at (4, 0) (every integer point checked below).
  Problem p("textbook");
  const int x = p.AddVariable("x", 0, kInfinity, -5, true);
  const int y = p.AddVariable("y", 0, kInfinity, -4, true);
  p.AddRow("a", {{x, 6}, {y, 4}}, -kInfinity, 24);
  p.AddRow("b", {{x, 1}, {y, 2}}, -kInfinity, 6);
  const Solution s = Solve(p);
  ASSERT_EQ(s.status, Status::kOptimal);
  int best = 0;
  for (int i = 0; i <= 6; ++i) {
    for (int j = 0; j <= 6; ++j) {
      if (6 * i + 4 * j <= 24 && i + 2 * j <= 6) best = std::max(best, 5 * i + 4 * j);
    }
  }
  EXPECT_DOUBLE_EQ(s.objective, -best);
  EXPECT_EQ(5 * s.Integer(x) + 4 * s.Integer(y), best);

  Problem lp("relaxation");
  const int u = lp.AddContinuous("x", 0, kInfinity, -5);
  const int v = lp.AddContinuous("y", 0, kInfinity, -4);
  lp.AddRow("a", {{u, 6}, {v, 4}}, -kInfinity, 24);
  lp.AddRow("b", {{u, 1}, {v, 2}}, -kInfinity, 6);
  const Solution r = Solve(lp);
  ASSERT_EQ(r.status, Status::kOptimal);
  EXPECT_NEAR(r.objective, -21, 1e-9);
  EXPECT_NEAR(r.values[u], 3, 1e-9);
  EXPECT_NEAR(r.values[v], 1.5, 1e-9);
  EXPECT_THAT(r.solver, HasSubstr("GLPK"));
}

TEST(Milp, EqualityRowsPickOneOfEach) {
  // One-hot choices with a linearised "different choice" edge cost, the shape of the Oases
  // planner's problem: z >= a0 - b0 and z >= b0 - a0 cost 10 when the two choices differ.
  Problem p("one-hot");
  const int a0 = p.AddBinary("a0", 1), a1 = p.AddBinary("a1", 3);
  const int b0 = p.AddBinary("b0", 9), b1 = p.AddBinary("b1", 2);
  const int z = p.AddContinuous("z", 0, kInfinity, 10);
  p.AddRow("a", {{a0, 1}, {a1, 1}}, 1, 1);
  p.AddRow("b", {{b0, 1}, {b1, 1}}, 1, 1);
  p.AddRow("z1", {{z, 1}, {a0, -1}, {b0, 1}}, 0, kInfinity);
  p.AddRow("z2", {{z, 1}, {a0, 1}, {b0, -1}}, 0, kInfinity);
  const Solution s = Solve(p);
  ASSERT_EQ(s.status, Status::kOptimal);
  // (a0, b0) = 10, (a0, b1) = 13, (a1, b0) = 22, (a1, b1) = 5.
  EXPECT_DOUBLE_EQ(s.objective, 5);
  EXPECT_EQ(s.Integer(a1), 1);
  EXPECT_EQ(s.Integer(b1), 1);
}

TEST(Milp, InfeasibleAndUnboundedAreStatuses) {
  Problem infeasible("infeasible");
  const int x = infeasible.AddBinary("x", 1);
  infeasible.AddRow("too_much", {{x, 1}}, 2, kInfinity);
  const Solution a = Solve(infeasible);
  EXPECT_EQ(a.status, Status::kInfeasible);
  EXPECT_FALSE(a.has_values());
  EXPECT_STREQ(ToString(a.status), "infeasible");

  Problem unbounded("unbounded");
  unbounded.AddVariable("y", 0, kInfinity, -1, true);
  EXPECT_EQ(Solve(unbounded).status, Status::kUnbounded);
}

TEST(Milp, MalformedProblemsAreErrorsNotAborts) {
  const auto message = [](const Problem& p) {
    try {
      Solve(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Problem empty("empty");
  EXPECT_EQ(message(empty), "MILP problem \"empty\": has no variables");

  Problem twice("twice");
  const int x = twice.AddBinary("x", 1);
  twice.AddRow("r", {{x, 1}, {x, 2}}, 0, 1);
  EXPECT_EQ(message(twice), "MILP problem \"twice\": row \"r\" names variable \"x\" twice");

  Problem range("range");
  range.AddBinary("x", 1);
  range.AddRow("r", {{3, 1}}, 0, 1);
  EXPECT_EQ(message(range), "MILP problem \"range\": row \"r\" names variable 3 of 1");

  Problem bounds("bounds");
  bounds.AddVariable("x", 2, 1, 0, false);
  EXPECT_THAT(message(bounds),
              HasSubstr("variable \"x\" has bounds [2.000000, 1.000000]: need lower <= upper"));

  Problem nan("nan");
  const int y = nan.AddBinary("y", 1);
  nan.AddRow("r", {{y, std::nan("")}}, 0, 1);
  EXPECT_EQ(message(nan), "MILP problem \"nan\": row \"r\" has a non-finite coefficient");

  Problem cost("cost");
  cost.AddBinary("z", kInfinity);
  EXPECT_EQ(message(cost), "MILP problem \"cost\": variable \"z\" has a non-finite cost");
}

}  // namespace
}  // namespace stratasim::milp
