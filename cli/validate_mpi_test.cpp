// The cluster a multi-process validate run is simulated on (cli/validate_mpi.h,
// ClusterOfProcesses): one server per host when the processes are spread evenly in consecutive
// ranks, joined by the scenario's NICs and network; else one server, with the reason.
#include "cli/validate_mpi.h"

#include <gtest/gtest.h>

namespace stratasim {
namespace {

ClusterSpec OneServer() {
  ClusterSpec c;
  c.groups.emplace_back();
  c.groups[0].gpu = "host-cpu";
  c.groups[0].nics.link.bandwidth_Bps = 1;  // the backend's own: never used between servers
  return c;
}

ClusterSpec Scenario(int nics) {
  ClusterSpec c;
  c.groups.emplace_back();
  c.groups[0].nics.count = nics;
  c.groups[0].nics.link.bandwidth_Bps = 25e9;
  c.groups[0].nics.link.latency_s = 2e-6;
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.switch_latency_s = 1e-6;
  return c;
}

TEST(ClusterOfProcesses, OneServerPerHostJoinedByTheScenariosFabric) {
  std::string note;
  const ClusterSpec c = ClusterOfProcesses(OneServer(), {"a", "a", "b", "b"}, Scenario(2), &note);
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].count, 2);
  EXPECT_EQ(c.groups[0].gpus_per_server, 2);
  EXPECT_EQ(c.groups[0].gpu, "host-cpu");
  EXPECT_EQ(c.groups[0].nics.count, 2);
  EXPECT_DOUBLE_EQ(c.groups[0].nics.link.bandwidth_Bps, 25e9);
  EXPECT_EQ(c.network.kind, NetworkKind::kLeafSpine);
  EXPECT_EQ(c.NumGpus(), 4);
  EXPECT_EQ(note, "simulated as 2 servers of 2 GPUs joined by the scenario's NICs and network");
}

TEST(ClusterOfProcesses, ANicCountThatDoesNotDivideTheServersProcessesBecomesOne) {
  std::string note;
  const ClusterSpec c = ClusterOfProcesses(OneServer(), {"a", "a", "b", "b"}, Scenario(8), &note);
  EXPECT_EQ(c.groups[0].nics.count, 1);
  EXPECT_DOUBLE_EQ(c.groups[0].nics.link.bandwidth_Bps, 25e9);
}

TEST(ClusterOfProcesses, OneHostIsOneServerWithoutANote) {
  std::string note;
  const ClusterSpec c = ClusterOfProcesses(OneServer(), {"a", "a", "a"}, Scenario(1), &note);
  EXPECT_EQ(c.groups[0].count, 1);
  EXPECT_EQ(c.groups[0].gpus_per_server, 3);
  EXPECT_DOUBLE_EQ(c.groups[0].nics.link.bandwidth_Bps, 1);
  EXPECT_EQ(note, "");
}

TEST(ClusterOfProcesses, InterleavedOrUnevenHostsAreOneServerWithTheReason) {
  for (const std::vector<std::string>& hosts :
       {std::vector<std::string>{"a", "b", "a", "b"}, std::vector<std::string>{"a", "a", "b"}}) {
    std::string note;
    const ClusterSpec c = ClusterOfProcesses(OneServer(), hosts, Scenario(1), &note);
    EXPECT_EQ(c.groups[0].count, 1);
    EXPECT_EQ(c.groups[0].gpus_per_server, static_cast<int>(hosts.size()));
    EXPECT_NE(note.find("simulated as one server of " + std::to_string(hosts.size()) +
                        " GPUs: the processes are not spread evenly"),
              std::string::npos)
        << note;
  }
}

TEST(ClusterOfProcesses, RefusesABackendOfSeveralServers) {
  ClusterSpec two = OneServer();
  two.groups[0].count = 2;
  std::string note;
  try {
    ClusterOfProcesses(two, {"a"}, Scenario(1), &note);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "the backend describes more than one server; validate runs on one per host");
  }
}

}  // namespace
}  // namespace stratasim
