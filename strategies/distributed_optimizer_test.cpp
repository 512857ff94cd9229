// Megatron-LM's distributed optimizer on the tensor and 3d kinds: the same data-parallel
// traffic as the all-reduce, model states of 2 + g + 12/d bytes per parameter, and the next
// forward waiting for its bucket's parameter all-gather.
#include "strategies/distributed_optimizer.h"

#include <gtest/gtest.h>

#include "strategies/plan.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

Scenario Small() { return testing::TinyGptScenario({8, 1, 8, 1, 4, 8}); }

StrategySpec Tensor(std::map<std::string, std::string> options) {
  return testing::SpecOf("tp", "tensor", options);
}
StrategySpec ThreeD(std::map<std::string, std::string> options) {
  return testing::SpecOf("3d", "3d", options);
}

// Bytes each member of the data-parallel collectives (category "dp") sends in the plan, as
// ring algorithms move them: reduce-scatter and all-gather (N-1)/N of the buffer, all-reduce
// 2(N-1)/N; summed over the collectives rank 0 is in.
double DataParallelBytesOfRank0(const TaskGraph& g) {
  double moved = 0;
  for (const Collective& c : g.collectives()) {
    if (g.task(c.members[0]).category.str() != "dp" || c.ranks.front() != 0) continue;
    const double n = static_cast<double>(c.ranks.size());
    moved += (c.kind == CollectiveKind::kAllReduce ? 2 : 1) * (n - 1) / n * c.bytes;
  }
  return moved;
}

// Rank 0's model states by category.
std::map<std::string, double> StatesOfRank0(const TaskGraph& g) {
  std::map<std::string, double> out;
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::kMemory || t.rank != 0) continue;
    const std::string c = t.category.str();
    if (c == "weights" || c == "gradients" || c == "optimizer") out[c] += t.memory_delta_bytes;
  }
  return out;
}

TEST(DistributedOptimizer, BucketOfLayerFollowsTheReverseOrderBuckets) {
  // Layers 0..5, layer 3 without parameters; buckets (reverse order) {5, 4}, {3, 2}, {1, 0}.
  const std::vector<GradientBucket> buckets = {{2, 4}, {1, 2}, {2, 0}};
  EXPECT_EQ(BucketOfLayer(buckets, 6), (std::vector<int>{2, 2, 1, 1, 0, 0}));
  EXPECT_EQ(BucketOfLayer({{1, 2}}, 4), (std::vector<int>{-1, -1, 0, 0}));
}

TEST(DistributedOptimizer, SendsWhatTheAllReduceSends) {
  const Scenario s = Small();
  for (const auto& [plain, sharded] : std::vector<std::pair<StrategySpec, StrategySpec>>{
           {Tensor({{"degree", "2"}}),
            Tensor({{"degree", "2"}, {"distributed_optimizer", "true"}})},
           {ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}}),
            ThreeD({{"tensor", "2"},
                    {"stages", "2"},
                    {"data", "2"},
                    {"distributed_optimizer", "true"}})},
           {ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}, {"dp_overlap", "false"}}),
            ThreeD({{"tensor", "2"},
                    {"stages", "2"},
                    {"data", "2"},
                    {"dp_overlap", "false"},
                    {"distributed_optimizer", "true"},
                    {"overlap_param_gather", "false"}})}}) {
    const Plan a = PlanStrategy(s, plain), b = PlanStrategy(s, sharded);
    const double ar = DataParallelBytesOfRank0(a.graph);
    EXPECT_GT(ar, 0);
    EXPECT_DOUBLE_EQ(DataParallelBytesOfRank0(b.graph), ar) << sharded.kind;
    int rs = 0, ag = 0, all_reduce = 0;
    for (const Collective& c : b.graph.collectives()) {
      if (b.graph.task(c.members[0]).category.str() != "dp") continue;
      rs += c.kind == CollectiveKind::kReduceScatter;
      ag += c.kind == CollectiveKind::kAllGather;
      all_reduce += c.kind == CollectiveKind::kAllReduce;
    }
    EXPECT_EQ(all_reduce, 0);
    EXPECT_GT(rs, 0);
    EXPECT_GT(ag, 0);
  }
}

TEST(DistributedOptimizer, ModelStatesFollowTwoPlusGPlusTwelveOverD) {
  const Scenario s = Small();
  for (const int d : {1, 2, 4}) {
    for (const bool fp32 : {false, true}) {
      const double g = fp32 ? 4 : 2;
      for (const bool sharded : {false, true}) {
        const Plan p =
            PlanStrategy(s, Tensor({{"degree", std::to_string(8 / d)},
                                    {"distributed_optimizer", sharded ? "true" : "false"},
                                    {"grad_reduce_in_fp32", fp32 ? "true" : "false"}}));
        const std::map<std::string, double> st = StatesOfRank0(p.graph);
        const double params = st.at("weights") / 2;
        const double shards = sharded ? d : 1;
        EXPECT_DOUBLE_EQ(st.at("gradients"), g * params);
        EXPECT_DOUBLE_EQ(st.at("optimizer"), 12 / shards * params);
        EXPECT_NEAR(st.at("weights") + st.at("gradients") + st.at("optimizer"),
                    (2 + g + 12 / shards) * params, 1e-9 * params);
      }
    }
  }
  // 3d: each stage's parameters, sharded over its d = 2 replicas.
  const Plan p = PlanStrategy(s, ThreeD({{"tensor", "2"},
                                         {"stages", "2"},
                                         {"data", "2"},
                                         {"distributed_optimizer", "true"},
                                         {"grad_reduce_in_fp32", "true"}}));
  const std::map<std::string, double> st = StatesOfRank0(p.graph);
  const double params = st.at("weights") / 2;
  EXPECT_DOUBLE_EQ(st.at("gradients") + st.at("optimizer"), (4 + 6) * params);
}

TEST(DistributedOptimizer, AdamRunsOnTheShard) {
  const Scenario s = Small();
  auto adam_flops = [&](const StrategySpec& spec) {
    const Plan p = PlanStrategy(s, spec);
    for (const Task& t : p.graph.tasks()) {
      if (t.rank == 0 && t.op == OpKind::kOptimizer) return t.flops;
    }
    return 0.0;
  };
  EXPECT_DOUBLE_EQ(adam_flops(Tensor({{"degree", "2"}, {"distributed_optimizer", "true"}})) * 4,
                   adam_flops(Tensor({{"degree", "2"}})));
  EXPECT_DOUBLE_EQ(
      adam_flops(ThreeD(
          {{"tensor", "2"}, {"stages", "2"}, {"data", "2"}, {"distributed_optimizer", "true"}})) *
          2,
      adam_flops(ThreeD({{"tensor", "2"}, {"stages", "2"}, {"data", "2"}})));
  // d = 1: nothing to shard, the same plan.
  const Plan one = PlanStrategy(s, Tensor({{"degree", "8"}, {"distributed_optimizer", "true"}}));
  const Plan plain = PlanStrategy(s, Tensor({{"degree", "8"}}));
  EXPECT_EQ(one.graph.tasks().size(), plain.graph.tasks().size());
}

// The first task of rank 0's iteration-1 forward of `layer` (name part), and its deps' names.
std::vector<std::string> DepsOfFirstForward(const Plan& p, const std::string& layer) {
  for (const Task& t : p.graph.tasks()) {
    if (t.rank != 0 || t.iteration != 1 || t.kind != TaskKind::kCompute) continue;
    const std::string name = t.name.str();
    if (name.find("/mb0/") == std::string::npos || name.find(layer) == std::string::npos) continue;
    std::vector<std::string> deps;
    for (TaskId d : t.deps) deps.push_back(p.graph.task(d).name.str());
    return deps;
  }
  return {};
}

bool HasGather(const std::vector<std::string>& deps) {
  for (const std::string& d : deps) {
    if (d.find("it0/param_all_gather/") != std::string::npos) return true;
  }
  return false;
}

TEST(DistributedOptimizer, NextForwardWaitsForItsBucketsAllGather) {
  Scenario s = Small();
  s.training.measured_iterations = 2;
  // Small buckets: one per layer, so each layer waits for its own.
  for (const StrategySpec& spec :
       {Tensor({{"degree", "2"}, {"distributed_optimizer", "true"}, {"bucket_size", "1KiB"}}),
        ThreeD({{"tensor", "2"},
                {"stages", "2"},
                {"data", "2"},
                {"distributed_optimizer", "true"},
                {"bucket_size", "1KiB"}})}) {
    const Plan p = PlanStrategy(s, spec);
    EXPECT_TRUE(HasGather(DepsOfFirstForward(p, "/embedding/"))) << spec.kind;
    EXPECT_TRUE(HasGather(DepsOfFirstForward(p, "/layer1/"))) << spec.kind;
    // On their own stream, which the step's compute stream does not wait for.
    for (const Collective& c : p.graph.collectives()) {
      const Task& m = p.graph.task(c.members[0]);
      if (m.name.str().find("param_all_gather") == std::string::npos) continue;
      EXPECT_NE(p.graph.streams()[m.stream], "compute");
    }
  }
  // overlap_param_gather: false: on the compute stream, after the step.
  const Plan p = PlanStrategy(s, Tensor({{"degree", "2"},
                                         {"distributed_optimizer", "true"},
                                         {"overlap_param_gather", "false"}}));
  int gathers = 0;
  for (const Collective& c : p.graph.collectives()) {
    const Task& m = p.graph.task(c.members[0]);
    if (m.name.str().find("param_all_gather") == std::string::npos) continue;
    EXPECT_EQ(p.graph.streams()[m.stream], "compute");
    ++gathers;
  }
  EXPECT_GT(gathers, 0);
  EXPECT_FALSE(HasGather(DepsOfFirstForward(p, "/layer1/")));
}

TEST(DistributedOptimizer, BadOptionsAreLocated) {
  const Scenario s = Small();
  EXPECT_EQ(testing::PlanErrorOf(s, Tensor({{"degree", "2"}, {"overlap_param_gather", "false"}})),
            "s.yaml:9:5: strategies[0].options.overlap_param_gather = \"false\": only applies "
            "with distributed_optimizer: true");
  EXPECT_EQ(testing::PlanErrorOf(s, ThreeD({{"tensor", "2"},
                                            {"stages", "2"},
                                            {"data", "2"},
                                            {"overlap_param_gather", "true"}})),
            "s.yaml:9:5: strategies[0].options.overlap_param_gather = \"true\": only applies "
            "with distributed_optimizer: true");
  EXPECT_EQ(testing::PlanErrorOf(s, ThreeD({{"tensor", "2"},
                                            {"stages", "2"},
                                            {"data", "2"},
                                            {"schedule", "pipedream_2bw"},
                                            {"distributed_optimizer", "true"}})),
            "s.yaml:9:5: strategies[0].options.distributed_optimizer = \"true\": does not apply "
            "to schedule pipedream_2bw, whose stages step without a flush");
  EXPECT_EQ(testing::PlanErrorOf(s, Tensor({{"degree", "2"}, {"distributed_optimizer", "yes"}})),
            "s.yaml:9:5: strategies[0].options.distributed_optimizer = \"yes\": must be true or "
            "false");
  // The pipeline kind does not have them.
  EXPECT_NE(testing::PlanErrorOf(
                s, testing::SpecOf("pp", "pipeline",
                                   {{"stages", "2"}, {"distributed_optimizer", "true"}})),
            "no error");
}

}  // namespace
}  // namespace stratasim
