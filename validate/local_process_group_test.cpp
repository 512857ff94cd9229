#include "validate/local_process_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace stratasim::validate {
namespace {

Wait W(const std::string& what) { return Wait{what, nullptr}; }

TEST(LocalProcessGroup, MovesCopiesInOrderPerChannel) {
  auto pg = LocalProcessGroups(2, 2.0);
  ASSERT_EQ(pg.size(), 2u);
  EXPECT_EQ(pg[1]->rank(), 1);
  EXPECT_EQ(pg[1]->size(), 2);
  EXPECT_EQ(pg[0]->host(), "localhost");
  int a = 1, b = 2, c = 3;
  pg[0]->Send(1, 7, &a, sizeof a, W("a"));
  pg[0]->Send(1, 7, &b, sizeof b, W("b"));
  pg[0]->Send(1, 8, &c, sizeof c, W("c"));
  a = b = c = 0;  // the mailbox holds copies, not the sender's buffers
  int x = 0;
  pg[1]->Recv(0, 8, &x, sizeof x, W("c"));
  EXPECT_EQ(x, 3);
  pg[1]->Recv(0, 7, &x, sizeof x, W("a"));
  EXPECT_EQ(x, 1);
  pg[1]->Recv(0, 7, &x, sizeof x, W("b"));
  EXPECT_EQ(x, 2);
}

TEST(LocalProcessGroup, SendRecvRingDoesNotDeadlock) {
  const int n = 4;
  auto pg = LocalProcessGroups(n, 2.0);
  std::vector<int> got(n, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      int mine = 100 + r;
      pg[r]->SendRecv((r + 1) % n, &mine, sizeof mine, (r + n - 1) % n, &got[r], sizeof(int), 0,
                      W("ring"));
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(got[r], 100 + (r + n - 1) % n);
}

TEST(LocalProcessGroup, RecvFromASilentPeerFailsNamingItWithinTheTimeout) {
  auto pg = LocalProcessGroups(2, 0.2);
  int x = 0;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    pg[0]->Recv(1, 12, &x, sizeof x, W("all_reduce 'g' (task 12)"));
    FAIL() << "no error";
  } catch (const ProcessGroupError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_STREQ(e.what(), "rank 0: all_reduce 'g' (task 12): no message from rank 1 within 0.2 s");
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 0.2);
  EXPECT_LT(waited, 1.0);
}

TEST(LocalProcessGroup, SizeMismatchAndBadPeerOrChannelAreErrors) {
  auto pg = LocalProcessGroups(2, 1.0);
  int a = 5;
  pg[0]->Send(1, 0, &a, sizeof a, W("s"));
  long long big = 0;
  try {
    pg[1]->Recv(0, 0, &big, sizeof big, W("recv 'x' (task 3)"));
    FAIL();
  } catch (const ProcessGroupError& e) {
    EXPECT_EQ(e.peer(), 0);
    EXPECT_STREQ(e.what(),
                 "rank 1: recv 'x' (task 3): rank 0 sent 4 bytes on channel 0, expected 8");
  }
  EXPECT_THROW(pg[0]->Send(0, 0, &a, sizeof a, W("s")), ProcessGroupError);
  EXPECT_THROW(pg[0]->Send(2, 0, &a, sizeof a, W("s")), ProcessGroupError);
  try {
    pg[0]->Send(1, -1, &a, sizeof a, W("s"));
    FAIL();
  } catch (const ProcessGroupError& e) {
    EXPECT_STREQ(e.what(), "rank 0: s: channel -1 is outside [0, 1073741823]");
  }
  EXPECT_THROW(LocalProcessGroups(0, 1.0), Error);
  EXPECT_THROW(LocalProcessGroups(2, 0.0), Error);
  EXPECT_THROW(LocalProcessGroups(2, 1.0, {"a"}), Error);
  EXPECT_EQ(LocalProcessGroups(2, 1.0, {"a", "b"})[1]->host(), "b");
}

TEST(LocalProcessGroup, CancelledWaitThrowsCancelledPromptly) {
  auto pg = LocalProcessGroups(2, 30.0);
  std::atomic<bool> stop{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  int x = 0;
  EXPECT_THROW(pg[0]->Recv(1, 0, &x, sizeof x, Wait{"w", [&] { return stop.load(); }}), Cancelled);
  canceller.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(LocalProcessGroup, ControlPlane) {
  const int n = 3;
  auto pg = LocalProcessGroups(n, 2.0);
  std::vector<std::vector<std::string>> gathered(n);
  std::vector<std::string> bcast(n);
  std::vector<std::vector<std::optional<std::string>>> at_root(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      pg[r]->Barrier();
      gathered[r] = pg[r]->AllGather("r" + std::to_string(r));
      bcast[r] = r == 2 ? "from two" : "";
      pg[r]->Broadcast(&bcast[r], 2);
      at_root[r] = pg[r]->GatherToRoot(std::string(r + 1, 'x'));
      pg[r]->Barrier();
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(gathered[r], (std::vector<std::string>{"r0", "r1", "r2"}));
    EXPECT_EQ(bcast[r], "from two");
  }
  ASSERT_EQ(at_root[0].size(), 3u);
  EXPECT_EQ(at_root[0][1], std::optional<std::string>("xx"));
  EXPECT_EQ(at_root[0][2], std::optional<std::string>("xxx"));
  EXPECT_TRUE(at_root[1].empty());
}

TEST(LocalProcessGroup, ControlPlaneTimesOutNamingTheSilentRank) {
  auto pg = LocalProcessGroups(3, 0.2);
  // Rank 1 answers, rank 2 never does.
  std::thread one([&] { pg[1]->GatherToRoot("one"); });
  const auto gathered = pg[0]->GatherToRoot("zero");
  one.join();
  ASSERT_EQ(gathered.size(), 3u);
  EXPECT_EQ(gathered[1], std::optional<std::string>("one"));
  EXPECT_FALSE(gathered[2].has_value());
  try {
    pg[0]->AllGather("x");
    FAIL();
  } catch (const ProcessGroupError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_STREQ(e.what(), "rank 0: all_gather: no message from rank 1 within 0.2 s");
  }
  try {
    pg[2]->Barrier();  // rank 0 never enters it
    FAIL();
  } catch (const ProcessGroupError& e) {
    EXPECT_EQ(e.peer(), 0);
  }
}

TEST(LocalProcessGroup, ALateGatherAnswerIsNotTakenForTheNextCall) {
  auto pg = LocalProcessGroups(2, 0.1);
  EXPECT_FALSE(pg[0]->GatherToRoot("a")[1].has_value());
  pg[1]->GatherToRoot("late");  // the first call's answer, after rank 0 gave up
  std::thread one([&] { pg[1]->GatherToRoot("second"); });
  const auto second = pg[0]->GatherToRoot("b");
  one.join();
  EXPECT_EQ(second[1], std::optional<std::string>("second"));
}

}  // namespace
}  // namespace stratasim::validate
