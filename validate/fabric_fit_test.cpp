#include "validate/fabric_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "core/error.h"

namespace stratasim::validate {
namespace {

// nccl-tests' busbw factors (doc/PERFORMANCE.md) and the ring's steps.
TEST(FabricFit, BusBandwidthFactorsAndStepsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(FabricOp::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(FabricOp::kAllGather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(FabricOp::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(FabricOp::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(FabricOp::kSendRecv, 2), 1);
  EXPECT_EQ(LatencySteps(FabricOp::kAllReduce, 4), 6);
  EXPECT_EQ(LatencySteps(FabricOp::kAllGather, 4), 3);
  EXPECT_EQ(LatencySteps(FabricOp::kSendRecv, 2), 1);
  for (FabricOp op : kAllFabricOps) EXPECT_EQ(ParseFabricOp(std::string(ToString(op))), op);
  EXPECT_FALSE(ParseFabricOp("allreduce").has_value());
}

// The alpha-beta model of fabric_fit.h with a per-hop latency and a link bandwidth, over
// sizes 8 B to 64 MiB doubling, `reps` samples each, times scaled by noise(rng) when given.
std::vector<FabricSample> Synthetic(const std::string& link_class, int n, double hop_s,
                                    double link_Bps, int reps,
                                    const std::function<double(int)>& noise = nullptr) {
  std::vector<FabricSample> samples;
  int i = 0;
  for (FabricOp op : kAllFabricOps) {
    const int members = op == FabricOp::kSendRecv ? 2 : n;
    for (double bytes = 8; bytes <= 64.0 * (1 << 20); bytes *= 2) {
      for (int r = 0; r < reps; ++r) {
        const double t =
            LatencySteps(op, members) * hop_s + bytes * BusBandwidthFactor(op, members) / link_Bps;
        samples.push_back({link_class, "simple", op, members, bytes, noise ? t * noise(i++) : t});
      }
    }
  }
  return samples;
}

TEST(FabricFit, RecoversAlphaBetaFromClosedFormData) {
  std::vector<FabricSample> samples = Synthetic("intra", 4, 3e-6, 20e9, 1);
  const std::vector<FabricSample> inter = Synthetic("inter", 2, 9e-6, 11e9, 1);
  samples.insert(samples.end(), inter.begin(), inter.end());
  const std::vector<FabricClassFit> fits = FitFabric(samples);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_EQ(fits[0].link_class, "intra");
  EXPECT_EQ(fits[0].protocol, "simple");
  EXPECT_NEAR(fits[0].latency_s, 3e-6, 3e-6 * 1e-9);
  EXPECT_NEAR(fits[0].bandwidth_Bps, 20e9, 20e9 * 1e-9);
  ASSERT_EQ(fits[0].ops.size(), 5u);
  for (const FabricOpFit& op : fits[0].ops) {
    EXPECT_NEAR(op.bandwidth_Bps, 20e9, 20e9 * 1e-9) << ToString(op.op);
    EXPECT_NEAR(op.alpha_s, LatencySteps(op.op, op.group_size) * 3e-6, 1e-14) << ToString(op.op);
  }
  EXPECT_EQ(fits[1].link_class, "inter");
  EXPECT_NEAR(fits[1].latency_s, 9e-6, 9e-6 * 1e-9);
  EXPECT_NEAR(fits[1].bandwidth_Bps, 11e9, 11e9 * 1e-9);
  const std::vector<FabricCalibration> entries = ToFabricCalibration(fits);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].link_class, "inter");
  EXPECT_NEAR(entries[1].bandwidth_Bps, 11e9, 11e9 * 1e-9);
}

TEST(FabricFit, RecoversAlphaBetaThroughNoiseAndOutliers) {
  // +-5% uniform jitter on every sample, and every 7th sample 3x slower (a preempted run).
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(0.95, 1.05);
  auto noise = [&](int i) { return jitter(rng) * (i % 7 == 3 ? 3.0 : 1.0); };
  const std::vector<FabricClassFit> fits = FitFabric(Synthetic("intra", 2, 5e-6, 8e9, 5, noise));
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_NEAR(fits[0].bandwidth_Bps, 8e9, 8e9 * 0.05);
  EXPECT_NEAR(fits[0].latency_s, 5e-6, 5e-6 * 0.1);
  // A plain least squares over every sample is pulled off by the outliers; this fit is not.
}

TEST(FabricFit, AnOperationWhoseTimeDoesNotGrowIsSkippedWithItsReason) {
  std::vector<FabricSample> samples = Synthetic("intra", 2, 2e-6, 10e9, 1);
  samples.erase(std::remove_if(samples.begin(), samples.end(),
                               [](const FabricSample& s) { return s.op == FabricOp::kAllToAll; }),
                samples.end());
  for (double bytes = 8; bytes <= 1 << 20; bytes *= 2) {
    samples.push_back({"intra", "simple", FabricOp::kAllToAll, 2, bytes, 1e-3});  // flat
  }
  const std::vector<FabricClassFit> fits = FitFabric(samples);
  ASSERT_EQ(fits[0].ops.size(), 4u);
  ASSERT_EQ(fits[0].skipped.size(), 1u);
  EXPECT_EQ(fits[0].skipped[0],
            "fabric fit: intra/simple all_to_all x2: time does not grow with size over the "
            "largest sizes (sweep to larger sizes with --max-bytes)");
  EXPECT_NEAR(fits[0].bandwidth_Bps, 10e9, 10e9 * 1e-9);
}

TEST(FabricFit, AClassWithoutAFittableOperationIsAnError) {
  const std::vector<FabricSample> one_size = {
      {"inter", "simple", FabricOp::kSendRecv, 2, 1024, 1e-5},
      {"inter", "simple", FabricOp::kSendRecv, 2, 1024, 2e-5}};
  try {
    FitFabric(one_size);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "fabric fit: link class inter (simple): no operation could be fitted:\n"
                 "  fabric fit: inter/simple sendrecv x2: needs 2 or more sizes");
  }
  EXPECT_THROW(FitFabricOp({{"intra", "simple", FabricOp::kAllReduce, 2, 8, 0}}), Error);
  EXPECT_THROW(FitFabricOp({}), Error);
}

}  // namespace
}  // namespace stratasim::validate
