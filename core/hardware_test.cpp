#include "core/hardware.h"

#include <set>
#include <string>

#include "core/error.h"
#include "gtest/gtest.h"

namespace stratasim {
namespace {

TEST(Catalog, HasTheExpectedKindsInOrder) {
  std::vector<std::string> names;
  for (const GpuSpec& g : BuiltinGpuCatalog()) names.push_back(g.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"A100-SXM4-80GB", "A100-SXM4-40GB", "H100-SXM5", "H200",
                                      "V100-SXM2", "RTX3090", "RTX4090", "RTX2080Ti"}));
}

TEST(Catalog, EveryEntryIsCitedAndComplete) {
  for (const GpuSpec& g : BuiltinGpuCatalog()) {
    SCOPED_TRACE(g.name);
    EXPECT_FALSE(g.source.empty());
    EXPECT_GT(g.memory_bytes, 0);
    EXPECT_GT(g.memory_bandwidth_Bps, 0);
    EXPECT_GT(g.sm_count, 0);  // the cost model's wave quantisation needs it
    // Every part trains in FP32 and FP16; tensor-core FP16 is above FP32 on all of them.
    ASSERT_TRUE(g.Supports(DType::kFP32));
    ASSERT_TRUE(g.Supports(DType::kFP16));
    EXPECT_GT(g.Peak(DType::kFP16), g.Peak(DType::kFP32));
  }
}

TEST(Catalog, DatasheetFigures) {
  const GpuSpec* a100 = FindBuiltinGpu("A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(a100->Peak(DType::kFP32), 19.5e12);
  EXPECT_EQ(a100->sm_count, 108);
  EXPECT_EQ(FindBuiltinGpu("H100-SXM5")->sm_count, 132);
  EXPECT_DOUBLE_EQ(a100->Peak(DType::kTF32), 156e12);
  EXPECT_DOUBLE_EQ(a100->Peak(DType::kBF16), 312e12);
  EXPECT_DOUBLE_EQ(a100->Peak(DType::kINT8), 624e12);
  EXPECT_DOUBLE_EQ(a100->memory_bytes, 80e9);
  EXPECT_DOUBLE_EQ(a100->memory_bandwidth_Bps, 2039e9);
  EXPECT_FALSE(a100->Supports(DType::kFP8));

  EXPECT_DOUBLE_EQ(FindBuiltinGpu("A100-SXM4-40GB")->memory_bandwidth_Bps, 1555e9);

  const GpuSpec* h100 = FindBuiltinGpu("H100-SXM5");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(h100->Peak(DType::kBF16), 989e12);
  EXPECT_DOUBLE_EQ(h100->Peak(DType::kFP8), 1979e12);
  EXPECT_DOUBLE_EQ(h100->Peak(DType::kINT8), 1979e12);
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth_Bps, 3.35e12);

  const GpuSpec* h200 = FindBuiltinGpu("H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(h200->memory_bytes, 141e9);
  EXPECT_DOUBLE_EQ(h200->memory_bandwidth_Bps, 4.8e12);

  const GpuSpec* v100 = FindBuiltinGpu("V100-SXM2");
  ASSERT_NE(v100, nullptr);
  EXPECT_DOUBLE_EQ(v100->Peak(DType::kFP16), 125e12);
  EXPECT_DOUBLE_EQ(v100->memory_bytes, 32e9);
  for (DType d : {DType::kBF16, DType::kTF32, DType::kFP8, DType::kINT8}) {
    EXPECT_FALSE(v100->Supports(d)) << ToString(d);
  }

  const GpuSpec* rtx3090 = FindBuiltinGpu("RTX3090");
  ASSERT_NE(rtx3090, nullptr);
  EXPECT_DOUBLE_EQ(rtx3090->Peak(DType::kFP16), 71e12);
  EXPECT_DOUBLE_EQ(rtx3090->Peak(DType::kINT8), 284e12);

  const GpuSpec* rtx4090 = FindBuiltinGpu("RTX4090");
  ASSERT_NE(rtx4090, nullptr);
  EXPECT_DOUBLE_EQ(rtx4090->Peak(DType::kINT8), 660.6e12);
  EXPECT_TRUE(rtx4090->Supports(DType::kFP8));

  const GpuSpec* rtx2080ti = FindBuiltinGpu("RTX2080Ti");
  ASSERT_NE(rtx2080ti, nullptr);
  EXPECT_DOUBLE_EQ(rtx2080ti->Peak(DType::kINT8), 215.2e12);
  EXPECT_DOUBLE_EQ(rtx2080ti->memory_bytes, 11e9);
  EXPECT_FALSE(rtx2080ti->Supports(DType::kBF16));
  EXPECT_FALSE(rtx2080ti->Supports(DType::kTF32));
}

TEST(Catalog, FindUnknownIsNull) {
  EXPECT_EQ(FindBuiltinGpu("A100"), nullptr);
  EXPECT_EQ(FindBuiltinGpu(""), nullptr);
}

TEST(GpuSpec, PeakOfAMissingUnitThrowsNamingTheGpu) {
  const GpuSpec* a100 = FindBuiltinGpu("A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  try {
    a100->Peak(DType::kFP8);
    FAIL() << "expected stratasim::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "GPU A100-SXM4-80GB has no fp8 units");
  }
}

}  // namespace
}  // namespace stratasim

namespace stratasim {
namespace {

TEST(HardwareCatalog, Int4WhereTheTensorCoresHaveIt) {
  EXPECT_DOUBLE_EQ(FindBuiltinGpu("A100-SXM4-80GB")->Peak(DType::kINT4), 1248e12);
  EXPECT_DOUBLE_EQ(FindBuiltinGpu("RTX3090")->Peak(DType::kINT4), 568e12);
  EXPECT_FALSE(FindBuiltinGpu("H100-SXM5")->Supports(DType::kINT4));  // dropped in Hopper
  EXPECT_FALSE(FindBuiltinGpu("V100-SXM2")->Supports(DType::kINT4));
  EXPECT_EQ(ParseDType("int4"), DType::kINT4);
  EXPECT_DOUBLE_EQ(BytesPerElement(DType::kINT4), 0.5);
}

}  // namespace
}  // namespace stratasim
