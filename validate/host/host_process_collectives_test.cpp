#include "validate/host/host_process_collectives.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "validate/host/host_collectives.h"
#include "validate/local_process_group.h"

namespace stratasim::validate::host {
namespace {

using Init = float (*)(int member, std::size_t x);

float MemberPlusIndex(int member, std::size_t x) { return static_cast<float>(member * 1000 + x); }

std::size_t BufferFloats(const Collective& c, int i) {
  return CollectiveSendFloats(c, i) + CollectiveRecvFloats(c, i);
}

// `c` over thread-processes of a LocalProcessGroups(processes): member i in process c.ranks[i].
// Returns each member's send and receive buffers afterwards.
std::vector<std::vector<float>> OverProcesses(const Collective& c, int processes, Init init) {
  const int n = static_cast<int>(c.ranks.size());
  auto pg = LocalProcessGroups(processes, 5.0);
  std::vector<std::vector<float>> ws(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& w = ws[static_cast<std::size_t>(i)];
    const double bytes = CollectiveWorkspaceBytes(c, i) + ProcessCollectiveScratchBytes(c, i);
    w.assign(static_cast<std::size_t>(bytes / sizeof(float)), NAN);  // scratch starts as NaN
    for (std::size_t x = 0; x < BufferFloats(c, i); ++x) w[x] = init(i, x);
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      RunCollectiveOverProcesses(
          c, i, reinterpret_cast<unsigned char*>(ws[static_cast<std::size_t>(i)].data()),
          *pg[static_cast<std::size_t>(c.ranks[static_cast<std::size_t>(i)])], 3,
          Wait{"test", nullptr});
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) ws[static_cast<std::size_t>(i)].resize(BufferFloats(c, i));
  return ws;
}

// The same collective through shared memory (host_collectives.h), the reference.
std::vector<std::vector<float>> Shared(const Collective& c, Init init) {
  const int n = static_cast<int>(c.ranks.size());
  AbortFlag abort;
  GroupRun run(c, &abort);
  Clock clock;
  std::vector<std::vector<float>> ws(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& w = ws[static_cast<std::size_t>(i)];
    w.resize(BufferFloats(c, i));
    for (std::size_t x = 0; x < w.size(); ++x) w[x] = init(i, x);
  }
  std::vector<double> joined(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      run.Run(i, reinterpret_cast<unsigned char*>(ws[static_cast<std::size_t>(i)].data()), clock,
              &joined[static_cast<std::size_t>(i)]);
    });
  }
  for (auto& t : threads) t.join();
  return ws;
}

Collective Make(CollectiveKind kind, std::vector<int> ranks, double floats, int root) {
  Collective c;
  c.kind = kind;
  c.ranks = std::move(ranks);
  c.bytes = floats * sizeof(float);
  c.root = root;
  const std::size_t n = c.ranks.size();
  if (kind == CollectiveKind::kAllToAllV) {
    // Uneven blocks, some empty: member i sends (i + 2j) mod 4 floats to member j.
    c.bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        c.matrix.push_back(static_cast<double>((i + 2 * j) % 4) * sizeof(float));
        c.bytes += c.matrix.back();
      }
    }
  }
  return c;
}

TEST(HostProcessCollectives, RingAllReduceSumsRealBuffersAcrossProcesses) {
  for (int n : {2, 3, 4}) {
    for (double floats : {12.0, 17.0, 3.0}) {
      std::vector<int> ranks;
      for (int r = 0; r < n; ++r) ranks.push_back(r);
      const Collective c = Make(CollectiveKind::kAllReduce, ranks, floats, 0);
      const auto out = OverProcesses(c, n, MemberPlusIndex);
      for (int i = 0; i < n; ++i) {
        for (std::size_t x = 0; x < static_cast<std::size_t>(floats); ++x) {
          float want = 0;
          for (int m = 0; m < n; ++m) want += MemberPlusIndex(m, x);
          ASSERT_EQ(out[static_cast<std::size_t>(i)][x], want)
              << "n=" << n << " member " << i << " element " << x;
        }
      }
    }
  }
}

// Every kind, on members that are not processes 0..n-1 in order (member i is process
// ranks[i]), gives exactly what the shared-memory algorithm gives: the same steps, the same
// order of additions.
TEST(HostProcessCollectives, EveryKindMatchesTheSharedMemoryAlgorithm) {
  const std::vector<CollectiveKind> kinds = {
      CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
      CollectiveKind::kBroadcast, CollectiveKind::kReduce,        CollectiveKind::kAllToAll,
      CollectiveKind::kAllToAllV, CollectiveKind::kGather,        CollectiveKind::kScatter};
  const std::vector<std::vector<int>> groups = {{1, 3}, {4, 0, 2}, {3, 1, 0, 2}};
  for (CollectiveKind kind : kinds) {
    for (const auto& ranks : groups) {
      const int n = static_cast<int>(ranks.size());
      const Collective c = Make(kind, ranks, 4.0 * n * 3, /*root=*/ranks.back());
      const auto want = Shared(c, MemberPlusIndex);
      const auto got = OverProcesses(c, 5, MemberPlusIndex);
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)])
            << ToString(kind) << " over " << n << " members, member " << i;
      }
    }
  }
}

TEST(HostProcessCollectives, ScratchIsOneChunkForReducingKindsOnly) {
  const Collective ar = Make(CollectiveKind::kAllReduce, {0, 1, 2}, 10, 0);
  EXPECT_EQ(ProcessCollectiveScratchBytes(ar, 0), 4 * sizeof(float));  // ceil(10 / 3) floats
  const Collective ag = Make(CollectiveKind::kAllGather, {0, 1, 2}, 10, 0);
  EXPECT_EQ(ProcessCollectiveScratchBytes(ag, 0), 0);
}

TEST(HostProcessCollectives, ASilentMemberIsAnErrorNamingIt) {
  const Collective c = Make(CollectiveKind::kAllReduce, {0, 1}, 8, 0);
  auto pg = LocalProcessGroups(2, 0.2);
  std::vector<float> ws(16);
  try {
    RunCollectiveOverProcesses(c, 0, reinterpret_cast<unsigned char*>(ws.data()), *pg[0], 0,
                               Wait{"all_reduce 'g' (task 4)", nullptr});
    FAIL();
  } catch (const ProcessGroupError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_STREQ(e.what(), "rank 0: all_reduce 'g' (task 4): no message from rank 1 within 0.2 s");
  }
}

}  // namespace
}  // namespace stratasim::validate::host
