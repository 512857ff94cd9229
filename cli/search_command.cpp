#include "cli/search_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/command_line.h"
#include "cli/exit_status.h"
#include "cli/phase.h"
#include "cli/run_scenario.h"
#include "core/error.h"
#include "core/limits.h"
#include "report/atomic_file.h"
#include "search/search_report.h"
#include "search/search_spec.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `plans` as one scenario; a plan the strategies reject (ConfigError) or that cannot be
// simulated is stored as failed. RunStrategies plans every strategy before simulating any,
// and a ConfigError of one stops them all: the batch is then run plan by plan.
void RunBatch(const Scenario& s, const std::vector<search::RankedPlan*>& plans, int jobs) {
  std::vector<const search::RankedPlan*> view(plans.begin(), plans.end());
  RunOptions options;
  options.jobs = jobs;
  try {
    std::vector<StrategyRun> runs = RunStrategies(search::ScenarioOfPlans(s, view), {}, options);
    for (size_t i = 0; i < runs.size() && i < plans.size(); ++i) {
      plans[i]->simulated = runs[i].result;
    }
    return;
  } catch (const Error&) {
    if (plans.size() == 1) throw;
  }
  for (search::RankedPlan* p : plans) {
    try {
      RunBatch(s, {p}, 1);
    } catch (const Error& e) {
      StrategyResult failed;
      failed.name = p->name;
      failed.kind = ToStrategySpec(p->plan, "").kind;
      failed.ok = false;
      failed.error = e.what();
      p->simulated = failed;
    }
  }
}

}  // namespace

void SimulateBest(const Scenario& s, int k, int jobs, search::SearchOutcome* o) {
  const int n = std::min<int>(k, static_cast<int>(o->ranked.size()));
  const auto t0 = std::chrono::steady_clock::now();
  // A batch of `jobs` plans at a time: RunStrategies holds every plan of its scenario before
  // it simulates, and the best plans of a large cluster take ~1 GB each (docs/scale.md).
  for (int first = 0; first < n; first += jobs) {
    std::vector<search::RankedPlan*> batch;
    for (int i = first; i < std::min(n, first + jobs); ++i) batch.push_back(&o->ranked[i]);
    SetPhase("simulating plan", batch.front()->name);
    RunBatch(s, batch, jobs);
    const int done = std::min(n, first + jobs);
    const double elapsed = SecondsSince(t0);
    std::fprintf(stderr, "search: simulated %d/%d plans, %.1f s, ETA %.0f s\n", done, n, elapsed,
                 elapsed / done * (n - done));
  }
}

int SearchCommand(const std::vector<std::string>& args, const std::string& version,
                  int default_jobs) {
  po::options_description opts("stratasim search options");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>()->required(),
                                                 "search scenario YAML file (a `search:` section)")(
      "out,o", po::value<std::string>(), "output folder (default stratasim-out/<scenario name>)")(
      "top-k,k", po::value<int>(),
      "plans simulated with contention (default: the scenario's search.top_k, else 20)")(
      "jobs,j", po::value<int>()->default_value(default_jobs),
      "plans simulated at once, each in its own process (default: the machine's cores); the "
      "outputs do not depend on it");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  if (WantsHelp(args)) {
    std::cout << opts;
    return 0;
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  const int jobs = CheckedJobs(vm["jobs"].as<int>());
  std::string out = vm.count("out") ? vm["out"].as<std::string>() : "";
  if (vm.count("out") && out.empty()) {
    throw UsageError("--out must not be empty (give a folder, e.g. --out .)");
  }
  SetPhase("reading the scenario");
  const search::SearchScenario ss =
      search::LoadSearchScenarioFile(vm["scenario"].as<std::string>());
  int top_k = ss.search.top_k;
  if (vm.count("top-k")) {
    top_k = vm["top-k"].as<int>();
    if (top_k < 0 || top_k > 1000) {
      throw UsageError("--top-k " + std::to_string(top_k) + ": must be in [0, 1000]");
    }
  }
  if (out.empty()) out = "stratasim-out/" + ss.scenario.name;

  SetPhase("ranking the plans");
  const auto t0 = std::chrono::steady_clock::now();
  search::SearchOutcome outcome = search::RankPlans(ss.scenario, ss.search);
  // Wall-clock figures go to the terminal only, never into the files.
  std::fprintf(stderr, "search: %lld plans enumerated, %zu ranked analytically in %.2f s\n",
               outcome.enumerated, outcome.ranked.size(), SecondsSince(t0));
  SimulateBest(ss.scenario, top_k, jobs, &outcome);

  SetPhase("writing the outputs");
  const RunResults header = DescribeRun(ss.scenario, version);
  CreateDirectories(out);
  WriteFileAtomically(out + "/search.json", search::SearchJson(header, outcome));
  WriteFileAtomically(out + "/search.csv", search::SearchCsv(outcome));
  WriteFileAtomically(out + "/pareto.csv", search::ParetoCsv(outcome));
  std::cout << search::FormatSearchTable(header, outcome);
  std::cout << "outputs: " << out << "/search.json, search.csv, pareto.csv\n";
  for (const search::RankedPlan& p : outcome.ranked) {
    if (p.simulated && p.simulated->ok) return 0;
  }
  return top_k == 0 ? 0 : 1;
}

}  // namespace stratasim
