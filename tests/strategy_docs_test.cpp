// The strategy registry against its documentation: every kind has a row in docs/strategies.md,
// its options table there is the one its declaration generates, and `stratasim strategies`
// lists what PlanStrategy accepts.
//
// After changing a declaration, regenerate the tables with
//   STRATASIM_UPDATE_DOCS=1 build/tests/strategy_docs_test
// and commit docs/strategies.md with the change.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/exit_status.h"
#include "cli/strategies_command.h"
#include "core/scenario.h"
#include "core/strategy_options.h"
#include "report/atomic_file.h"
#include "strategies/plan.h"
#include "tests/scenario_text.h"

namespace stratasim {
namespace {

const std::string kDocs = std::string(STRATASIM_SOURCE_DIR) + "/docs/strategies.md";

std::string ReadDocs() {
  std::ifstream in(kDocs);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Begin(const std::string& kind) { return "<!-- options " + kind + " -->\n"; }
const char kEnd[] = "<!-- /options -->\n";

// The generated block of `kind` in `docs`, or "" when it has none.
std::string BlockOf(const std::string& docs, const std::string& kind) {
  const size_t at = docs.find(Begin(kind));
  if (at == std::string::npos) return "";
  const size_t from = at + Begin(kind).size();
  const size_t end = docs.find(kEnd, from);
  return end == std::string::npos ? "" : docs.substr(from, end - from);
}

TEST(StrategyDocs, EveryKindHasARowAndItsGeneratedOptionsTable) {
  std::string docs = ReadDocs();
  ASSERT_FALSE(docs.empty()) << kDocs;
  const bool update = std::getenv("STRATASIM_UPDATE_DOCS") != nullptr;
  bool changed = false;
  // The table of kinds: the lines starting with '|' before the generated options tables.
  std::string rows;
  {
    std::istringstream in(docs.substr(0, docs.find("\n## Options")));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] == '|') rows += line + "\n";
    }
  }
  for (const std::string& kind : StrategyKinds()) {
    EXPECT_NE(rows.find("`" + kind + "`"), std::string::npos)
        << "docs/strategies.md's table has no row naming kind `" << kind << "`";
    const std::string want = OptionsMarkdown(FindStrategyKind(kind)->options);
    const size_t at = docs.find(Begin(kind));
    if (at == std::string::npos) {
      if (!update) {
        ADD_FAILURE() << "docs/strategies.md has no options table for " << kind;
        continue;
      }
      docs += "\n### `" + kind + "`\n\n" + Begin(kind) + want + kEnd;
      changed = true;
      continue;
    }
    const std::string have = BlockOf(docs, kind);
    if (have == want) continue;
    if (update) {
      docs.replace(at + Begin(kind).size(), have.size(), want);
      changed = true;
    } else {
      ADD_FAILURE() << "docs/strategies.md's options of " << kind
                    << " differ from the declaration; regenerate with STRATASIM_UPDATE_DOCS=1 "
                       "(see this test's header). Declared:\n"
                    << want;
    }
  }
  if (changed) WriteFileAtomically(kDocs, docs);
}

// Each declaration reads back: a default that does not parse as its own type, or a choice
// default that is not one of the choices, would fail every scenario that leaves it out.
TEST(StrategyDocs, EveryDeclaredDefaultIsAValidValue) {
  for (const std::string& kind : StrategyKinds()) {
    StrategySpec spec;
    spec.kind = kind;
    spec.key_path = "strategies[0]";
    const OptionSpecs& options = FindStrategyKind(kind)->options;
    OptionReader r(spec, options);
    for (const OptionSpec& o : options) {
      SCOPED_TRACE(kind + "." + o.key);
      EXPECT_FALSE(o.help.empty());
      if (o.absent != OptionSpec::Absent::kDefault) continue;
      switch (o.type) {
        case OptionType::kBool:
          EXPECT_NO_THROW(r.Bool(o.key));
          break;
        case OptionType::kInt:
          EXPECT_NO_THROW(r.Int(o.key));
          break;
        case OptionType::kNumber:
          EXPECT_NO_THROW(r.Double(o.key));
          break;
        case OptionType::kBytes:
          EXPECT_NO_THROW(r.Bytes(o.key));
          break;
        case OptionType::kChoice:
          EXPECT_NO_THROW(r.Choice(o.key));
          break;
        case OptionType::kText:
          EXPECT_NO_THROW(r.Text(o.key));
          break;
      }
    }
  }
}

// Every kind plans from a scenario with its registry example: two servers of four A100s, a
// GPT-2 medium (or, for the kinds that read MoE routing options, a small MoE).
TEST(StrategyDocs, EveryKindPlansFromAScenario) {
  for (const std::string& kind : StrategyKinds()) {
    SCOPED_TRACE(kind);
    const StrategyKindInfo& info = *FindStrategyKind(kind);
    bool moe = false;
    for (const OptionSpec& o : info.options) moe = moe || o.key == "routing";
    // The GNN feature-transfer kinds (strategies/gnn/) train a sampled GraphSAGE.
    const bool gnn = kind == "gnn-no-cache" || kind == "gnn-static-cache" || kind == "brgraph";
    const std::string text =
        "name: walk\n" + testing::TwoA100Servers(4) +
        (gnn   ? std::string("model: {kind: graphsage, fanouts: [4, 2], "
                               "feature_dim: 16, hidden: 32, classes: 4, "
                               "graph: power-law, graph_vertices: 5000, "
                               "graph_degree: 8}\n"
                               "training: {global_batch: 64, micro_batch: 8}\n")
         : moe ? std::string(testing::kSmallMoeModel) +
                     "training: {global_batch: 8, micro_batch: 1}\n"
               : std::string("model: {preset: gpt2-medium}\n"
                             "training: {global_batch: 16, micro_batch: 2}\n")) +
        "strategies:\n  - {name: s, kind: " + kind + ", options: " + info.example + "}\n";
    try {
      // The chakra kind's traces are a path relative to the scenario file: the repository's.
      const std::string file =
          kind == "chakra" ? std::string(STRATASIM_SOURCE_DIR) + "/walk.yaml" : "walk.yaml";
      const Scenario s = LoadScenarioText(text, file);
      const Plan plan = PlanStrategy(s, s.strategies.at(0));
      EXPECT_GT(plan.graph.next_id(), 0);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what() << "\n" << text;
    }
  }
}

TEST(StrategyDocs, TheListingComesFromTheRegistry) {
  std::ostringstream all;
  EXPECT_EQ(StrategiesCommand({}, all), 0);
  for (const std::string& kind : StrategyKinds()) {
    EXPECT_NE(all.str().find("\n  " + kind + " "), std::string::npos) << all.str();
  }
  std::ostringstream ddp;
  EXPECT_EQ(StrategiesCommand({"ddp"}, ddp), 0);
  EXPECT_EQ(ddp.str(), std::string("ddp: ") + FindStrategyKind("ddp")->summary +
                           "\noptions (strategies[i].options):\n" +
                           OptionsText(FindStrategyKind("ddp")->options));
  EXPECT_NE(ddp.str().find("  bucket_size: bytes, > 0 (\"25MiB\"); default: 25MiB\n"),
            std::string::npos);
  std::ostringstream md;
  EXPECT_EQ(StrategiesCommand({"3d", "--markdown"}, md), 0);
  EXPECT_EQ(md.str(), OptionsMarkdown(FindStrategyKind("3d")->options));
  EXPECT_NE(md.str().find("| `schedule` | choice | `gpipe`, `1f1b`, `interleaved`, "
                          "`pipedream_2bw` | `1f1b` |"),
            std::string::npos)
      << md.str();
}

TEST(StrategyDocs, BadArgumentsAreUsageErrors) {
  std::ostringstream out;
  auto rule = [&](const std::vector<std::string>& args) {
    try {
      StrategiesCommand(args, out);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(rule({"dpp"}).rfind("unknown strategy kind 'dpp' (known: ddp, zero1, ", 0), 0u);
  EXPECT_EQ(rule({"ddp", "tensor"}), "one KIND at a time (got ddp and tensor)");
  EXPECT_EQ(rule({"--markdown"}), "--markdown needs a KIND");
  EXPECT_EQ(rule({"--json"}).rfind("unknown option --json\n", 0), 0u);
}

}  // namespace
}  // namespace stratasim
