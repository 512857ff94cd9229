// Simulated collectives against their alpha-beta closed forms on uncontended topologies.
#include <gtest/gtest.h>

#include "core/task_graph.h"
#include "sim/executor.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

using testing::NvSwitchCluster;
using testing::NvSwitchOptions;

// One collective over ranks [0, n); returns the time from start to the last member's end.
double CollectiveTime(const ClusterSpec& c, CollectiveKind kind, int n, double bytes) {
  TaskGraph g(n);
  Task member;
  member.stream = g.Stream("comm");
  member.name = "c";
  Collective col;
  col.kind = kind;
  for (int r = 0; r < n; ++r) col.ranks.push_back(r);
  col.bytes = bytes;
  g.AddCollective(col, member);
  ExecutionTrace t = sim::Simulate(g, c, SimulationSpec{});
  double end = 0;
  for (const TraceRecord& r : t.records) end = std::max(end, r.end_s);
  return end;
}

struct RingCase {
  int gpus;
  double bytes;
};

class RingAllReduceInServer : public ::testing::TestWithParam<RingCase> {};

// 2(N-1)/N * S/B + 2(N-1) * alpha, alpha = one hop's route latency (GPU port up + down).
TEST_P(RingAllReduceInServer, MatchesAlphaBeta) {
  const auto [n, bytes] = GetParam();
  NvSwitchOptions o;
  o.gpus_per_server = n;
  o.nics = n;
  const double alpha = 2 * o.nvswitch_latency_s;
  const double expected = 2.0 * (n - 1) / n * bytes / o.nvswitch_Bps + 2.0 * (n - 1) * alpha;
  const double got = CollectiveTime(NvSwitchCluster(o), CollectiveKind::kAllReduce, n, bytes);
  EXPECT_NEAR(got, expected, 0.01 * expected) << "N=" << n << " S=" << bytes;
}

INSTANTIATE_TEST_SUITE_P(Sizes, RingAllReduceInServer,
                         ::testing::Values(RingCase{2, 1e9}, RingCase{4, 256e6},
                                           RingCase{8, 1e9}, RingCase{8, 1e6},
                                           RingCase{16, 64e6}));

// Across servers, one GPU each: every hop is NIC up, the switch, NIC down.
TEST(RingAllReduceAcrossServers, MatchesAlphaBeta) {
  for (int n : {2, 4, 8}) {
    NvSwitchOptions o;
    o.servers = n;
    o.gpus_per_server = 1;
    o.nics = 1;
    const double bytes = 512e6;
    const double alpha = 2 * o.nic_latency_s + o.switch_latency_s;
    const double expected = 2.0 * (n - 1) / n * bytes / o.nic_Bps + 2.0 * (n - 1) * alpha;
    const double got = CollectiveTime(NvSwitchCluster(o), CollectiveKind::kAllReduce, n, bytes);
    EXPECT_NEAR(got, expected, 0.01 * expected) << "N=" << n;
  }
}

// Reduce-scatter and all-gather are half a ring all-reduce: (N-1)/N * S/B + (N-1) * alpha.
TEST(RingHalfCollectives, MatchAlphaBeta) {
  NvSwitchOptions o;
  const int n = 8;
  const double bytes = 1e9, alpha = 2 * o.nvswitch_latency_s;
  const double expected = (n - 1.0) / n * bytes / o.nvswitch_Bps + (n - 1) * alpha;
  for (CollectiveKind k : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    const double got = CollectiveTime(NvSwitchCluster(o), k, n, bytes);
    EXPECT_NEAR(got, expected, 0.01 * expected) << ToString(k);
  }
}

// Pipelined chain broadcast of C chunks over N-1 hops: (C + N - 2) * (S/C/B + alpha).
TEST(ChainBroadcast, MatchesPipelineFormula) {
  NvSwitchOptions o;
  const int n = 8;
  const double bytes = 32 * 512.0 * 1024;  // 32 chunks of NCCL's 512 KiB step
  const double chunks = 32, alpha = 2 * o.nvswitch_latency_s;
  const double expected = (chunks + n - 2) * (bytes / chunks / o.nvswitch_Bps + alpha);
  const double got = CollectiveTime(NvSwitchCluster(o), CollectiveKind::kBroadcast, n, bytes);
  EXPECT_NEAR(got, expected, 0.01 * expected);
}

// busbw of a large all-reduce approaches the bottleneck link bandwidth (nccl-tests' factor).
TEST(RingAllReduceInServer, BusBandwidthApproachesLinkBandwidth) {
  NvSwitchOptions o;
  const int n = 8;
  const double bytes = 8e9;
  const double t = CollectiveTime(NvSwitchCluster(o), CollectiveKind::kAllReduce, n, bytes);
  const double busbw = bytes / t * 2.0 * (n - 1) / n;
  EXPECT_GT(busbw, 0.99 * o.nvswitch_Bps);
  EXPECT_LE(busbw, o.nvswitch_Bps);
}

}  // namespace
}  // namespace stratasim
