// stratasim: which parallel-training strategy is fastest on this cluster, for this model.
//
//   stratasim run SCENARIO.yaml [--out DIR] [--strategy NAME]... [--write-graphs]
//   stratasim replay SCENARIO.yaml GRAPH.json [--out DIR]
//   stratasim version
//
// Exit status: 0 success; 1 a strategy could not be planned or simulated (the others' results
// are written); 2 bad input (scenario, options, command line); 3 an output could not be written.
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_scenario.h"
#include "core/error.h"
#include "core/scenario.h"
#include "report/table.h"
#include "sim/executor.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

constexpr const char* kVersion = STRATASIM_VERSION;

const char* kUsage =
    "usage: stratasim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO       simulate every strategy of a scenario and compare them\n"
    "  replay SCENARIO GRAPH\n"
    "                     simulate a task graph written by `run --write-graphs` on the\n"
    "                     scenario's cluster\n"
    "  version            print the version\n"
    "\n"
    "`stratasim <command> --help` lists a command's options.\n";

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

po::variables_map Parse(const std::vector<std::string>& args, const po::options_description& opts,
                        const po::positional_options_description& pos) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

std::string DefaultOutDir(const Scenario& s) { return "stratasim-out/" + s.name; }

int Finish(const std::string& out, const RunResults& results) {
  std::cout << FormatComparisonTable(results);
  std::cout << "outputs: " << out << "/results.json, results.csv, <strategy>.trace.json\n";
  for (const StrategyResult& r : results.strategies) {
    if (!r.ok) return 1;
  }
  return 0;
}

int Run(const std::vector<std::string>& args) {
  po::options_description opts("stratasim run options");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>()->required(), "scenario YAML file")(
      "out,o", po::value<std::string>(), "output folder (default stratasim-out/<scenario name>)")(
      "strategy,s", po::value<std::vector<std::string>>()->composing(),
      "run only this strategy (repeatable)")(
      "write-graphs", po::bool_switch(), "also write each plan's task graph as <name>.graph.json");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << opts;
    return 0;
  }
  po::variables_map vm = Parse(args, opts, pos);
  const Scenario s = LoadScenarioFile(vm["scenario"].as<std::string>());
  const std::vector<std::string> only =
      vm.count("strategy") ? vm["strategy"].as<std::vector<std::string>>()
                           : std::vector<std::string>{};
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : DefaultOutDir(s);
  std::vector<StrategyRun> runs = RunStrategies(s, only);
  RunResults results = DescribeRun(s, kVersion);
  for (const StrategyRun& r : runs) results.strategies.push_back(r.result);
  WriteOutputs(out, results, runs, vm["write-graphs"].as<bool>());
  return Finish(out, results);
}

int Replay(const std::vector<std::string>& args) {
  po::options_description opts("stratasim replay options");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>()->required(), "scenario YAML file (for the cluster)")(
      "graph", po::value<std::string>()->required(), "task graph JSON file")(
      "out,o", po::value<std::string>(), "output folder (default stratasim-out/<scenario>-replay)");
  po::positional_options_description pos;
  pos.add("scenario", 1).add("graph", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::cout << opts;
    return 0;
  }
  po::variables_map vm = Parse(args, opts, pos);
  const Scenario s = LoadScenarioFile(vm["scenario"].as<std::string>());
  const std::string path = vm["graph"].as<std::string>();
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read task graph file " + path);
  std::stringstream text;
  text << in.rdbuf();
  StrategyRun run;
  try {
    run.graph = TaskGraphFromJson(text.str());
  } catch (const Error& e) {
    throw UsageError(path + ": " + e.what());
  }
  StrategySpec spec;
  spec.name = "replay";
  spec.kind = "graph";
  run.trace = sim::Simulate(run.graph, s.cluster, s.simulation);
  // The graph does not say how many samples it trains; the scenario's batch is assumed.
  run.result = Evaluate(s, spec, run.graph, run.trace, s.training.global_batch, s.model.sequence);
  run.result.notes.push_back("replayed " + path + " (" + std::to_string(run.graph.tasks().size()) +
                             " tasks)");
  RunResults results = DescribeRun(s, kVersion);
  results.strategies.push_back(run.result);
  const std::string out =
      vm.count("out") ? vm["out"].as<std::string>() : DefaultOutDir(s) + "-replay";
  std::vector<StrategyRun> runs;
  runs.push_back(std::move(run));
  WriteOutputs(out, results, runs, false);
  return Finish(out, results);
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "run") return Run(args);
    if (command == "replay") return Replay(args);
    if (command == "version" || command == "--version") {
      std::cout << "stratasim " << kVersion << "\n";
      return 0;
    }
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "stratasim: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const ConfigError& e) {
    std::cerr << "stratasim: error: " << e.what() << "\n";
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "stratasim " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "stratasim: error: " << e.what() << "\n";
    return 3;
  }
}

}  // namespace
}  // namespace stratasim

int main(int argc, char** argv) { return stratasim::Main(argc, argv); }
