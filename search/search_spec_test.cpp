#include "search/search_spec.h"

#include <gtest/gtest.h>

#include <string>

#include "core/scenario_test_util.h"

namespace stratasim::search {
namespace {

using stratasim::testing::Replace;

// Two servers of 8 A100s; the `search:` section starts at line 13, its keys at column 3.
const char kText[] =
    "name: s\n"                                                                 // 1
    "cluster:\n"                                                                // 2
    "  servers:\n"                                                              // 3
    "    - {name: a, count: 2, gpu: A100-SXM4-80GB, gpus_per_server: 8,\n"      // 4
    "       nvswitch: {bandwidth: 300GB/s},\n"                                  // 5
    "       nics: {count: 8, bandwidth: 200Gb/s}}\n"                            // 6
    "  network: {kind: single_switch}\n"                                        // 7
    "model: {kind: gpt, layers: 12, hidden: 768, heads: 12, sequence: 1024,\n"  // 8
    "        vocabulary: 50257}\n"                                              // 9
    "training: {global_batch: 64}\n"                                            // 10
    "simulation: {kernel_launch: 0us}\n"                                        // 11
    "# the plan space\n"                                                        // 12
    "search:\n"                                                                 // 13
    "  tensor: [1, 2, 4]\n"                                                     // 14
    "  pipeline: [1, 2]\n"                                                      // 15
    "  micro_batch: [1, 2]\n"                                                   // 16
    "  top_k: 5\n";                                                             // 17

ConfigError SearchErrorOf(const std::string& text) {
  try {
    LoadSearchScenarioText(text, "t.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return ConfigError(SourceLocation{}, "", "", "");
}

TEST(SearchSpecTest, ReadsTheListsAndDefaultsTheRest) {
  const SearchScenario s = LoadSearchScenarioText(kText, "t.yaml");
  EXPECT_TRUE(s.scenario.strategies.empty());
  EXPECT_EQ(s.scenario.cluster.NumGpus(), 16);
  EXPECT_EQ(s.search.tensor, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(s.search.pipeline, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.search.micro_batch, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.search.schedule, (std::vector<std::string>{"1f1b", "interleaved"}));
  EXPECT_EQ(s.search.virtual_stages, (std::vector<int>{2}));
  EXPECT_EQ(s.search.recompute.size(), 3u);
  EXPECT_EQ(s.search.sequence_parallel, (std::vector<bool>{false, true}));
  EXPECT_EQ(s.search.zero.size(), 5u);
  EXPECT_EQ(s.search.rank_order, (std::vector<std::string>{"tpd"}));
  EXPECT_EQ(s.search.top_k, 5);
  EXPECT_DOUBLE_EQ(s.search.memory_fraction, 0.95);
  EXPECT_EQ(s.search.where.line, 13);
  EXPECT_EQ(s.search.where.column, 1);
}

TEST(SearchSpecTest, DefaultDegreesArePowersOfTwoUpToAServerAndTheLayers) {
  const SearchScenario s = LoadSearchScenarioText(
      Replace(kText, "  tensor: [1, 2, 4]\n  pipeline: [1, 2]\n", ""), "t.yaml");
  EXPECT_EQ(s.search.tensor, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(s.search.pipeline, (std::vector<int>{1, 2, 4, 8}));  // 12 layers
}

TEST(SearchSpecTest, ReadsEveryKey) {
  const std::string text = std::string(kText) +
                           "  schedule: [gpipe]\n"
                           "  virtual_stages: [2, 3]\n"
                           "  recompute: [full]\n"
                           "  sequence_parallel: [true]\n"
                           "  zero: [zero3, distributed_optimizer]\n"
                           "  rank_order: [dpt, tpd]\n"
                           "  memory_fraction: 1\n";
  const SearchSpec spec = LoadSearchScenarioText(text, "t.yaml").search;
  EXPECT_EQ(spec.schedule, (std::vector<std::string>{"gpipe"}));
  EXPECT_EQ(spec.virtual_stages, (std::vector<int>{2, 3}));
  EXPECT_EQ(spec.recompute, (std::vector<Recompute>{Recompute::kFull}));
  EXPECT_EQ(spec.sequence_parallel, (std::vector<bool>{true}));
  EXPECT_EQ(spec.zero, (std::vector<Zero>{Zero::kZero3, Zero::kDistributedOptimizer}));
  EXPECT_EQ(spec.rank_order, (std::vector<std::string>{"dpt", "tpd"}));
  EXPECT_DOUBLE_EQ(spec.memory_fraction, 1.0);
}

// Each bad value: its file:line:col, key path and rule.
TEST(SearchSpecTest, BadValuesAreLocated) {
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      {"tensor: [1, 2, 4]", "tensor: [1, 2, 0]",
       "t.yaml:14:18: search.tensor[2] = \"0\": must be an integer in [1, 1048576]"},
      {"tensor: [1, 2, 4]", "tensor: [1, 2, 2]",
       "t.yaml:14:18: search.tensor[2] = \"2\": repeated (first at line 14)"},
      {"tensor: [1, 2, 4]", "tensor: []", "t.yaml:14:11: search.tensor: must not be empty"},
      {"tensor: [1, 2, 4]", "tensor: 4",
       "t.yaml:14:11: search.tensor = \"4\": must be a list, "
       "not a scalar"},
      {"pipeline: [1, 2]", "pipeline: [1, two]",
       "t.yaml:15:17: search.pipeline[1] = \"two\": must be an integer in [1, 1048576]"},
      {"micro_batch: [1, 2]", "micro_batch: [-1]",
       "t.yaml:16:17: search.micro_batch[0] = \"-1\": must be an integer in [1, 1048576]"},
      {"top_k: 5", "top_k: 1001",
       "t.yaml:17:10: search.top_k = \"1001\": must be an integer in "
       "[1, 1000]"},
      {"top_k: 5", "top_k: 0",
       "t.yaml:17:10: search.top_k = \"0\": must be an integer in [1, 1000]"},
      {"top_k: 5", "schedule: [1f1b, zb]",
       "t.yaml:17:20: search.schedule[1] = \"zb\": must be one of gpipe, 1f1b, interleaved"},
      {"top_k: 5", "virtual_stages: [1]",
       "t.yaml:17:20: search.virtual_stages[0] = \"1\": must be an integer in [2, 1048576]"},
      {"top_k: 5", "recompute: [some]",
       "t.yaml:17:15: search.recompute[0] = \"some\": must be one of none, selective, full"},
      {"top_k: 5", "sequence_parallel: [yes]",
       "t.yaml:17:23: search.sequence_parallel[0] = \"yes\": must be one of false, true"},
      {"top_k: 5", "zero: [zero4]",
       "t.yaml:17:10: search.zero[0] = \"zero4\": must be one of none, distributed_optimizer, "
       "zero1, zero2, zero3"},
      {"top_k: 5", "zero: [zero1, zero1]",
       "t.yaml:17:17: search.zero[1] = \"zero1\": repeated (first at line 17)"},
      {"top_k: 5", "rank_order: [tdd]",
       "t.yaml:17:16: search.rank_order[0] = \"tdd\": must be one of tpd, tdp, ptd, pdt, dtp, "
       "dpt"},
      {"top_k: 5", "memory_fraction: 1.5",
       "t.yaml:17:20: search.memory_fraction = \"1.5\": must be in (0, 1]: a share of each "
       "GPU's memory"},
      {"top_k: 5", "memory_fraction: 0", "t.yaml:17:20: search.memory_fraction = \"0\": "},
      {"top_k: 5", "topk: 5", "t.yaml:17:3: search.topk: unknown key (known: "},
  };
  for (const Case& c : cases) {
    const std::string what = SearchErrorOf(Replace(kText, c.from, c.to)).what();
    EXPECT_EQ(what.substr(0, c.message.size()), c.message) << c.to;
  }
}

TEST(SearchSpecTest, BoundsTheNumberOfCombinations) {
  const std::string sixteen = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]";
  const std::string text =
      Replace(Replace(Replace(kText, "tensor: [1, 2, 4]", "tensor: " + sixteen), "pipeline: [1, 2]",
                      "pipeline: " + sixteen),
              "top_k: 5",
              "schedule: [gpipe, 1f1b, interleaved]\n"
              "  virtual_stages: [2, 3, 4, 5, 6, 7, 8, 9]\n"
              "  rank_order: [tpd, tdp, ptd, pdt, dtp, dpt]");
  // 16 x 16 x 16 x 3 x 8 x 3 x 2 x 5 x 6 = 17,694,720 combinations > 10,000,000.
  EXPECT_EQ(
      std::string(
          SearchErrorOf(Replace(text, "micro_batch: [1, 2]", "micro_batch: " + sixteen)).what()),
      "t.yaml:13:1: search: the lists make 17694720 combinations (the product of their "
      "sizes), more than the 10000000 a search may enumerate (docs/limits.md): shorten "
      "some lists");
  // Eight micro-batch sizes instead of sixteen: 8,847,360, within the bound.
  EXPECT_NO_THROW(LoadSearchScenarioText(
      Replace(text, "micro_batch: [1, 2]", "micro_batch: [1, 2, 3, 4, 5, 6, 7, 8]"), "t.yaml"));
}

TEST(SearchSpecTest, StrategiesBesideSearchAreRefused) {
  const std::string text =
      Replace(kText, "# the plan space\n", "strategies:\n  - {name: ddp, kind: ddp}\n");
  EXPECT_EQ(std::string(SearchErrorOf(text).what()),
            "t.yaml:12:1: strategies: a search scenario makes its plans from `search:`; remove "
            "`strategies:` (or `search:` to run the listed strategies) (docs/search.md)");
  // The same for `stratasim run`, which reads with LoadScenarioText.
  try {
    LoadScenarioText(text, "t.yaml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().line, 12);
    EXPECT_EQ(e.key(), "strategies");
  }
}

TEST(SearchSpecTest, RunRefusesASearchScenarioWithTheCommandToUse) {
  try {
    LoadScenarioText(kText, "t.yaml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.yaml:13:1: search: this is a search scenario (a plan space instead of "
              "`strategies:`): run it with `stratasim search` (docs/search.md)");
  }
}

TEST(SearchSpecTest, ASearchScenarioNeedsItsSearchSection) {
  const std::string text =
      Replace(kText,
              "search:\n  tensor: [1, 2, 4]\n  pipeline: [1, 2]\n  micro_batch: [1, 2]\n  "
              "top_k: 5\n",
              "strategies:\n  - {name: ddp, kind: ddp}\n");
  EXPECT_EQ(std::string(SearchErrorOf(text).what()),
            "t.yaml:1:1: search: required field missing (a search scenario gives its plan space "
            "in `search:` (docs/search.md))");
}

TEST(SearchSpecTest, ASharedClusterScenarioCannotSearch) {
  const std::string text = Replace(kText, "# the plan space\n", "jobs: []\n");
  EXPECT_EQ(std::string(SearchErrorOf(text).what()),
            "t.yaml:12:1: jobs: `search:` searches the plans of one training job; it does not "
            "apply to a shared-cluster scenario with `jobs:` (docs/search.md)");
}

TEST(SearchSpecTest, ErrorsOfTheCommonSectionsStillComeFromTheCoreLoader) {
  const std::string text = Replace(kText, "global_batch: 64", "global_batch: 0");
  EXPECT_EQ(SearchErrorOf(text).key(), "training.global_batch");
}

}  // namespace
}  // namespace stratasim::search
