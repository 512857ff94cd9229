#include <gtest/gtest.h>

#include <string>

#include "strategies/comm/compressed_ddp.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Gpt() {
  Scenario s = testing::TinyGptScenario({4, 1, 8, 1, 2, 4});
  s.training.seed = 7;
  return s;
}

// The text CompressionOf raises for `kind` with `options`, or "no error".
std::string ErrorOf(const std::string& kind, std::map<std::string, std::string> options) {
  try {
    CompressionOf(Gpt(), testing::SpecOf("c", kind, options));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CompressionOf, KindsNameTheirMethodAndDdpCompressesNothing) {
  EXPECT_FALSE(CompressionOf(Gpt(), testing::SpecOf("d", "ddp", {})).has_value());
  EXPECT_FALSE(CompressionOf(Gpt(), testing::SpecOf("z", "zero1", {})).has_value());
  const std::pair<const char*, CompressionMethod> kinds[] = {
      {"s2reducer", CompressionMethod::kS2Reducer},
      {"casq", CompressionMethod::kCasq},
      {"coo", CompressionMethod::kCoo},
      {"omnireduce", CompressionMethod::kOmniReduce},
      {"topk", CompressionMethod::kTopK},
      {"qsgd", CompressionMethod::kQsgd},
      {"terngrad", CompressionMethod::kTernGrad},
      {"uniform-fp16", CompressionMethod::kFp16},
      {"uniform-fp8", CompressionMethod::kFp8},
      {"uniform-int8", CompressionMethod::kInt8}};
  for (const auto& [kind, method] : kinds) {
    const auto spec = CompressionOf(Gpt(), testing::SpecOf("c", kind, {}));
    ASSERT_TRUE(spec.has_value()) << kind;
    EXPECT_EQ(spec->method, method) << kind;
    EXPECT_EQ(spec->seed, 7u) << kind;
  }
}

TEST(CompressionOf, OptionsReachTheSpec) {
  const auto s2 = CompressionOf(
      Gpt(), testing::SpecOf("c", "s2reducer", {{"sketch_rows", "3"}, {"sketch_columns", "1000"}}));
  EXPECT_EQ(s2->sketch_rows, 3);
  EXPECT_EQ(s2->sketch_columns, 1000);
  // Unset: 0, sized by sketch_ratio (core/compression.h).
  const auto ratio =
      CompressionOf(Gpt(), testing::SpecOf("c", "s2reducer", {{"sketch_ratio", "0.01"}}));
  EXPECT_EQ(ratio->sketch_columns, 0);
  EXPECT_DOUBLE_EQ(ratio->sketch_ratio, 0.01);
  EXPECT_EQ(CompressionOf(Gpt(), testing::SpecOf("c", "casq", {{"casq_bits", "3"}}))->casq_bits, 3);
  EXPECT_EQ(CompressionOf(Gpt(), testing::SpecOf("c", "topk", {{"index_bytes", "8"}}))->index_bytes,
            8);
  EXPECT_EQ(CompressionOf(Gpt(), testing::SpecOf("c", "qsgd", {{"bucket_elements", "128"}}))
                ->bucket_elements,
            128);
}

TEST(CompressionOf, BadOptionsFailAtTheOption) {
  EXPECT_EQ(ErrorOf("s2reducer", {{"sketch_columns", "0"}}),
            "s.yaml:9:5: strategies[0].options.sketch_columns = \"0\": must be an integer in [1, "
            "2147483647]");
  EXPECT_EQ(ErrorOf("s2reducer", {{"sketch_ratio", "0"}}),
            "s.yaml:9:5: strategies[0].options.sketch_ratio = \"0\": sketch_ratio must be in (0, "
            "1]");
  EXPECT_EQ(ErrorOf("s2reducer", {{"sketch_rows", "0"}}),
            "s.yaml:9:5: strategies[0].options.sketch_rows = \"0\": must be an integer in [1, 64]");
  EXPECT_EQ(ErrorOf("casq", {{"casq_bits", "0"}}),
            "s.yaml:9:5: strategies[0].options.casq_bits = \"0\": must be an integer in [1, 8]");
  EXPECT_EQ(ErrorOf("casq", {{"casq_bits", "9"}}),
            "s.yaml:9:5: strategies[0].options.casq_bits = \"9\": must be an integer in [1, 8]");
  EXPECT_EQ(ErrorOf("casq", {{"table_ratio", "0"}}),
            "s.yaml:9:5: strategies[0].options.table_ratio = \"0\": table_ratio must be in (0, 1]");
  EXPECT_EQ(ErrorOf("topk", {{"topk_fraction", "0"}}),
            "s.yaml:9:5: strategies[0].options.topk_fraction = \"0\": topk_fraction must be in (0, "
            "1]");
  EXPECT_EQ(ErrorOf("coo", {{"index_bytes", "5"}}),
            "s.yaml:9:5: strategies[0].options.index_bytes = \"5\": index_bytes must be 4 or 8");
  EXPECT_EQ(ErrorOf("qsgd", {{"qsgd_levels", "128"}}),
            "s.yaml:9:5: strategies[0].options.qsgd_levels = \"128\": must be an integer in [1, "
            "127]");
  EXPECT_EQ(ErrorOf("casq", {{"scope", "layers"}}),
            "s.yaml:9:5: strategies[0].options.scope = \"layers\": must be one of: embedding, all");
  // An option of another compressor would silently do nothing.
  EXPECT_EQ(ErrorOf("casq", {{"sketch_rows", "2"}}),
            "s.yaml:9:5: strategies[0].options.sketch_rows = \"2\": applies to kind s2reducer "
            "only, not casq");
  EXPECT_EQ(ErrorOf("omnireduce", {{"index_bytes", "8"}}),
            "s.yaml:9:5: strategies[0].options.index_bytes = \"8\": applies to kind coo, topk "
            "only, not omnireduce");
  EXPECT_EQ(ErrorOf("uniform-fp8", {{"bucket", "1"}})
                .find("s.yaml:9:5: strategies[0].options.bucket = \"1\": unknown option (known: "),
            0u);
  EXPECT_EQ(ErrorOf("casq", {{"casq_bits", "8"}, {"bucket_size", "1MiB"}}), "no error");
}

}  // namespace
}  // namespace stratasim
