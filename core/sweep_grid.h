// The grid of `stratasim sweep` (docs/sweep.md): a YAML map from key paths into a scenario to
// the values each takes, whose cartesian product is the sweep's points.
//
//   cluster.servers[0].count: [2, 4, 8]
//   cluster.servers[0].nics.bandwidth: ["100Gb/s", "200Gb/s"]
//   model.preset: [gpt3-2.7b, gpt3-6.7b]
//
// A point is the scenario's YAML tree with each key path set to one of its values, read by the
// scenario loader itself: a value is checked by the same rules, and worded the same way, as if
// it were written in the scenario. Lives in core/ because it edits YAML trees (core/yaml_util.h
// is the project's one YAML layer); the header exposes no yaml-cpp type.
#ifndef STRATASIM_CORE_SWEEP_GRID_H_
#define STRATASIM_CORE_SWEEP_GRID_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/scenario.h"

namespace stratasim {

// One key of the grid: its key path, where it is written and its values as written (a scalar's
// text; a map or list value in YAML's flow form), in the grid's order.
struct SweepAxis {
  std::string path;
  SourceLocation where;                // the key in the grid file
  std::vector<std::string> values;     // as written
  std::vector<SourceLocation> places;  // where each value is written
};

class SweepGrid {
 public:
  // Reads the grid `grid_path` over the scenario `scenario_path`. Throws ConfigError located in
  // the grid file for: a key that is not a key path, one that names a map key or list index the
  // scenario does not have (only the last key of a path may be new, and the loader must then
  // accept it), a key path inside another one, a repeated key, a value that is not a list, an
  // empty list, more than limits::kMaxSweepPoints points, and a value the loader refuses for
  // its key path (each value is loaded once, with the other keys at their first value). A
  // scenario that is bad whatever the grid says fails as a ConfigError located in the scenario.
  static SweepGrid Load(const std::string& grid_path, const std::string& scenario_path);
  // The same from texts; the paths are what messages call them.
  static SweepGrid FromText(const std::string& grid_text, const std::string& grid_path,
                            const std::string& scenario_text, const std::string& scenario_path);

  SweepGrid(SweepGrid&&) noexcept;
  SweepGrid& operator=(SweepGrid&&) noexcept;
  ~SweepGrid();

  const std::vector<SweepAxis>& axes() const { return axes_; }
  // The cartesian product's size: at most limits::kMaxSweepPoints.
  std::uint64_t num_points() const { return num_points_; }
  // Each axis' value index at `point`, the first key outermost (it changes slowest).
  std::vector<size_t> ValueIndices(std::uint64_t point) const;
  // Each axis' value at `point`, as written.
  std::vector<std::string> Values(std::uint64_t point) const;
  // The scenario at `point`. Throws ConfigError: located at the grid value when the loader
  // refuses what a key path of the grid holds, in the scenario otherwise (a combination of
  // values the scenario's rules refuse).
  Scenario LoadPoint(std::uint64_t point) const;
  // A hash of the scenario's and the grid's texts (16 hex digits): a sweep's journal records it,
  // and a resume over other files is refused.
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  struct Trees;
  SweepGrid();

  std::vector<SweepAxis> axes_;
  std::uint64_t num_points_ = 0;
  std::string fingerprint_;
  std::unique_ptr<Trees> trees_;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_SWEEP_GRID_H_
