#include "cli/compare_command.h"

#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>

#include "cli/command_line.h"
#include "cli/exit_status.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "report/atomic_file.h"
#include "report/compare.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

// results.json is written by stratasim run: its size follows the strategies and ranks
// (peak_memory_bytes has one entry per rank), far below this.
constexpr size_t kResultsFileBytes = size_t{256} << 20;

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A folder means its results.json. The scenario file is read when the folder holds a file of
// its name (results.json keeps the path it was given as, which may point anywhere now).
CompareInput ReadSide(const std::string& arg) {
  CompareInput in;
  std::string folder;
  if (IsDirectory(arg)) {
    in.path = (arg.back() == '/' ? arg : arg + "/") + "results.json";
    folder = arg;
  } else {
    in.path = arg;
    const size_t slash = arg.find_last_of('/');
    folder = slash == std::string::npos ? "." : arg.substr(0, slash);
  }
  in.json = ReadInputFile(in.path, kResultsFileBytes, "a results.json");
  const std::string file = ResultsScenarioFile(in.path, in.json);
  if (!file.empty()) {
    const size_t slash = file.find_last_of('/');
    const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
    const std::string beside =
        (folder.empty() || folder.back() == '/' ? folder : folder + "/") + base;
    if (!base.empty() && IsRegularFile(beside)) {
      in.scenario_path = beside;
      in.scenario_yaml = ReadInputFile(beside, limits::kScenarioFileBytes, "a scenario file");
    }
  }
  return in;
}

}  // namespace

int CompareCommand(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("stratasim compare A B options");
  opts.add_options()("help,h", "show this help")("a", po::value<std::string>()->required(),
                                                 "the reference: a results folder or results.json")(
      "b", po::value<std::string>()->required(),
      "the run to judge: a results folder or results.json")(
      "threshold,t", po::value<double>()->default_value(5.0),
      "a figure regresses when it moves in its bad direction by more than PCT percent of A's "
      "value (percentage points for fractions of the iteration); exit status 1 if any does")(
      "metric,m", po::value<std::vector<std::string>>()->composing(),
      "show and judge only this figure (repeatable), e.g. iteration_time_s, "
      "exposed_comm_by_category.dp, moe.iteration_time_s.p95")(
      "json", po::value<std::string>(), "also write the comparison to this JSON file");
  po::positional_options_description pos;
  pos.add("a", 1).add("b", 1);
  if (WantsHelp(args)) {
    out << "usage: stratasim compare A B [--threshold PCT] [--metric NAME]... [--json FILE]\n"
        << "exit status: 0 no regression, 1 a figure regressed past the threshold, 2 bad "
           "input\n"
        << opts;
    return 0;
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  CompareOptions options;
  options.threshold_pct = vm["threshold"].as<double>();
  if (!std::isfinite(options.threshold_pct) || options.threshold_pct < 0) {
    throw UsageError("--threshold must be a percentage >= 0");
  }
  if (vm.count("metric")) {
    for (const std::string& m : vm["metric"].as<std::vector<std::string>>()) {
      if (!IsCompareFigure(m)) {
        std::string known;
        for (const std::string& n : CompareFigureNames()) known += " " + n;
        throw UsageError("--metric " + m + ": not a figure compare knows; they are:" + known);
      }
      options.metrics.push_back(m);
    }
  }
  if (vm.count("json") && vm["json"].as<std::string>().empty()) {
    throw UsageError("--json must not be empty (give a file name)");
  }
  const CompareInput a = ReadSide(vm["a"].as<std::string>());
  const CompareInput b = ReadSide(vm["b"].as<std::string>());
  const CompareOutcome outcome = CompareResults(a, b, options);
  out << outcome.text;
  if (vm.count("json")) WriteFileAtomically(vm["json"].as<std::string>(), outcome.json);
  return outcome.regressions > 0 ? kExitRegressed : 0;
}

}  // namespace stratasim
