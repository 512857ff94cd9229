// The scenario loader's sections, one file each (core/scenario_loader_<section>.cpp), read
// through the one YAML layer (core/yaml_util.h). core/scenario_loader.cpp reads the top level
// and calls them; the format and the error conventions are described there.
//
// Internal to core/: it exposes yaml-cpp's types.
#ifndef STRATASIM_CORE_SCENARIO_LOADER_SECTIONS_H_
#define STRATASIM_CORE_SCENARIO_LOADER_SECTIONS_H_

#include <vector>

#include "core/scenario.h"
#include "core/yaml_util.h"

namespace stratasim::scenario_sections {

// A whole scenario from a parsed document (LoadScenarioText without the parse): the sweep
// (core/sweep_grid.cpp) loads trees it edited, whose nodes keep the marks of the files they came
// from.
Scenario LoadTree(const yaml::Reader& r, const yaml::Field& root);

ClusterSpec ReadCluster(const yaml::Reader& r, const yaml::Field& f);
ModelSpec ReadModel(const yaml::Reader& r, const yaml::Field& f);
TrainingSpec ReadTraining(const yaml::Reader& r, const yaml::Field& f);
// A strategy's `model:` / `training:` map: the keys that say how the model is trained, checked
// over `base` (the scenario's section) by its rules, into *own; any other key is a ConfigError.
void ReadModelOverride(const yaml::Reader& r, const yaml::Field& f, const ModelSpec& base,
                       TrainingChoices* own);
void ReadTrainingOverride(const yaml::Reader& r, const yaml::Field& f, const TrainingSpec& base,
                          TrainingChoices* own);
// A calibration file it names is read relative to the scenario file (r.file()).
SimulationSpec ReadSimulation(const yaml::Reader& r, const yaml::Field& f);
// `model` and `training`: the scenario's sections, which a strategy's overrides start from.
std::vector<StrategySpec> ReadStrategies(const yaml::Reader& r, const yaml::Field& f,
                                         const ModelSpec& model, const TrainingSpec& training);

// A strategy's `options:` map into spec->options (text; each strategy checks its own).
void ReadStrategyOptions(const yaml::Reader& r, const yaml::Field& f, StrategySpec* spec);
// The `jobs:` and `placement:` sections of a shared-cluster scenario
// (core/scenario_loader_jobs.cpp, docs/multi-job.md); `cluster` is the scenario's, read first.
std::vector<JobSpec> ReadJobs(const yaml::Reader& r, const yaml::Field& f,
                              const ClusterSpec& cluster);
std::vector<PlacementChoice> ReadPlacement(const yaml::Reader& r, const yaml::Field& f);

}  // namespace stratasim::scenario_sections

#endif  // STRATASIM_CORE_SCENARIO_LOADER_SECTIONS_H_
