#include "validate/host/host_collectives.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace stratasim::validate::host {
namespace {

// Runs `c` on one thread per member; buffer i starts as init(i, x) for float x of its
// workspace, and is returned as floats after the collective.
std::vector<std::vector<float>> RunGroup(const Collective& c,
                                         float (*init)(int member, std::size_t x)) {
  const int n = static_cast<int>(c.ranks.size());
  AbortFlag abort;
  GroupRun run(c, &abort);
  Clock clock;
  std::vector<std::vector<float>> ws(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const std::size_t floats =
        static_cast<std::size_t>(CollectiveWorkspaceBytes(c, i) / sizeof(float));
    ws[static_cast<std::size_t>(i)].resize(floats);
    for (std::size_t x = 0; x < floats; ++x) ws[static_cast<std::size_t>(i)][x] = init(i, x);
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
  for (int i = 1; i < n; ++i) EXPECT_EQ(joined[static_cast<std::size_t>(i)], joined[0]);
  return ws;
}

Collective Make(CollectiveKind kind, int n, double floats, int root = 0) {
  Collective c;
  c.kind = kind;
  for (int r = 0; r < n; ++r) c.ranks.push_back(r);
  c.bytes = floats * sizeof(float);
  c.root = root;
  return c;
}

float MemberPlusIndex(int member, std::size_t x) { return static_cast<float>(member * 1000 + x); }

TEST(HostCollectives, RingAllReduceSumsEveryElementOnEveryMember) {
  for (int n : {1, 2, 3, 4}) {
    for (double floats : {12.0, 17.0}) {
      const Collective c = Make(CollectiveKind::kAllReduce, n, floats);
      const auto out = RunGroup(c, MemberPlusIndex);
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

TEST(HostCollectives, ReduceScatterLeavesEachMemberOneReducedChunk) {
  const int n = 3;
  const Collective c = Make(CollectiveKind::kReduceScatter, n, 12);
  const auto out = RunGroup(c, MemberPlusIndex);
  // Ring order: member i ends with chunk (i + 1) mod n reduced.
  for (int i = 0; i < n; ++i) {
    const int chunk = (i + 1) % n;
    for (std::size_t x = chunk * 4u; x < chunk * 4u + 4; ++x) {
      EXPECT_EQ(out[static_cast<std::size_t>(i)][x], 3 * x + 3000.0f) << i << " " << x;
    }
  }
}

TEST(HostCollectives, AllGatherSpreadsEachMembersChunk) {
  const int n = 4;
  const Collective c = Make(CollectiveKind::kAllGather, n, 8);
  // Member i owns chunk (i + 1) mod n (where the reduce-scatter leaves it): it holds the value
  // 100 * chunk there, garbage elsewhere.
  const auto out = RunGroup(c, [](int member, std::size_t x) {
    const int chunk = static_cast<int>(x / 2);
    return chunk == (member + 1) % 4 ? 100.0f * chunk : -1.0f;
  });
  for (int i = 0; i < n; ++i) {
    for (std::size_t x = 0; x < 8; ++x) {
      EXPECT_EQ(out[static_cast<std::size_t>(i)][x], 100.0f * (x / 2)) << i << " " << x;
    }
  }
}

TEST(HostCollectives, BroadcastCopiesTheRootsBufferToAll) {
  const Collective c = Make(CollectiveKind::kBroadcast, 3, 10, /*root=*/1);
  const auto out = RunGroup(c, MemberPlusIndex);
  for (int i = 0; i < 3; ++i) {
    for (std::size_t x = 0; x < 10; ++x) {
      EXPECT_EQ(out[static_cast<std::size_t>(i)][x], MemberPlusIndex(1, x));
    }
  }
}

TEST(HostCollectives, ReduceSumsIntoTheRoot) {
  const Collective c = Make(CollectiveKind::kReduce, 3, 10, /*root=*/2);
  const auto out = RunGroup(c, MemberPlusIndex);
  for (std::size_t x = 0; x < 10; ++x) EXPECT_EQ(out[2][x], 3 * x + 3000.0f) << x;
}

TEST(HostCollectives, AllToAllTransposesBlocks) {
  const int n = 3;
  const Collective c = Make(CollectiveKind::kAllToAll, n, 6);  // blocks of 2 floats
  const auto out = RunGroup(c, [](int member, std::size_t x) {
    return x < 6 ? static_cast<float>(member * 10 + x / 2) : -1.0f;  // block j for member j
  });
  for (int i = 0; i < n; ++i) {
    for (int src = 0; src < n; ++src) {
      for (int e = 0; e < 2; ++e) {
        // Receive buffer follows the 6-float send buffer; block `src` holds src's block i.
        EXPECT_EQ(out[static_cast<std::size_t>(i)][6 + static_cast<std::size_t>(src * 2 + e)],
                  static_cast<float>(src * 10 + i));
      }
    }
  }
}

TEST(HostCollectives, AllToAllVMovesTheMatrixSizes) {
  Collective c = Make(CollectiveKind::kAllToAllV, 2, 0);
  // 0->0: 1 float, 0->1: 3 floats, 1->0: 2 floats, 1->1: 0.
  c.matrix = {4, 12, 8, 0};
  c.bytes = 16;
  const auto out =
      RunGroup(c, [](int member, std::size_t x) { return static_cast<float>(member * 100 + x); });
  // Member 0 sends [0] to itself and [1..3] to 1; member 1 sends [0..1] to 0.
  // Member 0 receives (after its 4-float send buffer): 0's 1 float, then 1's 2 floats.
  EXPECT_EQ(out[0][4], 0.0f);
  EXPECT_EQ(out[0][5], 100.0f);
  EXPECT_EQ(out[0][6], 101.0f);
  // Member 1 receives (after its 2-float send buffer): 0's 3 floats.
  EXPECT_EQ(out[1][2], 1.0f);
  EXPECT_EQ(out[1][3], 2.0f);
  EXPECT_EQ(out[1][4], 3.0f);
}

TEST(HostCollectives, GatherAndScatterMoveBlocksThroughTheRoot) {
  const Collective g = Make(CollectiveKind::kGather, 2, 4, /*root=*/0);
  const auto gathered = RunGroup(g, MemberPlusIndex);
  // Root: 2-float send block, then the 4-float output: member 0's block, member 1's block.
  EXPECT_EQ(gathered[0][2], 0.0f);
  EXPECT_EQ(gathered[0][3], 1.0f);
  EXPECT_EQ(gathered[0][4], 1000.0f);
  EXPECT_EQ(gathered[0][5], 1001.0f);
  const Collective s = Make(CollectiveKind::kScatter, 2, 4, /*root=*/1);
  const auto scattered = RunGroup(s, MemberPlusIndex);
  // Member 0 has no send buffer; its 2-float output is the root's block 0.
  EXPECT_EQ(scattered[0][0], 1000.0f);
  EXPECT_EQ(scattered[0][1], 1001.0f);
  // The root's output follows its 4-float input: its own block 1.
  EXPECT_EQ(scattered[1][4], 1002.0f);
  EXPECT_EQ(scattered[1][5], 1003.0f);
}

TEST(HostCollectives, AlgorithmsAreNamesTheSimulatorKnows) {
  EXPECT_EQ(HostCollectiveAlgorithm(CollectiveKind::kAllReduce), "ring");
  EXPECT_EQ(HostCollectiveAlgorithm(CollectiveKind::kAllToAll), "pairwise");
  EXPECT_EQ(HostCollectiveAlgorithm(CollectiveKind::kGather), "direct");
}

}  // namespace
}  // namespace stratasim::validate::host
