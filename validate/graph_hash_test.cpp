#include "validate/graph_hash.h"

#include <gtest/gtest.h>

namespace stratasim::validate {
namespace {

// Two ranks: a GEMM each, then an all-reduce of `bytes`, then a transfer 0 -> 1.
TaskGraph Graph(double bytes = 1e6, double flops = 1e9) {
  TaskGraph g(2);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  std::vector<TaskId> gemm;
  for (int r = 0; r < 2; ++r) {
    Task t;
    t.rank = r;
    t.stream = compute;
    t.op = OpKind::kGemm;
    t.flops = flops;
    t.name = "gemm";
    gemm.push_back(g.Add(t));
  }
  Collective c;
  c.ranks = {0, 1};
  c.bytes = bytes;
  Task m;
  m.stream = comm;
  m.name = "ar";
  const auto ar = g.AddCollective(c, m);
  g.AddDep(ar[0], gemm[0]);
  g.AddDep(ar[1], gemm[1]);
  Task send, recv;
  send.stream = recv.stream = comm;
  send.name = recv.name = "p2p";
  g.AddTransfer(0, 1, 4096, send, recv);
  return g;
}

TEST(GraphHash, SameGraphSameHashAcrossBuilds) {
  EXPECT_EQ(GraphHash(Graph()), GraphHash(Graph()));
  // A copy hashes alike: the hash reads the graph's contents, never addresses.
  const TaskGraph g = Graph();
  const TaskGraph copy = g;
  EXPECT_EQ(GraphHash(g), GraphHash(copy));
  EXPECT_EQ(GraphHashHex(GraphHash(g)).size(), 16u);
}

TEST(GraphHash, EveryFieldAnExecutorActsOnChangesIt) {
  const std::uint64_t base = GraphHash(Graph());
  EXPECT_NE(base, GraphHash(Graph(2e6)));       // collective bytes
  EXPECT_NE(base, GraphHash(Graph(1e6, 2e9)));  // FLOPs
  TaskGraph dep = Graph();
  dep.AddDep(1, 0);  // one more dependency
  EXPECT_NE(base, GraphHash(dep));
  TaskGraph algo = Graph();
  algo.SetAlgorithm(0, "tree");
  EXPECT_NE(base, GraphHash(algo));
  TaskGraph more = Graph();
  Task extra;
  extra.rank = 1;
  extra.name = "extra";
  more.Add(extra);
  EXPECT_NE(base, GraphHash(more));
  TaskGraph priority = Graph();
  priority.SetStreamPriority(1, 5);
  EXPECT_NE(base, GraphHash(priority));
}

TEST(GraphHash, KnownValueOfTheEmptyGraph) {
  // FNV-1a is fixed by its reference: the empty graph hashes its four zero counts (ranks,
  // streams, tasks, collectives) and two empty lists, 6 x 8 zero bytes. Computed by hand:
  // a change of the field order or encoding changes this value and must be deliberate.
  std::uint64_t h = 14695981039346656037ull;
  for (int i = 0; i < 6 * 8; ++i) h = (h ^ 0u) * 1099511628211ull;
  EXPECT_EQ(GraphHash(TaskGraph(0)), h);
}

}  // namespace
}  // namespace stratasim::validate
