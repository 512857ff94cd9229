// A calibrated scenario's simulated collectives follow the fabric fit's alpha-beta model
// (validate/fabric_fit.h): ring all-reduce over n GPUs of one server takes
// 2(n-1) x latency + 2(n-1)/n x bytes / bandwidth with the `fabric:` entry's figures, on the
// simulator itself (core/calibration.h ApplyLinkCalibration, sim/collectives/protocol.h).
#include <gtest/gtest.h>

#include "core/calibration.h"
#include "core/hardware.h"
#include "sim/executor.h"

namespace stratasim::sim {
namespace {

ClusterSpec Servers(int servers, int gpus) {
  ClusterSpec c;
  ServerGroup g;
  g.name = "s";
  g.count = servers;
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = gpus;
  g.nvswitch = NvSwitchSpec{LinkSpec{100e9, 1e-6}};
  g.nics.link = LinkSpec{25e9, 1e-6};
  c.groups.push_back(g);
  c.network.switch_latency_s = 0.5e-6;
  c.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return c;
}

TaskGraph AllReduce(int n, double bytes) {
  TaskGraph g(n);
  Collective c;
  for (int r = 0; r < n; ++r) c.ranks.push_back(r);
  c.bytes = bytes;
  c.algorithm = "ring";
  Task member;
  member.stream = g.Stream("comm");
  g.AddCollective(c, member);
  return g;
}

SimulationSpec Spec(Fidelity fidelity) {
  SimulationSpec s;
  s.kernel_launch_s = 0;
  s.fidelity = fidelity;
  s.collectives.protocol = "simple";
  s.collectives.channels = 1;
  return s;
}

Calibration Fabric(const std::string& link_class, double latency_s, double bandwidth_Bps) {
  Calibration cal;
  cal.fabric.push_back(FabricCalibration{link_class, "simple", "", latency_s, bandwidth_Bps});
  return cal;
}

TEST(FabricCalibration, IntraServerAllReduceFollowsTheFittedAlphaBeta) {
  const double latency_s = 5e-6, bandwidth_Bps = 20e9;
  ClusterSpec cluster = Servers(1, 4);
  const Calibration cal = Fabric("intra", latency_s, bandwidth_Bps);
  ApplyLinkCalibration(&cal, &cluster);
  for (Fidelity f : {Fidelity::kStep, Fidelity::kStream, Fidelity::kAnalytic}) {
    for (double bytes : {4096.0, 64e6}) {
      const double expected = 2 * 3 * latency_s + 2.0 * 3 / 4 * bytes / bandwidth_Bps;
      const ExecutionTrace t = Simulate(AllReduce(4, bytes), cluster, Spec(f));
      EXPECT_NEAR(t.makespan_s, expected, expected * 1e-6) << ToString(f) << " " << bytes << " B";
    }
  }
  // Without the calibration the documented figures apply (100 GB/s ports, NCCL's latencies).
  const ExecutionTrace plain = Simulate(AllReduce(4, 64e6), Servers(1, 4), Spec(Fidelity::kStep));
  EXPECT_LT(plain.makespan_s, 2.0 * 3 / 4 * 64e6 / 50e9);
}

TEST(FabricCalibration, InterServerAllReduceFollowsTheFittedAlphaBeta) {
  const double latency_s = 12e-6, bandwidth_Bps = 10e9;
  ClusterSpec cluster = Servers(2, 1);
  const Calibration cal = Fabric("inter", latency_s, bandwidth_Bps);
  ApplyLinkCalibration(&cal, &cluster);
  for (Fidelity f : {Fidelity::kStep, Fidelity::kStream, Fidelity::kAnalytic}) {
    for (double bytes : {4096.0, 64e6}) {
      const double expected = 2 * latency_s + bytes / bandwidth_Bps;
      const ExecutionTrace t = Simulate(AllReduce(2, bytes), cluster, Spec(f));
      EXPECT_NEAR(t.makespan_s, expected, expected * 1e-6) << ToString(f) << " " << bytes << " B";
    }
  }
}

}  // namespace
}  // namespace stratasim::sim
