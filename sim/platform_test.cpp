#include "sim/platform.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "core/hardware.h"
#include "tests/test_clusters.h"

namespace stratasim::sim {
namespace {

namespace sg4 = simgrid::s4u;

// Leaf-spine of `servers` servers of 2 GPUs (NVSwitch, one NIC per GPU), `per_leaf` per leaf.
ClusterSpec LeafSpine(int servers, int per_leaf, double oversubscription) {
  ClusterSpec c = testing::NvSwitchCluster(testing::NvSwitchLayout(servers, 2, 2));
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.servers_per_leaf = per_leaf;
  c.network.oversubscription = oversubscription;
  return c;
}

std::string RouteNames(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  std::string names;
  for (const sg4::Link* l : links) names += (names.empty() ? "" : " ") + l->get_name();
  return names;
}

struct ExpectedRoute {
  int from, to;  // GPU ranks; -1 - r is the CPU socket of rank r
  std::string links;
};

// Builds `cluster` in a child process (SimGrid allows one Engine per process) and checks each
// route's links, in order; prints the routes that differ.
void ExpectRoutes(const ClusterSpec& cluster, const std::vector<ExpectedRoute>& routes) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    xbt_log_control_set("root.thres:critical");
    int argc = 1;
    char arg0[] = "platform_test";
    char* argv[] = {arg0, nullptr};
    sg4::Engine engine(&argc, argv);
    const Platform p = BuildPlatform(cluster);
    auto host = [&p](int id) { return id >= 0 ? p.gpus[id] : p.host_cpus[-1 - id]; };
    bool ok = true;
    for (const ExpectedRoute& r : routes) {
      const std::string got = RouteNames(host(r.from), host(r.to));
      if (got == r.links) continue;
      ok = false;
      std::fprintf(stderr, "route %d -> %d: [%s], expected [%s]\n", r.from, r.to, got.c_str(),
                   r.links.c_str());
    }
    std::_Exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a route differs (listed above)";
}

// Routes hold only the links that carry the traffic: no per-endpoint dummy link, which would
// tie every flow in and out of a GPU into one max-min system (docs/collectives.md, "Speed").
TEST(Platform, RoutesHoldOnlyRealLinks) {
  ExpectRoutes(LeafSpine(2, 1, 1),
               {{0, 1, "s0g0_nvs_up s0g1_nvs_down"},
                {0, 3, "s0nic0_up leaf0_rail0_uplink_up leaf1_rail1_uplink_down s1nic1_down"},
                {-1, 0, "s0g0_host_down"}});
}

// Not oversubscribed, a leaf's uplink cannot be a bottleneck, so each rail of the leaf has its
// own (same latency, same redundant capacity) and flows of different rails do not share one;
// between rails of one leaf, traffic crosses the leaf switch only, as before.
TEST(Platform, UnoversubscribedLeavesHaveAnUplinkPerRail) {
  ExpectRoutes(LeafSpine(4, 2, 1),
               {{0, 3, "s0nic0_up s1nic1_down"},  // same leaf, rails 0 -> 1
                {3, 0, "s1nic1_up s0nic0_down"},
                {0, 2, "s0nic0_up s1nic0_down"},  // same leaf, same rail
                {1, 6, "s0nic1_up leaf0_rail1_uplink_up leaf1_rail0_uplink_down s3nic0_down"}});
}

// Oversubscribed, the leaf's one uplink is a real bottleneck shared by all its NICs.
TEST(Platform, OversubscribedLeavesShareOneUplink) {
  ExpectRoutes(LeafSpine(4, 2, 2),
               {{0, 3, "s0nic0_up s1nic1_down"},
                {1, 6, "s0nic1_up leaf0_uplink_up leaf1_uplink_down s3nic0_down"}});
}

}  // namespace
}  // namespace stratasim::sim
