// The host backend run one rank per process (RunOptions::processes), with thread-processes of
// a LocalProcessGroups standing in for MPI's.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>

#include "validate/host/host_backend.h"
#include "validate/local_process_group.h"

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

HostBackend Backend() {
  HostBackendOptions o;
  o.ranks = 1;  // each process runs one rank
  o.machine = FakeMachine();
  return HostBackend(o);
}

Task Gemm(int rank, int stream) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.rank = rank;
  t.stream = stream;
  t.op = OpKind::kGemm;
  t.gemm = GemmShape{32, 32, 32, 1};
  t.flops = 2.0 * 32 * 32 * 32;
  t.name = "gemm" + std::to_string(rank);
  return t;
}

// n ranks: a GEMM each, then on the comm stream all_reduce, all_gather, reduce_scatter,
// all_to_all and a broadcast from rank n-1, and on the compute stream a ring of send/recv
// pairs (r -> r+1) after the GEMM.
TaskGraph Graph(int n) {
  TaskGraph g(n);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  std::vector<TaskId> gemm;
  for (int r = 0; r < n; ++r) gemm.push_back(g.Add(Gemm(r, compute)));
  std::vector<int> all;
  for (int r = 0; r < n; ++r) all.push_back(r);
  const std::vector<CollectiveKind> kinds = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                             CollectiveKind::kReduceScatter,
                                             CollectiveKind::kAllToAll, CollectiveKind::kBroadcast};
  bool first = true;
  for (CollectiveKind k : kinds) {
    Collective c;
    c.kind = k;
    c.ranks = all;
    c.bytes = 64 * 1024;
    c.root = n - 1;
    Task m;
    m.stream = comm;
    m.name = std::string(ToString(k));
    const std::vector<TaskId> ids = g.AddCollective(c, m);
    if (first) {
      for (int r = 0; r < n; ++r) g.AddDep(ids[static_cast<std::size_t>(r)], gemm[r]);
    }
    first = false;
  }
  for (int r = 0; r < n; ++r) {
    Task send, recv;
    send.stream = recv.stream = compute;
    send.name = "send" + std::to_string(r);
    recv.name = "recv" + std::to_string((r + 1) % n);
    g.AddTransfer(r, (r + 1) % n, 4096, send, recv);
  }
  return g;
}

struct Outcome {
  std::optional<ExecutionTrace> trace;
  std::optional<BackendError> error;
};

// Runs `g` on `n` thread-processes (of `started` of them only the first `started` call Run;
// the rest never join), process p with memory limit limit_bytes[p] when given.
std::vector<Outcome> RunDistributed(const TaskGraph& g, int n, double timeout_s, int started = -1,
                                    std::vector<double> limit_bytes = {}) {
  if (started < 0) started = n;
  auto pg = LocalProcessGroups(n, timeout_s);
  std::vector<Outcome> out(static_cast<std::size_t>(started));
  std::vector<std::thread> threads;
  for (int p = 0; p < started; ++p) {
    threads.emplace_back([&, p] {
      HostBackend b = Backend();
      RunOptions o;
      o.processes = pg[static_cast<std::size_t>(p)].get();
      if (!limit_bytes.empty()) o.memory_limit_bytes_per_rank = limit_bytes[p];
      try {
        out[static_cast<std::size_t>(p)].trace = b.Run(g, o);
      } catch (const BackendError& e) {
        out[static_cast<std::size_t>(p)].error = e;
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

void ExpectEveryRankMeasuresItsOwnTasks(int n) {
  const TaskGraph g = Graph(n);
  const auto out = RunDistributed(g, n, 10.0);
  std::vector<TraceRecord> merged(g.tasks().size());
  for (int p = 0; p < n; ++p) {
    const Outcome& o = out[static_cast<std::size_t>(p)];
    ASSERT_TRUE(o.trace) << "process " << p << ": " << (o.error ? o.error->what() : "");
    const ExecutionTrace& t = *o.trace;
    EXPECT_EQ(t.executor, "host");
    EXPECT_EQ(t.num_ranks, n);
    ASSERT_EQ(t.records.size(), g.tasks().size());
    EXPECT_EQ(t.collective_algorithms,
              (std::vector<std::string>{"ring/simple/1ch", "ring/simple/1ch", "ring/simple/1ch",
                                        "pairwise/simple/1ch", "ring/simple/1ch"}));
    double latest = 0;
    for (const Task& task : g.tasks()) {
      const TraceRecord& r = t.records[static_cast<std::size_t>(task.id)];
      EXPECT_EQ(r.task, task.id);
      EXPECT_EQ(r.rank, task.rank);
      if (task.rank == p) {
        EXPECT_GE(r.start_s, 0) << task.name;
        EXPECT_GE(r.end_s, r.start_s) << task.name;
        EXPECT_GE(r.peers_joined_s, r.start_s) << task.name;
        latest = std::max(latest, r.end_s);
        merged[static_cast<std::size_t>(task.id)] = r;
      } else {
        EXPECT_EQ(r.start_s, -1) << task.name << " of rank " << task.rank << " in process " << p;
        EXPECT_EQ(r.end_s, -1);
      }
    }
    EXPECT_EQ(t.makespan_s, latest);
  }
  // One time origin for all: no member of a collective ends before every member started (its
  // result needs their bytes), nor a receive before its send started. The clocks are aligned
  // within the kept round trip (microseconds here), hence the 1 ms slack.
  const double slack_s = 1e-3;
  for (const Collective& c : g.collectives()) {
    for (TaskId a : c.members) {
      for (TaskId b : c.members) {
        EXPECT_GE(merged[static_cast<std::size_t>(a)].end_s + slack_s,
                  merged[static_cast<std::size_t>(b)].start_s);
      }
    }
  }
  for (const Task& task : g.tasks()) {
    if (task.kind != TaskKind::kRecv) continue;
    for (const Task& send : g.tasks()) {
      if (send.kind == TaskKind::kSend && send.tag == task.tag) {
        EXPECT_GE(merged[static_cast<std::size_t>(task.id)].end_s + slack_s,
                  merged[static_cast<std::size_t>(send.id)].start_s);
      }
    }
  }
}

TEST(HostMultiProcess, TwoProcessesEachMeasureTheirRank) { ExpectEveryRankMeasuresItsOwnTasks(2); }

TEST(HostMultiProcess, FourProcessesEachMeasureTheirRank) { ExpectEveryRankMeasuresItsOwnTasks(4); }

TEST(HostMultiProcess, APeerThatNeverJoinsIsACommunicationErrorNamingIt) {
  const TaskGraph g = Graph(2);
  const auto t0 = std::chrono::steady_clock::now();
  const auto out = RunDistributed(g, 2, 0.3, /*started=*/1);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(out[0].error);
  EXPECT_EQ(out[0].error->kind(), BackendError::Kind::kCommunication);
  EXPECT_STREQ(out[0].error->what(),
               "host backend: rank 0: all_gather: no message from rank 1 within 0.3 s");
  EXPECT_LT(waited, 5.0);
}

// Rank 1 runs out of memory after the first all-reduce; rank 0, waiting for it in the next
// collective, ends with an error naming rank 1 and a partial trace of what it measured.
TEST(HostMultiProcess, APeerFailingMidRunEndsTheOthersWithItsRank) {
  // gemm -> all_reduce 'grads' -> [rank 1: an allocation over its limit] -> all_gather 'params'.
  TaskGraph h(2);
  const int compute = h.Stream("compute"), comm = h.Stream("comm");
  const TaskId g0 = h.Add(Gemm(0, compute)), g1 = h.Add(Gemm(1, compute));
  Collective c;
  c.ranks = {0, 1};
  c.bytes = 4096;
  c.kind = CollectiveKind::kAllReduce;
  Task m;
  m.stream = comm;
  m.name = "grads";
  const auto ar = h.AddCollective(c, m);
  h.AddDep(ar[0], g0);
  h.AddDep(ar[1], g1);
  Task alloc;
  alloc.kind = TaskKind::kMemory;
  alloc.rank = 1;
  alloc.stream = comm;
  alloc.memory_delta_bytes = 1e6;
  alloc.category = "activations";
  alloc.name = "alloc";
  h.Add(alloc);
  c.kind = CollectiveKind::kAllGather;
  m.name = "params";
  const auto ag = h.AddCollective(c, m);
  const auto out = RunDistributed(h, 2, 0.3, -1, {1e9, 1e3});
  ASSERT_TRUE(out[1].error);
  EXPECT_EQ(out[1].error->kind(), BackendError::Kind::kOutOfMemory);
  ASSERT_TRUE(out[0].error);
  EXPECT_EQ(out[0].error->kind(), BackendError::Kind::kCommunication);
  EXPECT_STREQ(out[0].error->what(),
               ("host backend: rank 0: all_gather 'params' (task " + std::to_string(ag[0]) +
                "): no message from rank 1 within 0.3 s")
                   .c_str());
  const ExecutionTrace& partial = out[0].error->partial();
  ASSERT_EQ(partial.records.size(), h.tasks().size());
  EXPECT_GE(partial.records[static_cast<std::size_t>(ar[0])].end_s, 0);
  EXPECT_EQ(partial.records[static_cast<std::size_t>(ag[0])].end_s, -1);
}

TEST(HostMultiProcess, TheWrongNumberOfProcessesIsRefused) {
  const TaskGraph g = Graph(2);
  const auto few = RunDistributed(g, 1, 1.0);
  ASSERT_TRUE(few[0].error);
  EXPECT_EQ(few[0].error->kind(), BackendError::Kind::kTooFewRanks);
  EXPECT_STREQ(few[0].error->what(),
               "host backend: the plan has 2 ranks but 1 processes run it (one process per rank: "
               "start 2 processes, e.g. mpirun -np 2)");
  const auto many = RunDistributed(g, 3, 1.0);
  for (const Outcome& o : many) {
    ASSERT_TRUE(o.error);
    EXPECT_EQ(o.error->kind(), BackendError::Kind::kExecution);
  }
}

TEST(HostMultiProcess, ADependencyAcrossRanksIsRefused) {
  TaskGraph g(2);
  const int s = g.Stream("compute");
  const TaskId a = g.Add(Gemm(0, s));
  Task b = Gemm(1, s);
  b.deps = {a};
  g.Add(b);
  const auto out = RunDistributed(g, 2, 1.0);
  for (const Outcome& o : out) {
    ASSERT_TRUE(o.error);
    EXPECT_EQ(o.error->kind(), BackendError::Kind::kExecution);
    EXPECT_STREQ(o.error->what(),
                 "host backend: task 1 'gemm1' (rank 1, stream 'compute', iteration 0) depends on "
                 "task 0 'gemm0' (rank 0, stream 'compute', iteration 0), of another rank; in a "
                 "multi-process run ranks meet only through collectives and send/recv pairs, so "
                 "this plan cannot run one process per rank");
  }
}

}  // namespace
}  // namespace stratasim::validate
