#include "validate/host/host_backend.h"

#include <gtest/gtest.h>

namespace stratasim::validate {
namespace {

std::shared_ptr<const host::HostMachine> FakeMachine() {
  auto m = std::make_shared<host::HostMachine>();
  m->cpu_model = "test CPU";
  m->hardware_threads = 2;
  m->clock_hz = 2e9;
  m->peak_flops = 32e9;
  m->memory_bytes = 8e9;
  m->memory_bandwidth_Bps = 10e9;
  m->copy_bandwidth_Bps = 5e9;
  m->handoff_latency_s = 10e-6;
  return m;
}

HostBackend Backend(int ranks) {
  HostBackendOptions o;
  o.ranks = ranks;
  o.machine = FakeMachine();
  return HostBackend(o);
}

Task Compute(int rank, int stream, OpKind op, double bytes, GemmShape shape = {}) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.rank = rank;
  t.stream = stream;
  t.op = op;
  t.bytes = bytes;
  t.gemm = shape;
  t.flops = 2 * shape.m * shape.n * shape.k;
  t.name = std::string(ToString(op)) + std::to_string(rank);
  return t;
}

// Two ranks: GEMM -> all-reduce on the comm stream -> elementwise, then rank 0 sends to 1.
TaskGraph TwoRankGraph() {
  TaskGraph g(2);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  std::vector<TaskId> gemms;
  for (int r = 0; r < 2; ++r) {
    gemms.push_back(g.Add(Compute(r, compute, OpKind::kGemm, 0, GemmShape{64, 64, 64, 1})));
  }
  Collective c;
  c.kind = CollectiveKind::kAllReduce;
  c.ranks = {0, 1};
  c.bytes = 1 << 20;
  Task member;
  member.stream = comm;
  member.name = "allreduce";
  const std::vector<TaskId> ar = g.AddCollective(c, member);
  g.AddDep(ar[0], gemms[0]);
  g.AddDep(ar[1], gemms[1]);
  for (int r = 0; r < 2; ++r) {
    Task e = Compute(r, compute, OpKind::kElementwise, 1 << 16);
    e.deps = {ar[static_cast<std::size_t>(r)]};
    g.Add(e);
  }
  Task send, recv;
  send.stream = recv.stream = compute;
  send.name = "send";
  recv.name = "recv";
  g.AddTransfer(0, 1, 4096, send, recv);
  return g;
}

TEST(HostBackend, RunsAGraphAndTracesEveryTaskInOrder) {
  HostBackend b = Backend(2);
  const TaskGraph g = TwoRankGraph();
  const ExecutionTrace t = b.Run(g, RunOptions{});
  EXPECT_EQ(t.executor, "host");
  EXPECT_EQ(t.num_ranks, 2);
  EXPECT_EQ(t.streams, g.streams());
  ASSERT_EQ(t.records.size(), g.tasks().size());
  ASSERT_EQ(t.collective_algorithms, std::vector<std::string>{"ring/simple/1ch"});
  double makespan = 0;
  std::map<std::pair<int, int>, double> lane_end;
  for (const Task& task : g.tasks()) {
    const TraceRecord& r = t.records[static_cast<std::size_t>(task.id)];
    EXPECT_EQ(r.task, task.id);
    EXPECT_EQ(r.rank, task.rank);
    EXPECT_GE(r.start_s, 0);
    EXPECT_GE(r.end_s, r.start_s) << task.name;
    EXPECT_GE(r.peers_joined_s, r.start_s);
    EXPECT_LE(r.peers_joined_s, r.end_s);
    for (TaskId d : task.deps) EXPECT_GE(r.start_s, t.records[static_cast<std::size_t>(d)].end_s);
    auto key = std::make_pair(task.rank, task.stream);
    EXPECT_GE(r.start_s, lane_end[key]) << "stream order broken at " << task.name;
    lane_end[key] = r.end_s;
    makespan = std::max(makespan, r.end_s);
  }
  EXPECT_EQ(t.makespan_s, makespan);
  // Both members of the all-reduce record the same join time: when the later one arrived.
  const Collective& c = g.collectives()[0];
  EXPECT_EQ(t.records[static_cast<std::size_t>(c.members[0])].peers_joined_s,
            t.records[static_cast<std::size_t>(c.members[1])].peers_joined_s);
}

TEST(HostBackend, RunsHaveTheSameStructureEachTime) {
  HostBackend b = Backend(2);
  const TaskGraph g = TwoRankGraph();
  const ExecutionTrace first = b.Run(g, RunOptions{});
  const ExecutionTrace second = b.Run(g, RunOptions{});
  ASSERT_EQ(first.records.size(), second.records.size());
  for (std::size_t i = 0; i < first.records.size(); ++i) {
    EXPECT_EQ(first.records[i].task, second.records[i].task);
    EXPECT_EQ(first.records[i].rank, second.records[i].rank);
    EXPECT_EQ(first.records[i].stream, second.records[i].stream);
  }
  EXPECT_EQ(first.collective_algorithms, second.collective_algorithms);
}

TEST(HostBackend, MoreRanksThanThreadsFailsBeforeRunning) {
  HostBackend b = Backend(2);
  TaskGraph g(3);
  g.Stream("compute");
  try {
    b.Run(g, RunOptions{});
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kTooFewRanks);
    EXPECT_STREQ(e.what(),
                 "host backend: the plan needs 3 ranks but this run has 2 (one thread per rank; "
                 "pass --ranks 3 to time-share the cores, or plan for fewer GPUs)");
    EXPECT_TRUE(e.partial().records.empty());
  }
}

TEST(HostBackend, OutOfMemoryKeepsWhatWasMeasured) {
  HostBackend b = Backend(1);
  TaskGraph g(1);
  const int s = g.Stream("compute");
  g.Add(Compute(0, s, OpKind::kElementwise, 1 << 16));
  Task alloc;
  alloc.kind = TaskKind::kMemory;
  alloc.stream = s;
  alloc.name = "activations";
  alloc.category = "activations";
  alloc.memory_delta_bytes = 6e9;
  g.Add(alloc);
  g.Add(Compute(0, s, OpKind::kElementwise, 1 << 16));
  RunOptions o;
  o.memory_limit_bytes_per_rank = 4e9;
  try {
    b.Run(g, o);
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kOutOfMemory);
    EXPECT_NE(std::string(e.what()).find("host backend: out of memory on rank 0: task 1 "
                                         "'activations' (rank 0, stream 'compute', iteration 0) "
                                         "allocates 5.59 GiB (activations)"),
              std::string::npos)
        << e.what();
    ASSERT_EQ(e.partial().records.size(), 3u);
    EXPECT_GE(e.partial().records[0].end_s, 0) << "the first task's measurement was lost";
    EXPECT_EQ(e.partial().records[1].end_s, -1);
    EXPECT_EQ(e.partial().records[2].end_s, -1);
  }
}

TEST(HostBackend, BuffersLargerThanTheMachineFailWithTheirSize) {
  HostBackend b = Backend(1);
  TaskGraph g(1);
  const int s = g.Stream("compute");
  g.Add(Compute(0, s, OpKind::kGemm, 0, GemmShape{100000, 100000, 1000, 1}));
  try {
    b.Run(g, RunOptions{});
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kOutOfMemory);
    EXPECT_NE(std::string(e.what()).find("host backend: out of memory: the plan's task buffers "
                                         "need 38.00 GiB in all"),
              std::string::npos)
        << e.what();
  }
}

TEST(HostBackend, UnsupportedDtypeNamesTheTask) {
  HostBackend b = Backend(1);
  TaskGraph g(1);
  const int s = g.Stream("compute");
  Task t = Compute(0, s, OpKind::kGemm, 0, GemmShape{8, 8, 8, 1});
  t.dtype = DType::kINT8;
  g.Add(t);
  try {
    b.Run(g, RunOptions{});
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kExecution);
    EXPECT_STREQ(e.what(),
                 "task 0 'gemm0' (rank 0, stream 'compute', iteration 0): host backend: no CPU "
                 "GEMM for dtype int8 (it runs fp32, tf32, fp16 and bf16)");
  }
}

TEST(HostBackend, DescribesTheMachineAsOneServerOfHostCpus) {
  const ClusterSpec c = Backend(2).Describe();
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.NumGpus(), 2);
  EXPECT_EQ(c.groups[0].gpu, "host-cpu");
  EXPECT_EQ(c.GpuOfRank(1).Peak(DType::kFP32), 32e9);
  EXPECT_EQ(c.GpuOfRank(1).memory_bytes, 4e9);
  EXPECT_EQ(c.GpuOfRank(1).memory_bandwidth_Bps, 10e9);
  ASSERT_TRUE(c.groups[0].nvswitch);
  EXPECT_EQ(c.groups[0].nvswitch->link.bandwidth_Bps, 5e9);
}

TEST(HostBackend, MicroBenchmarksMeasureRealWork) {
  HostBackend b = Backend(2);
  BenchOptions o;
  o.warmup = 1;
  o.repetitions = 3;
  o.min_total_s = 0.001;
  const BenchResult small = b.TimeCompute(GemmTask(GemmShape{32, 32, 32, 1}, DType::kFP32), o);
  const BenchResult big = b.TimeCompute(GemmTask(GemmShape{256, 256, 256, 1}, DType::kFP32), o);
  EXPECT_GE(small.samples, 3);
  EXPECT_GT(small.median_s, 0);
  EXPECT_LE(small.min_s, small.median_s);
  // 512x the FLOPs cannot take less time (a real GEMM, not a formula).
  EXPECT_GT(big.min_s, small.min_s);
  EXPECT_GT(b.TimeCollective(CollectiveKind::kAllReduce, 2, 1 << 20, DType::kFP32, o).median_s, 0);
  EXPECT_GT(b.TimeCopy(1 << 20, CopyDirection::kHostToDevice, o).median_s, 0);
  EXPECT_GT(b.TimeLaunch(o).median_s, 0);
  EXPECT_THROW(b.TimeCollective(CollectiveKind::kAllReduce, 3, 64, DType::kFP32, o), BackendError);
}

}  // namespace
}  // namespace stratasim::validate
