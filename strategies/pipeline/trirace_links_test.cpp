#include "strategies/pipeline/trirace_links.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

// Two servers of `gpus` GPUs with one NIC each; PCIe inside (no NVLink) when `pcie`, else
// NVSwitch.
ClusterSpec TwoServers(int gpus, bool pcie) {
  ClusterSpec c;
  ServerGroup g;
  g.count = 2;
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = gpus;
  if (pcie) {
    g.pcie = PcieSpec{};
  } else {
    g.nvswitch = NvSwitchSpec{};
  }
  c.groups.push_back(g);
  return c;
}

TEST(TriRaceLinks, CrossServerTransfersUseBothNicsAndPcieLinks) {
  const ClusterSpec nvs = TwoServers(2, false);
  EXPECT_EQ(LinksOfTransfer(nvs, 0, 2), (std::set<std::string>{"nic 0.0 out", "nic 1.0 in"}));
  EXPECT_TRUE(LinksOfTransfer(nvs, 0, 1).empty());  // a non-blocking switch shares nothing
  const ClusterSpec pcie = TwoServers(2, true);
  EXPECT_EQ(LinksOfTransfer(pcie, 1, 2),
            (std::set<std::string>{"nic 0.0 out", "nic 1.0 in", "pcie 1 out", "pcie 2 in"}));
  EXPECT_EQ(LinksOfTransfer(pcie, 0, 1), (std::set<std::string>{"pcie 0 out", "pcie 1 in"}));
}

TEST(TriRaceLinks, RingAndAllToAllTransfersOfARank) {
  EXPECT_EQ(RingTransfers({0, 2, 4}, 2), (std::vector<std::pair<int, int>>{{0, 2}, {2, 4}}));
  EXPECT_EQ(RingTransfers({0, 2, 4}).size(), 3u);
  EXPECT_EQ(AllToAllTransfers({0, 2, 4}, 4).size(), 4u);
  EXPECT_TRUE(RingTransfers({3}).empty());
}

TEST(TriRaceLinks, SharedLinkNamesTheFirstCommonLink) {
  const ClusterSpec nvs = TwoServers(2, false);
  // Rank 0 sends activations to rank 2 on the other server and all-reduces with rank 3 there:
  // both leave through server 0's NIC.
  const auto p2p = LinksOfTransfers(nvs, {{0, 2}, {2, 0}});
  // (both directions: the first in name order is named)
  EXPECT_EQ(SharedLink(LinksOfTransfers(nvs, RingTransfers({0, 3}, 0)), p2p), "nic 0.0 in");
  // Its stage neighbour on the same server (NVSwitch): nothing shared.
  EXPECT_EQ(SharedLink(LinksOfTransfers(nvs, RingTransfers({0, 3}, 0)),
                       LinksOfTransfers(nvs, {{0, 1}, {1, 0}})),
            "");
}

}  // namespace
}  // namespace stratasim
