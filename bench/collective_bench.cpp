// Simulator speed: one 1 GiB all-reduce over 1,024 GPUs (128 servers x 8 A100, NVSwitch, one
// HDR NIC per GPU, two-level fat tree of 8 servers per leaf) at each fidelity level.
//
//   build/bench/collective_bench [repetitions=3] [servers=128] [algorithm=auto] [fidelities=all]
//
// Prints, per fidelity, the median wall time of the whole simulation (platform build, run,
// trace hand-back; each run in its own process as SimGrid requires), the median CPU time
// (user + system) of that child process, the simulation events (SimGrid activities and kernel
// timers), the instants they end at (distinct simulated times; SimGrid re-solves the sharing of
// what changed once per instant), events per wall second and per CPU second, and the simulated
// time. Wall times are noisy on shared machines; CPU time much less so: compare medians from
// one run.
#include <sys/resource.h>

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

// CPU seconds (user + system) used so far by this process's waited-for children.
double ChildCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  std::printf("%-9s %-24s %12s %12s %12s %12s %12s %12s %12s\n", "fidelity", "algorithm",
              "median wall s", "median cpu s", "events", "instants", "events/s", "events/cpu s",
              "simulated s");
  for (Fidelity f : {Fidelity::kAnalytic, Fidelity::kStream, Fidelity::kStep}) {
    if (!only.empty() && only.find(std::string(ToString(f))) == std::string::npos) continue;
    SimulationSpec spec;
    spec.fidelity = f;
    std::vector<double> walls, cpus;
    ExecutionTrace t;
    for (int i = 0; i < reps; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = ChildCpuSeconds();
      t = sim::Simulate(g, cluster, spec);
      cpus.push_back(ChildCpuSeconds() - cpu_start);
      walls.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const double wall = Median(walls);
    const double cpu = Median(cpus);
    std::printf("%-9s %-24s %12.3f %12.3f %12lld %12lld %12.0f %12.0f %12.6f\n",
                std::string(ToString(f)).c_str(),
                t.collective_algorithms.empty() ? "" : t.collective_algorithms[0].c_str(), wall,
                cpu, t.activities, t.instants, t.activities / wall,
                t.activities / std::max(cpu, 1e-3), t.makespan_s);
  }
  return 0;
}

}  // namespace
}  // namespace stratasim

int main(int argc, char** argv) { return stratasim::Main(argc, argv); }
