#include "strategies/data/ddp.h"

#include <gtest/gtest.h>

#include "models/gpt.h"

namespace stratasim {
namespace {

Scenario Small(int gpus, int global_batch, int micro_batch) {
  Scenario s;
  s.name = "t";
  ServerGroup g;
  g.name = "g";
  g.gpu = "A100-SXM4-80GB";
  g.gpus_per_server = gpus;
  g.nvswitch = NvSwitchSpec{LinkSpec{300e9, 1e-6}};
  s.cluster.groups.push_back(g);
  s.model.preset = "tiny";
  s.model.layers = 4;
  s.model.hidden = 256;
  s.model.heads = 4;
  s.model.sequence = 128;
  s.model.vocabulary = 1000;
  s.training.global_batch = global_batch;
  s.training.micro_batch = micro_batch;
  s.training.precision = DType::kBF16;
  s.training.warmup_iterations = 0;
  s.training.measured_iterations = 1;
  return s;
}

StrategySpec Spec(std::map<std::string, std::string> options) {
  StrategySpec spec;
  spec.name = "ddp";
  spec.kind = "ddp";
  spec.key_path = "strategies[0]";
  for (auto& [k, v] : options) spec.options[k] = OptionValue{v, SourceLocation{"s.yaml", 9, 5}};
  return spec;
}

TEST(Ddp, AllReducesEveryGradientOnceOverAllRanks) {
  const Scenario s = Small(4, 16, 2);
  const Plan p = PlanDdp(s, Spec({{"bucket_size", "1MB"}}));
  double bytes = 0;
  for (const Collective& c : p.graph.collectives()) {
    EXPECT_EQ(c.kind, CollectiveKind::kAllReduce);
    EXPECT_EQ(c.ranks.size(), 4u);
    bytes += c.bytes;
  }
  EXPECT_NEAR(bytes, GptParameterCount(s.model) * 2, 1);  // BF16 gradients
  EXPECT_GT(p.graph.collectives().size(), 1u);
  EXPECT_EQ(p.samples_per_iteration, 16);
}

TEST(Ddp, GradientAccumulationRunsMicroBatchesAndCommunicatesOnce) {
  const Scenario s = Small(2, 16, 2);  // 4 micro-batches per GPU
  const Plan one = PlanDdp(s, Spec({{"bucket_size", "1GB"}}));
  EXPECT_EQ(one.graph.collectives().size(), 1u);
  double fwd_bwd = 0;
  for (const Task& t : one.graph.tasks()) {
    if (t.rank == 0 && (t.phase == Phase::kForward || t.phase == Phase::kBackward)) {
      fwd_bwd += t.flops;
    }
  }
  EXPECT_NEAR(fwd_bwd, GptTrainingFlops(s.model, 8), 1e-9 * fwd_bwd);
}

TEST(Ddp, OverlapMakesBucketsDependOnTheirLayersBackward) {
  const Scenario s = Small(2, 4, 2);
  const Plan on = PlanDdp(s, Spec({{"bucket_size", "1MB"}, {"overlap", "true"}}));
  const Plan off = PlanDdp(s, Spec({{"bucket_size", "1MB"}, {"overlap", "false"}}));
  const Task& first_on = on.graph.task(on.graph.collectives()[0].members[0]);
  const Task& first_off = off.graph.task(off.graph.collectives()[0].members[0]);
  // With overlap the first bucket (head + last layer, over 1 MB) waits for the last layer's
  // backward; without, for the end of the backward pass (the embedding's).
  EXPECT_NE(on.graph.task(first_on.deps[0]).name.find("layer3/"), std::string::npos);
  EXPECT_NE(off.graph.task(first_off.deps[0]).name.find("embedding"), std::string::npos);
}

TEST(Ddp, BatchThatDoesNotSplitIsAnError) {
  try {
    PlanDdp(Small(4, 10, 2), Spec({}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("global_batch (10)"), std::string::npos) << e.what();
  }
}

TEST(Ddp, BadOptionsAreErrors) {
  EXPECT_THROW(PlanDdp(Small(2, 4, 2), Spec({{"bucket_size", "-1MB"}})), ConfigError);
  EXPECT_THROW(PlanDdp(Small(2, 4, 2), Spec({{"overlap", "maybe"}})), ConfigError);
  try {
    PlanDdp(Small(2, 4, 2), Spec({{"bucket", "1MB"}}));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "strategies[0].options.bucket");
    EXPECT_EQ(e.where().line, 9);
  }
}

}  // namespace
}  // namespace stratasim
