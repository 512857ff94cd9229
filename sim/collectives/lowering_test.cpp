#include "sim/collectives/lowering.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "core/collective_names.h"
#include "core/error.h"
#include "sim/collectives/flow_builder.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::MakeCollective;

Collective Any(CollectiveKind k, int n, double bytes) {
  Collective c = MakeCollective(k, Iota(n), bytes);
  c.root = 3 % n;
  if (k == CollectiveKind::kAllToAllV) {
    for (int i = 0; i < n * n; ++i) c.matrix.push_back(i % n == i / n ? 0 : 1000.0 * (i % 3));
  }
  return c;
}

// Bytes per directed edge.
std::map<std::pair<int, int>, double> Edges(const FlowProgram& p) {
  std::map<std::pair<int, int>, double> e;
  for (const Flow& f : p.flows) e[{f.src, f.dst}] += f.bytes;
  return e;
}

// Every kind and algorithm lowers, touches every member, keeps dependencies acyclic (they
// point backwards), and `stream` moves the same bytes per edge in no more flows.
TEST(Lowering, EveryAlgorithmOfEveryKindAtBothFidelities) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(3, 4, 2), Iota(12));
  for (CollectiveKind k : kAllCollectiveKinds) {
    for (const std::string& a : CollectiveAlgorithms(k)) {
      if (a == "auto") continue;
      const Collective c = Any(k, 12, 12 * 3 * kPipelineChunkBytes);
      const CollectiveChoice choice{a, "simple", 2};
      const FlowProgram step = LowerCollective(c, v, choice, Fidelity::kStep);
      const FlowProgram stream = LowerCollective(c, v, choice, Fidelity::kStream);
      SCOPED_TRACE(std::string(ToString(k)) + " " + a);
      EXPECT_EQ(step.algorithm, a);
      ASSERT_FALSE(step.flows.empty());
      std::vector<int> touched(12, 0);
      for (size_t f = 0; f < step.flows.size(); ++f) {
        const Flow& flow = step.flows[f];
        EXPECT_NE(flow.src, flow.dst);
        touched[flow.src] = touched[flow.dst] = 1;
        for (int d : flow.deps) EXPECT_LT(d, static_cast<int>(f));
      }
      if (k != CollectiveKind::kAllToAllV) {
        for (int m = 0; m < 12; ++m) EXPECT_TRUE(touched[m]) << "member " << m;
      }
      EXPECT_LE(stream.flows.size(), step.flows.size());
      const auto a_edges = Edges(step), b_edges = Edges(stream);
      ASSERT_EQ(a_edges.size(), b_edges.size());
      for (const auto& [edge, bytes] : a_edges) EXPECT_NEAR(b_edges.at(edge), bytes, 1e-6);
    }
  }
}

TEST(Lowering, EmptyForOneMemberOrZeroBytes) {
  const FlowProgram one =
      LowerCollective(MakeCollective(CollectiveKind::kAllReduce, {0}, 100), testing::FlatView(1),
                      {"ring", "simple", 1}, Fidelity::kStep);
  EXPECT_TRUE(one.flows.empty());
  EXPECT_EQ(one.algorithm, "ring");
  const FlowProgram zero =
      LowerCollective(MakeCollective(CollectiveKind::kAllReduce, Iota(4), 0), testing::FlatView(4),
                      {"ring", "simple", 1}, Fidelity::kStep);
  EXPECT_TRUE(zero.flows.empty());
}

void ExpectError(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    FAIL() << "expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(Lowering, BadChoicesAreNamed) {
  const GroupView v = testing::FlatView(4);
  const Collective ar = MakeCollective(CollectiveKind::kAllReduce, Iota(4), 100);
  ExpectError(
      [&] {
        LowerCollective(ar, v, {"pairwise", "simple", 1}, Fidelity::kStep);
      },
      "collective all_reduce has no algorithm 'pairwise' (known: ring, tree, "
      "recursive_halving_doubling, hierarchical, direct)");
  ExpectError(
      [&] {
        LowerCollective(ar, v, {"ring", "ll256", 1}, Fidelity::kStep);
      },
      "unknown collective protocol 'll256' (known: ll, ll128, simple)");
  ExpectError(
      [&] {
        LowerCollective(ar, v, {"ring", "simple", 0}, Fidelity::kStep);
      },
      "collective channels must be 1 to 16, got 0");
  ExpectError(
      [&] {
        LowerCollective(ar, v, {"ring", "simple", 1}, Fidelity::kAnalytic);
      },
      "analytic fidelity has no flows: use PredictCollectiveSeconds");
  Collective b = MakeCollective(CollectiveKind::kBroadcast, Iota(4), 100);
  b.root = 7;
  ExpectError(
      [&] {
        LowerCollective(b, v, {"ring", "simple", 1}, Fidelity::kStep);
      },
      "broadcast root rank 7 is not a member of the collective");
  ExpectError(
      [&] {
        LowerCollective(ar, testing::FlatView(3), {"ring", "simple", 1}, Fidelity::kStep);
      },
      "group view of 3 members for a collective of 4");
}

}  // namespace
}  // namespace stratasim::sim
