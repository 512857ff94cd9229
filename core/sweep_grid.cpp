#include "core/sweep_grid.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/limits.h"
#include "core/scenario_loader_sections.h"
#include "core/yaml_util.h"

namespace stratasim {

namespace {

// One step of a key path: a map key, or a list index.
struct Step {
  bool is_index = false;
  std::string key;
  size_t index = 0;
};

std::string PathText(const std::vector<Step>& steps, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (steps[i].is_index) {
      out += "[" + std::to_string(steps[i].index) + "]";
    } else {
      out += (out.empty() ? "" : ".") + steps[i].key;
    }
  }
  return out;
}

// name(.name|[index])*, names as the scenario's keys are written: [A-Za-z0-9_-]+. Empty on a
// syntax error.
std::vector<Step> ParsePath(const std::string& path) {
  std::vector<Step> steps;
  size_t i = 0;
  bool want_name = true;
  while (i < path.size()) {
    if (want_name) {
      size_t j = i;
      while (j < path.size() && (std::isalnum(static_cast<unsigned char>(path[j])) ||
                                 path[j] == '_' || path[j] == '-')) {
        ++j;
      }
      if (j == i) return {};
      steps.push_back(Step{false, path.substr(i, j - i), 0});
      i = j;
      want_name = false;
    } else if (path[i] == '.') {
      ++i;
      want_name = true;
    } else if (path[i] == '[') {
      size_t j = i + 1;
      while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j]))) ++j;
      if (j == i + 1 || j - i - 1 > 9 || j >= path.size() || path[j] != ']') return {};
      steps.push_back(Step{true, "", std::stoul(path.substr(i + 1, j - i - 1))});
      i = j + 1;
    } else {
      return {};
    }
  }
  if (want_name) return {};
  return steps;
}

std::string FlowText(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

// FNV-1a, 64 bits: a fingerprint, not a defence against a crafted collision.
std::uint64_t Fnv1a(std::uint64_t h, const std::string& s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

bool Within(const std::string& key, const std::string& path) {
  if (key.size() < path.size() || key.compare(0, path.size(), path) != 0) return false;
  return key.size() == path.size() || key[path.size()] == '.' || key[path.size()] == '[';
}

}  // namespace

struct SweepGrid::Trees {
  std::string scenario_text;
  std::string scenario_path;
  std::string grid_path;
  std::vector<std::vector<Step>> steps;         // per axis
  std::vector<std::vector<YAML::Node>> values;  // per axis, per value
};

SweepGrid::SweepGrid() : trees_(std::make_unique<Trees>()) {}
SweepGrid::SweepGrid(SweepGrid&&) noexcept = default;
SweepGrid& SweepGrid::operator=(SweepGrid&&) noexcept = default;
SweepGrid::~SweepGrid() = default;

SweepGrid SweepGrid::Load(const std::string& grid_path, const std::string& scenario_path) {
  const std::string scenario =
      yaml::ReadFile(scenario_path, limits::kScenarioFileBytes, "a scenario file");
  const std::string grid = yaml::ReadFile(grid_path, limits::kSweepGridFileBytes, "a grid file");
  return FromText(grid, grid_path, scenario, scenario_path);
}

SweepGrid SweepGrid::FromText(const std::string& grid_text, const std::string& grid_path,
                              const std::string& scenario_text, const std::string& scenario_path) {
  SweepGrid g;
  Trees& t = *g.trees_;
  t.scenario_text = scenario_text;
  t.scenario_path = scenario_path;
  t.grid_path = grid_path;
  const yaml::Reader r(grid_path);
  const yaml::Field root = yaml::ParseDocument(grid_text, grid_path);
  // A syntax error in the scenario is the scenario's, located there.
  const yaml::Field scenario_root = yaml::ParseDocument(scenario_text, scenario_path);
  // Any key: the key paths are checked below against the scenario; repeated keys are refused.
  const yaml::Map m(r, root, {}, /*any_key=*/true);
  if (m.entries().empty()) r.Fail(root, "the grid has no key (write `key.path: [values]` lines)");
  g.num_points_ = 1;
  for (const auto& [path, field] : m.entries()) {
    SweepAxis axis;
    axis.path = path;
    axis.where = r.Where(field.key);
    const std::vector<Step> steps = ParsePath(path);
    if (steps.empty() || steps.front().is_index) {
      r.FailAt(field.key, path,
               "not a key path into the scenario: write names joined by dots, with [i] for a "
               "list item (e.g. cluster.servers[0].count)");
    }
    // The path must exist in the scenario up to its last step; the last may be a new map key
    // (the loader then accepts or refuses it).
    YAML::Node at = scenario_root.value;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      const std::string prefix = PathText(steps, i);
      const std::string where = prefix.empty() ? "the scenario's top level" : prefix;
      const bool last = i + 1 == steps.size();
      if (s.is_index) {
        if (!at.IsSequence()) {
          r.FailAt(field.key, path,
                   "unknown key path: " + where + " is " + yaml::KindOf(at) +
                       " in the scenario, not a list");
        }
        if (s.index >= at.size()) {
          r.FailAt(field.key, path,
                   "unknown key path: index " + std::to_string(s.index) + " is past the end of " +
                       where + " (" + std::to_string(at.size()) + " items in the scenario)");
        }
        at.reset(at[s.index]);  // rebinds (operator= would overwrite the node's contents)
        continue;
      }
      if (!at.IsMap()) {
        r.FailAt(field.key, path,
                 "unknown key path: " + where + " is " + yaml::KindOf(at) +
                     " in the scenario, not a map");
      }
      YAML::Node next;
      bool found = false;
      std::vector<std::string> keys;
      for (const auto& kv : at) {
        keys.push_back(kv.first.Scalar());
        if (kv.first.Scalar() == s.key) {
          next = kv.second;
          found = true;
        }
      }
      if (!found) {
        if (last) break;  // a new leaf key: the loader decides
        r.FailAt(field.key, path,
                 "unknown key path: the scenario has no key " + s.key + " in " + where +
                     " (it has: " + yaml::Join(keys) +
                     "); only the last key of a path may be "
                     "one the scenario leaves out");
      }
      at.reset(next);
    }
    const std::vector<yaml::Field> items = r.List(field, /*non_empty=*/true);
    for (const yaml::Field& item : items) {
      axis.values.push_back(FlowText(item.value));
      axis.places.push_back(r.Where(item.value));
    }
    for (size_t k = 0; k < g.axes_.size(); ++k) {
      const std::string& other = g.axes_[k].path;
      if (Within(path, other) || Within(other, path)) {
        r.FailAt(field.key, path,
                 "lies inside grid key " + other + " (line " +
                     std::to_string(g.axes_[k].where.line) + "): one would overwrite the other");
      }
    }
    g.num_points_ *= items.size();
    if (g.num_points_ > limits::kMaxSweepPoints) {
      r.FailAt(field.key, path,
               "the grid has more than " + std::to_string(limits::kMaxSweepPoints) +
                   " points up to this key (the product of the lists' lengths; docs/limits.md)");
    }
    t.steps.push_back(steps);
    std::vector<YAML::Node> values;
    for (const yaml::Field& item : items) values.push_back(item.value);
    t.values.push_back(values);
    g.axes_.push_back(std::move(axis));
  }
  std::uint64_t h = 14695981039346656037ULL;
  h = Fnv1a(h, "stratasim sweep grid 1\n");
  h = Fnv1a(h, std::to_string(scenario_text.size()) + "\n" + scenario_text);
  h = Fnv1a(h, std::to_string(grid_text.size()) + "\n" + grid_text);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  g.fingerprint_ = hex;
  // Each value once, the other keys at their first value: a value the loader refuses for its
  // key path is the grid's error. Other errors depend on a combination, and fail that point
  // when it runs.
  std::vector<size_t> choice(g.axes_.size(), 0);
  auto check = [&]() {
    try {
      std::uint64_t point = 0;
      for (size_t k = 0; k < choice.size(); ++k) point = point * t.values[k].size() + choice[k];
      g.LoadPoint(point);
    } catch (const ConfigError& e) {
      if (e.where().file == grid_path) throw;
    }
  };
  check();
  for (size_t k = 0; k < g.axes_.size(); ++k) {
    for (size_t v = 1; v < t.values[k].size(); ++v) {
      choice[k] = v;
      check();
    }
    choice[k] = 0;
  }
  return g;
}

std::vector<size_t> SweepGrid::ValueIndices(std::uint64_t point) const {
  std::vector<size_t> out(axes_.size());
  for (size_t k = axes_.size(); k-- > 0;) {
    const size_t n = axes_[k].values.size();
    out[k] = static_cast<size_t>(point % n);
    point /= n;
  }
  return out;
}

std::vector<std::string> SweepGrid::Values(std::uint64_t point) const {
  const std::vector<size_t> idx = ValueIndices(point);
  std::vector<std::string> out;
  for (size_t k = 0; k < axes_.size(); ++k) out.push_back(axes_[k].values[idx[k]]);
  return out;
}

Scenario SweepGrid::LoadPoint(std::uint64_t point) const {
  const Trees& t = *trees_;
  const std::vector<size_t> idx = ValueIndices(point);
  // A fresh tree each time: assigning a node shares it, and the next point must start from the
  // scenario as written.
  const yaml::Field root = yaml::ParseDocument(t.scenario_text, t.scenario_path);
  for (size_t k = 0; k < axes_.size(); ++k) {
    const std::vector<Step>& steps = t.steps[k];
    YAML::Node at = root.value;
    for (size_t i = 0; i + 1 < steps.size(); ++i) {
      at.reset(steps[i].is_index ? at[steps[i].index] : at[steps[i].key]);
    }
    if (steps.back().is_index) {
      at[steps.back().index] = t.values[k][idx[k]];
    } else {
      at[steps.back().key] = t.values[k][idx[k]];
    }
  }
  try {
    return scenario_sections::LoadTree(yaml::Reader(t.scenario_path), root);
  } catch (const ConfigError& e) {
    // What a grid key path holds is the grid's: the error moves to the value's place there.
    for (size_t k = 0; k < axes_.size(); ++k) {
      if (!Within(e.key(), axes_[k].path)) continue;
      // A key the grid added has no place in any file (line 0): the error is the grid key's.
      throw ConfigError(e.where().line == 0 ? axes_[k].where : axes_[k].places[idx[k]], e.key(),
                        e.value(), e.rule());
    }
    throw;
  }
}

}  // namespace stratasim
