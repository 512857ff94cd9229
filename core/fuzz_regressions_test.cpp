// Every input the fuzz targets (fuzz/) found crashing, hanging or exhausting memory, kept in
// fuzz/regressions/ and read again here: each must now be refused with the reader's error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/calibration.h"
#include "core/error.h"
#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FuzzRegressions, EveryFindingIsRefusedCleanly) {
  const fs::path dir = fs::path(STRATASIM_SOURCE_DIR) / "fuzz" / "regressions";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md") continue;
    const std::string text = Read(entry.path());
    SCOPED_TRACE(name);
    if (name.rfind("fuzz_scenario-", 0) == 0) {
      EXPECT_THROW(LoadScenarioText(text, name), ConfigError);
    } else if (name.rfind("fuzz_calibration-", 0) == 0) {
      EXPECT_THROW(LoadCalibrationText(text, name), ConfigError);
    } else if (name.rfind("fuzz_graph_json-", 0) == 0) {
      EXPECT_THROW(TaskGraphFromJson(text), Error);
    } else {
      ADD_FAILURE() << "no reader for " << name << " (name it after its fuzz target)";
    }
    ++checked;
  }
  EXPECT_GE(checked, 9);
}

TEST(FuzzRegressions, MessagesSayWhatIsWrong) {
  try {
    LoadScenarioText(",", "t.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.rule().rfind("YAML syntax error", 0), 0u) << e.what();
  }
  try {
    TaskGraphFromJson("5e352");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("task graph: not JSON: ", 0), 0u) << e.what();
  }
  try {
    TaskGraphFromJson(std::string(100000, '[') + std::string(100000, ']'));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "task graph: nested deeper than 16 levels (a task graph nests 4)");
  }
  try {
    TaskGraphFromJson(R"({"format": "stratasim-taskgraph", "version": 1e20})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "$.version: must be an integer");
  }
}

}  // namespace
}  // namespace stratasim
