#include "core/stragglers.h"

#include <gtest/gtest.h>

#include <set>

namespace stratasim {
namespace {

StragglerSpec Fixed(std::vector<int> ranks, StragglerLevel level, double factor) {
  StragglerSpec s;
  s.ranks = std::move(ranks);
  s.level = level;
  s.factor = factor;
  return s;
}

TEST(Stragglers, FixedFactorsApplyToTheirLevelAndMultiply) {
  Stragglers st;
  st.entries.push_back(Fixed({3}, StragglerLevel::kCompute, 2));
  st.entries.push_back(Fixed({3, 4}, StragglerLevel::kLink, 4));
  st.entries.push_back(Fixed({4, 5}, StragglerLevel::kServer, 1.5));
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(3, 0, StragglerLevel::kCompute), 2);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(3, 7, StragglerLevel::kLink), 4);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(4, 0, StragglerLevel::kCompute), 1.5);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(4, 0, StragglerLevel::kLink), 6);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(0, 0, StragglerLevel::kCompute), 1);
  EXPECT_FALSE(st.HasPerIterationLinkFactor());
}

TEST(Stragglers, UniformDrawsAreSeededInRangeAndVaryPerIteration) {
  StragglerSpec s;
  s.ranks = {0, 1};
  s.draw = StragglerDraw::kUniform;
  s.min = 1.2;
  s.max = 3;
  std::set<double> seen;
  for (int it = 0; it < 50; ++it) {
    const double f = DrawFactor(s, 42, 0, 1, it);
    EXPECT_GE(f, 1.2);
    EXPECT_LE(f, 3);
    EXPECT_EQ(f, DrawFactor(s, 42, 0, 1, it));  // a pure function of its key
    seen.insert(f);
  }
  EXPECT_EQ(seen.size(), 50u);
  EXPECT_NE(DrawFactor(s, 42, 0, 1, 0), DrawFactor(s, 43, 0, 1, 0));  // the seed matters
  EXPECT_NE(DrawFactor(s, 42, 0, 0, 0), DrawFactor(s, 42, 0, 1, 0));  // so does the rank
}

TEST(Stragglers, LognormalDrawsHaveTheirMedianAndNeverSpeedUp) {
  StragglerSpec s;
  s.draw = StragglerDraw::kLognormal;
  s.median = 1.5;
  s.sigma = 0.5;
  int above = 0;
  const int n = 4000;
  for (int it = 0; it < n; ++it) {
    const double f = DrawFactor(s, 7, 0, 0, it);
    EXPECT_GE(f, 1);
    if (f > 1.5) ++above;
  }
  // Half the draws lie above the median: 2000 +- 4 sigma of a binomial(4000, 1/2) (~126).
  EXPECT_NEAR(above, n / 2, 130);
}

TEST(Stragglers, TraceFactorsApplyPerIterationAndDefaultToOne) {
  StragglerSpec s;
  s.ranks = {2};
  s.draw = StragglerDraw::kTrace;
  s.trace = ParseStragglerTrace("iteration,factor\n# warm-up\n0,1.5\n\n2, 3\n", "t.csv");
  Stragglers st;
  st.entries.push_back(s);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(2, 0, StragglerLevel::kCompute), 1.5);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(2, 1, StragglerLevel::kCompute), 1);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(2, 2, StragglerLevel::kCompute), 3);
  EXPECT_DOUBLE_EQ(st.SlowdownFactor(1, 2, StragglerLevel::kCompute), 1);
}

std::string TraceError(const std::string& text) {
  try {
    ParseStragglerTrace(text, "t.csv");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Stragglers, BadTraceLinesAreLocated) {
  EXPECT_EQ(TraceError("0,2\n1;2\n"),
            "t.csv:2:1: trace = \"1;2\": must be \"iteration,factor\" (two comma-separated "
            "numbers)");
  EXPECT_EQ(TraceError("0,2\n  x,2\n"),
            "t.csv:2:3: trace = \"  x,2\": iteration must be an integer in [0, 1000000)");
  EXPECT_EQ(TraceError("0,0.5\n"),
            "t.csv:1:3: trace = \"0,0.5\": factor must be a number in [1, 1000]");
  EXPECT_EQ(TraceError("0,2\n1,2\n0,3\n"),
            "t.csv:3:1: trace = \"0,3\": iteration 0 listed twice (first at line 1)");
  EXPECT_EQ(TraceError("# nothing\n"),
            "t.csv:1:1: trace: lists no iteration (lines \"iteration,factor\")");
}

TEST(Stragglers, DescribeListsEveryEntry) {
  Stragglers st;
  st.entries.push_back(Fixed({3}, StragglerLevel::kCompute, 2));
  StragglerSpec server = Fixed({8, 9}, StragglerLevel::kServer, 1.5);
  server.servers = {1};
  st.entries.push_back(server);
  EXPECT_EQ(st.Describe(), (std::vector<std::string>{"straggler: GPUs 3 compute x2",
                                                     "straggler: servers 1 server x1.5"}));
}

}  // namespace
}  // namespace stratasim
