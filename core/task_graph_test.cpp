#include "core/task_graph.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/error.h"

namespace stratasim {
namespace {

TaskGraph Sample() {
  TaskGraph g(2);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  Task k;
  k.kind = TaskKind::kCompute;
  k.stream = compute;
  k.name = "gemm";
  k.op = OpKind::kGemm;
  k.dtype = DType::kBF16;
  k.flops = 1e9;
  k.bytes = 1e6;
  k.phase = Phase::kForward;
  k.gemm = GemmShape{1024, 512, 256, 3};  // 2 * 1024 * 512 * 256 * 3 is not 1e9: not checked
  const TaskId a = g.Add(k);
  k.rank = 1;
  k.op = OpKind::kFusedAttention;
  k.causal = true;
  const TaskId b = g.Add(k);
  Collective c;
  c.ranks = {0, 1};
  c.bytes = 4096;
  Task m;
  m.stream = comm;
  m.name = "ar";
  m.category = "dp";
  std::vector<TaskId> ids = g.AddCollective(c, m);
  g.AddDep(ids[0], a);
  g.AddDep(ids[1], b);
  Task s, r;
  s.stream = r.stream = comm;
  s.name = r.name = "p2p";
  g.AddTransfer(0, 1, 100, s, r);
  Task mem;
  mem.kind = TaskKind::kMemory;
  mem.stream = compute;
  mem.memory_delta_bytes = -5;
  g.Add(mem);
  Task copy;
  copy.kind = TaskKind::kCopy;
  copy.stream = comm;
  copy.copy = CopyDirection::kDeviceToHost;
  copy.bytes = 7;
  g.Add(copy);
  return g;
}

TEST(TaskGraph, CollectiveMembersAndTransfersArePaired) {
  const TaskGraph g = Sample();
  ASSERT_EQ(g.collectives().size(), 1u);
  EXPECT_EQ(g.collectives()[0].members, (std::vector<TaskId>{2, 3}));
  EXPECT_EQ(g.task(3).rank, 1);
  EXPECT_EQ(g.task(4).kind, TaskKind::kSend);
  EXPECT_EQ(g.task(5).peer, 0);
  EXPECT_EQ(g.task(4).tag, g.task(5).tag);
  EXPECT_NO_THROW(g.Validate());
}

TEST(TaskGraph, JsonRoundTripIsExact) {
  const TaskGraph g = Sample();
  const std::string text = TaskGraphToJson(g);
  const TaskGraph back = TaskGraphFromJson(text);
  EXPECT_EQ(TaskGraphToJson(back), text);
  EXPECT_EQ(back.task(3).deps, (std::vector<TaskId>{1}));
  EXPECT_EQ(back.task(7).copy, CopyDirection::kDeviceToHost);
  EXPECT_EQ(back.task(0).gemm.n, 512);
  EXPECT_EQ(back.task(0).gemm.batch, 3);
  EXPECT_FALSE(back.task(0).causal);
  EXPECT_EQ(back.task(1).op, OpKind::kFusedAttention);
  EXPECT_TRUE(back.task(1).causal);
  EXPECT_FALSE(back.task(7).gemm.known());
}

TEST(TaskGraph, RejectsForwardDependenciesAndBadRanks) {
  TaskGraph g(2);
  Task t;
  t.stream = g.Stream("s");
  t.deps = {0};
  EXPECT_THROW(g.Add(t), Error);  // task 0 cannot depend on itself
  t.deps = {};
  t.rank = 2;
  try {
    g.Add(t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 is outside [0, 2)"), std::string::npos);
  }
  t.rank = 0;
  g.Add(t);
  EXPECT_THROW(g.AddDep(0, 0), Error);
}

TEST(TaskGraph, MirrorsAndFoldRoundTripAndAreChecked) {
  TaskGraph g = Sample();
  g.SetMirror(3, 2);
  g.SetFold({0, 0});
  const TaskGraph back = TaskGraphFromJson(TaskGraphToJson(g));
  EXPECT_EQ(back.task(3).mirror, 2);
  EXPECT_EQ(back.task(2).mirror, -1);
  EXPECT_EQ(back.fold(), (std::vector<int>{0, 0}));
  EXPECT_EQ(back.Representative(1), 0);
  try {
    g.SetMirror(2, 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "SetMirror: task 2 may only mirror an earlier task, not 3");
  }
  try {
    g.SetFold({1, 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "fold: rank 0's representative 1 is not a rank that represents itself");
  }
  try {
    g.SetFold({0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "fold: 1 representatives for 2 ranks");
  }
  std::string text = TaskGraphToJson(g);
  const std::string from = "\"mirror\":2";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"mirror\":5");
  try {
    TaskGraphFromJson(text);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mirror 5 is not an earlier task"), std::string::npos)
        << e.what();
  }
}

// A task on its rank's host CPU (a parameter-server shard on a CPU node, strategies/async/).
TEST(TaskGraph, OnHostRoundTripsAndOnlyComputeAndTransfersRunOnAHost) {
  // The flag sits in the padding after the one-byte fields: Task keeps its size (144 bytes
  // before the flag too; the 136 of the comment in core/task_graph.h predates some field).
  static_assert(sizeof(Task) <= 144, "Task grew: see the packing comment in core/task_graph.h");
  TaskGraph g(2);
  const int s = g.Stream("ps");
  Task send, recv;
  send.stream = recv.stream = s;
  send.name = recv.name = "push";
  recv.on_host = true;
  const auto [sid, rid] = g.AddTransfer(0, 1, 100, send, recv);
  Task update;
  update.kind = TaskKind::kCompute;
  update.rank = 1;
  update.stream = s;
  update.name = "adam";
  update.bytes = 64;
  update.on_host = true;
  const TaskId uid = g.Add(update);
  const std::string text = TaskGraphToJson(g);
  const TaskGraph back = TaskGraphFromJson(text);
  EXPECT_FALSE(back.task(sid).on_host);
  EXPECT_TRUE(back.task(rid).on_host);
  EXPECT_TRUE(back.task(uid).on_host);
  // Graphs without the flag keep their text.
  EXPECT_EQ(TaskGraphToJson(Sample()).find("on_host"), std::string::npos);
  Task mem;
  mem.kind = TaskKind::kMemory;
  mem.stream = s;
  mem.name = "buffers";
  mem.on_host = true;
  try {
    g.Add(mem);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "task 3 ('buffers'): only compute, send and receive tasks run on a host CPU");
  }
}

TEST(TaskGraph, RejectsCollectiveWithRepeatedRank) {
  TaskGraph g(2);
  Collective c;
  c.ranks = {0, 0};
  Task m;
  m.stream = g.Stream("s");
  try {
    g.AddCollective(c, m);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 appears twice"), std::string::npos);
  }
}

TEST(TaskGraph, JsonReaderNamesTheBadField) {
  const std::string broken = [&] {
    std::string t = TaskGraphToJson(Sample());
    const size_t at = t.find("\"op\":\"gemm\"");
    return t.replace(at, 11, "\"op\":\"conv\"");
  }();
  try {
    TaskGraphFromJson(broken);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("$.tasks[0].op: \"conv\" is not one of"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(TaskGraphFromJson("{"), Error);
  EXPECT_THROW(TaskGraphFromJson("{\"format\":\"x\"}"), Error);
}

// Stream priorities default to 0, are written only when one is not 0 (old files stay as they
// were and read as all 0), round-trip, and are checked where they are set and read.
TEST(TaskGraph, StreamPrioritiesRoundTripAndAreChecked) {
  TaskGraph g = Sample();
  EXPECT_EQ(g.stream_priority(0), 0);
  EXPECT_FALSE(g.has_stream_priorities());
  EXPECT_EQ(TaskGraphToJson(g).find("stream_priorities"), std::string::npos);
  EXPECT_EQ(TaskGraphFromJson(TaskGraphToJson(g)).stream_priorities(), (std::vector<int>{0, 0}));

  g.SetStreamPriority(1, 7);
  EXPECT_TRUE(g.has_stream_priorities());
  EXPECT_EQ(g.stream_priority(1), 7);
  const std::string text = TaskGraphToJson(g);
  EXPECT_NE(text.find("\"stream_priorities\":[0,7]"), std::string::npos) << text;
  const TaskGraph back = TaskGraphFromJson(text);
  EXPECT_EQ(back.stream_priorities(), (std::vector<int>{0, 7}));
  EXPECT_EQ(TaskGraphToJson(back), text);
  // A stream added later starts at 0.
  EXPECT_EQ(g.stream_priority(g.Stream("late")), 0);

  auto error_of = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of([&] { g.SetStreamPriority(9, 1); }),
            "SetStreamPriority: stream 9 is not declared");
  EXPECT_EQ(error_of([&] { g.SetStreamPriority(0, 1001); }),
            "SetStreamPriority: priority 1001 of stream 'compute' is outside [-1000, 1000]");
  EXPECT_EQ(error_of([&] { g.stream_priority(-1); }), "stream_priority: stream -1 is not declared");

  auto with = [&](const std::string& priorities) {
    std::string t = text;
    const std::string from = "\"stream_priorities\":[0,7]";
    return t.replace(t.find(from), from.size(), "\"stream_priorities\":" + priorities);
  };
  EXPECT_EQ(error_of([&] { TaskGraphFromJson(with("[0,5000]")); }),
            "$.stream_priorities[1]: 5000 is outside [-1000, 1000]");
  EXPECT_EQ(error_of([&] { TaskGraphFromJson(with("[0]")); }),
            "$.stream_priorities: 1 priorities for 2 streams");
  EXPECT_EQ(error_of([&] { TaskGraphFromJson(with("[0,1.5]")); }),
            "$.stream_priorities[1]: must be an integer");
  EXPECT_EQ(error_of([&] { TaskGraphFromJson(with("7")); }), "$.stream_priorities: must be a list");
}

// Rank start times (a job's arrival, docs/multi-job.md): absent from the JSON until one is
// set, then one per rank, read back and checked.
TEST(TaskGraph, RankStartsRoundTripAndAreChecked) {
  TaskGraph g = Sample();
  EXPECT_TRUE(g.rank_starts().empty());
  EXPECT_EQ(g.rank_start_s(1), 0);
  EXPECT_EQ(TaskGraphToJson(g).find("rank_start_s"), std::string::npos);
  g.SetRankStart(1, 0.25);
  EXPECT_EQ(g.rank_start_s(0), 0);
  EXPECT_EQ(g.rank_start_s(1), 0.25);
  const std::string text = TaskGraphToJson(g);
  EXPECT_NE(text.find("\"rank_start_s\":[0.0,0.25]"), std::string::npos) << text;
  EXPECT_EQ(TaskGraphFromJson(text).rank_starts(), (std::vector<double>{0, 0.25}));
  auto error_of = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of([&] { g.SetRankStart(2, 1); }), "SetRankStart: rank 2 is outside [0, 2)");
  EXPECT_EQ(error_of([&] { g.SetRankStart(0, -1); }),
            "SetRankStart: rank 0's start -1.000000 s must be finite and >= 0");
  auto with = [&](const std::string& starts) {
    std::string t = text;
    const std::string from = "\"rank_start_s\":[0.0,0.25]";
    return t.replace(t.find(from), from.size(), "\"rank_start_s\":" + starts);
  };
  EXPECT_EQ(error_of([&] { TaskGraphFromJson(with("[0]")); }),
            "$.rank_start_s: 1 start times for 2 ranks");
  EXPECT_EQ(error_of([&] { TaskGraphFromJson(with("[0,-2]")); }),
            "$.rank_start_s[1]: SetRankStart: rank 1's start -2.000000 s must be finite and >= 0");
}

// A graph simulated while it is planned drops what the simulation finished with: ids go on,
// later tasks may still depend on retired ones, and reading a retired task says so.
TEST(TaskGraph, RetiredTasksAndCollectivesLeaveTheGraph) {
  TaskGraph g(2);
  const int s = g.Stream("s");
  Task t;
  t.stream = s;
  const TaskId a = g.Add(t);
  Collective c;
  c.ranks = {0, 1};
  Task m;
  m.stream = s;
  const std::vector<TaskId> members = g.AddCollective(c, m);
  t.iteration = 1;
  g.Retire(members[1]);  // the collective keeps a live member: it stays
  EXPECT_EQ(g.collectives().size(), 1u);
  EXPECT_EQ(g.first_live(), members[1]);
  g.Retire(members[1] + 1);
  EXPECT_TRUE(g.collectives().empty());
  EXPECT_EQ(g.next_collective(), 1);
  EXPECT_TRUE(g.tasks().empty());
  t.deps = {a};
  const TaskId b = g.Add(t);
  EXPECT_EQ(b, members[1] + 1);
  EXPECT_EQ(g.task(b).deps, (std::vector<TaskId>{a}));
  try {
    g.task(a);
    ADD_FAILURE() << "read a retired task";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 0 was retired");
  }
  try {
    g.AddDep(a, 0);
    ADD_FAILURE() << "changed a retired task";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "AddDep: task 0 was retired");
  }
  EXPECT_TRUE(g.iteration_ordered());
  t.iteration = 0;
  t.deps.clear();
  g.Add(t);
  EXPECT_FALSE(g.iteration_ordered());
}

}  // namespace
}  // namespace stratasim
