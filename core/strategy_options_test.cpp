#include "core/strategy_options.h"

#include <gtest/gtest.h>

#include <string>

#include "core/scenario_test_util.h"

namespace stratasim {
namespace {

using testing::ExpectError;

// A scenario whose one strategy has the options given; they sit on line 18, from column 7.
StrategySpec StrategyWith(const std::string& options) {
  const std::string text = R"(name: t
cluster:
  servers:
    - name: box
      count: 1
      gpu: A100-SXM4-80GB
      gpus_per_server: 4
      nvswitch: {bandwidth: "300GB/s", latency: "1us"}
model:
  preset: gpt2-medium
training:
  global_batch: 16
  micro_batch: 4
strategies:
  - name: s
    kind: ddp
    options:
      )" + options + "\n";
  return LoadScenarioText(text, "t.yaml").strategies.at(0);
}

const OptionSpecs& Declared() {
  static const OptionSpecs o = {
      Flag("overlap", "overlap the all-reduce").Default("true"),
      Integer("buckets", 1, 64, "how many buckets").Default("7"),
      Number("ratio", 0, 1, "a ratio").Default("0.5"),
      Size("bucket_size", "bucket cap").Default("1KiB"),
      OneOf("algo", {"ring", "tree"}, "the algorithm").Default("ring"),
      FreeText("partition", "layer counts").Default("even"),
      Integer("degree", 1, 64, "the tensor-parallel degree"),
      Integer("micro_batches", 1, 1 << 20, "micro-batches").Derived("global_batch / micro_batch"),
  };
  return o;
}

template <typename F>
ConfigError OptionErrorOf(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError";
  return ConfigError(SourceLocation{}, "", "", "");
}

TEST(StrategyOptions, ReadsTypedValues) {
  StrategySpec spec =
      StrategyWith(R"({overlap: false, buckets: 4, ratio: 0.25, bucket_size: "25MiB", algo: tree, )"
                   R"(partition: "6,6", degree: 2, micro_batches: 9})");
  OptionReader r(spec, Declared());
  EXPECT_FALSE(r.Bool("overlap"));
  EXPECT_EQ(r.Int("buckets"), 4);
  EXPECT_DOUBLE_EQ(r.Double("ratio"), 0.25);
  EXPECT_DOUBLE_EQ(r.Bytes("bucket_size"), 25.0 * 1024 * 1024);
  EXPECT_EQ(r.Choice("algo"), "tree");
  EXPECT_EQ(r.Text("partition"), "6,6");
  EXPECT_EQ(r.Int("degree"), 2);
  EXPECT_EQ(r.Int("micro_batches", 3), 9);
  EXPECT_TRUE(r.Given("degree"));
  r.Finish();
}

TEST(StrategyOptions, AbsentOptionsTakeTheDeclaredDefault) {
  StrategySpec spec = StrategyWith("{degree: 1}");
  OptionReader r(spec, Declared());
  EXPECT_TRUE(r.Bool("overlap"));
  EXPECT_EQ(r.Int("buckets"), 7);
  EXPECT_DOUBLE_EQ(r.Double("ratio"), 0.5);
  EXPECT_DOUBLE_EQ(r.Bytes("bucket_size"), 1024);
  EXPECT_EQ(r.Choice("algo"), "ring");
  EXPECT_EQ(r.Text("partition"), "even");
  EXPECT_EQ(r.Int("micro_batches", 3), 3);  // derived by the planner
  EXPECT_FALSE(r.Given("overlap"));
  r.Finish();
}

TEST(StrategyOptions, ARequiredOptionThatIsMissingSaysWhatItIs) {
  StrategySpec spec = StrategyWith("{}");
  OptionReader r(spec, Declared());
  const ConfigError e = OptionErrorOf([&] { r.Int("degree"); });
  ExpectError(e, 15, 5, "strategies[0].options.degree", "is required: the tensor-parallel degree");
}

TEST(StrategyOptions, ErrorsAreLocatedAtTheOption) {
  StrategySpec spec = StrategyWith(
      "{overlap: maybe, buckets: 65, ratio: 2.5, bucket_size: \"0MiB\", algo: star, "
      "degree: 1.5, micro_batches: 0}");
  OptionReader r(spec, Declared());
  const ConfigError b = OptionErrorOf([&] { r.Bool("overlap"); });
  ExpectError(b, 18, 17, "strategies[0].options.overlap", "must be true or false");
  EXPECT_STREQ(b.what(),
               "t.yaml:18:17: strategies[0].options.overlap = \"maybe\": must be true or false");
  EXPECT_EQ(OptionErrorOf([&] { r.Int("buckets"); }).rule(), "must be an integer in [1, 64]");
  EXPECT_EQ(OptionErrorOf([&] { r.Int("degree"); }).rule(), "must be an integer in [1, 64]");
  EXPECT_EQ(OptionErrorOf([&] { r.Int("micro_batches", 1); }).rule(),
            "must be an integer in [1, 1048576]");
  EXPECT_EQ(OptionErrorOf([&] { r.Double("ratio"); }).rule(), "must be a number in [0, 1]");
  EXPECT_EQ(OptionErrorOf([&] { r.Bytes("bucket_size"); }).rule(), "must be greater than 0 bytes");
  EXPECT_EQ(OptionErrorOf([&] { r.Choice("algo"); }).rule(), "must be one of: ring, tree");
}

TEST(StrategyOptions, FinishRejectsUndeclaredOptionsNamingTheDeclaredOnes) {
  StrategySpec spec = StrategyWith("{overlap: true, buket: 3}");
  OptionReader r(spec, Declared());
  const ConfigError e = OptionErrorOf([&] { r.Finish(); });
  ExpectError(e, 18, 30, "strategies[0].options.buket",
              "unknown option (known: algo, bucket_size, buckets, degree, micro_batches, overlap, "
              "partition, ratio)");
  EXPECT_EQ(e.value(), "3");
  const OptionSpecs none;
  OptionReader bare(spec, none);
  EXPECT_EQ(OptionErrorOf([&] { bare.Finish(); }).rule(),
            "unknown option (strategy kind ddp takes no options)");
}

TEST(StrategyOptions, FailOnAnAbsentOptionPointsAtTheStrategy) {
  StrategySpec spec = StrategyWith("{}");
  OptionReader r(spec, Declared());
  ExpectError(r.Fail("degree", "must be given when pipeline is on"), 15, 5,
              "strategies[0].options.degree", "must be given when pipeline is on");
}

TEST(StrategyOptions, ReadingAgainstTheDeclarationIsAProgrammingError) {
  StrategySpec spec = StrategyWith("{}");
  OptionReader r(spec, Declared());
  auto what = [](auto f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return std::string("ConfigError: ") + e.what();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("nothing thrown");
  };
  EXPECT_EQ(what([&] { r.Bool("overlapp"); }),
            "strategy kind ddp reads option overlapp, which it does not declare");
  EXPECT_EQ(what([&] { r.Int("overlap"); }),
            "strategy kind ddp reads option overlap as integer but declares it bool");
  EXPECT_EQ(what([&] { r.Int("buckets", 3); }),
            "strategy kind ddp reads option buckets with a derived value but does not declare "
            "it Derived");
  EXPECT_EQ(what([&] { r.Int("micro_batches"); }),
            "strategy kind ddp reads option micro_batches without the derived value it declares");
}

TEST(StrategyOptions, ListingAndDocsComeFromTheDeclaration) {
  const OptionSpecs o = {Size("bucket_size", "gradient bucket cap").Default("25MiB"),
                         OneOf("algo", {"auto", "ring"}, "the all-reduce").Default("auto"),
                         Integer("stages", 2, 64, "the number of stages"),
                         Number("skew", 0, 8, "Zipf exponent").Derived("the model's")};
  EXPECT_EQ(OptionsText(o),
            "  bucket_size: bytes, > 0 (\"25MiB\"); default: 25MiB\n"
            "      gradient bucket cap\n"
            "  algo: choice, auto, ring; default: auto\n"
            "      the all-reduce\n"
            "  stages: integer, [2, 64]; default: required\n"
            "      the number of stages\n"
            "  skew: number, [0, 8]; default: the model's\n"
            "      Zipf exponent\n");
  EXPECT_EQ(OptionsMarkdown(o),
            "| option | type | values | default | meaning |\n"
            "|---|---|---|---|---|\n"
            "| `bucket_size` | bytes | > 0 (\"25MiB\") | `25MiB` | gradient bucket cap |\n"
            "| `algo` | choice | `auto`, `ring` | `auto` | the all-reduce |\n"
            "| `stages` | integer | [2, 64] | required | the number of stages |\n"
            "| `skew` | number | [0, 8] | the model's | Zipf exponent |\n");
  EXPECT_EQ(OptionsText({}), "  (no options)\n");
}

}  // namespace
}  // namespace stratasim
