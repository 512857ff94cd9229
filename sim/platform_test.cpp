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

namespace stratasim::sim {
namespace {

namespace sg4 = simgrid::s4u;

// 2 leaves x 1 server x 2 GPUs, NVSwitch, one NIC per GPU.
ClusterSpec TwoLeaves() {
  ClusterSpec c;
  ServerGroup g;
  g.name = "dgx";
  g.count = 2;
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = 2;
  g.nvswitch = NvSwitchSpec{LinkSpec{300e9, 1e-6}};
  g.nics = NicSpec{2, LinkSpec{25e9, 2e-6}};
  c.groups.push_back(g);
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.servers_per_leaf = 1;
  c.network.oversubscription = 1;
  c.network.switch_latency_s = 1e-6;
  c.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
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

// Routes hold only the links that carry the traffic: no per-endpoint dummy link, which would
// tie every flow in and out of a GPU into one max-min system (docs/collectives.md, "Speed").
// SimGrid allows one Engine per process, so the platform is built in a child.
TEST(Platform, RoutesHoldOnlyRealLinks) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    xbt_log_control_set("root.thres:critical");
    int argc = 1;
    char arg0[] = "platform_test";
    char* argv[] = {arg0, nullptr};
    sg4::Engine engine(&argc, argv);
    const Platform p = BuildPlatform(TwoLeaves());
    const bool ok = RouteNames(p.gpus[0], p.gpus[1]) == "s0g0_nvs_up s0g1_nvs_down" &&
                    RouteNames(p.gpus[0], p.gpus[3]) ==
                        "s0nic0_up leaf0_uplink_up leaf1_uplink_down s1nic1_down" &&
                    RouteNames(p.host_cpus[0], p.gpus[0]) == "s0g0_host_down";
    if (!ok) {
      std::fprintf(stderr, "routes: [%s] [%s] [%s]\n", RouteNames(p.gpus[0], p.gpus[1]).c_str(),
                   RouteNames(p.gpus[0], p.gpus[3]).c_str(),
                   RouteNames(p.host_cpus[0], p.gpus[0]).c_str());
    }
    std::_Exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a route holds an unexpected link (listed above)";
}

}  // namespace
}  // namespace stratasim::sim
