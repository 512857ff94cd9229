#include "sim/collectives/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/collective_names.h"
#include "core/error.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/test_util.h"

namespace stratasim::sim {
namespace {

using testing::Iota;
using testing::MakeCollective;

// Every name of the list has an entry that lowers and predicts every kind it serves.
TEST(Registry, EveryAlgorithmLowersAndPredictsTheKindsItServes) {
  const GroupView v = MakeGroupView(testing::NvSwitchCluster(2, 4, 2), Iota(8));
  ASSERT_FALSE(AllCollectiveAlgorithms().empty());
  for (const CollectiveAlgorithmName& a : AllCollectiveAlgorithms()) {
    const std::string name(a.name);
    int kinds = 0;
    for (CollectiveKind k : kAllCollectiveKinds) {
      if (!a.Serves(k)) continue;
      ++kinds;
      SCOPED_TRACE(name + " " + std::string(ToString(k)));
      const CollectiveAlgorithm& entry = FindCollectiveAlgorithm(k, name);
      ASSERT_NE(entry.lower, nullptr);
      ASSERT_NE(entry.predict, nullptr);
      Collective c = MakeCollective(k, Iota(8), 8 << 20);
      if (k == CollectiveKind::kAllToAllV) c.matrix.assign(64, 1 << 20);
      const double t = PredictCollectiveSeconds(c, v, {name, "simple", 2});
      EXPECT_TRUE(std::isfinite(t) && t > 0) << t;
      EXPECT_FALSE(LowerCollective(c, v, {name, "simple", 2}, Fidelity::kStep).flows.empty());
    }
    EXPECT_GT(kinds, 0) << name << " serves no kind";
  }
}

TEST(Registry, KindsListTheirAlgorithmsInTheListsOrder) {
  EXPECT_EQ(CollectiveAlgorithms(CollectiveKind::kAllReduce),
            (std::vector<std::string>{"auto", "ring", "tree", "recursive_halving_doubling",
                                      "hierarchical", "direct"}));
  EXPECT_EQ(CollectiveAlgorithms(CollectiveKind::kAllGather),
            (std::vector<std::string>{"auto", "ring", "hierarchical", "direct"}));
  EXPECT_EQ(CollectiveAlgorithms(CollectiveKind::kAllToAllV),
            (std::vector<std::string>{"auto", "direct", "pairwise"}));
  EXPECT_EQ(CollectiveAlgorithms(CollectiveKind::kScatter),
            (std::vector<std::string>{"auto", "direct"}));
}

TEST(Registry, AKindWithoutTheAlgorithmIsNamed) {
  try {
    FindCollectiveAlgorithm(CollectiveKind::kBroadcast, "direct");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "collective broadcast has no algorithm 'direct' (known: ring, tree)");
  }
}

// Auto leaves out what NCCL does not run, and hierarchical inside one server or across
// unequal ones.
TEST(Registry, AutoCandidates) {
  const GroupView one = testing::FlatView(8);
  const GroupView two = MakeGroupView(testing::NvSwitchCluster(2, 4, 2), Iota(8));
  const GroupView unequal = MakeGroupView(testing::NvSwitchCluster(2, 4, 2), Iota(7));
  using V = std::vector<std::string>;
  EXPECT_EQ(AutoCandidates(CollectiveKind::kAllReduce, one), (V{"ring", "tree", "direct"}));
  EXPECT_EQ(AutoCandidates(CollectiveKind::kAllReduce, two),
            (V{"ring", "tree", "hierarchical", "direct"}));
  EXPECT_EQ(AutoCandidates(CollectiveKind::kAllReduce, unequal), (V{"ring", "tree", "direct"}));
  EXPECT_EQ(AutoCandidates(CollectiveKind::kAllToAll, two), (V{"direct"}));
}

}  // namespace
}  // namespace stratasim::sim
