#include "validate/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kernels/device.h"
#include "validate/backend.h"

namespace stratasim::validate {
namespace {

#define REQUIRE_GPU()                                            \
  do {                                                           \
    const std::string reason = kernels::CudaUnavailableReason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;                 \
  } while (0)

// ---- Without a GPU (CI): the backend says so clearly. ----

TEST(CudaBackend, ReportsNoCudaDeviceClearly) {
  if (kernels::CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  try {
    CudaBackend b(0);
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kUnavailable);
    EXPECT_EQ(std::string(e.what()).rfind("cuda backend: no CUDA device (", 0), 0u) << e.what();
  }
}

TEST(CudaBackend, MapsDeviceNamesToTheCatalog) {
  auto name = [](const std::string& device) {
    const GpuSpec* g = CatalogGpuForDevice(device);
    return g == nullptr ? std::string("-") : g->name;
  };
  EXPECT_EQ(name("NVIDIA H200"), "H200");
  EXPECT_EQ(name("NVIDIA H100 80GB HBM3"), "H100-SXM5");
  EXPECT_EQ(name("NVIDIA A100-SXM4-40GB"), "A100-SXM4-40GB");
  EXPECT_EQ(name("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(name("NVIDIA GeForce RTX 4090"), "RTX4090");
  EXPECT_EQ(name("Tesla V100-SXM2-32GB"), "V100-SXM2");
  EXPECT_EQ(name("Some Future GPU"), "-");
}

TEST(CudaBackend, DescribesOneServerOfTheDevices) {
  CudaDeviceProperties h200;
  h200.name = "NVIDIA H200";
  h200.memory_bytes = 143771336704.0;
  h200.compute_capability = 90;
  ClusterSpec c = CudaClusterSpec(h200, 1);
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].gpu, "H200");
  EXPECT_EQ(c.groups[0].gpus_per_server, 1);
  ASSERT_TRUE(c.groups[0].nvswitch.has_value());
  EXPECT_DOUBLE_EQ(c.groups[0].nvswitch->link.bandwidth_Bps, 450e9);
  EXPECT_DOUBLE_EQ(c.GpuOfRank(0).memory_bytes, h200.memory_bytes);
  EXPECT_DOUBLE_EQ(c.GpuOfRank(0).Peak(DType::kBF16), 989e12);
  // Unknown part: FP32 peak from the SMs and clock, no tensor-core peaks claimed.
  CudaDeviceProperties other;
  other.name = "Some Future GPU";
  other.sm_count = 10;
  other.clock_hz = 1e9;
  other.compute_capability = 80;
  c = CudaClusterSpec(other, 2);
  EXPECT_DOUBLE_EQ(c.GpuOfRank(1).Peak(DType::kFP32), 10 * 128 * 2 * 1e9);
  EXPECT_FALSE(c.GpuOfRank(1).Supports(DType::kBF16));
  EXPECT_FALSE(c.groups[0].nvswitch.has_value());
  EXPECT_DOUBLE_EQ(c.groups[0].pcie->link.bandwidth_Bps, 32e9);
}

// ---- On a GPU. ----

// A one-rank plan with every kind of task, two streams and cross-stream dependencies.
TaskGraph OneRankGraph() {
  TaskGraph g(1);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  Task mem;
  mem.kind = TaskKind::kMemory;
  mem.stream = compute;
  mem.name = "activations";
  mem.memory_delta_bytes = 256e6;
  const TaskId alloc = g.Add(mem);
  Task h2d;
  h2d.kind = TaskKind::kCopy;
  h2d.stream = compute;
  h2d.name = "batch_h2d";
  h2d.bytes = 64e6;
  const TaskId copy = g.Add(h2d);
  Task gemm = GemmTask(GemmShape{4096, 4096, 4096, 1}, DType::kBF16);
  gemm.stream = compute;
  gemm.name = "mlp_up";
  const TaskId mm = g.Add(gemm);
  Task softmax = ElementwiseTask(256e6, DType::kBF16);
  softmax.stream = compute;
  softmax.name = "softmax";
  const TaskId sm = g.Add(softmax);
  Collective c;
  c.kind = CollectiveKind::kAllReduce;
  c.ranks = {0};
  c.bytes = 64e6;
  c.dtype = DType::kBF16;
  Task member;
  member.stream = comm;
  member.name = "grad_allreduce";
  member.deps = {mm};
  const TaskId ar = g.AddCollective(c, member)[0];
  Collective a2a = c;
  a2a.kind = CollectiveKind::kAllToAll;
  member.name = "dispatch";
  member.deps = {ar};
  const TaskId at = g.AddCollective(a2a, member)[0];
  Task adam;
  adam.kind = TaskKind::kCompute;
  adam.op = OpKind::kOptimizer;
  adam.stream = compute;
  adam.name = "adam";
  adam.flops = 10 * 50e6;
  adam.deps = {at, sm};
  g.Add(adam);
  mem.memory_delta_bytes = -256e6;
  mem.deps = {};
  g.Add(mem);
  (void)alloc;
  (void)copy;
  return g;
}

TEST(CudaBackendGpu, RunsEveryTaskKindInDependencyOrder) {
  REQUIRE_GPU();
  std::unique_ptr<Backend> b = std::make_unique<CudaBackend>(1);
  const TaskGraph g = OneRankGraph();
  const ExecutionTrace t = b->Run(g, RunOptions{});
  EXPECT_EQ(t.executor, "cuda");
  ASSERT_EQ(t.records.size(), g.tasks().size());
  for (const Task& task : g.tasks()) {
    const TraceRecord& r = t.records[task.id];
    EXPECT_EQ(r.task, task.id);
    EXPECT_GE(r.start_s, 0) << task.name;
    EXPECT_GE(r.end_s, r.start_s) << task.name;
    for (TaskId d : task.deps) EXPECT_GE(r.start_s, t.records[d].end_s) << task.name;
  }
  // Same stream runs in order.
  for (std::size_t i = 1; i < g.tasks().size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (g.tasks()[i].stream == g.tasks()[j].stream) {
        EXPECT_GE(t.records[i].start_s, t.records[j].end_s - 1e-9);
      }
    }
  }
  // The 4096^3 BF16 GEMM is 137 GFLOP: at least 10 us on any GPU, at most 1 s on one that
  // has BF16 tensor cores at all.
  const TraceRecord& mm = t.records[2];
  EXPECT_GT(mm.end_s - mm.start_s, 1e-5);
  EXPECT_LT(mm.end_s - mm.start_s, 1.0);
  EXPECT_DOUBLE_EQ(t.records[0].end_s, t.records[0].start_s);  // memory tasks take no time
  EXPECT_GT(t.makespan_s, 0);
}

TEST(CudaBackendGpu, RefusesPlansLargerThanTheMachine) {
  REQUIRE_GPU();
  std::unique_ptr<Backend> b = std::make_unique<CudaBackend>(0);
  TaskGraph g(b->NumRanks() + 1);
  try {
    b->Run(g, RunOptions{});
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kTooFewRanks);
    EXPECT_NE(std::string(e.what()).find("ranks <= devices"), std::string::npos) << e.what();
  }
}

TEST(CudaBackendGpu, OutOfMemoryKeepsWhatWasMeasured) {
  REQUIRE_GPU();
  std::unique_ptr<Backend> b = std::make_unique<CudaBackend>(1);
  TaskGraph g(1);
  const int s = g.Stream("compute");
  Task gemm = GemmTask(GemmShape{1024, 1024, 1024, 1}, DType::kFP16);
  gemm.stream = s;
  g.Add(gemm);
  Task mem;
  mem.kind = TaskKind::kMemory;
  mem.stream = s;
  mem.name = "weights";
  mem.memory_delta_bytes = 1e15;  // 1 PB
  g.Add(mem);
  try {
    b->Run(g, RunOptions{});
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kOutOfMemory);
    EXPECT_NE(std::string(e.what()).find("'weights' allocates"), std::string::npos) << e.what();
    ASSERT_EQ(e.partial().records.size(), 2u);
    EXPECT_GT(e.partial().records[0].end_s, e.partial().records[0].start_s);  // the GEMM ran
    EXPECT_EQ(e.partial().records[1].end_s, -1);
  }
}

TEST(CudaBackendGpu, MemoryLimitIsEnforced) {
  REQUIRE_GPU();
  std::unique_ptr<Backend> b = std::make_unique<CudaBackend>(1);
  RunOptions o;
  o.memory_limit_bytes_per_rank = 1e9;
  try {
    b->Run(OneRankGraph(), o);  // allocates 256 MB: fits
  } catch (const BackendError& e) {
    FAIL() << e.what();
  }
  o.memory_limit_bytes_per_rank = 1e8;
  EXPECT_THROW(b->Run(OneRankGraph(), o), BackendError);
}

TEST(CudaBackendGpu, MicroBenchmarksMeasurePlausibleRates) {
  REQUIRE_GPU();
  std::unique_ptr<Backend> b = std::make_unique<CudaBackend>(1);
  const GpuSpec gpu = b->Describe().GpuOfRank(0);
  BenchOptions o;
  const BenchResult gemm =
      b->TimeCompute(GemmTask(GemmShape{4096, 4096, 4096, 1}, DType::kBF16), o);
  const double tflops = 2.0 * 4096 * 4096 * 4096 / gemm.median_s / 1e12;
  EXPECT_GT(tflops, 1);
  if (gpu.Supports(DType::kBF16)) {
    EXPECT_LT(tflops * 1e12, 1.05 * gpu.Peak(DType::kBF16));
  }
  const BenchResult copy = b->TimeCopy(256e6, CopyDirection::kHostToDevice, o);
  EXPECT_GT(256e6 / copy.median_s, 1e9);    // any PCIe link moves over 1 GB/s
  EXPECT_LT(256e6 / copy.median_s, 200e9);  // and under 200 GB/s
  const BenchResult launch = b->TimeLaunch(o);
  EXPECT_GT(launch.median_s, 0);
  EXPECT_LT(launch.median_s, 1e-3);
  for (CollectiveKind k : kAllCollectiveKinds) {
    const BenchResult c = b->TimeCollective(k, 1, 16e6, DType::kBF16, o);
    EXPECT_GT(c.median_s, 0) << ToString(k);
    EXPECT_GE(c.samples, o.repetitions);
  }
}

TEST(CudaBackendGpu, TwoRanksExchangeThroughNccl) {
  REQUIRE_GPU();
  if (kernels::CudaDeviceCount() < 2) GTEST_SKIP() << "needs 2 GPUs";
  std::unique_ptr<Backend> b = std::make_unique<CudaBackend>(2);
  TaskGraph g(2);
  const int s = g.Stream("comm");
  Collective c;
  c.kind = CollectiveKind::kAllReduce;
  c.ranks = {0, 1};
  c.bytes = 32e6;
  Task member;
  member.stream = s;
  member.name = "allreduce";
  g.AddCollective(c, member);
  Task send, recv;
  send.stream = recv.stream = s;
  send.name = "act_send";
  recv.name = "act_recv";
  g.AddTransfer(0, 1, 8e6, send, recv);
  const ExecutionTrace t = b->Run(g, RunOptions{});
  for (const TraceRecord& r : t.records) {
    EXPECT_GE(r.end_s, r.start_s);
    EXPECT_GE(r.peers_joined_s, r.start_s);
  }
  EXPECT_DOUBLE_EQ(t.records[0].peers_joined_s, t.records[1].peers_joined_s);
}

}  // namespace
}  // namespace stratasim::validate
