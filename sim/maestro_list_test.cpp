#include "sim/maestro_list.h"

#include <gtest/gtest.h>

#include "core/hardware.h"
#include "core/task_graph.h"
#include "sim/collectives/test_util.h"
#include "sim/executor.h"

namespace stratasim::sim {
namespace {

// This build takes activities off SimGrid 3.32's maestro list (the top CMakeLists.txt
// fetches the headers it needs); without it large step simulations are several times slower.
TEST(MaestroList, TrimIsBuiltWhereConfigured) {
#ifdef STRATASIM_EXPECT_LIST_TRIM
  EXPECT_TRUE(MaestroListTrimBuilt());
#else
  EXPECT_FALSE(MaestroListTrimBuilt());
#endif
}

// Every activity the executor starts, Execs (kernels) and Comms (a step-fidelity ring), comes
// off the list as it is created: the list never holds more than the one just created, so no
// completion walks past others (without this, it held every activity in flight).
TEST(MaestroList, EveryActivityTheExecutorStartsIsTakenOff) {
  if (!MaestroListTrimEnabled()) GTEST_SKIP() << "not built with SimGrid's private headers";
  ClusterSpec cluster = testing::NvSwitchCluster(2, 4, 4);
  cluster.groups[0].gpu = "A100-SXM4-80GB";
  cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  TaskGraph g(8);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  std::vector<TaskId> kernels;
  for (int r = 0; r < 8; ++r) {
    Task k;
    k.kind = TaskKind::kCompute;
    k.rank = r;
    k.stream = compute;
    k.dtype = DType::kBF16;
    k.flops = 1e12;
    k.name = "k";
    kernels.push_back(g.Add(k));
  }
  Collective c = testing::MakeCollective(CollectiveKind::kAllReduce, testing::Iota(8), 64e6);
  c.algorithm = "ring";
  Task member;
  member.stream = comm;
  member.name = "ar";
  member.deps = kernels;
  g.AddCollective(c, member);
  SimulationSpec spec;
  spec.fidelity = Fidelity::kStep;
  const ExecutionTrace tr = SimulateInProcess(g, cluster, spec);  // the counter is ours
  // The kernels, and at least a flow per ring step and member.
  EXPECT_GE(TakenOffMaestroList(), 8 + 2 * 7 * 8);
  EXPECT_EQ(MaestroListPeak(), 1u);
}

}  // namespace
}  // namespace stratasim::sim
