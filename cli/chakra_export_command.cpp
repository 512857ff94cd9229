#include "cli/chakra_export_command.h"

#include <boost/program_options.hpp>
#include <filesystem>

#include "chakra/export.h"
#include "chakra/format.h"
#include "cli/command_line.h"
#include "cli/exit_status.h"
#include "core/scenario.h"
#include "report/atomic_file.h"
#include "strategies/plan.h"

namespace po = boost::program_options;

namespace stratasim {

int ChakraExportCommand(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("stratasim chakra-export options");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>()->required(),
                                                 "scenario YAML file")(
      "strategy,s", po::value<std::string>(),
      "the strategy to export, by name (needed when the scenario has several)")(
      "out,o", po::value<std::string>()->required(),
      "output folder: <strategy>.<rank>.et per rank and <strategy>.comm_groups.json");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  if (WantsHelp(args)) {
    out << "usage: stratasim chakra-export SCENARIO [--strategy NAME] --out DIR\n" << opts;
    return 0;
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  Scenario s = LoadScenarioFile(vm["scenario"].as<std::string>());
  if (!s.jobs.empty()) {
    throw UsageError(
        "chakra-export takes a scenario of strategies, not of jobs on a shared "
        "cluster (" +
        s.file + ")");
  }
  const StrategySpec* spec = nullptr;
  std::string names;
  for (const StrategySpec& st : s.strategies) {
    names += (names.empty() ? "" : ", ") + st.name;
    if (vm.count("strategy") ? st.name == vm["strategy"].as<std::string>()
                             : s.strategies.size() == 1) {
      spec = &st;
    }
  }
  if (!spec) {
    throw UsageError(vm.count("strategy")
                         ? "--strategy " + vm["strategy"].as<std::string>() +
                               ": no such strategy in " + s.file + " (it has: " + names + ")"
                         : s.file + " has several strategies (" + names +
                               "): choose one with --strategy");
  }
  // A Chakra file holds every rank's own work: the plan is made whole, not folded onto one
  // data-parallel replica (docs/scale.md).
  s.simulation.fold = false;
  const Plan plan = PlanStrategy(s, *spec);
  const chakra::ChakraFiles files = chakra::ExportChakra(plan.graph);
  const std::string dir = vm["out"].as<std::string>();
  CreateDirectories(dir);
  const std::string prefix = (std::filesystem::path(dir) / spec->name).string();
  for (size_t r = 0; r < files.ranks.size(); ++r) {
    WriteFileAtomically(chakra::RankFile(prefix, static_cast<int>(r)), files.ranks[r]);
  }
  WriteFileAtomically(chakra::CommGroupsFile(prefix), files.comm_groups);
  out << "wrote " << files.ranks.size() << " Chakra traces (" << files.nodes << " nodes) to "
      << prefix << ".{0.." << files.ranks.size() - 1 << "}.et and "
      << chakra::CommGroupsFile(prefix) << "\n";
  return 0;
}

}  // namespace stratasim
