#include "strategies/planners/autopipe.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "strategies/planners/test_profiles.h"

namespace stratasim::planners {
namespace {

using testing::Blocks;
using testing::Input;

// A transformer's sub-layer blocks: a heavy embedding, attention and MLP halves, a heavy head.
std::vector<BlockCost> Unequal() {
  std::vector<double> s = {4};
  for (int l = 0; l < 8; ++l) s.insert(s.end(), {1, 2});
  s.push_back(6);
  return Blocks(s);
}

double MaxOf(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

double MaxStage(const StageTimes& t) {
  double m = 0;
  for (int s = 0; s < t.Stages(); ++s) m = std::max(m, t.forward[s] + t.backward[s]);
  return m;
}

std::string Joined(const std::vector<std::string>& notes) {
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  return all;
}

TEST(AutoPipe, LowersTheLargestStageBelowTheEvenSplitWhenBlocksAreUnequal) {
  const PlannerInput in = Input(Unequal(), 4, 8);
  const PlannedPipeline p = PlanAutoPipe(in, {});
  const StagePlan even =
      EvaluatePartition(in.profile, PlacementOf(in, DefaultRanks(in)), EvenBounds(18, 4), 8, true);
  EXPECT_EQ(PartitionText(even.bounds), "5,5,4,4");
  EXPECT_LT(MaxOf(p.stage_seconds), MaxStage(even.times));
  // Compare the partitions without the slicer, which the even split does not have.
  AutoPipeSettings no_slicer;
  no_slicer.slicer = false;
  EXPECT_LT(PlanAutoPipe(in, no_slicer).predicted_seconds, even.simulated.iteration);
  EXPECT_EQ(p.bounds.front(), 0);
  EXPECT_EQ(p.bounds.back(), 18);
  EXPECT_GT(p.planning_seconds, 0);
  EXPECT_NE(Joined(p.notes).find("even split 5,5,4,4"), std::string::npos) << Joined(p.notes);
}

TEST(AutoPipe, TheSeedIsTheMinMaxSplitAndTheSearchNeverLosesToIt) {
  const std::vector<BlockCost> b = Blocks({3, 1, 4, 1, 5, 9, 2, 6});
  const PlannerInput in = Input(b, 3, 6);
  const StagePlacement place = PlacementOf(in, DefaultRanks(in));
  const PartitionResult r = PartitionAutoPipe(in.profile, place, 6, {});
  double best_max = 1e9, best_iteration = 1e9;
  for (int i = 1; i < 8; ++i) {
    for (int j = i + 1; j < 8; ++j) {
      const StagePlan p = EvaluatePartition(in.profile, place, {0, i, j, 8}, 6, false);
      best_max = std::min(best_max, MaxStage(p.times));
      best_iteration = std::min(best_iteration, p.simulated.iteration);
    }
  }
  EXPECT_NEAR(MaxStage(r.seed.times), best_max, 1e-12);
  EXPECT_LE(r.best.simulated.iteration, r.seed.simulated.iteration);
  EXPECT_NEAR(r.best.simulated.iteration, best_iteration, 1e-12);  // it finds the optimum here
  EXPECT_GT(r.plans_evaluated, 1);
}

TEST(AutoPipe, PlansAreDeterministic) {
  const PlannerInput in = Input(Unequal(), 4, 8);
  const PlannedPipeline a = PlanAutoPipe(in), b = PlanAutoPipe(in);
  EXPECT_EQ(a.bounds, b.bounds);
  EXPECT_EQ(a.micro_batch_sizes, b.micro_batch_sizes);
  EXPECT_EQ(a.notes, b.notes);
  EXPECT_EQ(a.predicted_seconds, b.predicted_seconds);
}

TEST(AutoPipe, TheSlicerHalvesTheFirstMicroBatchesWhenThatShortensTheIteration) {
  const PlannerInput in = Input(Unequal(), 4, 8);
  AutoPipeSettings off;
  off.slicer = false;
  const PlannedPipeline whole = PlanAutoPipe(in, off);
  const PlannedPipeline sliced = PlanAutoPipe(in, {});
  EXPECT_TRUE(whole.micro_batch_sizes.empty());
  EXPECT_NE(Joined(whole.notes).find("micro-batch slicer off"), std::string::npos);
  ASSERT_FALSE(sliced.micro_batch_sizes.empty());
  EXPECT_EQ(sliced.micro_batch_sizes.front(), 1);
  EXPECT_EQ(sliced.micro_batch_sizes.back(), 2);
  int samples = 0;
  for (int size : sliced.micro_batch_sizes) samples += size;
  EXPECT_EQ(samples, 8 * 2);
  EXPECT_EQ(sliced.micro_batches, static_cast<int>(sliced.micro_batch_sizes.size()));
  EXPECT_LT(sliced.predicted_seconds, whole.predicted_seconds);
  EXPECT_EQ(sliced.bounds, whole.bounds);

  AutoPipeSettings one;
  one.max_sliced = 1;
  EXPECT_EQ(PlanAutoPipe(in, one).micro_batch_sizes.size(), 9u);
}

TEST(AutoPipe, TheSlicerKeepsWholeMicroBatchesWhenHalvesAreInefficient) {
  const PlannerInput in = Input(Unequal(), 4, 8);
  AutoPipeSettings s;
  s.half_profile = in.profile;  // halves that take 90% of a whole one's time
  for (BlockCost& b : s.half_profile.costs[0]) b.forward_s *= 0.9, b.backward_s *= 0.9;
  const PlannedPipeline p = PlanAutoPipe(in, s);
  EXPECT_TRUE(p.micro_batch_sizes.empty());
  EXPECT_NE(Joined(p.notes).find("halves the first 0 of 8 micro-batches (half-size costs from "
                                 "the profile)"),
            std::string::npos)
      << Joined(p.notes);
}

TEST(AutoPipe, TheSlicerNeedsAnEvenMicroBatch) {
  PlannerInput in = Input(Unequal(), 4, 8);
  in.profile.micro_batch = 3;
  const PlannedPipeline p = PlanAutoPipe(in);
  EXPECT_TRUE(p.micro_batch_sizes.empty());
  EXPECT_NE(Joined(p.notes).find("micro-batch slicer skipped: micro-batches of 3 samples "
                                 "cannot be halved"),
            std::string::npos);
}

// Eight equal blocks on two stages; 100 MiB of activations per block and micro-batch, 16 MiB
// of model states per block: the balanced 4,4 needs 864 MiB on stage 0 (two micro-batches in
// flight) and 464 MiB on stage 1.
constexpr double kMiB = 1024.0 * 1024;
PlannerInput Tight(double memory_mib) {
  PlannerInput in = Input(Blocks(std::vector<double>(8, 1), 100 * kMiB), 2, 4);
  in.profile.state_bytes_per_param = 16 * kMiB;
  for (ClusterView::Device& d : in.cluster.devices) d.memory_bytes = memory_mib * kMiB;
  return in;
}

TEST(AutoPipe, APlanThatDoesNotFitIsNeverChosen) {
  const PlannerInput in = Tight(700);
  AutoPipeSettings s;
  s.partition.recompute = false;
  s.slicer = false;
  const PlannedPipeline p = PlanAutoPipe(in, s);
  EXPECT_NE(PartitionText(p.bounds), "4,4");  // the balanced seed does not fit
  for (int st = 0; st < 2; ++st) {
    EXPECT_LE(StageMemoryBytes(in.profile, 0, p.bounds[st], p.bounds[st + 1], 2 - st), 700 * kMiB);
  }
  EXPECT_EQ(PartitionText(p.bounds), "3,5");
  EXPECT_TRUE(p.recompute.empty());
}

TEST(AutoPipe, RecomputesTheFewestBlocksWhenThatBeatsAnUnbalancedSplit) {
  const PlannerInput in = Tight(700);
  AutoPipeSettings s;
  s.slicer = false;
  const PlannedPipeline p = PlanAutoPipe(in, s);
  // 4,4 with two of stage 0's blocks recomputed: 64 + 2 x 220 + 100 = 604 MiB.
  EXPECT_EQ(PartitionText(p.bounds), "4,4");
  EXPECT_EQ(p.recompute, (std::vector<bool>{true, true, false, false, false, false, false, false}));
  EXPECT_LE(StageMemoryBytes(in.profile, 0, 0, 4, 2, p.recompute), 700 * kMiB);
  EXPECT_NE(Joined(p.notes).find("autopipe: recomputes 2 of 8 blocks"), std::string::npos);
}

TEST(AutoPipe, NoPartitionThatFitsIsAnError) {
  try {
    PlanAutoPipe(Tight(100));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "autopipe: no partition into 2 stages fits in memory even with recomputation: "
                 "stage 0 of 4,4 needs 0.24 GiB of 0.10 GiB");
  }
}

TEST(AutoPipe, InconsistentInputsAreRefused) {
  auto error = [](const PlannerInput& in) -> std::string {
    try {
      PlanAutoPipe(in);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  PlannerInput in = Input(Blocks({1, 1, 1}), 3, 4);
  in.stages = 4;
  EXPECT_EQ(error(in), "pipeline planner: 3 blocks cannot fill 4 stages");
  in = Input(Blocks({1, 1, 1, 1}), 2, 4, 2);
  in.data = 3;
  EXPECT_EQ(error(in), "pipeline planner: 3 x 2 x 1 GPUs exceed the cluster's 4");
  in = Input(Blocks({1, 1}), 2, 0);
  EXPECT_EQ(error(in), "pipeline planner: degrees and micro-batches must be at least 1");
  in = Input(Blocks({1, 1}), 2, 2);
  in.profile.kinds.push_back("other");
  EXPECT_EQ(error(in), "pipeline planner: the cost profile has 1 kinds of costs for 2 GPU kinds");
  in = Input(Blocks({1, 1}), 2, 2);
  in.cluster.devices[1].kind = 1;
  EXPECT_EQ(error(in), "pipeline planner: a device's kind, server or NIC is out of range");
}

}  // namespace
}  // namespace stratasim::planners
