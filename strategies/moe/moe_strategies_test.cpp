#include "strategies/moe/moe_strategies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/hardware.h"
#include "strategies/moe/fastermoe.h"
#include "strategies/moe/moe_cost.h"
#include "strategies/moe/moe_setup.h"
#include "strategies/moe/moe_test_util.h"
#include "strategies/moe/pro_prophet.h"
#include "strategies/moe/prophet.h"
#include "strategies/moe/routing_trace.h"
#include "strategies/plan.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

using testing::SpecOf;

using testing::TinyMoe;
constexpr auto Kind = &testing::CollectivesOfKind;

TEST(MoeStrategiesTest, RoutedAllToAllVolumesEqualRoutingTimesTokenSize) {
  const Scenario s = TinyMoe();
  const StrategySpec spec =
      SpecOf("ep", "deepspeed-moe", {{"dispatch", "routed"}, {"skew", "1.2"}});
  const Plan p = PlanStrategy(s, spec);
  OptionReader opt(spec, MoeRoutingOptions());
  const MoeSetup st = ReadMoeSetup(s, spec, opt);
  const auto a2a = Kind(p, CollectiveKind::kAllToAllV);
  // Per iteration and layer: dispatch, combine, combine-grad, dispatch-grad.
  ASSERT_EQ(a2a.size(), 3u * 2 * 4);
  const double token_bytes = 256 * 2;  // hidden 256 in BF16
  for (int t = 0; t < 3; ++t) {
    // Forward layers in order, backward layers in reverse.
    for (int l = 0; l < 2; ++l) {
      const Collective& dispatch = *a2a[t * 8 + l * 2];
      const Collective& combine = *a2a[t * 8 + l * 2 + 1];
      const Collective& combine_grad = *a2a[t * 8 + 4 + (1 - l) * 2];
      for (int r = 0; r < 8; ++r) {
        for (int x = 0; x < 8; ++x) {
          const double want = st.routing.at(t, l, r, x) * token_bytes;  // expert x on rank x
          EXPECT_EQ(dispatch.matrix[r * 8 + x], want);
          EXPECT_EQ(combine.matrix[x * 8 + r], want);
          EXPECT_EQ(combine_grad.matrix[r * 8 + x], want);
        }
      }
    }
  }
}

TEST(MoeStrategiesTest, PaddedDispatchSendsEqualBlocksAtTheLargestCount) {
  const Scenario s = TinyMoe();
  const StrategySpec spec = SpecOf("ds", "deepspeed-moe", {});
  const Plan p = PlanStrategy(s, spec);
  OptionReader opt(spec, MoeRoutingOptions());
  const MoeSetup st = ReadMoeSetup(s, spec, opt);
  const auto a2a = Kind(p, CollectiveKind::kAllToAll);
  ASSERT_EQ(a2a.size(), 3u * 2 * 4);
  double max = 0;
  for (int r = 0; r < 8; ++r) {
    for (int x = 0; x < 8; ++x) max = std::max(max, st.routing.at(0, 0, r, x));
  }
  EXPECT_EQ(a2a[0]->bytes, 8 * max * 256 * 2);
  EXPECT_EQ(p.moe->dropped_tokens, 0);
}

TEST(MoeStrategiesTest, DropTokensCapsAtCapacity) {
  const Scenario s = TinyMoe();
  const Plan p =
      PlanStrategy(s, SpecOf("ds", "deepspeed-moe", {{"drop_tokens", "true"}, {"skew", "2"}}));
  EXPECT_GT(p.moe->dropped_tokens, 0);
  // capacity = ceil(128 / 8 * 1.25) = 20 token slots per (rank, expert) block.
  EXPECT_EQ(Kind(p, CollectiveKind::kAllToAll)[0]->bytes, 8 * 20 * 256 * 2);
}

TEST(MoeStrategiesTest, UniformRoutingMovesNoExperts) {
  const Scenario s = TinyMoe();
  for (const char* kind : {"prophet", "pro-prophet"}) {
    const Plan p = PlanStrategy(s, SpecOf("x", kind, {{"routing", "uniform"}}));
    EXPECT_EQ(p.moe->replicas, 0) << kind;
    EXPECT_EQ(p.moe->transfer_bytes, 0) << kind;
    EXPECT_TRUE(Kind(p, CollectiveKind::kBroadcast).empty()) << kind;
  }
}

TEST(MoeStrategiesTest, OnlyDeepSpeedMoeIsTheBaseline) {
  const Scenario s = TinyMoe();
  for (const char* kind : {"deepspeed-moe", "fastermoe", "prophet", "pro-prophet"}) {
    const Plan p = PlanStrategy(s, SpecOf("x", kind, {}));
    ASSERT_TRUE(p.moe) << kind;
    EXPECT_EQ(p.moe->baseline, std::string(kind) == "deepspeed-moe") << kind;
    EXPECT_EQ(p.moe->top_k, s.model.top_k) << kind;
  }
}

TEST(MoeStrategiesTest, SkewedRoutingIsBalanced) {
  const Scenario s = TinyMoe();
  for (const char* kind : {"fastermoe", "prophet", "pro-prophet"}) {
    // Copies re-sent every iteration (persistent placements: persistent_placement_test.cpp).
    std::map<std::string, std::string> options = {{"skew", "2"}, {"drift", "0"}};
    if (std::string(kind) != "fastermoe") options["persistent"] = "false";
    const Plan p = PlanStrategy(s, SpecOf("x", kind, options));
    EXPECT_GT(p.moe->replicas, 0) << kind;
    EXPECT_LT(p.moe->load_std_after, p.moe->load_std_before) << kind;
    EXPECT_FALSE(Kind(p, CollectiveKind::kBroadcast).empty()) << kind;
    EXPECT_FALSE(Kind(p, CollectiveKind::kReduce).empty()) << kind;
  }
}

// The per-GPU load series (docs/moe.md): one row per measured iteration, one entry per GPU, each
// row summing to the tokens routed through a layer (nothing dropped: tokens x top_k).
TEST(MoeStrategiesTest, GpuTokensPerIterationSumToTheRoutedTokens) {
  Scenario s = TinyMoe();
  s.model.top_k = 2;
  for (const char* kind : {"deepspeed-moe", "fastermoe", "prophet", "pro-prophet"}) {
    const StrategySpec spec = SpecOf("x", kind, {{"skew", "2"}});
    const Plan p = PlanStrategy(s, spec);
    ASSERT_TRUE(p.moe) << kind;
    const auto& rows = p.moe->gpu_tokens_per_iteration;
    ASSERT_EQ(rows.size(), 2u) << kind;  // measured iterations
    for (const std::vector<double>& row : rows) {
      ASSERT_EQ(row.size(), 8u) << kind;
      double sum = 0;
      for (double v : row) sum += v;
      EXPECT_NEAR(sum, p.moe->tokens_per_iteration * 2, 1e-6 * sum) << kind;
    }
    EXPECT_EQ(PlanStrategy(s, spec).moe->gpu_tokens_per_iteration, rows) << kind;
  }
  // Skewed routing loads the GPUs unevenly under plain expert parallelism.
  const Plan plain = PlanStrategy(s, SpecOf("x", "deepspeed-moe", {{"skew", "2"}}));
  const std::vector<double>& ds = plain.moe->gpu_tokens_per_iteration[0];
  EXPECT_GT(*std::max_element(ds.begin(), ds.end()), *std::min_element(ds.begin(), ds.end()));
}

TEST(MoeStrategiesTest, SameSeedSameGraph) {
  const Scenario s = TinyMoe();
  const StrategySpec spec = SpecOf("x", "pro-prophet", {{"top_k", "2"}});
  EXPECT_EQ(TaskGraphToJson(PlanStrategy(s, spec).graph),
            TaskGraphToJson(PlanStrategy(s, spec).graph));
  Scenario other = s;
  other.training.seed = 6;
  EXPECT_NE(TaskGraphToJson(PlanStrategy(s, spec).graph),
            TaskGraphToJson(PlanStrategy(other, spec).graph));
}

TEST(MoeStrategiesTest, SmartScheduleSplitsIntoPairwiseSteps) {
  const Scenario s = TinyMoe();
  const Plan p = PlanStrategy(s, SpecOf("f", "fastermoe", {{"group_size", "2"}}));
  // 4 groups of 2: 4 steps per all-to-all, 4 all-to-alls per layer.
  EXPECT_EQ(Kind(p, CollectiveKind::kAllToAllV).size(), 3u * 2 * 4 * 4);
  const Collective& step1 = *Kind(p, CollectiveKind::kAllToAllV)[1];
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (b / 2 != (a / 2 + 1) % 4) {
        EXPECT_EQ(step1.matrix[a * 8 + b], 0);
      }
    }
  }
}

TEST(MoeStrategiesTest, ShadowingFollowsThePerformanceModel) {
  MoeCostModel m;
  m.token_s = 1e-6;
  m.net_Bps = 1e9;
  m.bytes_per_token = 1000;
  m.expert_bytes = 1e6;
  const TokenMatrix hot = {{900, 10}, {900, 10}};
  // Shadowing expert 0 saves 900 tokens of transfer and compute for a 1 MB broadcast.
  const auto shadows = FasterMoeShadows(hot, 1, m);
  ASSERT_EQ(shadows.size(), 1u);
  EXPECT_EQ(shadows[0].expert, 0);
  EXPECT_EQ(shadows[0].holders, std::vector<int>{1});
  m.expert_bytes = 1e9;  // far too large to move
  EXPECT_TRUE(FasterMoeShadows(hot, 1, m).empty());
}

TEST(MoeStrategiesTest, ProProphetStopsWhenBalanced) {
  MoeCostModel m;
  m.token_s = 1e-6;
  m.net_Bps = 1e9;
  m.bytes_per_token = 1000;
  m.expert_bytes = 1e5;
  const TokenMatrix even = {
      {100, 100, 100, 100}, {100, 100, 100, 100}, {100, 100, 100, 100}, {100, 100, 100, 100}};
  EXPECT_TRUE(ProProphetSearch(even, 1, m, 3, true).empty());
  EXPECT_TRUE(ProphetPlan(even, 1, m, 3, true).empty());
  const TokenMatrix hot = {
      {700, 10, 10, 10}, {700, 10, 10, 10}, {700, 10, 10, 10}, {700, 10, 10, 10}};
  const auto reps = ProProphetSearch(hot, 1, m, 3, true);
  ASSERT_FALSE(reps.empty());
  EXPECT_EQ(reps[0].expert, 0);
  const auto prophet = ProphetPlan(hot, 1, m, 3, true);
  ASSERT_FALSE(prophet.empty());
  EXPECT_EQ(prophet[0].expert, 0);
}

void ExpectConfigError(const Scenario& s, const StrategySpec& spec, const std::string& message);

TEST(MoeStrategiesTest, ReplaysATraceRelativeToTheScenarioFile) {
  const std::string dir = ::testing::TempDir() + "moe_trace_test";
  std::filesystem::create_directories(dir);
  Scenario s = TinyMoe();
  s.file = dir + "/s.yaml";
  RoutingGeneratorConfig c;
  c.iterations = 3;
  c.layers = 2;
  c.ranks = 8;
  c.experts = 8;
  c.tokens_per_rank = 128;
  c.seed = 99;
  c.skew = 2;
  const Routing recorded = GenerateRouting(c);
  std::ofstream(dir + "/t.txt") << RoutingTraceText(recorded);
  const StrategySpec spec = SpecOf(
      "x", "deepspeed-moe", {{"routing", "trace"}, {"trace", "t.txt"}, {"dispatch", "routed"}});
  const Plan p = PlanStrategy(s, spec);
  const Collective& dispatch = *Kind(p, CollectiveKind::kAllToAllV)[0];
  for (int r = 0; r < 8; ++r) {
    for (int x = 0; x < 8; ++x)
      EXPECT_EQ(dispatch.matrix[r * 8 + x], recorded.at(0, 0, r, x) * 512);
  }
  // A trace of other sizes, or too short, is rejected at the option.
  c.ranks = 4;
  c.experts = 4;
  std::ofstream(dir + "/small.txt") << RoutingTraceText(GenerateRouting(c));
  ExpectConfigError(s, SpecOf("x", "prophet", {{"routing", "trace"}, {"trace", "small.txt"}}),
                    "s.yaml:9:5: strategies[0].options.trace = \"small.txt\": " + dir +
                        "/small.txt has 4 ranks, the scenario needs 8");
  c.ranks = 8;
  c.experts = 8;
  c.iterations = 2;
  std::ofstream(dir + "/short.txt") << RoutingTraceText(GenerateRouting(c));
  ExpectConfigError(s, SpecOf("x", "prophet", {{"routing", "trace"}, {"trace", "short.txt"}}),
                    "s.yaml:9:5: strategies[0].options.trace = \"short.txt\": " + dir +
                        "/short.txt has 2 iterations, the scenario simulates 3 (warm-up + "
                        "measured)");
  c.iterations = 3;
  c.tokens_per_rank = 100;
  std::ofstream(dir + "/tokens.txt") << RoutingTraceText(GenerateRouting(c));
  ExpectConfigError(s, SpecOf("x", "prophet", {{"routing", "trace"}, {"trace", "tokens.txt"}}),
                    "s.yaml:9:5: strategies[0].options.trace = \"tokens.txt\": " + dir +
                        "/tokens.txt: iteration 0 layer 0 rank 0 routes 100 tokens; micro-batch "
                        "tokens x top_k is 128");
  ExpectConfigError(
      s, SpecOf("x", "prophet", {{"routing", "trace"}, {"trace", "t.txt"}, {"drift", "0.1"}}),
      "s.yaml:9:5: strategies[0].options.drift = \"0.1\": not with routing: trace "
      "(the trace gives every iteration)");
}

void ExpectConfigError(const Scenario& s, const StrategySpec& spec, const std::string& message) {
  try {
    PlanStrategy(s, spec);
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(MoeStrategiesTest, BadInput) {
  Scenario s = TinyMoe();
  ExpectConfigError(s, SpecOf("x", "deepspeed-moe", {{"dispatch", "fast"}}),
                    "s.yaml:9:5: strategies[0].options.dispatch = \"fast\": must be one of: "
                    "padded, routed");
  ExpectConfigError(s, SpecOf("x", "fastermoe", {{"group_size", "3"}}),
                    "s.yaml:9:5: strategies[0].options.group_size = \"3\": must divide the "
                    "number of GPUs (8)");
  ExpectConfigError(s, SpecOf("x", "prophet", {{"routing", "trace"}}),
                    "s.yaml:8:5: strategies[0].options.trace: routing: trace needs the trace "
                    "file's path");
  ExpectConfigError(s, SpecOf("x", "prophet", {{"trace", "t.txt"}}),
                    "s.yaml:9:5: strategies[0].options.trace = \"t.txt\": only with routing: "
                    "trace");
  ExpectConfigError(s, SpecOf("x", "pro-prophet", {{"top_k", "9"}}),
                    "s.yaml:9:5: strategies[0].options.top_k = \"9\": must be <= model.experts "
                    "(8)");
  ExpectConfigError(s, SpecOf("x", "pro-prophet", {{"routing", "uniform"}, {"skew", "1"}}),
                    "s.yaml:9:5: strategies[0].options.skew = \"1\": only with routing: zipf "
                    "(this strategy has routing: uniform)");
  ExpectConfigError(s, SpecOf("x", "pro-prophet", {{"skew", "-1"}}),
                    "s.yaml:9:5: strategies[0].options.skew = \"-1\": must be a number in "
                    "[0, 8]");
  ExpectConfigError(s, SpecOf("x", "pro-prophet", {{"routing", "trace"}, {"trace", "/no/such"}}),
                    "s.yaml:9:5: trace = \"/no/such\": cannot open the routing trace file");
  Scenario dense = s;
  dense.model.kind = "gpt";
  ExpectConfigError(dense, SpecOf("x", "deepspeed-moe", {}),
                    "s.yaml:8:5: strategies[0]: MoE strategies need model.kind moe (the model is "
                    "gpt)");
  Scenario few = s;
  few.model.experts = 12;
  ExpectConfigError(
      few, SpecOf("x", "deepspeed-moe", {}),
      "s.yaml:8:5: strategies[0]: expert parallelism needs model.experts (12) to be a "
      "multiple of the GPUs (8)");
  Scenario batch = s;
  batch.training.global_batch = 16;
  ExpectConfigError(batch, SpecOf("x", "deepspeed-moe", {}),
                    "s.yaml:8:5: strategies[0]: MoE strategies run one micro-batch per GPU per "
                    "iteration: training.global_batch (16) must equal micro_batch (1) x GPUs (8)");
}

}  // namespace
}  // namespace stratasim
