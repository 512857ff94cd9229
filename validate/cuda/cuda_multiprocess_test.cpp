// The cuda backend's multi-process path (RunOptions::processes): processes are threads of this
// test, talking through LocalProcessGroups; on a GPU machine each runs its rank on its
// own device with NCCL communicators bootstrapped over that control plane.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kernels/device.h"
#include "validate/backend.h"
#include "validate/clock_sync.h"
#include "validate/cuda/cuda_executor.h"
#include "validate/local_process_group.h"

namespace stratasim::validate::cuda {
namespace {

// Every rank: a GEMM, then an all-reduce of 16 MB over all ranks after it; with two ranks also
// a 4 MB transfer from rank 0 to rank 1, and a GEMM of rank 1 that depends on rank 0's first
// GEMM (another process's task: a message over the process group).
TaskGraph Graph(int ranks) {
  TaskGraph g(ranks);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  std::vector<TaskId> gemms;
  for (int r = 0; r < ranks; ++r) {
    Task gemm = GemmTask(GemmShape{2048, 2048, 2048, 1}, DType::kBF16);
    gemm.rank = r;
    gemm.stream = compute;
    gemm.name = "mlp";
    gemms.push_back(g.Add(gemm));
  }
  Collective c;
  c.kind = CollectiveKind::kAllReduce;
  for (int r = 0; r < ranks; ++r) c.ranks.push_back(r);
  c.bytes = 16e6;
  c.dtype = DType::kBF16;
  Task member;
  member.stream = comm;
  member.name = "grads";
  const std::vector<TaskId> ar = g.AddCollective(c, member);
  for (int r = 0; r < ranks; ++r) g.AddDep(ar[r], gemms[r]);
  if (ranks == 2) {
    Task end;
    end.stream = comm;
    end.name = "activations";
    g.AddTransfer(0, 1, 4e6, end, end);
    Task after = GemmTask(GemmShape{1024, 1024, 1024, 1}, DType::kBF16);
    after.rank = 1;
    after.stream = compute;
    after.name = "after_rank0";
    after.deps = {gemms[0]};
    g.Add(after);
  }
  return g;
}

TEST(CudaMultiProcess, RefusesAProcessCountUnlikeThePlansRanks) {
  // Checked before any device is touched: runs without a GPU.
  std::vector<std::unique_ptr<ProcessGroup>> pgs = LocalProcessGroups(1, 10);
  CudaRunLimits limits;
  limits.processes = pgs[0].get();
  try {
    ExecuteOnCuda(Graph(2), limits);
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kTooFewRanks);
    EXPECT_STREQ(e.what(),
                 "the plan has 2 ranks but the run has 1 processes: a multi-process cuda run "
                 "takes one process per rank (mpirun -np 2)");
  }
}

TEST(CudaMultiProcessGpu, EachProcessMeasuresOnlyItsRank) {
  const std::string reason = kernels::CudaUnavailableReason();
  if (!reason.empty()) GTEST_SKIP() << reason;
  const int n = std::min(2, kernels::CudaDeviceCount());
  const TaskGraph g = Graph(n);
  std::vector<std::unique_ptr<ProcessGroup>> pgs = LocalProcessGroups(n, 60);
  std::vector<ExecutionTrace> traces(n);
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (int p = 0; p < n; ++p) {
    threads.emplace_back([&, p] {
      ProcessGroup& pg = *pgs[p];
      CudaRunLimits limits;
      limits.devices = kernels::CudaDeviceCount();
      limits.processes = &pg;
      limits.common_start = [&pg] { return SyncClocks(pg).start; };
      try {
        traces[p] = ExecuteOnCuda(g, limits);
      } catch (const BackendError& e) {
        errors[p] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int p = 0; p < n; ++p) {
    ASSERT_EQ(errors[p], "") << "process " << p;
    const ExecutionTrace& t = traces[p];
    ASSERT_EQ(t.records.size(), g.tasks().size());
    EXPECT_GT(t.makespan_s, 0);
    for (const Task& task : g.tasks()) {
      const TraceRecord& r = t.records[task.id];
      if (task.rank == p) {
        EXPECT_GE(r.start_s, 0) << "process " << p << " task " << task.id;
        EXPECT_GT(r.end_s, r.start_s) << "process " << p << " task " << task.id;
        // Its own join: the merge on rank 0 sets the members' latest.
        EXPECT_EQ(r.peers_joined_s, r.start_s);
      } else {
        EXPECT_EQ(r.start_s, -1) << "process " << p << " task " << task.id;
        EXPECT_EQ(r.end_s, -1);
      }
    }
  }
}

}  // namespace
}  // namespace stratasim::validate::cuda
