// The link usage the simulator records (core/link_usage.h, sim/link_probe.h) against traffic
// known in closed form: each link's bytes are the payloads that crossed it, its series adds up
// to them, no interval runs a link past its bandwidth, and the series follows the max-min
// rates as they change. The same usage comes from every way a plan is simulated, and
// links.json carries it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "core/task_graph.h"
#include "report/links_json.h"
#include "sim/executor.h"
#include "tests/test_clusters.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;
using testing::NvSwitchCluster;
using testing::NvSwitchLayout;
using testing::NvSwitchOptions;

const LinkSeries* Find(const LinkUsage& u, const std::string& name) {
  for (const LinkSeries& l : u.links) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// What holds for any usage: bounds from 0 to the makespan, series that add up to their
// links' bytes, and no interval faster than its link.
void ExpectConsistent(const LinkUsage& u, double makespan_s) {
  ASSERT_GE(u.edges_s.size(), 2u);
  EXPECT_EQ(u.edges_s.front(), 0);
  EXPECT_EQ(u.edges_s.back(), makespan_s);
  EXPECT_LE(u.edges_s.size(), static_cast<size_t>(kMaxLinkIntervals) + 1);
  for (size_t i = 1; i < u.edges_s.size(); ++i) EXPECT_LT(u.edges_s[i - 1], u.edges_s[i]);
  EXPECT_LE(u.links.size(), static_cast<size_t>(kMaxLinkSeries));
  double kept = 0;
  for (const LinkSeries& l : u.links) {
    SCOPED_TRACE(l.name);
    ASSERT_EQ(l.bytes_per_interval.size() + 1, u.edges_s.size());
    const double sum =
        std::accumulate(l.bytes_per_interval.begin(), l.bytes_per_interval.end(), 0.0);
    EXPECT_EQ(sum, l.bytes);
    EXPECT_GT(l.bandwidth_Bps, 0);
    EXPECT_NE(l.label, l.name);  // every platform link has a label for people
    for (size_t i = 0; i < l.bytes_per_interval.size(); ++i) {
      EXPECT_GE(l.bytes_per_interval[i], 0);
      const double width = u.edges_s[i + 1] - u.edges_s[i];
      EXPECT_LE(l.bytes_per_interval[i], l.bandwidth_Bps * width * (1 + 1e-6) + 1e-3)
          << "interval " << i << " [" << u.edges_s[i] << ", " << u.edges_s[i + 1] << "]";
    }
    kept += l.bytes;
  }
  EXPECT_LE(kept, u.bytes_total * (1 + 1e-12));
  EXPECT_GE(u.links_used, static_cast<int>(u.links.size()));
}

// Point-to-point transfers that all start at time 0, each on its own streams.
struct Transfer {
  int src, dst;
  double bytes;
};

TaskGraph Transfers(int ranks, const std::vector<Transfer>& xs, std::vector<TaskId>* recvs) {
  TaskGraph g(ranks);
  for (size_t i = 0; i < xs.size(); ++i) {
    Task send, recv;
    send.stream = recv.stream = g.Stream("p2p" + std::to_string(i));
    send.name = recv.name = "x" + std::to_string(i);
    const TaskId r = g.AddTransfer(xs[i].src, xs[i].dst, xs[i].bytes, send, recv).second;
    if (recvs) recvs->push_back(r);
  }
  return g;
}

// 4 servers of 2 GPUs, one 25 GB/s NIC each. F1 (GPU 0 -> 2, 4 GB) and F2 (GPU 1 -> 4, 2 GB)
// share server 0's NIC out; F1 alone enters server 1, F2 alone server 2; F3 (GPU 6 -> 7,
// 3 GB) stays on server 3's NVSwitch.
ClusterSpec FourServers() { return NvSwitchCluster(NvSwitchLayout(4, 2, 1)); }
const std::vector<Transfer> kKnown = {{0, 2, 4e9}, {1, 4, 2e9}, {6, 7, 3e9}};

TEST(LinkUsage, EachLinkCarriesThePayloadsThatCrossedIt) {
  const ClusterSpec c = FourServers();
  const NvSwitchOptions o = NvSwitchLayout(4, 2, 1);
  std::vector<TaskId> recvs;
  const TaskGraph g = Transfers(c.NumGpus(), kKnown, &recvs);
  const ExecutionTrace t = sim::Simulate(g, c, SimulationSpec{});
  const LinkUsage& u = t.link_usage;
  ExpectConsistent(u, t.makespan_s);
  const std::map<std::string, double> expected = {
      {"s0nic0_up", 6e9},   {"s1nic0_down", 4e9},   {"s2nic0_down", 2e9},
      {"s3g0_nvs_up", 3e9}, {"s3g1_nvs_down", 3e9},
  };
  EXPECT_EQ(u.links_used, 5);
  EXPECT_NEAR(u.bytes_total, 18e9, 1e-9 * 18e9);
  ASSERT_EQ(u.links.size(), 5u);
  for (const auto& [name, bytes] : expected) {
    const LinkSeries* l = Find(u, name);
    ASSERT_NE(l, nullptr) << name;
    EXPECT_NEAR(l->bytes, bytes, 1e-9 * bytes) << name;
  }
  EXPECT_EQ(u.links[0].name, "s0nic0_up");  // the busiest first
  EXPECT_EQ(Find(u, "s0nic0_up")->label, "server 0 NIC 0 → fabric");
  EXPECT_EQ(Find(u, "s0nic0_up")->bandwidth_Bps, o.nic_Bps);
  EXPECT_EQ(Find(u, "s3g0_nvs_up")->bandwidth_Bps, o.nvswitch_Bps);

  // The shape: F1 and F2 split server 0's NIC until F2 ends, then F1 has it alone. So the
  // shared NIC runs at its bandwidth all along, and F1's way into server 1 at half of it
  // until F2 ends, then at all of it (a spread over F1's life would be 4/6 of it throughout).
  const double f1_start = t.records[recvs[0]].peers_joined_s;
  const double f2_end = t.records[recvs[1]].end_s, f1_end = t.records[recvs[0]].end_s;
  EXPECT_NEAR(f2_end - f1_start, 2e9 / (o.nic_Bps / 2), 1e-3);
  const LinkSeries& shared = *Find(u, "s0nic0_up");
  const LinkSeries& in1 = *Find(u, "s1nic0_down");
  int checked_half = 0, checked_full = 0;
  for (size_t i = 0; i + 1 < u.edges_s.size(); ++i) {
    const double a = u.edges_s[i], b = u.edges_s[i + 1], width = b - a;
    // Only intervals inside a phase; the transfers' route latencies pass before f1_start.
    const double slack = 1e-4;
    if (a >= f1_start + slack && b <= f1_end - slack) {
      EXPECT_NEAR(shared.bytes_per_interval[i] / width, o.nic_Bps, 1e-6 * o.nic_Bps);
    }
    if (a >= f1_start + slack && b <= f2_end) {
      EXPECT_NEAR(in1.bytes_per_interval[i] / width, o.nic_Bps / 2, 1e-6 * o.nic_Bps);
      ++checked_half;
    }
    if (a >= f2_end && b <= f1_end) {
      EXPECT_NEAR(in1.bytes_per_interval[i] / width, o.nic_Bps, 1e-6 * o.nic_Bps);
      ++checked_full;
    }
    if (b <= f1_start || a >= f1_end) {
      EXPECT_EQ(in1.bytes_per_interval[i], 0);
    }
  }
  EXPECT_GT(checked_half, 0);
  EXPECT_GT(checked_full, 0);
}

// The usage of a simulation child (its trace sent over the wire) is that of the same
// simulation in this process.
TEST(LinkUsage, ASimulationChildSendsTheUsageOfTheSimulationInProcess) {
  const ClusterSpec c = FourServers();
  const TaskGraph g = Transfers(c.NumGpus(), kKnown, nullptr);
  const ExecutionTrace child = sim::Simulate(g, c, SimulationSpec{});
  const ExecutionTrace here = sim::SimulateInProcess(g, c, SimulationSpec{});
  EXPECT_FALSE(here.link_usage.links.empty());
  EXPECT_EQ(LinkUsageToJson(child.link_usage), LinkUsageToJson(here.link_usage));
}

// A ring all-reduce of S bytes over N GPUs sends 2(N - 1)/N x S along each edge of the ring
// (reduce-scatter then all-gather, N - 1 steps of S/N each): on one NVSwitch server, each
// GPU's port out and in carry that.
TEST(LinkUsage, RingAllReduceLoadsEachPortWithItsClosedForm) {
  for (const Fidelity fidelity : {Fidelity::kStep, Fidelity::kStream}) {
    SCOPED_TRACE(fidelity == Fidelity::kStep ? "step" : "stream");
    const int n = 4;
    const double bytes = 1 << 30;
    const ClusterSpec c = NvSwitchCluster(NvSwitchLayout(1, n, 1));
    TaskGraph g(n);
    Task member;
    member.stream = g.Stream("comm");
    member.name = "ar";
    Collective col;
    col.kind = CollectiveKind::kAllReduce;
    for (int r = 0; r < n; ++r) col.ranks.push_back(r);
    col.bytes = bytes;
    col.algorithm = "ring";
    g.AddCollective(col, member);
    SimulationSpec spec;
    spec.fidelity = fidelity;
    spec.collectives.protocol = "simple";
    spec.collectives.channels = 2;
    const ExecutionTrace t = sim::Simulate(g, c, spec);
    ASSERT_EQ(t.collective_algorithms.at(0).rfind("ring/simple/", 0), 0u)
        << t.collective_algorithms[0];
    ExpectConsistent(t.link_usage, t.makespan_s);
    EXPECT_EQ(t.link_usage.links_used, 2 * n);
    const double per_port = 2.0 * (n - 1) / n * bytes;
    for (int r = 0; r < n; ++r) {
      for (const std::string dir : {"_up", "_down"}) {
        const std::string name = "s0g" + std::to_string(r) + "_nvs" + dir;
        const LinkSeries* l = Find(t.link_usage, name);
        ASSERT_NE(l, nullptr) << name;
        EXPECT_NEAR(l->bytes, per_port, 1e-9 * per_port) << name;
      }
    }
    EXPECT_NEAR(t.link_usage.bytes_total, 2 * n * per_port, 1e-9 * 2 * n * per_port);
  }
}

// Host-to-device and device-to-host copies are transfers too: they load their PCIe links.
TEST(LinkUsage, CopiesLoadTheirPcieLinks) {
  const ClusterSpec c = testing::ClusterOf({testing::CommodityPcieGroup("box", 1, false, 1)},
                                           testing::SingleSwitchNetwork());
  TaskGraph g(c.NumGpus());
  const int stream = g.Stream("copies");
  for (const auto& [rank, direction, bytes] : {std::tuple{0, CopyDirection::kHostToDevice, 1e9},
                                               std::tuple{1, CopyDirection::kDeviceToHost, 5e8}}) {
    Task t;
    t.kind = TaskKind::kCopy;
    t.copy = direction;
    t.rank = rank;
    t.stream = stream;
    t.name = "copy";
    t.bytes = bytes;
    g.Add(t);
  }
  const ExecutionTrace t = sim::Simulate(g, c, SimulationSpec{});
  ExpectConsistent(t.link_usage, t.makespan_s);
  // GPUs 0 and 1 sit under PCIe switch 0 of socket 0 (testing::Pcie3Tree).
  const std::map<std::string, double> expected = {{"s0psw0_uplink_down", 1e9},
                                                  {"s0g0_pcie_down", 1e9},
                                                  {"s0g1_pcie_up", 5e8},
                                                  {"s0psw0_uplink_up", 5e8}};
  EXPECT_EQ(t.link_usage.links_used, 4);
  for (const auto& [name, bytes] : expected) {
    const LinkSeries* l = Find(t.link_usage, name);
    ASSERT_NE(l, nullptr) << name;
    EXPECT_NEAR(l->bytes, bytes, 1e-9 * bytes) << name;
  }
}

// A training run: 12 iterations, long enough to be planned while it is simulated (streamed),
// against the same plan simulated whole; and links.json, as `stratasim run` writes it.
std::string TrainingScenario() {
  return "name: links\ncluster:\n  servers:\n    - name: dgx\n      count: 2\n"
         "      gpu: A100-SXM4-80GB\n      gpus_per_server: 8\n"
         "      nvswitch: {bandwidth: \"300GB/s\", latency: \"1us\"}\n"
         "      nics: {count: 8, bandwidth: \"200Gb/s\", latency: \"2us\"}\n"
         "  network: {kind: rail_optimized}\n"
         "model: {kind: gpt, layers: 4, hidden: 1024, heads: 16, sequence: 512, "
         "vocabulary: 8192}\n"
         "training: {global_batch: 64, micro_batch: 2, precision: bf16, "
         "iterations: {warmup: 1, measured: 11}}\n"
         "strategies:\n"
         "  - {name: ddp, kind: ddp}\n"
         "  - {name: 3d, kind: 3d, options: {tensor: 2, stages: 4, data: 2}}\n";
}

// The bytes of `l` up to time `t` (its rate taken as even within an interval).
double CumulativeAt(const LinkUsage& u, const LinkSeries& l, double t) {
  double sum = 0;
  for (size_t i = 0; i < l.bytes_per_interval.size(); ++i) {
    const double a = u.edges_s[i], b = u.edges_s[i + 1];
    if (t >= b) {
      sum += l.bytes_per_interval[i];
    } else if (t > a) {
      sum += l.bytes_per_interval[i] * (t - a) / (b - a);
    }
  }
  return sum;
}

TEST(LinkUsage, AStreamedRunRecordsTheUsageOfTheWholeSimulation) {
  const Scenario s = LoadScenarioText(TrainingScenario(), "links.yaml");
  const std::vector<StrategyRun> streamed = RunStrategies(s, {});
  const std::vector<StrategyRun> whole = RunStrategies(s, {}, WholeRuns());
  ASSERT_EQ(streamed.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    SCOPED_TRACE(whole[i].result.name);
    ASSERT_TRUE(streamed[i].result.ok) << streamed[i].result.error;
    ASSERT_TRUE(whole[i].result.ok) << whole[i].result.error;
    EXPECT_TRUE(streamed[i].streamed);
    const LinkUsage& a = streamed[i].trace.link_usage;
    const LinkUsage& b = whole[i].trace.link_usage;
    ExpectConsistent(b, whole[i].trace.makespan_s);
    ASSERT_GE(a.edges_s.size(), 2u);
    EXPECT_NEAR(a.edges_s.back(), b.edges_s.back(), 1e-12 * b.edges_s.back());
    EXPECT_EQ(a.links_used, b.links_used);
    EXPECT_NEAR(a.bytes_total, b.bytes_total, 1e-9 * b.bytes_total);
    ASSERT_EQ(a.links.size(), b.links.size());
    for (size_t k = 0; k < b.links.size(); ++k) {
      const LinkSeries* x = Find(a, b.links[k].name);
      ASSERT_NE(x, nullptr) << b.links[k].name;
      EXPECT_NEAR(x->bytes, b.links[k].bytes, 1e-9 * b.links[k].bytes);
      // Both run the same flows at the same rates; the bounds may differ (a streamed run
      // fuses fewer kernels, so it has more events to close intervals at): the cumulative
      // bytes agree at every bound, up to what one interval of the other holds.
      double widest = 0;
      for (double v : b.links[k].bytes_per_interval) widest = std::max(widest, v);
      for (double v : x->bytes_per_interval) widest = std::max(widest, v);
      for (double e : b.edges_s) {
        EXPECT_NEAR(CumulativeAt(a, *x, e), CumulativeAt(b, b.links[k], e), widest);
      }
    }
  }
  // links.json: written beside results.json, every strategy in order, read back the same.
  const fs::path out = fs::temp_directory_path() / ("link-usage-test-" + std::to_string(getpid()));
  RunResults results = DescribeRun(s, "test");
  for (const StrategyRun& r : streamed) results.strategies.push_back(r.result);
  WriteOutputs(out.string(), results, streamed, false, false);
  std::ifstream in(out / "links.json");
  std::stringstream text;
  text << in.rdbuf();
  const std::vector<StrategyLinks> read = LinksFromJson(text.str());
  ASSERT_EQ(read.size(), streamed.size());
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].name, streamed[i].result.name);
    ASSERT_TRUE(read[i].usage.has_value());
    EXPECT_EQ(LinkUsageToJson(*read[i].usage), LinkUsageToJson(streamed[i].trace.link_usage));
  }
  fs::remove_all(out);
}

}  // namespace
}  // namespace stratasim
