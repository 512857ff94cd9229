// Reads a search scenario (search/search_spec.h): the common sections through the core loader
// (core/scenario_search.h), then the `search:` section with core/yaml_util.h, the one YAML
// layer of the project, so that its values are located and worded as every other input's.
#include "search/search_spec.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/input_file.h"
#include "core/limits.h"
#include "core/scenario_search.h"
#include "core/yaml_util.h"

namespace stratasim::search {
namespace {

using yaml::Field;

// The largest degree a list may hold: no plan has more GPUs than a cluster may have.
constexpr int kMaxDegree = limits::kMaxGpus;
// top_k's bound: each of the k plans is simulated with contention, which takes seconds to
// minutes at scale; a thousand is already a long sweep.
constexpr int kMaxTopK = 1000;

// Powers of two from 1 up to `limit` (at least [1]).
std::vector<int> PowersOfTwo(int limit) {
  std::vector<int> out{1};
  while (out.back() <= limit / 2) out.push_back(out.back() * 2);
  return out;
}

// Reads list `key` of `m` into `out` (left as is when the key is absent): non-empty, each item
// read by `read`, none repeated.
template <typename T, typename Read>
void ReadList(const yaml::Reader& r, const yaml::Map& m, const std::string& key, Read read,
              std::vector<T>* out) {
  const std::optional<Field> f = m.Get(key);
  if (!f) return;
  std::vector<T> values;
  std::vector<YAML::Node> nodes;
  for (const Field& item : r.List(*f, /*non_empty=*/true)) {
    T v = read(item);
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] == v) r.Fail(item, "repeated (" + r.FirstAt(nodes[i]) + ")");
    }
    values.push_back(v);
    nodes.push_back(item.value);
  }
  *out = std::move(values);
}

std::string Word(const yaml::Reader& r, const Field& f, const std::vector<std::string>& known) {
  const std::string v = f.value.IsScalar() ? f.value.Scalar() : "";
  if (std::find(known.begin(), known.end(), v) == known.end()) {
    r.Fail(f, "must be one of " + yaml::Join(known));
  }
  return v;
}

SearchSpec Defaults(const Scenario& s) {
  SearchSpec spec;
  int smallest_server = std::numeric_limits<int>::max();
  for (const ServerGroup& g : s.cluster.groups) {
    smallest_server = std::min(smallest_server, g.gpus_per_server);
  }
  spec.tensor = PowersOfTwo(s.cluster.groups.empty() ? 1 : smallest_server);
  spec.pipeline = PowersOfTwo(std::max(1, s.model.layers));
  spec.micro_batch = {1, 2, 4, 8};
  spec.schedule = {"1f1b", "interleaved"};
  spec.virtual_stages = {2};
  spec.recompute = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  spec.sequence_parallel = {false, true};
  spec.zero = {Zero::kNone, Zero::kDistributedOptimizer, Zero::kZero1, Zero::kZero2, Zero::kZero3};
  spec.rank_order = {"tpd"};
  return spec;
}

SearchSpec ReadSearch(const yaml::Reader& r, const Field& f, const Scenario& s) {
  yaml::Map m(r, f,
              {"tensor", "pipeline", "micro_batch", "schedule", "virtual_stages", "recompute",
               "sequence_parallel", "zero", "rank_order", "top_k", "memory_fraction"});
  SearchSpec spec = Defaults(s);
  spec.where = r.Where(f.key);
  auto degree = [&](int min_value) {
    return [&r, min_value](const Field& item) {
      return static_cast<int>(r.Integer(item, min_value, kMaxDegree));
    };
  };
  ReadList(r, m, "tensor", degree(1), &spec.tensor);
  ReadList(r, m, "pipeline", degree(1), &spec.pipeline);
  ReadList(r, m, "micro_batch", degree(1), &spec.micro_batch);
  ReadList(
      r, m, "schedule",
      [&](const Field& item) {
        return Word(r, item, {"gpipe", "1f1b", "interleaved"});
      },
      &spec.schedule);
  // Interleaving needs at least two chunks per stage (one is plain 1F1B).
  ReadList(r, m, "virtual_stages", degree(2), &spec.virtual_stages);
  ReadList(
      r, m, "recompute",
      [&](const Field& item) {
        const std::string w = Word(r, item, {"none", "selective", "full"});
        return w == "full"        ? Recompute::kFull
               : w == "selective" ? Recompute::kSelective
                                  : Recompute::kNone;
      },
      &spec.recompute);
  ReadList(
      r, m, "sequence_parallel",
      [&](const Field& item) {
        return Word(r, item, {"false", "true"}) == "true";
      },
      &spec.sequence_parallel);
  ReadList(
      r, m, "zero",
      [&](const Field& item) {
        const Zero all[] = {Zero::kNone, Zero::kDistributedOptimizer, Zero::kZero1, Zero::kZero2,
                            Zero::kZero3};
        std::vector<std::string> names;
        for (Zero z : all) names.emplace_back(ToString(z));
        const std::string w = Word(r, item, names);
        for (Zero z : all) {
          if (ToString(z) == w) return z;
        }
        return Zero::kNone;
      },
      &spec.zero);
  ReadList(
      r, m, "rank_order",
      [&](const Field& item) {
        return Word(r, item, {"tpd", "tdp", "ptd", "pdt", "dtp", "dpt"});
      },
      &spec.rank_order);
  if (auto top_k = m.Get("top_k")) spec.top_k = static_cast<int>(r.Integer(*top_k, 1, kMaxTopK));
  if (auto fraction = m.Get("memory_fraction")) {
    const double v = r.PositiveNumber(*fraction);
    if (v > 1) r.Fail(*fraction, "must be in (0, 1]: a share of each GPU's memory");
    spec.memory_fraction = v;
  }
  // The bound on the space, counted before any candidate is made (double: the product of a
  // few long lists overflows no double).
  const double count = static_cast<double>(spec.tensor.size()) * spec.pipeline.size() *
                       spec.micro_batch.size() * spec.schedule.size() * spec.virtual_stages.size() *
                       spec.recompute.size() * spec.sequence_parallel.size() * spec.zero.size() *
                       spec.rank_order.size();
  if (count > static_cast<double>(limits::kMaxSearchCandidates)) {
    r.FailAt(f.key, f.path,
             "the lists make " +
                 (count < 1e18 ? std::to_string(static_cast<long long>(count)) : "over 10^18") +
                 " combinations (the product of their sizes), more than the " +
                 std::to_string(limits::kMaxSearchCandidates) +
                 " a search may enumerate (docs/limits.md): shorten some lists");
  }
  return spec;
}

}  // namespace

SearchScenario LoadSearchScenarioText(const std::string& text, const std::string& file_label) {
  SearchScenario out;
  out.scenario = LoadSearchBaseText(text, file_label);
  const yaml::Reader r(file_label);
  const yaml::Field root = yaml::ParseDocument(text, file_label);
  // The core loader checked the top level, so `search` is there and is the only such key.
  for (const auto& kv : root.value) {
    if (kv.first.Scalar() != "search") continue;
    out.search = ReadSearch(r, Field{"search", kv.first, kv.second}, out.scenario);
  }
  return out;
}

SearchScenario LoadSearchScenarioFile(const std::string& path) {
  return LoadSearchScenarioText(ReadInputFile(path, limits::kScenarioFileBytes, "a scenario file"),
                                path);
}

}  // namespace stratasim::search
