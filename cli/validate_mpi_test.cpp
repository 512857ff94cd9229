// The cluster a multi-process validate run is simulated on (cli/validate_mpi.h,
// ClusterOfProcesses): one server per host when the processes are spread evenly in consecutive
// ranks, joined by the scenario's NICs and network; else one server, with the reason.
#include "cli/validate_mpi.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "cli/mpi_process_group.h"
#include "core/limits.h"

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

namespace stratasim::mpi {
namespace {

// The control plane's framing (cli/mpi_process_group.h): what a peer announces is bounded
// before anything is allocated.
TEST(ControlFraming, PackAndUnpackRoundTrip) {
  const std::vector<std::string> texts = {"", "a", std::string("b\0c", 3)};
  EXPECT_EQ(Unpack(Pack(texts)), texts);
}

TEST(ControlFraming, AnnouncedLengthsBeyondTheLimitAreRefusedNamingThePeer) {
  EXPECT_NO_THROW(CheckControlLength(limits::kControlMessageBytes, 3));
  try {
    CheckControlLength(limits::kControlMessageBytes + 1, 3);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "rank 3 announced a control message of 1073741825 bytes, more than the "
              "1073741824 a process sends (core/limits.h): it runs another stratasim or is "
              "corrupted");
  }
}

TEST(ControlFraming, CountsAndLengthsBeyondTheMessageAreRefused) {
  std::string packed = Pack({"abc"});
  const std::uint64_t huge = std::uint64_t{1} << 60;
  std::string bad_count = packed;
  std::memcpy(bad_count.data(), &huge, sizeof huge);  // the count
  std::string bad_length = packed;
  std::memcpy(bad_length.data() + sizeof huge, &huge, sizeof huge);  // the first length
  for (const std::string& bad : {bad_count, bad_length, packed.substr(0, packed.size() - 1)}) {
    try {
      Unpack(bad);
      FAIL() << "accepted";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "a control message is truncated");
    }
  }
}

}  // namespace
}  // namespace stratasim::mpi
