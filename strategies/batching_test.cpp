#include "strategies/batching.h"

#include <gtest/gtest.h>

#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

TEST(Batching, MicroBatchesPerReplica) {
  const StrategySpec spec = testing::SpecOf("x", "ddp", {});
  const OptionSpecs none;
  OptionReader opt(spec, none);
  TrainingSpec tr;
  tr.global_batch = 64;
  tr.micro_batch = 2;
  EXPECT_EQ(MicroBatchesPerReplica(tr, 8, "ddp", opt), 4);
}

// Every planner that replicates data reports an indivisible batch the same way, naming itself.
TEST(Batching, IndivisibleBatchIsRejectedByEveryDataParallelPlanner) {
  const Scenario s = testing::TinyGptScenario({8, 1, 10, 1, 4, 4});  // 10 samples, 8 GPUs
  const struct {
    const char* kind;
    std::map<std::string, std::string> options;
    const char* who;
    int replicas;
  } cases[] = {
      {"ddp", {}, "data parallelism over 8 GPUs", 8},
      {"zero3", {}, "sharded data parallelism over 8 GPUs", 8},
      {"tensor", {{"degree", "2"}}, "tensor parallelism of degree 2 on 8 GPUs", 4},
  };
  for (const auto& c : cases) {
    const std::string e = testing::PlanErrorOf(s, testing::SpecOf("x", c.kind, c.options));
    EXPECT_NE(e.find("s.yaml:8:5: strategies[0]: "), std::string::npos) << e;
    EXPECT_NE(e.find(std::string(c.who) +
                     " needs training.global_batch (10) to be a multiple of micro_batch (1) x " +
                     std::to_string(c.replicas) + " data-parallel replica(s)"),
              std::string::npos)
        << e;
  }
}

}  // namespace
}  // namespace stratasim
