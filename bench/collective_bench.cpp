// Simulator speed: one 1 GiB all-reduce over 1,024 GPUs (128 servers x 8 A100, NVSwitch, one
// HDR NIC per GPU, two-level fat tree of 8 servers per leaf) at each fidelity level.
//
//   build/bench/collective_bench [repetitions=3] [servers=128] [algorithm=auto] [fidelities=all]
//
// Prints, per fidelity, the median wall time of the whole simulation (platform build, run,
// trace hand-back; each run in its own process as SimGrid requires), the activities SimGrid
// ran, activities per second, and the simulated time. Wall times are noisy on shared
// machines: compare medians from one run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/hardware.h"
#include "core/scenario.h"
#include "core/task_graph.h"
#include "sim/executor.h"

namespace stratasim {
namespace {

ClusterSpec FatTree(int servers) {
  ClusterSpec c;
  ServerGroup g;
  g.name = "dgx-a100";
  g.count = servers;
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = 8;
  g.nvswitch = NvSwitchSpec{LinkSpec{300e9, 1e-6}};
  g.nics = NicSpec{8, LinkSpec{25e9, 2e-6}};
  c.groups.push_back(g);
  c.network.kind = NetworkKind::kLeafSpine;
  c.network.servers_per_leaf = 8;
  c.network.oversubscription = 1;
  c.network.switch_latency_s = 1e-6;
  c.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return c;
}

int Main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 3;
  const int servers = argc > 2 ? std::atoi(argv[2]) : 128;
  const std::string algorithm = argc > 3 ? argv[3] : "auto";
  const std::string only = argc > 4 ? argv[4] : "";
  const ClusterSpec cluster = FatTree(servers);
  const int n = cluster.NumGpus();
  TaskGraph g(n);
  Collective c;
  c.kind = CollectiveKind::kAllReduce;
  for (int r = 0; r < n; ++r) c.ranks.push_back(r);
  c.bytes = 1024.0 * 1024 * 1024;
  c.algorithm = algorithm;
  Task member;
  member.stream = g.Stream("comm");
  member.name = "allreduce 1GiB";
  g.AddCollective(c, member);

  std::printf("1 GiB all-reduce on %d GPUs (%d x 8, leaf-spine), %d repetitions\n", n, servers,
              reps);
  std::printf("%-9s %-24s %12s %14s %14s %14s\n", "fidelity", "algorithm", "median wall s",
              "activities", "activities/s", "simulated s");
  for (Fidelity f : {Fidelity::kAnalytic, Fidelity::kStream, Fidelity::kStep}) {
    if (!only.empty() && only.find(std::string(ToString(f))) == std::string::npos) continue;
    SimulationSpec spec;
    spec.fidelity = f;
    std::vector<double> walls;
    ExecutionTrace t;
    for (int i = 0; i < reps; ++i) {
      const auto start = std::chrono::steady_clock::now();
      t = sim::Simulate(g, cluster, spec);
      walls.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(walls.begin(), walls.end());
    const double median = walls[walls.size() / 2];
    std::printf("%-9s %-24s %12.3f %14lld %14.0f %14.6f\n", std::string(ToString(f)).c_str(),
                t.collective_algorithms.empty() ? "" : t.collective_algorithms[0].c_str(), median,
                t.activities, t.activities / median, t.makespan_s);
  }
  return 0;
}

}  // namespace
}  // namespace stratasim

int main(int argc, char** argv) { return stratasim::Main(argc, argv); }
