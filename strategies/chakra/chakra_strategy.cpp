#include "strategies/chakra/chakra_strategy.h"

#include <filesystem>

#include "chakra/format.h"
#include "chakra/import.h"
#include "core/dtype.h"

namespace stratasim {

const OptionSpecs& ChakraOptions() {
  static const OptionSpecs options = {
      FreeText("traces",
               "prefix of the per-rank files <prefix>.<rank>.et (or their folder), relative to "
               "the scenario file; <prefix>.comm_groups.json, when present, gives the process "
               "groups"),
      Flag("ctrl_deps",
           "also wait for each node's ctrl_deps (Chakra's PyTorch converter writes an "
           "operator's parent there, which is not an order; data_deps always count)")
          .Default("false"),
  };
  return options;
}

Plan PlanChakra(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, ChakraOptions());
  std::filesystem::path path(opt.Text("traces"));
  const bool ctrl_deps = opt.Bool("ctrl_deps");
  opt.Finish();
  if (path.empty()) throw opt.Fail("traces", "must name the traces' prefix");
  if (path.is_relative() && !s.file.empty()) {
    path = (std::filesystem::path(s.file).parent_path() / path).lexically_normal();
  }
  if (!std::filesystem::is_directory(path) &&
      !std::filesystem::exists(chakra::RankFile(path.string(), 0))) {
    throw opt.Fail("traces", "no such file: " + chakra::RankFile(path.string(), 0) +
                                 " (the prefix is relative to the scenario file)");
  }
  chakra::ImportOptions o;
  o.cluster = &s.cluster;
  o.simulation = &s.simulation;
  o.dtype = StorageDType(s.training.precision);
  o.iterations = s.training.warmup_iterations + s.training.measured_iterations;
  o.ctrl_deps = ctrl_deps;
  Plan plan;
  plan.graph = chakra::ImportChakra(path.string(), o);
  // The traces do not say how many samples an iteration trains: the scenario's batch is
  // assumed, as `stratasim replay` does.
  plan.samples_per_iteration = s.training.global_batch;
  plan.tokens_per_sample = s.model.sequence;
  plan.notes.push_back("Chakra traces " + path.string() + ": " +
                       std::to_string(plan.graph.num_ranks()) + " ranks, " +
                       std::to_string(plan.graph.tasks().size()) + " tasks, " +
                       std::to_string(plan.graph.collectives().size()) + " collectives");
  return plan;
}

}  // namespace stratasim
