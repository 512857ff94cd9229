#include "sim/link_labels.h"

#include <gtest/gtest.h>

namespace stratasim::sim {
namespace {

// Every name sim/platform.cpp makes, both directions.
TEST(LinkLabel, NamesEachKindOfPlatformLink) {
  EXPECT_EQ(LinkLabel("s3nic1_up"), "server 3 NIC 1 → fabric");
  EXPECT_EQ(LinkLabel("s3nic1_down"), "fabric → server 3 NIC 1");
  EXPECT_EQ(LinkLabel("s3nic1_half"), "server 3 NIC 1 ↔ fabric");
  EXPECT_EQ(LinkLabel("s0g5_nvs_up"), "server 0 GPU 5 → NVSwitch");
  EXPECT_EQ(LinkLabel("s0g5_nvs_down"), "NVSwitch → server 0 GPU 5");
  EXPECT_EQ(LinkLabel("s1nvl0_3_up"), "server 1 NVLink GPU 0 → GPU 3");
  EXPECT_EQ(LinkLabel("s1nvl0_3_down"), "server 1 NVLink GPU 3 → GPU 0");
  EXPECT_EQ(LinkLabel("s1nvl0_3_half"), "server 1 NVLink GPU 0 ↔ GPU 3");
  EXPECT_EQ(LinkLabel("s2g7_pcie_up"), "server 2 GPU 7 → PCIe switch");
  EXPECT_EQ(LinkLabel("s2g7_pcie_down"), "PCIe switch → server 2 GPU 7");
  EXPECT_EQ(LinkLabel("s2g7_host_up"), "server 2 GPU 7 → host CPU");
  EXPECT_EQ(LinkLabel("s2g7_host_down"), "host CPU → server 2 GPU 7");
  EXPECT_EQ(LinkLabel("s4psw1_uplink_up"), "server 4 PCIe switch 1 → CPU");
  EXPECT_EQ(LinkLabel("s4psw1_uplink_down"), "CPU → server 4 PCIe switch 1");
  EXPECT_EQ(LinkLabel("s4socket0to1"), "server 4 CPU socket 0 → socket 1");
  EXPECT_EQ(LinkLabel("leaf2_uplink_up"), "leaf 2 → spine");
  EXPECT_EQ(LinkLabel("leaf2_uplink_down"), "spine → leaf 2");
  EXPECT_EQ(LinkLabel("leaf0_rail3_uplink_up"), "leaf 0 rail 3 → spine");
}

TEST(LinkLabel, AnUnknownNameIsItsOwnLabel) {
  for (const char* name : {"__loopback__", "s", "s3", "s3nic_up", "s3x_up", "leaf_uplink_up",
                           "leaf1_uplink", "s1nvl0_up", "s0g1_nvs_sideways", "sock"}) {
    EXPECT_EQ(LinkLabel(name), name);
  }
}

}  // namespace
}  // namespace stratasim::sim
