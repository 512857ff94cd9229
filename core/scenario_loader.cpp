// The scenario loader: YAML text -> Scenario, with every input checked at the edge. This file
// reads the top level; each section has a file of its own (core/scenario_loader_<section>.cpp,
// core/scenario_loader_sections.h), and every value is read through core/yaml_util.h, the one
// YAML layer of the project (the calibration file uses it too).
//
// The format (docs/scenario-format.md has it in full, with every rule):
//
//   name: quickstart                 # required, [A-Za-z0-9._-]+
//   cluster:
//     gpus:                          # optional custom GPU kinds, added to the built-in catalog
//       - {name: MyGPU, peak: {fp32: "20TFLOPS", bf16: "300TFLOPS"}, memory: "48GB",
//          memory_bandwidth: "1TB/s", source: "vendor datasheet"}   # source optional
//     servers:                       # required, non-empty list of server groups
//       - name: dgx-a100             # required, unique
//         count: 2                   # default 1, >= 1
//         gpu: A100-SXM4-80GB        # required: built-in or custom kind
//         gpus_per_server: 8         # required, >= 1
//         nvswitch: {bandwidth: "300GB/s", latency: "1us"}
//         nvlink: {pairs: [[0, 1], [2, 3]] | "all", bandwidth: "56.25GB/s", latency: "1us"}
//         pcie: {gpus_per_switch: 2, sockets: 2, bandwidth: "15.75GB/s", latency: "1us",
//                uplink: {bandwidth: ..., latency: ...},     # default: the pcie link
//                socket_link: {bandwidth: "20.8GB/s", latency: "1us"}}  # needed if sockets > 1
//         nics: {count: 8, bandwidth: "200Gb/s", latency: "1us"}  # needed if > 1 server
//         # every link map above also takes `duplex: full | half` (default full: each
//         # direction has the bandwidth on its own; half: both directions share it)
//     network:                       # needed if > 1 server
//       kind: single_switch | leaf_spine
//       latency: "1us"               # per switch crossed, default 0
//       servers_per_leaf: 4          # leaf_spine only, required there
//       oversubscription: 2          # leaf_spine only, default 1; a number >= 1 or "2:1"
//   model: {preset: gpt2-medium}     # or kind (gpt bert llama moe resnet50 vgg16 graphsage)
//                                    # and the kind's fields; fields given with a preset
//                                    # override it; recompute: none | selective | full
//   training: {global_batch: 64, micro_batch: 4, precision: bf16,
//              iterations: {warmup: 1, measured: 2}, seed: 42}
//   simulation: {compute_efficiency: 0.7, memory_efficiency: 0.8, kernel_launch: "4us",
//                calibration: "h100.calibration.yaml"}   # relative to the scenario file
//   strategies:                      # required, non-empty
//     - {name: ddp, kind: ddp, options: {bucket_size: "25MiB", overlap: true}}
//
// Link latencies default to 0 when omitted. Strategy options stay text here: each strategy
// checks its own through OptionReader (core/scenario.cpp).
//
// Errors are ConfigError with the file, the 1-based line and column of the offending node
// (yaml-cpp's marks are 0-based), the key path ("cluster.servers[1].nics.count"), the value as
// written and the rule broken. Unknown and repeated keys are errors at every level, so a typo
// never becomes a silent default.
#include <optional>
#include <string>

#include "core/input_file.h"
#include "core/limits.h"
#include "core/model_presets.h"
#include "core/scenario.h"
#include "core/scenario_loader_sections.h"
#include "core/scenario_search.h"
#include "core/yaml_util.h"

namespace stratasim {
namespace {

namespace sections = scenario_sections;

// FP8 training runs the transformer layers' GEMMs in FP8 (models/fp8.h): every GPU must have
// FP8 tensor cores, and the model must have such layers.
// `key` names the precision in messages (a strategy's own is under strategies[i]).
void CheckFp8(const Scenario& s, const std::string& key) {
  const SourceLocation& at = s.training.precision_where;
  for (const ServerGroup& g : s.cluster.groups) {
    for (const GpuSpec& k : s.cluster.gpu_kinds) {
      if (k.name != g.gpu || k.Supports(DType::kFP8)) continue;
      throw ConfigError(at, key, "fp8",
                        "FP8 GEMMs need FP8 tensor cores; GPU kind " + g.gpu + " (" + g.gpu_path +
                            " at " + g.gpu_where.file + ":" + std::to_string(g.gpu_where.line) +
                            ":" + std::to_string(g.gpu_where.column) + ") has none");
    }
  }
  if (!IsTransformerKind(s.model.kind)) {
    std::string kinds;
    for (const std::string& k : TransformerKinds()) kinds += (kinds.empty() ? "" : ", ") + k;
    throw ConfigError(at, key, "fp8",
                      "FP8 training runs the linear layers of transformer layers in FP8, as "
                      "Transformer Engine does: only for model kinds " +
                          kinds + " (the model is " + s.model.kind + ")");
  }
}

// A shared-cluster scenario (docs/multi-job.md): `jobs:` and `placement:` instead of
// `strategies:`, and no top-level model or training (each job has its own).
Scenario LoadJobs(const yaml::Reader& r, const yaml::Map& m, Scenario s) {
  for (const char* key : {"strategies", "model", "training"}) {
    if (auto f = m.Get(key)) {
      r.FailAt(f->key, f->path,
               std::string("a scenario with `jobs:` gives each job its own model, training and "
                           "strategy; remove the top-level `") +
                   key + "` (docs/multi-job.md)");
    }
  }
  if (auto simulation = m.Get("simulation")) {
    s.simulation = sections::ReadSimulation(r, *simulation);
  }
  if (s.simulation.calibration) ApplyLinkCalibration(&*s.simulation.calibration, &s.cluster);
  s.jobs = sections::ReadJobs(r, *m.Get("jobs"), s.cluster);
  s.placement = sections::ReadPlacement(
      r, m.Require("placement", "a scenario with jobs lists the placement policies to compare"));
  s.model = s.jobs.front().model;
  s.training = s.jobs.front().training;
  for (const JobSpec& job : s.jobs) {
    if (job.training.precision != DType::kFP8) continue;
    Scenario js = s;
    js.model = job.model;
    js.training = job.training;
    CheckFp8(js, job.key_path + ".training.precision");
  }
  return s;
}

// `search`: whether the caller reads a `search:` section (search/search_spec.cpp), which then
// replaces `strategies:`; the other commands refuse it with the way to run it.
Scenario Load(const yaml::Reader& r, const yaml::Field& root, bool search) {
  yaml::Map m(r, root,
              {"name", "cluster", "model", "training", "simulation", "strategies", "jobs",
               "placement", "search"});
  Scenario s;
  s.name = r.PlainName(m.Require("name"));
  s.file = r.file();
  s.cluster = sections::ReadCluster(r, m.Require("cluster"));
  const std::optional<yaml::Field> search_section = m.Get("search");
  if (search_section) {
    if (auto strategies = m.Get("strategies")) {
      r.FailAt(strategies->key, strategies->path,
               "a search scenario makes its plans from `search:`; remove `strategies:` (or "
               "`search:` to run the listed strategies) (docs/search.md)");
    }
    if (auto jobs = m.Get("jobs")) {
      r.FailAt(jobs->key, jobs->path,
               "`search:` searches the plans of one training job; it does not apply to a "
               "shared-cluster scenario with `jobs:` (docs/search.md)");
    }
    if (!search) {
      r.FailAt(search_section->key, search_section->path,
               "this is a search scenario (a plan space instead of `strategies:`): run it with "
               "`stratasim search` (docs/search.md)");
    }
  } else if (search) {
    m.Require("search", "a search scenario gives its plan space in `search:` (docs/search.md)");
  }
  if (m.Get("jobs")) return LoadJobs(r, m, std::move(s));
  if (auto placement = m.Get("placement")) {
    r.FailAt(placement->key, placement->path,
             "placement chooses where the jobs of a shared-cluster scenario run: it needs a "
             "`jobs:` list (docs/multi-job.md)");
  }
  s.model = sections::ReadModel(r, m.Require("model"));
  s.training = sections::ReadTraining(r, m.Require("training"));
  s.cluster.stragglers.seed = s.training.seed;  // random straggler factors draw from it
  if (s.training.precision == DType::kFP8) CheckFp8(s, "training.precision");
  if (auto simulation = m.Get("simulation")) {
    s.simulation = sections::ReadSimulation(r, *simulation);
  }
  if (s.simulation.calibration) ApplyLinkCalibration(&*s.simulation.calibration, &s.cluster);
  if (search) return s;  // the search makes the strategies
  s.strategies = sections::ReadStrategies(r, m.Require("strategies"), s.model, s.training);
  for (const StrategySpec& spec : s.strategies) {
    if (spec.own.precision == DType::kFP8) {
      CheckFp8(ScenarioFor(s, spec), spec.key_path + ".training.precision");
    }
  }
  return s;
}

}  // namespace

Scenario LoadScenarioText(const std::string& text, const std::string& file_label) {
  return Load(yaml::Reader(file_label), yaml::ParseDocument(text, file_label), false);
}

Scenario LoadSearchBaseText(const std::string& text, const std::string& file_label) {
  return Load(yaml::Reader(file_label), yaml::ParseDocument(text, file_label), true);
}

Scenario scenario_sections::LoadTree(const yaml::Reader& r, const yaml::Field& root) {
  return Load(r, root, false);
}

Scenario LoadScenarioFile(const std::string& path) {
  return LoadScenarioText(ReadInputFile(path, limits::kScenarioFileBytes, "a scenario file"), path);
}

}  // namespace stratasim
