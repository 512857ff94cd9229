// Stream priorities in the simulator (TaskGraph::SetStreamPriority, sim/stream_gate.h): a
// communication task does not start while one of a higher-priority stream is in flight on its
// rank. Checked from the trace against closed forms on one NVSwitch server: a transfer alone
// takes L + b / B (L: the route's two port latencies), two sharing a port get B / 2 each.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "core/hardware.h"
#include "core/task_graph.h"
#include "core/trace.h"
#include "sim/executor.h"

namespace stratasim::sim {
namespace {

constexpr double kBps = 100e9;           // the NVSwitch port of OneServer
constexpr double kLatencyS = 2e-6;       // its two port latencies, 1 us each
constexpr double kSecondFlops = 312e12;  // one second of an A100 at its BF16 peak

ClusterSpec OneServer(int gpus) {
  ClusterSpec c;
  ServerGroup g;
  g.name = "s";
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = gpus;
  g.nvswitch = NvSwitchSpec{LinkSpec{kBps, 1e-6}};
  c.groups.push_back(g);
  c.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  return c;
}

SimulationSpec NoLaunch() {
  SimulationSpec s;
  s.compute_efficiency = 1;
  s.kernel_launch_s = 0;
  return s;
}

struct Ends {
  TaskId send, recv;
};

Ends Transfer(TaskGraph& g, int src, int dst, double bytes, int stream, const char* name,
              std::vector<TaskId> send_deps = {}, std::vector<TaskId> recv_deps = {}) {
  Task send, recv;
  send.stream = recv.stream = stream;
  send.name = recv.name = name;
  send.deps = std::move(send_deps);
  recv.deps = std::move(recv_deps);
  const auto [s, r] = g.AddTransfer(src, dst, bytes, send, recv);
  return {s, r};
}

double Alone(double bytes) { return kLatencyS + bytes / kBps; }

// A large low-priority send and a small high-priority one from GPU 0 to GPU 1, both ready at
// time 0, the low one added first.
struct TwoSends {
  TaskGraph g{2};
  int dp = g.Stream("dp"), p2p = g.Stream("p2p");
  double low_bytes = 3e9, high_bytes = 3e8;
  Ends low = Transfer(g, 0, 1, low_bytes, dp, "dp");
  Ends high = Transfer(g, 0, 1, high_bytes, p2p, "activations");
};

TEST(StreamPriority, AHighPrioritySendDoesNotWaitBehindALowOne) {
  TwoSends x;
  // Without priorities both start at once and share GPU 0's port until the small one ends.
  const ExecutionTrace shared = Simulate(x.g, OneServer(2), NoLaunch());
  const double shared_high_end = kLatencyS + x.high_bytes / (kBps / 2);
  EXPECT_NEAR(shared.records[x.high.recv].end_s, shared_high_end, 1e-9);
  EXPECT_NEAR(shared.records[x.low.recv].end_s, kLatencyS + (x.low_bytes + x.high_bytes) / kBps,
              1e-9);
  EXPECT_EQ(shared.records[x.low.send].start_s, 0);

  // With the activations' stream first, the small send takes its uncontended time and the
  // large one starts once it has ended.
  x.g.SetStreamPriority(x.p2p, 1);
  const ExecutionTrace tr = Simulate(x.g, OneServer(2), NoLaunch());
  const double high_end = Alone(x.high_bytes);
  EXPECT_EQ(tr.records[x.high.send].start_s, 0);
  EXPECT_NEAR(tr.records[x.high.recv].end_s, high_end, 1e-12);
  EXPECT_NEAR(tr.records[x.high.send].end_s, high_end, 1e-12);
  for (TaskId low : {x.low.send, x.low.recv}) {
    EXPECT_EQ(tr.records[low].start_s, tr.records[x.high.recv].end_s) << low;
    EXPECT_NEAR(tr.records[low].end_s, high_end + Alone(x.low_bytes), 1e-9) << low;
  }
  EXPECT_LT(tr.records[x.high.recv].end_s, shared_high_end);
}

// The same priority on every stream holds nothing: the run is the one without priorities.
TEST(StreamPriority, EqualPrioritiesShareAsWithout) {
  TwoSends x;
  const ExecutionTrace none = Simulate(x.g, OneServer(2), NoLaunch());
  x.g.SetStreamPriority(x.dp, 4);
  x.g.SetStreamPriority(x.p2p, 4);
  const ExecutionTrace equal = Simulate(x.g, OneServer(2), NoLaunch());
  ASSERT_EQ(none.records.size(), equal.records.size());
  for (size_t i = 0; i < none.records.size(); ++i) {
    EXPECT_EQ(none.records[i].start_s, equal.records[i].start_s) << i;
    EXPECT_EQ(none.records[i].end_s, equal.records[i].end_s) << i;
  }
}

// A low-priority data-parallel all-reduce over GPUs 0 and 1 and a high-priority send 0 -> 1:
// the send takes its time alone, the all-reduce's members start when it ends and then take
// the all-reduce's time alone.
TEST(StreamPriority, ALowPriorityAllReduceStartsAfterTheHighPrioritySend) {
  const double ar_bytes = 2e9, send_bytes = 3e8;
  auto build = [&](bool with_send) {
    TaskGraph g(2);
    const int dp = g.Stream("dp");
    Collective c;
    c.ranks = {0, 1};
    c.bytes = ar_bytes;
    Task member;
    member.stream = dp;
    member.name = "dp_all_reduce";
    g.AddCollective(c, member);
    if (with_send) Transfer(g, 0, 1, send_bytes, g.Stream("p2p"), "activations");
    return g;
  };
  const ExecutionTrace alone = Simulate(build(false), OneServer(2), NoLaunch());
  const double ar_alone_s = alone.records[0].end_s - alone.records[0].start_s;
  ASSERT_GT(ar_alone_s, ar_bytes / kBps);  // sanity: the ring moves at least the buffer

  TaskGraph g = build(true);
  const TaskId send = 2, recv = 3;
  const ExecutionTrace shared = Simulate(g, OneServer(2), NoLaunch());
  // Sharing GPU 0's port with the ring's flow 0 -> 1, the send is slower than alone.
  EXPECT_GT(shared.records[recv].end_s, 1.2 * Alone(send_bytes));

  g.SetStreamPriority(g.Stream("p2p"), 10);
  const ExecutionTrace tr = Simulate(g, OneServer(2), NoLaunch());
  EXPECT_NEAR(tr.records[recv].end_s, Alone(send_bytes), 1e-12);
  for (TaskId m : {0, 1}) {
    EXPECT_EQ(tr.records[m].start_s, tr.records[recv].end_s) << m;
    EXPECT_NEAR(tr.records[m].end_s - tr.records[m].start_s, ar_alone_s, 1e-9) << m;
  }
  EXPECT_EQ(tr.records[send].start_s, 0);
}

// A task waits only for higher-priority tasks in flight, not merely started: here the
// high-priority send's receive waits for the low-priority transfer, which must therefore run
// first (were a started send enough to hold it, neither could ever run).
TEST(StreamPriority, AStartedButUnmatchedTaskHoldsNothing) {
  TaskGraph g(2);
  const int dp = g.Stream("dp"), p2p = g.Stream("p2p");
  g.SetStreamPriority(p2p, 1);
  const double low_bytes = 1e9, high_bytes = 1e8;
  const Ends low = Transfer(g, 0, 1, low_bytes, dp, "dp");
  const Ends high = Transfer(g, 0, 1, high_bytes, p2p, "activations", {}, {low.recv});
  const ExecutionTrace tr = Simulate(g, OneServer(2), NoLaunch());
  EXPECT_EQ(tr.records[high.send].start_s, 0);
  EXPECT_EQ(tr.records[low.send].start_s, 0);
  EXPECT_NEAR(tr.records[low.recv].end_s, Alone(low_bytes), 1e-12);
  EXPECT_EQ(tr.records[high.send].peers_joined_s, tr.records[low.recv].end_s);
  EXPECT_NEAR(tr.records[high.recv].end_s, Alone(low_bytes) + Alone(high_bytes), 1e-9);
}

// No preemption: a low-priority transfer already in flight when the high-priority one becomes
// ready keeps going, and the two share the port.
TEST(StreamPriority, ALowPriorityTransferInFlightIsNotPreempted) {
  TaskGraph g(2);
  const int compute = g.Stream("compute"), dp = g.Stream("dp"), p2p = g.Stream("p2p");
  g.SetStreamPriority(p2p, 1);
  const double low_bytes = 3e9, high_bytes = 3e8, kernel_s = 0.01;
  const Ends low = Transfer(g, 0, 1, low_bytes, dp, "dp");
  Task kernel;
  kernel.kind = TaskKind::kCompute;
  kernel.stream = compute;
  kernel.dtype = DType::kBF16;
  kernel.flops = kernel_s * kSecondFlops;
  kernel.name = "forward";
  const TaskId k = g.Add(kernel);
  const Ends high = Transfer(g, 0, 1, high_bytes, p2p, "activations", {k});
  const ExecutionTrace tr = Simulate(g, OneServer(2), NoLaunch());
  EXPECT_NEAR(tr.records[high.send].start_s, kernel_s, 1e-12);
  EXPECT_NEAR(tr.records[high.recv].end_s, kernel_s + kLatencyS + high_bytes / (kBps / 2), 1e-9);
  EXPECT_NEAR(tr.records[low.recv].end_s, kLatencyS + (low_bytes + high_bytes) / kBps, 1e-9);
}

// Three classes ready at once, added lowest first: they run one after another, highest first;
// a held task is released when the last higher one in flight on its rank ends.
TEST(StreamPriority, HeldTasksStartInPriorityOrder) {
  TaskGraph g(2);
  const int low_s = g.Stream("low"), mid_s = g.Stream("mid"), high_s = g.Stream("high");
  g.SetStreamPriority(low_s, -1);
  g.SetStreamPriority(high_s, 2);
  const double bytes = 1e9;
  const Ends low = Transfer(g, 0, 1, bytes, low_s, "low");
  const Ends mid = Transfer(g, 0, 1, bytes, mid_s, "mid");
  const Ends high = Transfer(g, 0, 1, bytes, high_s, "high");
  const ExecutionTrace tr = Simulate(g, OneServer(2), NoLaunch());
  EXPECT_NEAR(tr.records[high.recv].end_s, Alone(bytes), 1e-12);
  EXPECT_EQ(tr.records[mid.send].start_s, tr.records[high.recv].end_s);
  EXPECT_NEAR(tr.records[mid.recv].end_s, 2 * Alone(bytes), 1e-9);
  EXPECT_EQ(tr.records[low.send].start_s, tr.records[mid.recv].end_s);
  EXPECT_NEAR(tr.records[low.recv].end_s, 3 * Alone(bytes), 1e-9);
}

// The gate is per rank: a high-priority transfer between GPUs 2 and 3 holds nothing on 0 and 1.
TEST(StreamPriority, OtherRanksAreNotHeld) {
  TaskGraph g(4);
  const int dp = g.Stream("dp"), p2p = g.Stream("p2p");
  g.SetStreamPriority(p2p, 1);
  const Ends low = Transfer(g, 0, 1, 1e9, dp, "dp");
  const Ends high = Transfer(g, 2, 3, 1e9, p2p, "activations");
  const ExecutionTrace tr = Simulate(g, OneServer(4), NoLaunch());
  EXPECT_EQ(tr.records[low.send].start_s, 0);
  EXPECT_NEAR(tr.records[low.recv].end_s, Alone(1e9), 1e-12);
  EXPECT_NEAR(tr.records[high.recv].end_s, Alone(1e9), 1e-12);
}

// Folding: a folded rank's transfers are mirrors, which the gate does not hold; they start
// with their counterparts, which it did, so the folded pair runs as the simulated one.
TEST(StreamPriority, MirrorsFollowTheirHeldCounterparts) {
  TaskGraph g(4);
  const int dp = g.Stream("dp"), p2p = g.Stream("p2p");
  g.SetStreamPriority(p2p, 1);
  const Ends low = Transfer(g, 0, 1, 3e9, dp, "dp");
  const Ends high = Transfer(g, 0, 1, 3e8, p2p, "activations");
  const Ends low_mirror = Transfer(g, 2, 3, 3e9, dp, "dp");
  const Ends high_mirror = Transfer(g, 2, 3, 3e8, p2p, "activations");
  g.SetMirror(low_mirror.send, low.send);
  g.SetMirror(low_mirror.recv, low.recv);
  g.SetMirror(high_mirror.send, high.send);
  g.SetMirror(high_mirror.recv, high.recv);
  g.SetFold({0, 1, 0, 1});
  const ExecutionTrace tr = Simulate(g, OneServer(4), NoLaunch());
  EXPECT_NEAR(tr.records[high.recv].end_s, Alone(3e8), 1e-12);
  EXPECT_EQ(tr.records[low.send].start_s, tr.records[high.recv].end_s);
  for (auto [mirror, of] : {std::pair{low_mirror, low}, std::pair{high_mirror, high}}) {
    for (auto [m, o] : {std::pair{mirror.send, of.send}, std::pair{mirror.recv, of.recv}}) {
      EXPECT_EQ(tr.records[m].start_s, tr.records[o].start_s) << m;
      EXPECT_NEAR(tr.records[m].end_s, tr.records[o].end_s, 1e-12) << m;
    }
  }
}

}  // namespace
}  // namespace stratasim::sim
