#include "strategies/planners/link_costs.h"

#include <gtest/gtest.h>

namespace stratasim::planners {
namespace {

// Two servers of four GPUs, 100 B/s inside a server, one 10 B/s NIC per server, no latency.
ClusterView TwoServers() {
  ClusterView c;
  for (int r = 0; r < 8; ++r) c.devices.push_back({0, r / 4, r / 4, -1, 1e9, 1});
  c.intra_Bps = {100, 100};
  c.nic_Bps = {10, 10};
  return c;
}

TEST(LinkCosts, TransfersInsideAServerUseItsLinksAndAcrossShareTheNic) {
  const ClusterView c = TwoServers();
  EXPECT_DOUBLE_EQ(TransferSeconds(c, {{0, 1}}, 100), 1);
  EXPECT_DOUBLE_EQ(TransferSeconds(c, {{0, 4}}, 100), 10);
  // Two flows leave server 0 through its one NIC: each gets half.
  EXPECT_DOUBLE_EQ(TransferSeconds(c, {{0, 4}, {1, 5}}, 100), 20);
  EXPECT_DOUBLE_EQ(TransferSeconds(c, {}, 100), 0);
}

TEST(LinkCosts, RingAllReduceOverTheSlowestLink) {
  ClusterView c = TwoServers();
  // 2 (n - 1) / n x 100 B at 100 B/s inside server 0.
  EXPECT_DOUBLE_EQ(AllReduceSeconds(c, {{0, 1, 2, 3}}, 100), 1.5);
  // Across the servers: 4 members behind each NIC share its 10 B/s.
  EXPECT_DOUBLE_EQ(AllReduceBps(c, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}), 10.0 / 4);
  EXPECT_DOUBLE_EQ(AllReduceSeconds(c, {{0, 4}}, 100), 10);
  c.inter_latency_s = 1;
  EXPECT_DOUBLE_EQ(AllReduceSeconds(c, {{0, 4}}, 100), 12);
  EXPECT_DOUBLE_EQ(AllReduceSeconds(c, {{0}}, 100), 0);
}

}  // namespace
}  // namespace stratasim::planners
