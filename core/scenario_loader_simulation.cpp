// The scenario's `simulation:` section: cost-model parameters, fidelity, collectives, the
// optimisations that do not change the model, and the calibration file.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/collective_names.h"
#include "core/scenario_loader_sections.h"
#include "core/text_number.h"

namespace stratasim::scenario_sections {
namespace {

using yaml::Field;
using yaml::Join;
using yaml::Map;

CollectiveSettings ReadCollectives(const yaml::Reader& r, const Field& f) {
  Map m(r, f, {"algorithms", "protocol", "channels"});
  CollectiveSettings s;
  if (auto algorithms = m.Get("algorithms")) {
    std::vector<std::string> kinds;
    for (CollectiveKind k : kAllCollectiveKinds) kinds.emplace_back(ToString(k));
    Map am(r, *algorithms, kinds);
    for (CollectiveKind k : kAllCollectiveKinds) {
      auto a = am.Get(std::string(ToString(k)));
      if (!a) continue;
      const std::string name = r.String(*a);
      if (!IsCollectiveAlgorithm(k, name)) {
        r.Fail(*a, "must be one of: " + Join(CollectiveAlgorithms(k)));
      }
      s.algorithm[k] = name;
    }
  }
  if (auto protocol = m.Get("protocol")) {
    s.protocol = r.String(*protocol);
    const auto& known = CollectiveProtocols();
    if (std::find(known.begin(), known.end(), s.protocol) == known.end()) {
      r.Fail(*protocol, "must be one of: " + Join(known));
    }
  }
  if (auto channels = m.Get("channels")) {
    if (channels->value.IsScalar() && channels->value.Scalar() == "auto") {
      s.channels = 0;
    } else {
      s.channels = static_cast<int>(r.Integer(*channels, 1, 64));
    }
  }
  return s;
}
}  // namespace

SimulationSpec ReadSimulation(const yaml::Reader& r, const Field& f) {
  Map m(r, f,
        {"compute_efficiency", "memory_efficiency", "kernel_launch", "fidelity", "collectives",
         "calibration", "fold", "fuse", "max_tasks"});
  SimulationSpec spec;
  if (auto e = m.Get("compute_efficiency")) spec.compute_efficiency = r.Efficiency(*e);
  if (auto e = m.Get("memory_efficiency")) spec.memory_efficiency = r.Efficiency(*e);
  if (auto launch = m.Get("kernel_launch")) spec.kernel_launch_s = r.Seconds(*launch);
  if (auto fidelity = m.Get("fidelity")) {
    const std::string v = r.String(*fidelity);
    if (v == "step") {
      spec.fidelity = Fidelity::kStep;
    } else if (v == "stream") {
      spec.fidelity = Fidelity::kStream;
    } else if (v == "analytic") {
      spec.fidelity = Fidelity::kAnalytic;
    } else {
      r.Fail(*fidelity, "must be one of: step, stream, analytic");
    }
  }
  if (auto fold = m.Get("fold")) spec.fold = r.AutoOrOff(*fold);
  if (auto fuse = m.Get("fuse")) spec.fuse = r.AutoOrOff(*fuse);
  if (auto limit = m.Get("max_tasks")) {
    long long v = 0;
    const bool is_auto = limit->value.IsScalar() && limit->value.Scalar() == "auto";
    if (!is_auto && (!limit->value.IsScalar() || !ParseInteger(limit->value.Scalar(), &v) ||
                     v < 1 || v > 0x7fffffff)) {
      r.Fail(*limit, "must be auto or an integer in [1, 2147483647]");
    }
    spec.max_tasks = is_auto ? 0 : v;
  }
  if (auto coll = m.Get("collectives")) spec.collectives = ReadCollectives(r, *coll);
  if (auto calibration = m.Get("calibration")) {
    // Relative to the scenario file, so a scenario and its calibration move together.
    std::filesystem::path path = r.Name(*calibration);
    if (path.is_relative()) path = std::filesystem::path(r.file()).parent_path() / path;
    spec.calibration = LoadCalibrationFile(path.lexically_normal().string());
  }
  return spec;
}

}  // namespace stratasim::scenario_sections
