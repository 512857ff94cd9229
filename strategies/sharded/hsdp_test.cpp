#include "strategies/sharded/hsdp.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "core/hardware.h"
#include "models/gpt.h"
#include "models/workload.h"
#include "strategies/sharded/zero.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

// `servers` servers of `per_server` A100s (NVSwitch), one micro-batch of 2 per GPU.
Scenario Cluster(int servers, int per_server) {
  testing::TinyGpt t;
  t.servers = servers;
  t.gpus_per_server = per_server;
  t.global_batch = 2 * servers * per_server;
  t.micro_batch = 2;
  Scenario s = testing::TinyGptScenario(t);
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  s.cluster.groups[0].nics = NicSpec{per_server, LinkSpec{25e9, 2e-6}};  // one per GPU
  s.simulation.fold = false;  // every rank has its own tasks
  return s;
}

StrategySpec Spec(std::map<std::string, std::string> options = {}) {
  return testing::SpecOf("h", "hsdp", options);
}

bool OneServer(const Scenario& s, const std::vector<int>& ranks) {
  for (int r : ranks) {
    if (s.cluster.Locate(r).server != s.cluster.Locate(ranks.front()).server) return false;
  }
  return true;
}

bool OneRail(const Scenario& s, const std::vector<int>& ranks) {
  std::map<int, int> servers;
  for (int r : ranks) {
    if (s.cluster.Locate(r).local != s.cluster.Locate(ranks.front()).local) return false;
    ++servers[s.cluster.Locate(r).server];
  }
  return static_cast<int>(servers.size()) == s.cluster.NumServers();
}

double StateBytes(const Plan& p, int rank) {
  double sum = 0;
  for (const Task& t : p.graph.tasks()) {
    if (t.rank == rank && t.kind == TaskKind::kMemory &&
        (t.name == "weights" || t.name == "gradients" || t.name == "optimizer_states")) {
      sum += t.memory_delta_bytes;
    }
  }
  return sum;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Fragment A's collectives stay in a server, fragment B's run along a rail; a unit's buffer is
// split alpha : 1 - alpha; each replicated shard is all-reduced once, over the other group.
TEST(Hsdp, FragmentsShardInsideServersAndAlongRails) {
  const Scenario s = Cluster(2, 4);
  const Plan p = PlanHsdp(s, Spec({{"split", "0.25"}}));
  const Workload w = BuildWorkload(s.model, 2, DType::kBF16);
  const double layer = w.layers[2].params * 2;  // "layer1": BF16 buffer
  std::map<std::string, int> count;
  for (const Collective& c : p.graph.collectives()) {
    const std::string name = p.graph.task(c.members[0]).name.str();
    const std::string stream = p.graph.streams()[p.graph.task(c.members[0]).stream];
    if (Contains(name, "/intra")) {
      EXPECT_TRUE(Contains(stream, "_intra")) << name << " on " << stream;
    } else {
      ASSERT_TRUE(Contains(name, "/inter")) << name;
      EXPECT_TRUE(Contains(stream, "_inter")) << name << " on " << stream;
    }
    if (!Contains(name, "/layer1/")) continue;
    const bool intra = Contains(name, "/intra");
    if (c.kind == CollectiveKind::kAllReduce) {
      // A's shard (1/4 of A) summed along the rail; B's (1/2 of B) inside the server.
      EXPECT_TRUE(intra ? OneRail(s, c.ranks) : OneServer(s, c.ranks)) << name;
      EXPECT_NEAR(c.bytes, intra ? 0.25 * layer / 4 : 0.75 * layer / 2, 1e-6) << name;
    } else {
      EXPECT_TRUE(intra ? OneServer(s, c.ranks) && c.ranks.size() == 4u : OneRail(s, c.ranks))
          << name;
      EXPECT_NEAR(c.bytes, intra ? 0.25 * layer : 0.75 * layer, 1e-6) << name;
    }
    ++count[std::string(intra ? "intra " : "inter ") + std::string(ToString(c.kind))];
  }
  // Per group: 2 all-gathers and 1 reduce-scatter per micro-batch, 1 all-reduce per
  // iteration; 2 servers' A groups, 4 rails' B groups (and vice versa for the all-reduces).
  EXPECT_EQ(count["intra all_gather"], 2 * 2);
  EXPECT_EQ(count["intra reduce_scatter"], 2);
  EXPECT_EQ(count["intra all_reduce"], 4);
  EXPECT_EQ(count["inter all_gather"], 2 * 4);
  EXPECT_EQ(count["inter reduce_scatter"], 4);
  EXPECT_EQ(count["inter all_reduce"], 2);
}

// Both fragments' all-gathers of a unit wait for the same task and run on their own streams,
// so the simulator runs them at once.
TEST(Hsdp, BothFragmentsAreGatheredAtOnceOnTheirOwnStreams) {
  const Scenario s = Cluster(2, 4);
  for (const std::string prefetch : {"true", "false"}) {
    const Plan p = PlanHsdp(s, Spec({{"split", "0.5"}, {"prefetch", prefetch}}));
    std::map<std::string, const Task*> rank0;
    for (const Collective& c : p.graph.collectives()) {
      for (TaskId m : c.members) {
        const Task& t = p.graph.task(m);
        if (t.rank == 0) rank0[t.name.str()] = &t;
      }
    }
    const Task* a = rank0["it0/mb0/layer1/fwd/all_gather/intra"];
    const Task* b = rank0["it0/mb0/layer1/fwd/all_gather/inter"];
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->stream, b->stream);
    EXPECT_EQ(a->deps, b->deps);
    ASSERT_EQ(a->deps.size(), 1u);
    const std::string dep = p.graph.task(a->deps[0]).name.str();
    EXPECT_TRUE(Contains(dep, prefetch == "true" ? "embedding/" : "layer0/")) << dep;
    const Task* ra = rank0["it0/mb0/layer1/bwd/reduce_scatter/intra"];
    const Task* rb = rank0["it0/mb0/layer1/bwd/reduce_scatter/inter"];
    ASSERT_TRUE(ra && rb);
    EXPECT_NE(ra->stream, rb->stream);
    EXPECT_EQ(ra->deps, rb->deps);
  }
}

// split 1 puts everything in fragment A: hybrid sharding's collectives, byte for byte.
TEST(Hsdp, SplitOneIsHybridShardingAndSplitZeroShardsAlongRails) {
  const Scenario s = Cluster(2, 4);
  auto bytes_by_kind = [](const Plan& p) {
    std::map<std::pair<CollectiveKind, size_t>, double> b;
    for (const Collective& c : p.graph.collectives()) b[{c.kind, c.ranks.size()}] += c.bytes;
    return b;
  };
  const auto hybrid =
      bytes_by_kind(PlanZero(s, testing::SpecOf("z", "zero3", {{"shard_group", "server"}})));
  const auto one = bytes_by_kind(PlanHsdp(s, Spec({{"split", "1"}})));
  ASSERT_EQ(one.size(), hybrid.size());
  for (const auto& [k, v] : hybrid) EXPECT_NEAR(one.at(k), v, 1e-6 * v);
  // split 0: every all-gather and reduce-scatter along a rail of 2.
  const Plan zero = PlanHsdp(s, Spec({{"split", "0"}}));
  for (const Collective& c : zero.graph.collectives()) {
    if (c.kind != CollectiveKind::kAllReduce) {
      EXPECT_EQ(c.ranks.size(), 2u);
    }
  }
}

// Model states 16 P (alpha / G + (1 - alpha) / S): between hybrid sharding's and 16 P / S.
TEST(Hsdp, ModelStatesPerGpu) {
  const Scenario s = Cluster(2, 4);
  const double psi = GptParameterCount(s.model);
  for (double alpha : {0.0, 0.25, 1.0}) {
    char text[16];
    std::snprintf(text, sizeof text, "%g", alpha);
    const Plan p = PlanHsdp(s, Spec({{"split", text}}));
    for (int r : {0, 5}) {
      EXPECT_NEAR(StateBytes(p, r), 16 * psi * (alpha / 4 + (1 - alpha) / 2), 1) << alpha;
    }
  }
}

// The planner's choice is in the notes; a second run gives the same plan.
TEST(Hsdp, AutoSplitIsPlannedAndDeterministic) {
  const Scenario s = Cluster(2, 4);
  const Plan p = PlanHsdp(s, Spec());
  bool planned = false;
  for (const std::string& n : p.notes) planned = planned || Contains(n, "planner (");
  EXPECT_TRUE(planned);
  EXPECT_EQ(p.notes, PlanHsdp(s, Spec()).notes);
  // The console's planner table gets the solve (report/solver_table.h); a fixed split has none.
  ASSERT_TRUE(p.solver.has_value());
  EXPECT_EQ(p.solver->planner, "hsdp split");
  EXPECT_EQ(p.solver->status, "optimal");
  EXPECT_GT(p.solver->variables, 0);
  EXPECT_GT(p.solver->objective_s, 0);
  EXPECT_FALSE(PlanHsdp(s, Spec({{"split", "0.5"}})).solver.has_value());
}

TEST(Hsdp, BadOptionsAreLocatedErrors) {
  const Scenario s = Cluster(2, 4);
  struct Case {
    std::map<std::string, std::string> options;
    std::string text;
  };
  const std::vector<Case> cases = {
      {{{"split", "half"}},
       "s.yaml:9:5: strategies[0].options.split = \"half\": expected auto or a fraction in [0, "
       "1] (e.g. 0.75)"},
      {{{"split", "1.5"}},
       "s.yaml:9:5: strategies[0].options.split = \"1.5\": the fraction in fragment A must be in "
       "[0, 1]"},
      {{{"split", "-0.25"}}, "options.split = \"-0.25\": the fraction in fragment A must be in"},
      {{{"split", ""}}, "strategies[0].options.split: expected auto or a fraction"},
      {{{"split", "nan"}}, "options.split = \"nan\": expected auto or a fraction"},
      {{{"split", "0.5"}, {"split_levels", "4"}},
       "s.yaml:9:5: strategies[0].options.split_levels = \"4\": applies to split: auto only "
       "(split is 0.5)"},
      {{{"split", "0.5"}, {"memory_fraction", "0.5"}},
       "strategies[0].options.memory_fraction = \"0.5\": applies to split: auto only (split is "
       "0.5)"},
      {{{"split_levels", "0"}}, "strategies[0].options.split_levels = \"0\""},
      {{{"split_levels", "65"}}, "strategies[0].options.split_levels = \"65\""},
      {{{"memory_fraction", "0"}}, "strategies[0].options.memory_fraction = \"0\""},
      {{{"memory_fraction", "1.5"}}, "strategies[0].options.memory_fraction = \"1.5\""},
      {{{"prefetch", "maybe"}}, "strategies[0].options.prefetch = \"maybe\""},
      {{{"unit", "layer"}}, "strategies[0].options.unit"},
  };
  for (const Case& c : cases) {
    const std::string got = testing::PlanErrorOf(s, Spec(c.options));
    EXPECT_TRUE(Contains(got, c.text)) << got << "\nexpected: " << c.text;
  }
}

TEST(Hsdp, ClustersItCannotShardAreLocatedErrors) {
  const std::string one = testing::PlanErrorOf(Cluster(1, 4), Spec());
  EXPECT_TRUE(Contains(one,
                       "s.yaml:8:5: strategies[0]: hsdp shards fragment B over the servers "
                       "and needs at least 2 (the cluster has 1); on one server it is zero3"))
      << one;
  const std::string single = testing::PlanErrorOf(Cluster(4, 1), Spec());
  EXPECT_TRUE(Contains(single,
                       "strategies[0]: hsdp shards fragment A over the GPUs of a server "
                       "and needs at least 2 per server"))
      << single;
  Scenario uneven = Cluster(2, 4);
  ServerGroup two = uneven.cluster.groups[0];
  two.count = 1;
  two.gpus_per_server = 2;
  uneven.cluster.groups.push_back(two);
  uneven.training.global_batch = 20;
  const std::string got = testing::PlanErrorOf(uneven, Spec());
  EXPECT_TRUE(Contains(got, "strategies[0]: hybrid sharding needs servers with equal GPU counts"))
      << got;
  Scenario odd = Cluster(2, 4);
  odd.training.global_batch = 10;
  EXPECT_TRUE(Contains(testing::PlanErrorOf(odd, Spec()), "global_batch (10)"));
}

}  // namespace
}  // namespace stratasim
