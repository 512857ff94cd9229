// Walks the model kind registry (core/model_kinds.h): every kind is documented and reachable
// from a scenario (its example loads and builds a workload, so models/ has its builder).
#include "core/model_kinds.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/model_presets.h"
#include "core/scenario.h"
#include "models/workload.h"

namespace stratasim {
namespace {

std::string ReadDoc(const std::string& name) {
  std::ifstream in(std::string(STRATASIM_SOURCE_DIR) + "/docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << "cannot read docs/" << name;
  return text.str();
}

// A one-GPU scenario whose `model:` is `model` (flow style).
std::string ScenarioWith(const std::string& model) {
  return "name: kinds\n"
         "cluster:\n"
         "  servers:\n"
         "    - {name: s, gpu: A100-SXM4-80GB, gpus_per_server: 1}\n"
         "model: " +
         model +
         "\n"
         "training: {global_batch: 4, micro_batch: 2}\n"
         "strategies:\n"
         "  - {name: ddp, kind: ddp}\n";
}

TEST(ModelKinds, EveryKindIsDocumented) {
  const std::string models = ReadDoc("models.md");
  const std::string format = ReadDoc("scenario-format.md");
  for (const ModelKind& kind : ModelKindRegistry()) {
    // A row of the kinds table in docs/models.md, and a value of `kind` in the format.
    EXPECT_NE(models.find("| `" + kind.name + "` |"), std::string::npos)
        << kind.name << " has no row in docs/models.md's table of kinds";
    EXPECT_NE(format.find("`" + kind.name + "`"), std::string::npos)
        << kind.name << " is not in docs/scenario-format.md";
    for (const ModelKey& key : kind.keys) {
      EXPECT_NE(format.find("`" + key.name + "`"), std::string::npos)
          << kind.name << "." << key.name << " is not in docs/scenario-format.md";
      EXPECT_FALSE(key.default_value.empty()) << kind.name << "." << key.name;
    }
    for (const ModelSpec& preset : kind.presets) {
      EXPECT_EQ(preset.kind, kind.name) << preset.preset;
      EXPECT_NE(format.find("| `" + preset.preset + "` | " + kind.name + " |"), std::string::npos)
          << preset.preset << " has no row in docs/scenario-format.md's table of presets";
    }
  }
}

TEST(ModelKinds, EveryKindLoadsFromAScenarioAndBuilds) {
  for (const ModelKind& kind : ModelKindRegistry()) {
    SCOPED_TRACE(kind.name);
    ASSERT_NE(kind.read, nullptr);
    // BuildWorkload refuses a kind without a row in models/workload.cpp's builder table.
    const Scenario s = LoadScenarioText(ScenarioWith(kind.example), "kinds.yaml");
    EXPECT_EQ(s.model.kind, kind.name);
    const Workload w = BuildWorkload(s.model, s.training.micro_batch, s.training.precision);
    EXPECT_EQ(w.kind, kind.name);
    EXPECT_GT(w.ForwardFlops(), 0);
    EXPECT_GT(w.params, 0);
  }
}

TEST(ModelKinds, EveryPresetLoadsFromAScenario) {
  for (const std::string& name : ModelPresetNames()) {
    const ModelSpec* preset = FindModelPreset(name);
    ASSERT_NE(preset, nullptr) << name;
    const Scenario s = LoadScenarioText(ScenarioWith("{preset: " + name + "}"), "kinds.yaml");
    EXPECT_EQ(s.model.kind, preset->kind) << name;
    EXPECT_EQ(s.model.preset, name);
  }
}

TEST(ModelKinds, TransformerKindsAreTheRegistrysOwn) {
  EXPECT_EQ(TransformerKinds(), (std::vector<std::string>{"gpt", "bert", "llama", "moe"}));
  EXPECT_TRUE(IsTransformerKind("moe"));
  EXPECT_FALSE(IsTransformerKind("graphsage"));
  EXPECT_FALSE(IsTransformerKind("nope"));
  EXPECT_EQ(FindModelKind("nope"), nullptr);
}

}  // namespace
}  // namespace stratasim
