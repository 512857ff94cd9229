#include "core/graph_index.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim {
namespace {

Task On(int stream, const char* name) {
  Task t;
  t.stream = stream;
  t.name = name;
  return t;
}

TEST(GraphIndex, PairsTransfersByTag) {
  TaskGraph g(3);
  const int s = g.Stream("comm");
  const auto [send_a, recv_a] = g.AddTransfer(0, 1, 8, On(s, "a"), On(s, "a"));
  g.Add(On(s, "compute"));
  const auto [send_b, recv_b] = g.AddTransfer(2, 0, 8, On(s, "b"), On(s, "b"));
  const GraphIndex index(g);
  EXPECT_EQ(index.Peer(g.task(send_a)), recv_a);
  EXPECT_EQ(index.Peer(g.task(recv_a)), send_a);
  EXPECT_EQ(index.Peer(g.task(recv_b)), send_b);
  EXPECT_EQ(index.TransferNumber(g.task(send_a)), 0);
  EXPECT_EQ(index.TransferNumber(g.task(recv_b)), 1);
  EXPECT_EQ(index.transfers(), 2);
}

TEST(GraphIndex, AnEndNotYetTakenInHasNoPeer) {
  TaskGraph g(2);
  const int s = g.Stream("comm");
  const auto [send, recv] = g.AddTransfer(0, 1, 8, On(s, "a"), On(s, "a"));
  GraphIndex index;
  index.Add(g.task(send));
  EXPECT_EQ(index.Peer(g.task(send)), -1);
  index.Add(g.task(recv));
  EXPECT_EQ(index.Peer(g.task(send)), recv);
}

TEST(GraphIndex, FindsEachMembersPlace) {
  TaskGraph g(4);
  Collective c;
  c.ranks = {2, 0, 3, 1};  // ring order, not rank order
  const std::vector<TaskId> ids = g.AddCollective(c, On(g.Stream("comm"), "ar"));
  const Collective& added = g.collective(0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(GraphIndex::Member(added, g.task(ids[i])), i);
    EXPECT_EQ(added.ranks[GraphIndex::Member(added, g.task(ids[i]))], g.task(ids[i]).rank);
  }
}

TEST(GraphIndex, BadQueriesAreNamed) {
  TaskGraph g(2);
  const int s = g.Stream("comm");
  const TaskId lone = g.Add(On(s, "compute"));
  Collective c;
  c.ranks = {0, 1};
  g.AddCollective(c, On(s, "ar"));
  const GraphIndex index(g);
  try {
    index.Peer(g.task(lone));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 0 is not a transfer taken in");
  }
  try {
    GraphIndex::Member(g.collective(0), g.task(lone));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task 0 is not a member of its collective");
  }
}

TEST(GraphIndex, ATagUsedTwiceIsRefused) {
  Task a;
  a.id = 0;
  a.kind = TaskKind::kSend;
  a.tag = 7;
  Task b = a;
  b.id = 1;
  GraphIndex index;
  index.Add(a);
  try {
    index.Add(b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tag 7 is used by two tasks of one kind");
  }
}

// Taken in and retired batch after batch, as the simulator streams a plan: the index holds
// the live transfers only, however many iterations go by.
TEST(GraphIndex, RetiringKeepsItBounded) {
  TaskGraph g(2);
  const int s = g.Stream("comm");
  GraphIndex index;
  TaskId taken = 0;
  for (int iteration = 0; iteration < 1000; ++iteration) {
    for (int k = 0; k < 10; ++k) g.AddTransfer(0, 1, 8, On(s, "x"), On(s, "x"));
    for (; taken < g.next_id(); ++taken) index.Add(g.task(taken));
    EXPECT_LE(index.live_transfers(), 20u);
    // Retire all but the last transfer's send: its pair stays.
    const TaskId below = g.next_id() - 1;
    index.Retire(below);
    g.Retire(below);
    EXPECT_EQ(index.live_transfers(), 1u);
  }
  EXPECT_EQ(index.transfers(), 10000);
  const Task& last_recv = g.task(g.next_id() - 1);
  EXPECT_EQ(index.Peer(last_recv), g.next_id() - 2);
}

}  // namespace
}  // namespace stratasim
