// Two runs side by side (`stratasim compare A B`, docs/compare.md): what changed in the
// scenario, and by how much each figure of each strategy moved, with the moves past a
// threshold in the bad direction marked as regressions, so that CI can guard against them.
#ifndef STRATASIM_REPORT_COMPARE_H_
#define STRATASIM_REPORT_COMPARE_H_

#include <string>
#include <vector>

namespace stratasim {

// One side: a results.json (docs/report-formats.md) and, when its folder holds it, the
// scenario file the run read (for the list of differing keys).
struct CompareInput {
  std::string path;           // the results.json, as the user named it (messages and the header)
  std::string json;           // its text
  std::string scenario_path;  // "" when the folder does not hold the scenario file
  std::string scenario_yaml;
};

struct CompareOptions {
  // A figure regresses when it moves in its bad direction by more than this: percent of its
  // A value, or, for fractions of the iteration (exposed communication, idle, bubble),
  // percentage points.
  double threshold_pct = 5;
  // Figures to show and judge (CompareFigureNames' names); empty: all.
  std::vector<std::string> metrics;
};

struct CompareOutcome {
  std::string text;     // the console report, deterministic
  std::string json;     // the same as {"format": "stratasim-compare", ...}, indented, newline-ended
  int regressions = 0;  // figures (and strategies that stopped working) past the threshold
};

// Throws ConfigError naming the file (and the key) when either text is not a stratasim
// results.json of a version this program reads, and when a scenario file is not YAML.
CompareOutcome CompareResults(const CompareInput& a, const CompareInput& b,
                              const CompareOptions& options);

// `scenario.file` of a results.json (checked as CompareResults checks it).
std::string ResultsScenarioFile(const std::string& path, const std::string& json);

// The figures compare knows, in report order; "exposed_comm_by_category" stands for all of
// its categories, each also accepted as "exposed_comm_by_category.<category>".
const std::vector<std::string>& CompareFigureNames();
bool IsCompareFigure(const std::string& name);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_COMPARE_H_
