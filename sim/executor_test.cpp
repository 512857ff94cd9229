#include "sim/executor.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/hardware.h"
#include "core/trace.h"

namespace stratasim::sim {
namespace {

ClusterSpec OneServer(int gpus) {
  ClusterSpec c;
  ServerGroup g;
  g.name = "s";
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = gpus;
  g.nvswitch = NvSwitchSpec{LinkSpec{100e9, 1e-6}};
  c.groups.push_back(g);
  c.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return c;
}

Task Kernel(int rank, int stream, double flops) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.rank = rank;
  t.stream = stream;
  t.dtype = DType::kBF16;
  t.flops = flops;
  t.name = "k";
  return t;
}

SimulationSpec NoLaunch() {
  SimulationSpec s;
  s.compute_efficiency = 1;
  s.kernel_launch_s = 0;
  return s;
}

TEST(Executor, StreamOrderAndDependencies) {
  TaskGraph g(2);
  const int a = g.Stream("a"), b = g.Stream("b");
  const double second = 312e12;  // one second on an A100 at peak
  const TaskId t0 = g.Add(Kernel(0, a, second));
  const TaskId t1 = g.Add(Kernel(0, a, second));  // after t0: same stream
  Task dep = Kernel(1, b, second);
  dep.deps = {t1};  // another rank, waits for t1
  const TaskId t2 = g.Add(dep);
  const ExecutionTrace tr = Simulate(g, OneServer(2), NoLaunch());
  EXPECT_NEAR(tr.records[t0].end_s, 1, 1e-9);
  EXPECT_NEAR(tr.records[t1].start_s, 1, 1e-9);
  EXPECT_NEAR(tr.records[t2].start_s, 2, 1e-9);
  EXPECT_NEAR(tr.makespan_s, 3, 1e-9);
  EXPECT_EQ(tr.executor, "simgrid");
}

TEST(Executor, SendWaitsForItsReceive) {
  TaskGraph g(2);
  const int s = g.Stream("s");
  const TaskId busy = g.Add(Kernel(1, s, 312e12));  // rank 1 busy for 1 s
  Task send, recv;
  send.stream = recv.stream = s;
  const auto [snd, rcv] = g.AddTransfer(0, 1, 1e9, send, recv);
  const ExecutionTrace tr = Simulate(g, OneServer(2), NoLaunch());
  EXPECT_NEAR(tr.records[snd].start_s, 0, 1e-12);
  EXPECT_NEAR(tr.records[snd].peers_joined_s, tr.records[busy].end_s, 1e-9);
  EXPECT_NEAR(tr.records[rcv].end_s, 1 + 2e-6 + 1e9 / 100e9, 1e-6);
}

// Each transfer is two events, its route latency (a timer) and its Comm; events ending at the
// same simulated time are one instant. Three transfers on disjoint NVSwitch ports, each on its
// own stream: the latencies all end at 2 us, the 1 GB Comms together, the 2 GB one later.
TEST(Executor, CountsEventsAndTheInstantsTheyEndAt) {
  TaskGraph g(4);
  const int s = g.Stream("s");
  Task send, recv;
  send.stream = recv.stream = s;
  g.AddTransfer(0, 1, 1e9, send, recv);
  g.AddTransfer(2, 3, 1e9, send, recv);
  const ExecutionTrace two = Simulate(g, OneServer(4), NoLaunch());
  EXPECT_EQ(two.activities, 4);
  EXPECT_EQ(two.instants, 2);
  send.stream = recv.stream = g.Stream("t");
  g.AddTransfer(1, 2, 2e9, send, recv);
  const ExecutionTrace three = Simulate(g, OneServer(4), NoLaunch());
  EXPECT_EQ(three.activities, 6);
  EXPECT_EQ(three.instants, 3);
  EXPECT_EQ(TraceFromJson(TraceToJson(three)).instants, 3);
}

TEST(Executor, MemoryEventsTakeNoTime) {
  TaskGraph g(1);
  Task m;
  m.kind = TaskKind::kMemory;
  m.stream = g.Stream("s");
  m.memory_delta_bytes = 1e9;
  const TaskId id = g.Add(m);
  const ExecutionTrace tr = Simulate(g, OneServer(1), NoLaunch());
  EXPECT_EQ(tr.records[id].start_s, 0);
  EXPECT_EQ(tr.records[id].end_s, 0);
}

TEST(Executor, CalibratedCollectiveTakesItsMeasuredTime) {
  TaskGraph g(4);
  Collective c;
  c.ranks = {0, 1, 2, 3};
  c.bytes = 1e9;
  Task member;
  member.stream = g.Stream("comm");
  g.AddCollective(c, member);
  SimulationSpec spec = NoLaunch();
  Calibration cal;
  cal.collectives.push_back(
      CollectiveCalibration{CollectiveKind::kAllReduce, "A100-SXM4-80GB", 4, 1e-3, 10e9});
  spec.calibration = cal;
  const ExecutionTrace tr = Simulate(g, OneServer(4), spec);
  EXPECT_NEAR(tr.makespan_s, 1e-3 + 1e9 / 10e9, 1e-9);
  EXPECT_EQ(tr.collective_algorithms.at(0), "calibrated/measured/1ch");
  // Another group size is not covered by the entry: modelled as usual.
  cal.collectives[0].group_size = 8;
  spec.calibration = cal;
  EXPECT_NE(Simulate(g, OneServer(4), spec).collective_algorithms.at(0), "calibrated/measured/1ch");
}

TEST(Executor, PlanLargerThanClusterIsAnError) {
  TaskGraph g(4);
  g.Add(Kernel(3, g.Stream("s"), 1));
  try {
    Simulate(g, OneServer(2), NoLaunch());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "the plan needs 4 GPUs, the cluster has 2");
  }
}

// A kernel of 1e300 FLOPs takes ~1e285 s: the clock overflows any training step, and the
// error says so rather than blaming a dependency cycle.
TEST(Executor, OverflowedClockIsNamed) {
  TaskGraph g(1);
  const int s = g.Stream("s");
  const TaskId big = g.Add(Kernel(0, s, 1e300));
  Task after = Kernel(0, s, 1);
  after.deps = {big};
  g.Add(after);
  try {
    Simulate(g, OneServer(1), NoLaunch());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("simulated time overflowed: the clock reached ", 0), 0u)
        << e.what();
  }
}

TEST(Executor, SecondInProcessRunIsRefused) {
  TaskGraph g(1);
  g.Add(Kernel(0, g.Stream("s"), 1));
  SimulateInProcess(g, OneServer(1), NoLaunch());
  EXPECT_THROW(SimulateInProcess(g, OneServer(1), NoLaunch()), Error);
}

}  // namespace
}  // namespace stratasim::sim

namespace stratasim::sim {
namespace {

// A rank's compute chain with a memory event in it, a send observing the middle of another
// chain, and a rank with two compute streams (never fused: its kernels share the GPU).
TaskGraph FusionGraph() {
  TaskGraph g(3);
  const int a = g.Stream("a"), b = g.Stream("b"), p2p = g.Stream("p2p");
  const double ms = 312e9;  // one millisecond at peak
  TaskId prev = -1;
  for (int i = 0; i < 5; ++i) {
    Task k = Kernel(0, a, (i + 1) * ms);
    if (i == 2) {
      Task m;
      m.kind = TaskKind::kMemory;
      m.rank = 0;
      m.stream = a;
      m.memory_delta_bytes = 1e9;
      m.name = "alloc";
      g.Add(m);
    }
    prev = g.Add(k);
  }
  // Rank 1: k0 -> k1 -> k2, with a send after k1 (k1 has two successors: the chain stops).
  const TaskId k0 = g.Add(Kernel(1, a, 2 * ms));
  const TaskId k1 = g.Add(Kernel(1, a, 3 * ms));
  g.Add(Kernel(1, a, 4 * ms));
  Task send, recv;
  send.rank = 1;
  send.stream = recv.stream = p2p;
  send.deps = {k1};
  recv.rank = 2;
  send.name = recv.name = "x";
  const TaskId r = g.AddTransfer(1, 2, 1e8, send, recv).second;
  Task after = Kernel(2, a, ms);
  after.deps = {r};
  g.Add(after);
  // Rank 2 also computes on stream b at the same time: not fusible.
  g.Add(Kernel(2, b, 5 * ms));
  g.Add(Kernel(2, b, 5 * ms));
  (void)k0;
  (void)prev;
  return g;
}

TEST(ExecutorFusion, SameTimesAsUnfusedWithFewerActivities) {
  const TaskGraph g = FusionGraph();
  SimulationSpec off = NoLaunch();
  off.fuse = false;
  SimulationSpec on = NoLaunch();
  const ExecutionTrace plain = Simulate(g, OneServer(3), off);
  const ExecutionTrace fused = Simulate(g, OneServer(3), on);
  ASSERT_EQ(plain.records.size(), fused.records.size());
  for (size_t i = 0; i < plain.records.size(); ++i) {
    EXPECT_NEAR(plain.records[i].start_s, fused.records[i].start_s, 1e-12) << "task " << i;
    EXPECT_NEAR(plain.records[i].end_s, fused.records[i].end_s, 1e-12) << "task " << i;
  }
  EXPECT_EQ(plain.makespan_s, fused.makespan_s);
  EXPECT_EQ(plain.fused_tasks, 0);
  // Rank 0: 5 kernels and the memory event in one Exec (5 tasks inside another's); rank 1: k0
  // and k1 fused (k1 feeds the send too, so k2 starts its own chain); rank 2 none.
  EXPECT_EQ(fused.fused_tasks, 5 + 1);
  EXPECT_EQ(plain.activities - fused.activities, 4 + 1);
}

// A graph that grows as the executor asks: `add(g, it)` adds iteration `it`.
class GrowingSource : public TaskSource {
 public:
  GrowingSource(int ranks, int iterations, std::function<void(TaskGraph&, int)> add)
      : g_(ranks), iterations_(iterations), add_(std::move(add)) {}
  const TaskGraph& graph() const override { return g_; }
  bool More(int iteration) override {
    while (added_ < iteration && added_ + 1 < iterations_) add_(g_, ++added_);
    return added_ + 1 < iterations_;
  }
  bool retires() const override { return true; }
  void Retire(TaskId below) override { g_.Retire(below); }

 private:
  TaskGraph g_;
  int iterations_;
  int added_ = -1;
  std::function<void(TaskGraph&, int)> add_;
};

// Simulates `source` streamed in a child process; returns the records as they retired.
std::vector<TraceRecord> Streamed(GrowingSource* source) {
  SimulationProcess p = StartChild([&](const WireWrite& write) {
    std::vector<TraceRecord> records;
    RetireSink sink;
    sink.task = [&](const Task&, const TraceRecord& r, const std::string&) {
      records.push_back(r);
    };
    SimulateStreaming(*source, OneServer(2), NoLaunch(), sink);
    write(records.data(), records.size() * sizeof(TraceRecord));
  });
  std::vector<TraceRecord> out;
  FinishChild(p, [&](const WireRead& read) {
    TraceRecord r;
    while (read(&r, sizeof r)) out.push_back(r);
  });
  return out;
}

// Two ranks, each iteration a kernel on each, the second waiting for the first rank's.
void TwoKernels(TaskGraph& g, int it) {
  const int a = g.Stream("a");
  Task k0 = Kernel(0, a, 312e12);
  k0.iteration = it;
  const TaskId first = g.Add(k0);
  Task k1 = Kernel(1, a, 312e12);
  k1.iteration = it;
  k1.deps = {first};
  g.Add(k1);
}

TEST(Executor, AGraphTakenInAsItRunsIsTheWholeGraphsSimulation) {
  TaskGraph whole(2);
  for (int it = 0; it < 6; ++it) TwoKernels(whole, it);
  const ExecutionTrace reference = Simulate(whole, OneServer(2), NoLaunch());
  GrowingSource source(2, 6, TwoKernels);
  const std::vector<TraceRecord> streamed = Streamed(&source);
  ASSERT_EQ(streamed.size(), reference.records.size());
  for (size_t i = 0; i < streamed.size(); ++i) {
    EXPECT_EQ(streamed[i].task, static_cast<TaskId>(i));
    EXPECT_EQ(streamed[i].start_s, reference.records[i].start_s) << i;
    EXPECT_EQ(streamed[i].end_s, reference.records[i].end_s) << i;
  }
}

// Stream priorities (sim/stream_gate.h) on the streamed path: each iteration a large
// low-priority transfer and a small high-priority one from rank 0 to rank 1, after a kernel.
// The gate holds tasks of iterations not yet retired; what retires, and when, is the whole
// graph's simulation.
void PrioritisedTransfers(TaskGraph& g, int it) {
  const int compute = g.Stream("compute"), dp = g.Stream("dp"), p2p = g.Stream("p2p");
  g.SetStreamPriority(p2p, 1);
  Task k = Kernel(0, compute, 312e12 * 0.01);
  k.iteration = it;
  const TaskId kernel = g.Add(k);
  Task send, recv;
  send.iteration = recv.iteration = it;
  send.deps = {kernel};
  send.stream = recv.stream = dp;
  g.AddTransfer(0, 1, 3e9, send, recv);
  send.stream = recv.stream = p2p;
  g.AddTransfer(0, 1, 3e8, send, recv);
}

TEST(Executor, StreamPrioritiesHoldTheSameWhenTheGraphIsTakenInAsItRuns) {
  TaskGraph whole(2);
  for (int it = 0; it < 5; ++it) PrioritisedTransfers(whole, it);
  const ExecutionTrace reference = Simulate(whole, OneServer(2), NoLaunch());
  // The high-priority transfer of iteration 0 (tasks 3, 4) runs first; the low one (1, 2)
  // after it.
  EXPECT_EQ(reference.records[1].start_s, reference.records[4].end_s);
  GrowingSource source(2, 5, PrioritisedTransfers);
  const std::vector<TraceRecord> streamed = Streamed(&source);
  ASSERT_EQ(streamed.size(), reference.records.size());
  for (size_t i = 0; i < streamed.size(); ++i) {
    EXPECT_EQ(streamed[i].start_s, reference.records[i].start_s) << i;
    EXPECT_EQ(streamed[i].end_s, reference.records[i].end_s) << i;
  }
}

// A task of a later iteration that waits for nothing would have started at once in the whole
// graph; taken in late, it is refused rather than simulated wrong.
TEST(Executor, ATaskThatCouldHaveStartedBeforeItWasTakenInIsAnError) {
  GrowingSource source(2, 4, [](TaskGraph& g, int it) {
    TwoKernels(g, it);
    if (it == 3) {
      Task lone = Kernel(1, g.Stream("late"), 1e9);
      lone.iteration = it;
      lone.name = "lone";
      g.Add(lone);
    }
  });
  try {
    Streamed(&source);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "task 8 'lone' (iteration 3) could start at 0 s, before its iteration was "
                  "planned; " +
                  std::string(kSimulateWhole)),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace stratasim::sim
