// Issue #3: "Automatic choice: tree or direct wins for small messages, ring for large ones, on
// the topologies above". Every collective here runs with algorithm, protocol and channels on
// auto through sim::Simulate, on every kind of cluster the project builds (NVSwitch servers of
// A100, H100 and H200; DGX-1 V100 hybrid cube mesh; 4 x RTX 3090 PCIe boxes with and without
// NVLink bridges; one NIC per GPU or per server; single switch, 4:1 leaf-spine, 2:1
// rail-optimized; 1, 4 and 16 servers; and the bundled scenarios' clusters), and the test
// checks what the tuner (sim/collectives/tuner.cpp) chose, as reported in
// ExecutionTrace::collective_algorithms ("algorithm/protocol/Nch").
//
// Why the expected sets are right (S bytes, N GPUs, s servers of k GPUs; costs from the tuner's
// alpha-beta forms, docs/collectives.md, "The tuner"):
// - all-reduce, small (1 KiB, 8 KiB): latency-bound. A ring pays 2(N-1) step latencies and
//   hierarchical 2(k-1) + 2(s-1) ring steps; a tree pays 2((k-1) + log2(s)) steps and direct
//   (NCCL's one-shot kernel) one step, its (N-1)S bytes per member being negligible. So
//   {tree, direct}. Halving-doubling is never auto's (its registry entry: NCCL does not run it).
// - all-reduce, large (1 GiB): bandwidth-bound. A ring moves 2(N-1)/N S per GPU, the least of
//   all; direct (N-1)S; a tree 2S inside a server and 3S/(2C) per channel on a head's NIC. Inside
//   one server: {ring} (hierarchical is not a candidate there: it would be the same ring).
//   Across servers: {ring, hierarchical}: hierarchical is rings inside and rings across
//   servers, sending 2(s-1)/s S/k per GPU over the NICs, so it beats a flat ring when the
//   NICs are few (docs/collectives.md, "hierarchical"; the project's existing
//   AutoChoice.SmallMessagesAvoidTheRingLargeOnesUseIt, tests/collectives_closed_form_test.cpp,
//   accepts it as ring-family too).
// - reduce-scatter / all-gather (candidates ring, hierarchical, direct; a tie goes to the first):
// small: {direct}, one
//   step against N-1. Large inside one NVSwitch server: {ring, direct}: on a non-blocking switch
//   direct moves the same (N-1)/N S per port as the ring, in one step (simulated 3.15 ms
//   against the ring's 3.18 ms on 8 A100s). Large inside a PCIe or cube-mesh server: {ring}:
//   the direct flows share the PCIe switch uplinks and the socket link. Large across servers:
//   {ring, hierarchical}: direct sends k(N-k)/N S out of each server, the ring (N-1)/N S (6x
//   less with 4 servers of 8 GPUs).
// - broadcast / reduce (candidates ring, i.e. a chain, and tree), across servers only (inside
//   one server both are a chain through the same GPUs, so either is right and nothing is
//   checked): small: {tree}, log2(s) network hops against the chain's s-1 (simulated at step
//   fidelity on 16 A100 servers, 8 KiB: tree 63 us, chain 404 us). Large: {ring}: a chain moves
//   S once over every NIC and every intra-server link; a binary tree's interior heads send it
//   to two children.
//
// Every case holds: the last two misjudgements (large all-reduce across DGX-1 servers, where
// the tuner chose tree; large broadcast/reduce across PCIe and DGX-1 servers, where it chose
// tree) went when rings spread over the cube mesh's two NVLink cycles and the tuner counted
// them, and counted the PCIe link a tree head shares with its NIC (docs/collectives.md, "The
// tuner"). A failure prints the tuner's predictions and each candidate's simulated time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"
#include "sim/collectives/group_view.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/registry.h"
#include "sim/collectives/tuner.h"
#include "sim/executor.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

constexpr double kKiB = 1024, kGiB = 1024.0 * 1024 * 1024;
constexpr double kSmall[] = {1 * kKiB, 8 * kKiB};

enum class Box { kNvSwitch, kDgx1, kPcie };  // what joins the GPUs of a server

struct Topology {
  std::string name;  // test-name safe
  ClusterSpec cluster;
  Box box = Box::kNvSwitch;  // of the slowest servers
  int servers = 1;
  bool nic_per_gpu = true;
  // Edge-disjoint NVLink cycles through each server's GPUs (2 in the cube mesh, whose GPUs
  // have 4 NVLinks each, when every server is one), each walked both ways by a channel.
  int nvlink_cycles = 0;
};

// gtest prints a parameter in test names and messages; the name, not the struct's bytes.
void PrintTo(const Topology& t, std::ostream* os) { *os << t.name; }

// NVSwitch servers, datasheet figures (shared/data/hardware.md): A100 NVLink3 300 GB/s per
// direction and HDR NICs (25 GB/s); H100 and H200 NVLink4 450 GB/s and NDR NICs (50 GB/s).
ServerGroup NvSwitchServers(const std::string& gpu, int count, int nics) {
  testing::NvSwitchOptions o;
  o.servers = count;
  o.gpu = gpu;
  o.nics = nics;
  const bool hopper = gpu != "A100-SXM4-80GB";
  o.nvswitch_Bps = hopper ? 450e9 : 300e9;
  o.nic_Bps = hopper ? 50e9 : 25e9;
  o.nic_latency_s = 2e-6;
  return testing::NvSwitchGroup("nvs", o);
}

struct ServerKind {
  std::string name;
  Box box;
  ServerGroup (*make)(int count, bool nic_per_gpu);
};

const std::vector<ServerKind>& ServerKinds() {
  static const std::vector<ServerKind> kinds = {
      {"a100", Box::kNvSwitch,
       [](int n, bool per_gpu) { return NvSwitchServers("A100-SXM4-80GB", n, per_gpu ? 8 : 1); }},
      {"h100", Box::kNvSwitch,
       [](int n, bool per_gpu) { return NvSwitchServers("H100-SXM5", n, per_gpu ? 8 : 1); }},
      {"h200", Box::kNvSwitch,
       [](int n, bool per_gpu) { return NvSwitchServers("H200", n, per_gpu ? 8 : 1); }},
      {"dgx1", Box::kDgx1,
       [](int n, bool per_gpu) { return testing::Dgx1V100Group("dgx1", n, per_gpu ? 8 : 1); }},
      {"pcie_bridged", Box::kPcie,
       [](int n, bool per_gpu) {
         return testing::CommodityPcieGroup("pcie", n, true, per_gpu ? 4 : 1);
       }},
      {"pcie", Box::kPcie,
       [](int n, bool per_gpu) {
         return testing::CommodityPcieGroup("pcie", n, false, per_gpu ? 4 : 1);
       }},
  };
  return kinds;
}

Topology FromScenario(const std::string& file, Box box, bool nic_per_gpu) {
  const Scenario s = LoadScenarioFile(std::string(STRATASIM_SOURCE_DIR) + "/scenarios/" + file);
  Topology t;
  t.name = "scenario_" + s.name;
  std::replace(t.name.begin(), t.name.end(), '-', '_');
  t.cluster = s.cluster;
  t.box = box;
  t.servers = s.cluster.NumServers();
  t.nic_per_gpu = nic_per_gpu;
  return t;
}

std::vector<Topology> Topologies() {
  std::vector<Topology> all;
  auto cycles = [](Box box) { return box == Box::kDgx1 ? 2 : 0; };
  for (const ServerKind& k : ServerKinds()) {
    all.push_back({k.name + "_1server",
                   testing::ClusterOf({k.make(1, true)}, testing::SingleSwitchNetwork()), k.box, 1,
                   true, cycles(k.box)});
  }
  struct Net {
    std::string name;
    NetworkSpec spec;
  };
  const Net nets[] = {{"single_switch", testing::SingleSwitchNetwork()},
                      {"leaf_spine_4to1", testing::LeafSpineNetwork(2, 4)},
                      {"rail_2to1", testing::RailOptimizedNetwork(2)}};
  for (int servers : {4, 16}) {
    for (const ServerKind& k : ServerKinds()) {
      for (bool per_gpu : {true, false}) {
        for (const Net& net : nets) {
          all.push_back({k.name + "_" + std::to_string(servers) + "servers_" +
                             (per_gpu ? "nic_per_gpu_" : "nic_per_server_") + net.name,
                         testing::ClusterOf({k.make(servers, per_gpu)}, net.spec), k.box, servers,
                         per_gpu, cycles(k.box)});
        }
      }
    }
  }
  // The bundled scenarios' clusters, as users run them.
  all.push_back(FromScenario("commodity-pcie.yaml", Box::kPcie, false));
  all.push_back(FromScenario("rail-optimized.yaml", Box::kNvSwitch, true));
  // One DGX A100 (a NIC per GPU) and two DGX-1 (a NIC per GPU pair); the tuner sees the
  // slowest servers' links.
  all.push_back(FromScenario("hetero-a100-v100.yaml", Box::kDgx1, true));
  // 16 DGX-1 with 4 NICs each (a NIC per GPU pair).
  all.push_back(FromScenario("dgx1-v100.yaml", Box::kDgx1, false));
  return all;
}

Collective Everyone(const ClusterSpec& c, CollectiveKind kind, double bytes) {
  Collective col;
  col.kind = kind;
  for (int r = 0; r < c.NumGpus(); ++r) col.ranks.push_back(r);
  col.bytes = bytes;
  col.root = 0;
  return col;
}

// One collective over every GPU of the cluster, all on auto, through the simulator; returns
// what the executor reports it ran ("algorithm/protocol/Nch").
std::string Chosen(const ClusterSpec& c, CollectiveKind kind, double bytes) {
  TaskGraph g(c.NumGpus());
  Task member;
  member.stream = g.Stream("comm");
  member.name = "c";
  Collective col = Everyone(c, kind, bytes);
  col.algorithm = "auto";
  g.AddCollective(col, member);
  // The executor makes the choice before it lowers anything, the same at every fidelity;
  // analytic then runs the collective as one timer instead of thousands of flows (the 81
  // topologies took 184 test-seconds at stream fidelity).
  SimulationSpec spec;
  spec.fidelity = Fidelity::kAnalytic;
  spec.collectives.protocol = "auto";
  spec.collectives.channels = 0;
  return sim::Simulate(g, c, spec).collective_algorithms.at(0);
}

// The tuner's best prediction per candidate algorithm, for failure messages.
std::string Predictions(const ClusterSpec& c, CollectiveKind kind, double bytes) {
  const Collective col = Everyone(c, kind, bytes);
  const sim::GroupView view = sim::MakeGroupView(c, col.ranks);
  std::string out;
  for (const std::string& a : sim::AutoCandidates(kind, view)) {
    const int channels =
        sim::FindCollectiveAlgorithm(kind, a).uses_channels ? sim::AutoChannels(view) : 1;
    double best = 0;
    std::string best_protocol;
    for (const char* p : {"simple", "ll128", "ll"}) {
      const double t = sim::PredictCollectiveSeconds(col, view, {a, p, channels});
      if (best_protocol.empty() || t < best) {
        best = t;
        best_protocol = p;
      }
    }
    char line[160];
    std::snprintf(line, sizeof line, " %s/%s/%dch=%.4g s", a.c_str(), best_protocol.c_str(),
                  channels, best);
    out += line;
  }
  return out;
}

std::string Algorithm(const std::string& chosen) { return chosen.substr(0, chosen.find('/')); }

bool Large(double bytes) { return bytes >= kGiB; }

bool ScatterGather(CollectiveKind kind) {
  return kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllGather;
}

// The algorithms that are right for this collective (see the head of the file); nullopt when
// every candidate is.
std::set<std::string> Expected(const Topology& t, CollectiveKind kind, double bytes) {
  const bool across = t.servers > 1;
  if (kind == CollectiveKind::kAllReduce) {
    if (!Large(bytes)) return std::set<std::string>{"tree", "direct"};
    return across ? std::set<std::string>{"ring", "hierarchical"} : std::set<std::string>{"ring"};
  }
  if (ScatterGather(kind)) {
    if (!Large(bytes)) return std::set<std::string>{"direct"};
    if (across) return std::set<std::string>{"ring", "hierarchical"};
    return t.box == Box::kNvSwitch ? std::set<std::string>{"ring", "direct"}
                                   : std::set<std::string>{"ring"};
  }
  // In one server both candidates are the same chain: either is right, nothing else is.
  if (!across) return std::set<std::string>{"ring", "tree"};
  return Large(bytes) ? std::set<std::string>{"ring"} : std::set<std::string>{"tree"};
}

// Simulated makespan of each candidate algorithm forced (protocol and channels on auto), for
// failure messages.
std::string SimulatedTimes(const ClusterSpec& c, CollectiveKind kind, double bytes) {
  std::string out;
  const std::vector<int> everyone = Everyone(c, kind, bytes).ranks;
  for (const std::string& a : sim::AutoCandidates(kind, sim::MakeGroupView(c, everyone))) {
    TaskGraph g(c.NumGpus());
    Task member;
    member.stream = g.Stream("comm");
    member.name = "c";
    Collective col = Everyone(c, kind, bytes);
    col.algorithm = a;
    g.AddCollective(col, member);
    SimulationSpec spec;
    const ExecutionTrace tr = sim::Simulate(g, c, spec);
    char line[160];
    std::snprintf(line, sizeof line, " %s=%.4g s", tr.collective_algorithms.at(0).c_str(),
                  tr.makespan_s);
    out += line;
  }
  return out;
}

// Checks the choice for `kind` and `bytes` on `t`.
void ExpectChoice(const Topology& t, CollectiveKind kind, double bytes) {
  const std::set<std::string> expected = Expected(t, kind, bytes);
  const std::string chosen = Chosen(t.cluster, kind, bytes);
  std::string want;
  for (const std::string& a : expected) want += (want.empty() ? "" : " or ") + a;
  const bool right = expected.count(Algorithm(chosen)) > 0;
  EXPECT_TRUE(right) << t.name << ", " << ToString(kind) << " of " << bytes << " B: chose "
                     << chosen << ", expected " << want
                     << "; predictions:" << Predictions(t.cluster, kind, bytes)
                     << "; simulated:" << (right ? "" : SimulatedTimes(t.cluster, kind, bytes));
  // Channels (sim/collectives/tuner.h, AutoChannels): a ring or tree stripes over one channel
  // per NIC the group uses in a server, inside one server over one; and over at least two per
  // NVLink cycle, one each way.
  const std::string algorithm = Algorithm(chosen);
  if (algorithm == "ring" || algorithm == "tree") {
    int nics = 1;
    for (const ServerGroup& g : t.cluster.groups) nics = std::max(nics, g.nics.count);
    const int channels =
        std::min(std::max(t.servers > 1 ? nics : 1, 2 * t.nvlink_cycles), sim::kMaxChannels);
    EXPECT_EQ(chosen.substr(chosen.rfind('/') + 1), std::to_string(channels) + "ch")
        << t.name << ", " << ToString(kind) << " of " << bytes << " B: " << chosen;
  }
}

constexpr CollectiveKind kKinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                                     CollectiveKind::kAllGather, CollectiveKind::kBroadcast,
                                     CollectiveKind::kReduce};

class AutoChoiceOn : public ::testing::TestWithParam<Topology> {};

TEST_P(AutoChoiceOn, Topology) {
  const Topology& t = GetParam();
  for (CollectiveKind kind : kKinds) {
    std::vector<double> sizes(std::begin(kSmall), std::end(kSmall));
    sizes.push_back(kGiB);
    for (double bytes : sizes) {
      ExpectChoice(t, kind, bytes);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Clusters, AutoChoiceOn, ::testing::ValuesIn(Topologies()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace stratasim
