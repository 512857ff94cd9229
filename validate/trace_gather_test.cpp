#include "validate/trace_gather.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::validate {
namespace {

// Two ranks: a GEMM each, an all-reduce, then a transfer 0 -> 1.
TaskGraph Graph() {
  TaskGraph g(2);
  const int compute = g.Stream("compute"), comm = g.Stream("comm");
  for (int r = 0; r < 2; ++r) {
    Task t;
    t.rank = r;
    t.stream = compute;
    t.name = "gemm";
    g.Add(t);  // tasks 0, 1
  }
  Collective c;
  c.ranks = {0, 1};
  c.bytes = 1e6;
  Task m;
  m.stream = comm;
  m.name = "ar";
  g.AddCollective(c, m);  // tasks 2 (rank 0), 3 (rank 1)
  Task send, recv;
  send.stream = recv.stream = comm;
  g.AddTransfer(0, 1, 4096, send, recv);  // tasks 4 (send), 5 (recv)
  return g;
}

// What process `rank` measures: its own tasks at `offset` + fixed times, the other rank's
// unmeasured, as a backend with RunOptions::processes returns.
ExecutionTrace Measured(const TaskGraph& g, int rank, double offset) {
  ExecutionTrace t;
  t.executor = "host";
  t.num_ranks = 2;
  t.streams = g.streams();
  t.collective_algorithms = {"ring/simple/1ch"};
  for (const Task& task : g.tasks()) {
    TraceRecord r{task.id, task.rank, task.stream, -1, -1, -1};
    if (task.rank == rank) {
      r.start_s = offset + task.id;
      r.end_s = r.start_s + 10;
      r.peers_joined_s = r.start_s;  // its own join time
    }
    t.records.push_back(r);
  }
  return t;
}

std::string Outcome(const TaskGraph& g, int rank, double offset, bool ok = true) {
  ProcessOutcome o;
  o.rank = rank;
  o.ok = ok;
  if (!ok) {
    o.error_kind = "out of memory";
    o.error = "rank 1 allocated 2 GiB of 1 GiB";
  }
  o.trace = Measured(g, rank, offset);
  return EncodeOutcome(o);
}

TEST(TraceGather, EachRanksRecordsFromItsProcessAndJoinTimesTheLatestMembers) {
  const TaskGraph g = Graph();
  const MergedRun m = MergeOutcomes(g, {Outcome(g, 0, 0), Outcome(g, 1, 0.5)}, 30);
  ASSERT_TRUE(m.complete);
  EXPECT_TRUE(m.errors.empty());
  ASSERT_EQ(m.trace.records.size(), 6u);
  EXPECT_EQ(m.trace.executor, "host");
  EXPECT_EQ(m.trace.collective_algorithms, std::vector<std::string>{"ring/simple/1ch"});
  EXPECT_DOUBLE_EQ(m.trace.records[0].start_s, 0);    // rank 0's GEMM from process 0
  EXPECT_DOUBLE_EQ(m.trace.records[1].start_s, 1.5);  // rank 1's from process 1
  // The all-reduce: rank 0 joined at 2, rank 1 at 3.5: both members' peers joined at 3.5.
  EXPECT_DOUBLE_EQ(m.trace.records[2].peers_joined_s, 3.5);
  EXPECT_DOUBLE_EQ(m.trace.records[3].peers_joined_s, 3.5);
  // The transfer: the send at 4, the receive at 5.5.
  EXPECT_DOUBLE_EQ(m.trace.records[4].peers_joined_s, 5.5);
  EXPECT_DOUBLE_EQ(m.trace.records[5].peers_joined_s, 5.5);
  EXPECT_DOUBLE_EQ(m.trace.makespan_s, 15.5);
}

TEST(TraceGather, AFailedRankIsNamedWithItsErrorAndItsRecordsKept) {
  const TaskGraph g = Graph();
  const MergedRun m = MergeOutcomes(g, {Outcome(g, 0, 0), Outcome(g, 1, 0, false)}, 30);
  EXPECT_FALSE(m.complete);
  ASSERT_EQ(m.errors.size(), 1u);
  EXPECT_EQ(m.errors[0], "rank 1: out of memory: rank 1 allocated 2 GiB of 1 GiB");
  EXPECT_DOUBLE_EQ(m.trace.records[1].start_s, 1);  // what it measured before failing
}

TEST(TraceGather, ASilentRankIsNamedAndTheOthersRecordsKept) {
  const TaskGraph g = Graph();
  const MergedRun m = MergeOutcomes(g, {Outcome(g, 0, 0), std::nullopt}, 30);
  EXPECT_FALSE(m.complete);
  ASSERT_EQ(m.errors.size(), 1u);
  EXPECT_EQ(m.errors[0], "rank 1 sent no trace within 30 s: it died or hangs");
  EXPECT_DOUBLE_EQ(m.trace.records[0].start_s, 0);
  EXPECT_DOUBLE_EQ(m.trace.records[1].start_s, -1);
  // The all-reduce's rank 0 member keeps its own join time: its peer's is unknown.
  EXPECT_DOUBLE_EQ(m.trace.records[2].peers_joined_s, 2);
}

TEST(TraceGather, OnlyTheProcessesOwnRanksRecordsTravel) {
  const TaskGraph g = Graph();
  ProcessOutcome o;
  o.rank = 1;
  o.trace = Measured(g, 1, 0);
  const ProcessOutcome back = DecodeOutcome(EncodeOutcome(o));
  EXPECT_EQ(back.rank, 1);
  ASSERT_EQ(back.trace.records.size(), 3u);
  for (const TraceRecord& r : back.trace.records) EXPECT_EQ(r.rank, 1);
}

TEST(TraceGather, MalformedInputIsRefusedWithTheReason) {
  const TaskGraph g = Graph();
  EXPECT_THROW(MergeOutcomes(g, {Outcome(g, 0, 0)}, 30), Error);
  try {
    MergeOutcomes(g, {Outcome(g, 0, 0), Outcome(g, 0, 0)}, 30);
    FAIL() << "a process answering for another rank was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "merging traces: process 1 says it ran rank 0");
  }
  try {
    DecodeOutcome("{}");
    FAIL() << "an empty document was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a process's outcome"), std::string::npos);
  }
}

}  // namespace
}  // namespace stratasim::validate
