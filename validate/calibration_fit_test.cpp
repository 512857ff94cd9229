#include "validate/calibration_fit.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/limits.h"

namespace stratasim::validate {
namespace {

TEST(CalibrationFit, AlphaBetaRecoversAnExactLine) {
  std::vector<CollectiveSample> sweep;
  for (double bytes = 1024; bytes <= 64e6; bytes *= 4) {
    sweep.push_back({CollectiveKind::kAllReduce, 2, bytes, 20e-6 + bytes / 8e9});
  }
  const auto [alpha, beta] = FitAlphaBeta(sweep);
  EXPECT_NEAR(alpha, 20e-6, 1e-9);
  EXPECT_NEAR(beta, 8e9, 8e9 * 1e-6);
}

TEST(CalibrationFit, NegativeInterceptIsRefittedThroughTheOrigin) {
  // Time proportional to size with a small dip at the smallest size: the free fit would give a
  // negative latency, which the file cannot hold.
  const std::vector<CollectiveSample> sweep = {{CollectiveKind::kAllGather, 2, 1e3, 0.5e-6},
                                               {CollectiveKind::kAllGather, 2, 1e6, 1e-3},
                                               {CollectiveKind::kAllGather, 2, 1e7, 1e-2}};
  const auto [alpha, beta] = FitAlphaBeta(sweep);
  EXPECT_EQ(alpha, 0);
  // Relative least squares through the origin: b = sum(x/t) / sum((x/t)^2) with x/t = 2e9,
  // 1e9, 1e9 B/s, so 1/b = 6e18 / 4e9.
  EXPECT_NEAR(beta, 1.5e9, 1e3);
}

TEST(CalibrationFit, FlatSweepIsAllLatency) {
  const std::vector<CollectiveSample> sweep = {{CollectiveKind::kBroadcast, 2, 1e3, 30e-6},
                                               {CollectiveKind::kBroadcast, 2, 1e4, 30e-6}};
  const auto [alpha, beta] = FitAlphaBeta(sweep);
  EXPECT_NEAR(alpha, 30e-6, 1e-9);
  EXPECT_LT(1e4 / beta, 1e-9) << "bandwidth term must be negligible";
}

// Found under load by the sanitizer run: a flat 64 KiB sweep at 56 us fitted 1.18e15 B/s, past
// what the calibration reader takes, so the file `calibrate` wrote did not load.
TEST(CalibrationFit, FittedBandwidthStaysWithinTheReadersBound) {
  const std::vector<CollectiveSample> sweep = {{CollectiveKind::kAllReduce, 2, 1024, 56e-6},
                                               {CollectiveKind::kAllReduce, 2, 65536, 56e-6}};
  const auto [alpha, beta] = FitAlphaBeta(sweep);
  EXPECT_NEAR(alpha, 56e-6, 1e-9);
  EXPECT_DOUBLE_EQ(beta, limits::kMaxBandwidthBps);
}

TEST(CalibrationFit, EfficienciesInvertTheComputeModel) {
  CalibrationMeasurements m;
  m.gpu = "host-cpu";
  m.peak_flops = 100e9;
  m.memory_bandwidth_Bps = 10e9;
  m.launch_s = 1e-6;
  // 1e6 FLOPs took 1e6 / (100e9 * 0.25) + launch; 1e9 FLOPs at 0.8.
  m.compute = {{OpKind::kGemm, 1e6, 1e6 / 25e9 + 1e-6}, {OpKind::kGemm, 1e9, 1e9 / 80e9 + 1e-6}};
  m.memory = {{1e8, 1e8 / 5e9 + 1e-6}, {4e8, 4e8 / 5e9 + 1e-6}};
  m.collectives = {{CollectiveKind::kAllReduce, 2, 1e3, 1e-5 + 1e3 / 1e9},
                   {CollectiveKind::kAllReduce, 2, 1e6, 1e-5 + 1e6 / 1e9}};
  const Calibration c = FitCalibration(m);
  ASSERT_EQ(c.gpus.size(), 1u);
  const GpuCalibration& g = c.gpus[0];
  EXPECT_DOUBLE_EQ(*g.kernel_launch_s, 1e-6);
  EXPECT_NEAR(*g.memory_efficiency, 0.5, 1e-9);
  EXPECT_NEAR(*g.ComputeEfficiency(OpKind::kGemm, 1e6), 0.25, 1e-9);
  EXPECT_NEAR(*g.ComputeEfficiency(OpKind::kGemm, 1e9), 0.8, 1e-9);
  // The band edge is the geometric mean of the two samples.
  EXPECT_NEAR(*g.ComputeEfficiency(OpKind::kGemm, 3.1e7), 0.25, 1e-9);
  EXPECT_NEAR(*g.ComputeEfficiency(OpKind::kGemm, 3.2e7), 0.8, 1e-9);
  EXPECT_FALSE(g.ComputeEfficiency(OpKind::kAttention, 1e6));
  ASSERT_EQ(c.collectives.size(), 1u);
  EXPECT_NEAR(c.collectives[0].latency_s, 1e-5, 1e-10);
  EXPECT_NEAR(c.collectives[0].bandwidth_Bps, 1e9, 1e3);
  EXPECT_EQ(c.collectives[0].gpu, "host-cpu");
}

TEST(CalibrationFit, EfficiencyAbovePeakIsClampedToOne) {
  CalibrationMeasurements m;
  m.gpu = "g";
  m.peak_flops = 1e9;
  m.compute = {{OpKind::kGemm, 1e9, 0.5}};  // 2x the peak
  EXPECT_DOUBLE_EQ(*FitCalibration(m).gpus[0].ComputeEfficiency(OpKind::kGemm, 1e9), 1.0);
}

TEST(CalibrationFit, ZeroPeakIsRefused) {
  CalibrationMeasurements m;
  m.gpu = "g";
  try {
    FitCalibration(m);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "calibration fit: peak FLOP/s of g must be > 0");
  }
}

TEST(CalibrationFit, WrittenFileReadsBackThroughTheLoader) {
  CalibrationMeasurements m;
  m.gpu = "host-cpu";
  m.source = "test \"quoted\"";
  m.peak_flops = 33.6e9;
  m.memory_bandwidth_Bps = 12e9;
  m.launch_s = 31e-9;
  m.compute = {{OpKind::kGemm, 65536, 2e-6},
               {OpKind::kGemm, 3.3e7, 9e-4},
               {OpKind::kAttention, 4.2e6, 1e-4}};
  m.memory = {{1 << 20, 1e-4}};
  m.collectives = {{CollectiveKind::kAllReduce, 2, 1024, 3e-5},
                   {CollectiveKind::kAllReduce, 2, 16e6, 2e-3},
                   {CollectiveKind::kAllToAll, 2, 1024, 1.5e-5},
                   {CollectiveKind::kAllToAll, 2, 16e6, 6e-3}};
  const Calibration fitted = FitCalibration(m);
  const Calibration read = LoadCalibrationText(CalibrationToYaml(fitted), "cal.yaml");
  EXPECT_EQ(read.source, "test 'quoted'");
  ASSERT_EQ(read.gpus.size(), 1u);
  const GpuCalibration& a = fitted.gpus[0];
  const GpuCalibration& b = read.gpus[0];
  EXPECT_EQ(b.gpu, "host-cpu");
  EXPECT_NEAR(*b.kernel_launch_s, *a.kernel_launch_s, 1e-15);
  EXPECT_NEAR(*b.memory_efficiency, *a.memory_efficiency, 1e-8);
  for (double f : {1e4, 65536.0, 1e6, 3.3e7, 1e9}) {
    EXPECT_NEAR(*b.ComputeEfficiency(OpKind::kGemm, f), *a.ComputeEfficiency(OpKind::kGemm, f),
                1e-8)
        << f;
  }
  EXPECT_NEAR(*b.ComputeEfficiency(OpKind::kAttention, 1e6),
              *a.ComputeEfficiency(OpKind::kAttention, 1e6), 1e-8);
  ASSERT_EQ(read.collectives.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(read.collectives[i].kind, fitted.collectives[i].kind);
    EXPECT_EQ(read.collectives[i].group_size, 2);
    EXPECT_NEAR(read.collectives[i].latency_s, fitted.collectives[i].latency_s,
                1e-8 * fitted.collectives[i].latency_s);
    EXPECT_NEAR(read.collectives[i].bandwidth_Bps, fitted.collectives[i].bandwidth_Bps,
                1e-8 * fitted.collectives[i].bandwidth_Bps);
  }
  EXPECT_NE(read.FindCollective(CollectiveKind::kAllReduce, 2, "host-cpu"), nullptr);
}

// compress-check's entries: per-element encode and decode times of each method.
TEST(CalibrationFit, CompressionTimesReadBack) {
  Calibration c;
  c.source = "compress-check";
  GpuCalibration g;
  g.gpu = "H100-SXM5";
  g.compression[CompressionMethod::kS2Reducer] = {2.1e-9, 0.9e-9};
  g.compression[CompressionMethod::kDense] = {0, 1.234567e-10};
  c.gpus.push_back(g);
  const std::string yaml = CalibrationToYaml(c);
  EXPECT_NE(yaml.find("      - {method: s2reducer, encode: \"2.1ns\", decode: \"0.9ns\"}\n"),
            std::string::npos)
      << yaml;
  const Calibration read = LoadCalibrationText(yaml, "cal.yaml");
  ASSERT_EQ(read.gpus.size(), 1u);
  const CompressionCalibration* s2 = read.gpus[0].FindCompression(CompressionMethod::kS2Reducer);
  ASSERT_NE(s2, nullptr);
  EXPECT_NEAR(s2->encode_s_per_element, 2.1e-9, 1e-18);
  EXPECT_NEAR(s2->decode_s_per_element, 0.9e-9, 1e-18);
  const CompressionCalibration* dense = read.gpus[0].FindCompression(CompressionMethod::kDense);
  ASSERT_NE(dense, nullptr);
  EXPECT_NEAR(dense->decode_s_per_element, 1.234567e-10, 1e-18);
  EXPECT_EQ(read.gpus[0].FindCompression(CompressionMethod::kCasq), nullptr);
}

TEST(CalibrationFit, LinksAndFabricReadBack) {
  Calibration c;
  c.link_efficiency[LinkKind::kNic] = 0.93;
  c.link_efficiency[LinkKind::kNvSwitch] = 0.8;
  c.fabric.push_back({"intra", "simple", "", 3.25e-6, 12.5e9});
  c.fabric.push_back({"inter", "ll", "H100-SXM5", 1.5e-5, 1.234567891e9});
  const std::string yaml = CalibrationToYaml(c);
  EXPECT_NE(yaml.find("  - {class: intra, protocol: simple, latency: \"3.25us\", bandwidth: "
                      "\"1.25e+10B/s\"}\n"),
            std::string::npos)
      << yaml;
  const Calibration read = LoadCalibrationText(yaml, "cal.yaml");
  EXPECT_DOUBLE_EQ(read.link_efficiency.at(LinkKind::kNic), 0.93);
  EXPECT_DOUBLE_EQ(read.link_efficiency.at(LinkKind::kNvSwitch), 0.8);
  ASSERT_EQ(read.fabric.size(), 2u);
  const FabricCalibration* inter = read.FindFabric("inter", "ll", "H100-SXM5");
  ASSERT_NE(inter, nullptr);
  EXPECT_NEAR(inter->latency_s, 1.5e-5, 1e-15);
  EXPECT_NEAR(inter->bandwidth_Bps, 1.234567891e9, 1e-8 * 1.234567891e9);
}

}  // namespace
}  // namespace stratasim::validate
