// Golden results: the iteration time of every strategy of the bundled scenarios the README
// shows, stored in tests/golden/iteration_times.tsv, and the README's tables against them.
// A scenario written "moe-commodity.yaml:measured=5" runs with 5 measured iterations instead
// of its own (the MoE scenarios' 100 take minutes); the README's tables are not checked
// against such shortened runs.
// A change that moves a figure fails here; if the move is meant, regenerate the file with
//   STRATASIM_UPDATE_GOLDEN=1 build/tests/golden_test
// and commit it with the README's tables updated, in the same commit, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_scenario.h"
#include "core/scenario.h"
#include "report/atomic_file.h"

namespace stratasim {
namespace {

const std::string kSource = STRATASIM_SOURCE_DIR;
const std::string kGolden = kSource + "/tests/golden/iteration_times.tsv";

// The simulator is deterministic; the tolerance only absorbs a libm or an FMA that rounds
// differently. It is far below the 0.01 ms in 100 ms the README prints.
constexpr double kRelativeTolerance = 1e-7;

struct Row {
  std::string scenario, strategy;
  double iteration_ms = 0;
};

std::string Text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Row> ReadGolden() {
  std::vector<Row> rows;
  std::istringstream in(Text(kGolden));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Row r;
    std::string ms;
    std::getline(fields, r.scenario, '\t');
    std::getline(fields, r.strategy, '\t');
    std::getline(fields, ms, '\t');
    r.iteration_ms = std::stod(ms);
    rows.push_back(r);
  }
  return rows;
}

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// The scenarios whose figures the README quotes; a row of the file for another scenario, or a
// scenario here without rows, fails.
const std::vector<std::string> kScenarios = {"quickstart.yaml", "gpt-3d.yaml",
                                             "moe-commodity.yaml:measured=5",
                                             "moe-nvswitch.yaml:measured=5"};

class Golden : public ::testing::TestWithParam<std::string> {};

// "name.yaml" or "name.yaml:measured=N".
Scenario LoadVariant(const std::string& variant) {
  const size_t colon = variant.find(':');
  Scenario s = LoadScenarioFile(kSource + "/scenarios/" + variant.substr(0, colon));
  if (colon != std::string::npos) {
    const std::string key = "measured=";
    EXPECT_EQ(variant.compare(colon + 1, key.size(), key), 0) << variant;
    s.training.measured_iterations = std::stoi(variant.substr(colon + 1 + key.size()));
  }
  return s;
}

TEST_P(Golden, IterationTimesAreTheStoredOnes) {
  const std::string file = GetParam();
  const Scenario s = LoadVariant(file);
  RunOptions options;
  options.jobs = 2;
  const std::vector<StrategyRun> runs = RunStrategies(s, {}, options);
  std::vector<Row> have;
  for (const StrategyRun& run : runs) {
    ASSERT_TRUE(run.result.ok) << run.result.name << ": " << run.result.error;
    have.push_back({file, run.result.name, run.result.metrics.iteration_time_s * 1e3});
  }
  std::vector<Row> all = ReadGolden();
  if (std::getenv("STRATASIM_UPDATE_GOLDEN") != nullptr) {
    std::ostringstream out;
    out << "# scenario\tstrategy\titeration_ms (tests/golden_test.cpp; regenerate with "
           "STRATASIM_UPDATE_GOLDEN=1)\n";
    for (const Row& r : all) {
      if (r.scenario == file) continue;
      out << r.scenario << "\t" << r.strategy << "\t" << Format("%.9f", r.iteration_ms) << "\n";
    }
    for (const Row& r : have) {
      out << r.scenario << "\t" << r.strategy << "\t" << Format("%.9f", r.iteration_ms) << "\n";
    }
    // Run the test binary itself to update (its tests run one after another); under
    // ctest -j each scenario's process would rewrite the file at once.
    WriteFileAtomically(kGolden, out.str());
    return;
  }
  std::vector<Row> want;
  for (const Row& r : all) {
    if (r.scenario == file) want.push_back(r);
  }
  ASSERT_EQ(have.size(), want.size()) << "strategies of " << file;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(have[i].strategy, want[i].strategy);
    EXPECT_NEAR(have[i].iteration_ms, want[i].iteration_ms,
                kRelativeTolerance * want[i].iteration_ms)
        << file << " " << want[i].strategy
        << ": the iteration time moved. If that is meant, see this test's header.";
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Golden, ::testing::ValuesIn(kScenarios),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Every README table row of a golden strategy shows the stored time, as printed ("188.31").
TEST(Golden, EveryStoredRowBelongsToAGoldenScenario) {
  for (const Row& r : ReadGolden()) {
    EXPECT_NE(std::find(kScenarios.begin(), kScenarios.end(), r.scenario), kScenarios.end())
        << r.scenario << " " << r.strategy;
  }
}

TEST(Golden, TheReadmeTablesShowTheStoredTimes) {
  const std::string readme = Text(kSource + "/README.md");
  ASSERT_FALSE(readme.empty());
  std::map<std::string, int> rows_found;
  std::istringstream in(readme);
  const std::vector<Row> golden = ReadGolden();
  ASSERT_FALSE(golden.empty());
  for (std::string line; std::getline(in, line);) {
    for (const Row& r : golden) {
      if (r.scenario.find(':') != std::string::npos) continue;  // a shortened run
      if (line.compare(0, r.strategy.size() + 1, r.strategy + " ") != 0) continue;
      const std::string shown = Format("%.2f", r.iteration_ms);
      EXPECT_NE(line.find(" " + shown + " "), std::string::npos)
          << "README.md shows " << r.strategy << " (" << r.scenario << ") without its time "
          << shown << " ms:\n"
          << line;
      ++rows_found[r.scenario + " " + r.strategy];
    }
  }
  // A strategy name shared by two golden scenarios would make the rows above ambiguous.
  std::map<std::string, std::string> scenario_of;
  for (const Row& r : golden) {
    if (r.scenario.find(':') != std::string::npos) continue;
    auto [it, inserted] = scenario_of.emplace(r.strategy, r.scenario);
    if (!inserted && rows_found.count(r.scenario + " " + r.strategy) > 0) {
      EXPECT_EQ(it->second, r.scenario) << r.strategy << " is in two golden scenarios";
    }
  }
  EXPECT_GE(rows_found.size(), 11u) << "the quickstart and gpt-3d tables have 3 + 8 rows";
}

}  // namespace
}  // namespace stratasim
