// The scenario loader: YAML text -> Scenario, with every input checked at the edge. This is the
// only file in the project that includes yaml-cpp.
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
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/collective_names.h"
#include "core/hardware.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "core/link_efficiency.h"
#include "core/model_presets.h"
#include "core/scenario.h"
#include "core/text_number.h"
#include "core/units.h"
#include "core/yaml_util.h"

namespace stratasim {
namespace {

// Model keys each kind accepts besides kind, preset, recompute and recompute_layers.
std::vector<std::string> ModelKeysOf(const std::string& kind) {
  const std::vector<std::string> transformer = {"layers",   "hidden",     "heads",
                                                "sequence", "vocabulary", "ffn_hidden"};
  std::vector<std::string> keys;
  if (IsTransformerKind(kind)) keys = transformer;
  if (kind == "llama") keys.push_back("kv_heads");
  if (kind == "moe") keys.insert(keys.end(), {"experts", "top_k", "capacity_factor"});
  if (kind == "resnet50" || kind == "vgg16") keys = {"image_size", "classes"};
  if (kind == "graphsage") {
    keys = {"fanouts", "feature_dim", "hidden", "classes", "graph_vertices", "graph_degree"};
  }
  return keys;
}

using yaml::Field;
using yaml::Join;
using yaml::KindOf;

// [A-Za-z0-9_-][A-Za-z0-9._-]*, at most limits::kNameLength: it names a folder or a file under
// the output folder, so "." and ".." (or any leading dot) and over-long names are refused.
bool IsPlainName(const std::string& s) {
  if (s.empty() || s.size() > limits::kNameLength || s[0] == '.') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  Scenario Load(const YAML::Node& root) const;

 private:
  // A mapping whose keys have been checked: each a plain string, none repeated and, unless
  // any key is allowed, each one of `known`.
  class Map {
   public:
    Map(const Loader& loader, const Field& self, const std::vector<std::string>& known,
        bool any_key = false);

    std::optional<Field> Get(const std::string& key) const;
    // The field, or "required field missing" located at this map; `why` explains a
    // conditional requirement.
    Field Require(const std::string& key, const std::string& why = "") const;
    const Field& self() const { return self_; }
    const std::vector<std::pair<std::string, Field>>& entries() const { return entries_; }
    std::string PathOf(const std::string& key) const {
      return self_.path.empty() ? key : self_.path + "." + key;
    }

   private:
    const Loader& loader_;
    Field self_;
    std::vector<std::pair<std::string, Field>> entries_;
  };

  struct GroupRead {
    ServerGroup group;
    bool has_nics = false;
    Field field;  // the group's map
    Field name;   // its name, for duplicate-name errors
  };

  SourceLocation Where(const YAML::Node& n) const;
  // Where a field's problem is: its value, or its key when the value is empty (yaml-cpp marks an
  // empty value at the start of the next line).
  SourceLocation WhereOf(const Field& f) const { return Where(f.value.IsNull() ? f.key : f.value); }
  [[noreturn]] void Fail(const Field& f, const std::string& rule) const;
  // An error about a key or a whole map (unknown key, missing field), located at `at`; the
  // key path already names what is wrong, so no value is quoted.
  [[noreturn]] void FailAt(const YAML::Node& at, const std::string& key,
                           const std::string& rule) const;

  // Scalars.
  std::string String(const Field& f) const;
  std::string Name(const Field& f) const;  // a non-empty string
  std::string PlainName(const Field& f) const;
  long long Integer(const Field& f, long long min_value, long long max_value) const;
  int Int(const Field& f, int min_value) const {
    return static_cast<int>(Integer(f, min_value, INT_MAX));
  }
  // An efficiency: a fraction of a peak in [limits::kMinEfficiency, 1].
  double Efficiency(const Field& f) const;
  bool AutoOrOff(const Field& f) const;  // "auto": true, "off": false
  // A quantity with a unit, in [min_value, max_value] (core/limits.h); `range` is that
  // interval as the message gives it.
  template <typename Parser>
  double Quantity(const Field& f, Parser parse, double min_value, double max_value,
                  const char* range) const;
  double Bandwidth(const Field& f) const {
    return Quantity(f, ParseBandwidthBps, limits::kMinBandwidthBps, limits::kMaxBandwidthBps,
                    "[1kB/s, 1PB/s]");
  }
  double Seconds(const Field& f) const {
    return Quantity(f, ParseSeconds, 0, limits::kMaxLatencySeconds, "[0s, 1s]");
  }
  double Bytes(const Field& f) const {
    return Quantity(f, ParseBytes, limits::kMinMemoryBytes, limits::kMaxMemoryBytes, "[1MB, 1PB]");
  }
  double Flops(const Field& f) const {
    return Quantity(f, ParseFlops, limits::kMinPeakFlops, limits::kMaxPeakFlops,
                    "[1GFLOPS, 1EFLOPS]");
  }
  std::vector<Field> List(const Field& f, bool non_empty) const;
  std::string FirstAt(const YAML::Node& n) const {
    return "first at line " + std::to_string(Where(n).line);
  }

  // Sections.
  // A link map: bandwidth (the line rate), latency, duplex and efficiency (default: the
  // achievable fraction for `kind` in a server of `gpu` GPUs, core/link_efficiency.h).
  LinkSpec Link(const Map& m, LinkKind kind, const std::string& gpu) const;
  // Sets a link's achievable rate from its line rate and `efficiency` (if given) or `fallback`.
  void Derate(const Map& m, double fallback, LinkSpec* link) const;
  // `duplex: full | half`, if given.
  void ReadDuplex(const Map& m, LinkSpec* link) const;
  std::vector<GpuSpec> CustomGpus(const Field& f) const;
  ClusterSpec Cluster(const Field& f) const;
  GroupRead Group(const Field& f, const std::vector<GpuSpec>& custom,
                  std::vector<GpuSpec>* kinds) const;
  NvLinkSpec NvLink(const Field& f, int gpus, bool has_nvswitch, bool has_pcie,
                    const std::string& gpu) const;
  PcieSpec Pcie(const Field& f, int gpus, const std::string& gpu) const;
  NetworkSpec Network(const Field& f) const;
  double Ratio(const Field& f) const;
  ModelSpec Model(const Field& f) const;
  TrainingSpec Training(const Field& f) const;
  SimulationSpec Simulation(const Field& f) const;
  CollectiveSettings Collectives(const Field& f) const;
  std::vector<StrategySpec> Strategies(const Field& f) const;

  std::string file_;
};

Loader::Map::Map(const Loader& loader, const Field& self, const std::vector<std::string>& known,
                 bool any_key)
    : loader_(loader), self_(self) {
  if (!self.value.IsMap()) {
    std::string rule = "must be a map, not " + KindOf(self.value);
    if (!known.empty()) rule += " (keys: " + Join(known) + ")";
    loader.Fail(self, rule);
  }
  for (const auto& kv : self.value) {
    const YAML::Node& key = kv.first;
    if (!key.IsScalar()) loader.FailAt(key, self.path, "keys must be plain strings");
    std::string name = key.Scalar();
    Field entry{PathOf(name), key, kv.second};
    for (const auto& [seen, earlier] : entries_) {
      if (seen == name)
        loader.FailAt(key, entry.path, "duplicate key (" + loader.FirstAt(earlier.key) + ")");
    }
    if (!any_key && std::find(known.begin(), known.end(), name) == known.end()) {
      loader.FailAt(key, entry.path, "unknown key (known: " + Join(known) + ")");
    }
    entries_.emplace_back(name, entry);
  }
}

std::optional<Field> Loader::Map::Get(const std::string& key) const {
  for (const auto& [name, field] : entries_) {
    if (name == key) return field;
  }
  return std::nullopt;
}

Field Loader::Map::Require(const std::string& key, const std::string& why) const {
  std::optional<Field> f = Get(key);
  if (!f) {
    loader_.FailAt(self_.value.IsNull() ? self_.key : self_.value, PathOf(key),
                   "required field missing" + (why.empty() ? "" : " (" + why + ")"));
  }
  return *f;
}

SourceLocation Loader::Where(const YAML::Node& n) const {
  YAML::Mark m = n.Mark();
  if (m.is_null()) return SourceLocation{file_, 0, 0};
  return SourceLocation{file_, m.line + 1, m.column + 1};
}

void Loader::Fail(const Field& f, const std::string& rule) const {
  throw ConfigError(WhereOf(f), f.path, f.value.IsScalar() ? f.value.Scalar() : "", rule);
}

void Loader::FailAt(const YAML::Node& at, const std::string& key, const std::string& rule) const {
  throw ConfigError(Where(at), key, "", rule);
}

std::string Loader::String(const Field& f) const {
  if (!f.value.IsScalar()) Fail(f, "must be a string, not " + KindOf(f.value));
  return f.value.Scalar();
}

bool Loader::AutoOrOff(const Field& f) const {
  const std::string v = String(f);
  if (v != "auto" && v != "off") Fail(f, "must be one of: auto, off");
  return v == "auto";
}

std::string Loader::Name(const Field& f) const {
  std::string s = String(f);
  if (s.empty()) Fail(f, "must not be empty");
  return s;
}

std::string Loader::PlainName(const Field& f) const {
  std::string s = String(f);
  if (!IsPlainName(s)) {
    Fail(f,
         "must match [A-Za-z0-9_-][A-Za-z0-9._-]* and be at most 128 characters (it names "
         "output files)");
  }
  return s;
}

long long Loader::Integer(const Field& f, long long min_value, long long max_value) const {
  long long v = 0;
  const bool parsed = f.value.IsScalar() && ParseInteger(f.value.Scalar(), &v);
  if (parsed && v > max_value && max_value == INT_MAX) {
    // Counts are held as int: say so rather than call 2^31 "not an integer".
    Fail(f, "must be at most 2147483647 (counts are 32-bit; docs/limits.md)");
  }
  if (!parsed || v < min_value || v > max_value) {
    Fail(f, max_value == INT_MAX ? "must be an integer >= " + std::to_string(min_value)
                                 : "must be an integer in [" + std::to_string(min_value) + ", " +
                                       std::to_string(max_value) + "]");
  }
  return v;
}

double Loader::Efficiency(const Field& f) const {
  double v = 0;
  if (!f.value.IsScalar() || !ParseNumber(f.value.Scalar(), &v) || v < limits::kMinEfficiency ||
      v > 1) {
    Fail(f, "must be a number in [0.01, 1] (a fraction of the peak)");
  }
  return v;
}

template <typename Parser>
double Loader::Quantity(const Field& f, Parser parse, double min_value, double max_value,
                        const char* range) const {
  std::string text = String(f);
  double v = 0;
  try {
    v = parse(text);
  } catch (const UnitError& e) {
    Fail(f, e.what());
  }
  if (min_value > 0 && v <= 0) Fail(f, "must be greater than 0");
  if (v < min_value || v > max_value) {
    Fail(f, std::string("must be in ") + range + " (docs/limits.md)");
  }
  return v;
}

std::vector<Field> Loader::List(const Field& f, bool non_empty) const {
  if (!f.value.IsSequence()) Fail(f, "must be a list, not " + KindOf(f.value));
  if (non_empty && f.value.size() == 0) Fail(f, "must not be empty");
  std::vector<Field> items;
  for (size_t i = 0; i < f.value.size(); ++i) {
    YAML::Node item = f.value[i];
    items.push_back(Field{f.path + "[" + std::to_string(i) + "]", item, item});
  }
  return items;
}

LinkSpec Loader::Link(const Map& m, LinkKind kind, const std::string& gpu) const {
  LinkSpec link;
  link.line_Bps = Bandwidth(m.Require("bandwidth"));
  if (auto f = m.Get("latency")) link.latency_s = Seconds(*f);
  ReadDuplex(m, &link);
  Derate(m, DefaultLinkEfficiency(kind, gpu), &link);
  return link;
}

void Loader::Derate(const Map& m, double fallback, LinkSpec* link) const {
  link->efficiency = fallback;
  if (auto e = m.Get("efficiency")) {
    link->efficiency = Efficiency(*e);
    link->efficiency_given = true;
  }
  link->bandwidth_Bps = link->line_Bps * link->efficiency;
}

void Loader::ReadDuplex(const Map& m, LinkSpec* link) const {
  auto f = m.Get("duplex");
  if (!f) return;
  const std::string mode = f->value.IsScalar() ? f->value.Scalar() : "";
  if (mode != "full" && mode != "half") Fail(*f, "must be \"full\" or \"half\"");
  link->full_duplex = mode == "full";
}

std::vector<GpuSpec> Loader::CustomGpus(const Field& f) const {
  std::vector<GpuSpec> gpus;
  std::vector<YAML::Node> name_nodes;
  for (const Field& item : List(f, false)) {
    Map m(*this, item, {"name", "peak", "memory", "memory_bandwidth", "source"});
    GpuSpec g;
    Field name = m.Require("name");
    g.name = Name(name);
    if (FindBuiltinGpu(g.name) != nullptr) {
      Fail(name, "is a built-in GPU kind; give the custom GPU another name");
    }
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].name == g.name) Fail(name, "duplicate GPU name (" + FirstAt(name_nodes[i]) + ")");
    }
    Map peak(*this, m.Require("peak"), {}, /*any_key=*/true);
    if (peak.entries().empty()) Fail(peak.self(), "must give the peak of at least one dtype");
    for (const auto& [dtype_name, value] : peak.entries()) {
      std::optional<DType> d = ParseDType(dtype_name);
      if (!d)
        FailAt(value.key, value.path, "unknown dtype (known: fp32, tf32, fp16, bf16, fp8, int8)");
      g.peak_flops[*d] = Flops(value);
    }
    g.memory_bytes = Bytes(m.Require("memory"));
    g.memory_bandwidth_Bps = Bandwidth(m.Require("memory_bandwidth"));
    g.source = m.Get("source") ? Name(*m.Get("source")) : "custom GPU defined in " + file_;
    gpus.push_back(g);
    name_nodes.push_back(name.value);
  }
  return gpus;
}

ClusterSpec Loader::Cluster(const Field& f) const {
  Map m(*this, f, {"gpus", "servers", "network"});
  std::vector<GpuSpec> custom;
  if (auto gpus = m.Get("gpus")) custom = CustomGpus(*gpus);

  ClusterSpec cluster;
  std::vector<GroupRead> groups;
  long long total_gpus = 0;
  for (const Field& item : List(m.Require("servers"), true)) {
    GroupRead g = Group(item, custom, &cluster.gpu_kinds);
    for (const GroupRead& earlier : groups) {
      if (earlier.group.name == g.group.name) {
        Fail(g.name, "duplicate server group name (" + FirstAt(earlier.name.value) + ")");
      }
    }
    groups.push_back(g);
    cluster.groups.push_back(g.group);
    // Summed wide: two groups of 2^31 - 1 servers would overflow an int (found by fuzzing).
    total_gpus += static_cast<long long>(g.group.count) * g.group.gpus_per_server;
    if (total_gpus > limits::kMaxGpus) {
      Fail(item, "brings the cluster to " + std::to_string(total_gpus) + " GPUs; at most " +
                     std::to_string(limits::kMaxGpus) + " (docs/limits.md)");
    }
  }

  int servers = cluster.NumServers();
  if (servers > 1) {
    std::string why = "a cluster of " + std::to_string(servers) + " servers needs it";
    for (const GroupRead& g : groups) {
      if (!g.has_nics)
        FailAt(g.field.value, g.field.path + ".nics", "required field missing (" + why + ")");
    }
    cluster.network = Network(m.Require("network", why));
  } else if (auto network = m.Get("network")) {
    cluster.network = Network(*network);
  }
  return cluster;
}

Loader::GroupRead Loader::Group(const Field& f, const std::vector<GpuSpec>& custom,
                                std::vector<GpuSpec>* kinds) const {
  Map m(*this, f,
        {"name", "count", "gpu", "gpus_per_server", "nvswitch", "nvlink", "pcie", "nics"});
  GroupRead read;
  read.field = f;
  ServerGroup& g = read.group;
  read.name = m.Require("name");
  g.name = Name(read.name);
  if (auto count = m.Get("count")) g.count = Int(*count, 1);

  Field gpu = m.Require("gpu");
  g.gpu = Name(gpu);
  const GpuSpec* spec = FindBuiltinGpu(g.gpu);
  for (const GpuSpec& c : custom) {
    if (c.name == g.gpu) spec = &c;
  }
  if (spec == nullptr) {
    std::vector<std::string> known;
    for (const GpuSpec& c : BuiltinGpuCatalog()) known.push_back(c.name);
    for (const GpuSpec& c : custom) known.push_back(c.name);
    Fail(gpu, "unknown GPU kind (known: " + Join(known) + ")");
  }
  bool seen =
      std::any_of(kinds->begin(), kinds->end(), [&](const GpuSpec& k) { return k.name == g.gpu; });
  if (!seen) kinds->push_back(*spec);

  g.gpus_per_server = Int(m.Require("gpus_per_server"), 1);
  if (auto nvswitch = m.Get("nvswitch")) {
    g.nvswitch =
        NvSwitchSpec{Link(Map(*this, *nvswitch, {"bandwidth", "latency", "duplex", "efficiency"}),
                          LinkKind::kNvSwitch, g.gpu)};
  }
  if (auto pcie = m.Get("pcie")) g.pcie = Pcie(*pcie, g.gpus_per_server, g.gpu);
  if (auto nvlink = m.Get("nvlink")) {
    g.nvlink =
        NvLink(*nvlink, g.gpus_per_server, g.nvswitch.has_value(), g.pcie.has_value(), g.gpu);
  }
  if (auto nics = m.Get("nics")) {
    Map nm(*this, *nics, {"count", "bandwidth", "latency", "duplex", "efficiency"});
    if (auto count = nm.Get("count")) {
      g.nics.count = Int(*count, 1);
      // GPUs share NICs in equal contiguous blocks (cluster.h).
      if (g.gpus_per_server % g.nics.count != 0) {
        Fail(*count, "must divide gpus_per_server (" + std::to_string(g.gpus_per_server) + ")");
      }
    }
    g.nics.link = Link(nm, LinkKind::kNic, g.gpu);
    read.has_nics = true;
  }
  if (g.gpus_per_server > 1 && !g.nvswitch && !g.nvlink && !g.pcie) {
    FailAt(f.value, f.path,
           "a server with " + std::to_string(g.gpus_per_server) +
               " GPUs needs nvswitch, nvlink or pcie");
  }
  return read;
}

NvLinkSpec Loader::NvLink(const Field& f, int gpus, bool has_nvswitch, bool has_pcie,
                          const std::string& gpu) const {
  Map m(*this, f, {"pairs", "bandwidth", "latency", "duplex", "efficiency"});
  NvLinkSpec spec;
  Field pairs = m.Require("pairs");
  if (pairs.value.IsScalar()) {
    if (pairs.value.Scalar() != "all") Fail(pairs, "must be \"all\" or a list of [a, b] pairs");
    for (int a = 0; a < gpus; ++a) {
      for (int b = a + 1; b < gpus; ++b) spec.pairs.emplace_back(a, b);
    }
  } else {
    std::vector<YAML::Node> pair_nodes;
    for (const Field& item : List(pairs, true)) {
      if (!item.value.IsSequence() || item.value.size() != 2) {
        Fail(item, "must be a pair [a, b] of GPU indices in the server");
      }
      std::vector<Field> ends = List(item, true);
      int a = static_cast<int>(Integer(ends[0], 0, gpus - 1));
      int b = static_cast<int>(Integer(ends[1], 0, gpus - 1));
      if (a == b) Fail(item, "connects GPU " + std::to_string(a) + " to itself");
      for (size_t i = 0; i < spec.pairs.size(); ++i) {
        auto [x, y] = spec.pairs[i];
        if ((x == a && y == b) || (x == b && y == a)) {
          Fail(item, "duplicate pair (" + FirstAt(pair_nodes[i]) + ")");
        }
      }
      spec.pairs.emplace_back(a, b);
      pair_nodes.push_back(item.value);
    }
  }
  // Without a switch or a PCIe tree, GPUs with no direct link would have no route at all.
  if (!has_nvswitch && !has_pcie) {
    std::set<std::pair<int, int>> linked;
    for (auto [a, b] : spec.pairs) linked.emplace(std::min(a, b), std::max(a, b));
    for (int a = 0; a < gpus; ++a) {
      for (int b = a + 1; b < gpus; ++b) {
        if (linked.count({a, b}) == 0) {
          Fail(pairs, "leaves GPUs " + std::to_string(a) + " and " + std::to_string(b) +
                          " without a link; list every pair, write \"all\", or add pcie to "
                          "carry the traffic between them");
        }
      }
    }
  }
  spec.link = Link(m, LinkKind::kNvLink, gpu);
  return spec;
}

PcieSpec Loader::Pcie(const Field& f, int gpus, const std::string& gpu) const {
  Map m(*this, f,
        {"gpus_per_switch", "sockets", "bandwidth", "latency", "duplex", "efficiency", "uplink",
         "socket_link"});
  PcieSpec spec;
  if (auto per_switch = m.Get("gpus_per_switch")) {
    spec.gpus_per_switch = Int(*per_switch, 1);
    if (gpus % spec.gpus_per_switch != 0) {
      Fail(*per_switch, "must divide gpus_per_server (" + std::to_string(gpus) + ")");
    }
  }
  int switches = gpus / spec.gpus_per_switch;
  if (auto sockets = m.Get("sockets")) {
    spec.sockets = Int(*sockets, 1);
    // Switches are spread evenly over the sockets (cluster.h).
    if (switches % spec.sockets != 0) {
      Fail(*sockets, "must divide the number of PCIe switches (" + std::to_string(switches) +
                         " = gpus_per_server / gpus_per_switch)");
    }
  }
  spec.link = Link(m, LinkKind::kPcie, gpu);
  spec.uplink = spec.link;
  if (auto uplink = m.Get("uplink")) {
    // Each field not given is the PCIe link's, efficiency included.
    Map um(*this, *uplink, {"bandwidth", "latency", "duplex", "efficiency"});
    if (auto bw = um.Get("bandwidth")) spec.uplink.line_Bps = Bandwidth(*bw);
    if (auto lat = um.Get("latency")) spec.uplink.latency_s = Seconds(*lat);
    ReadDuplex(um, &spec.uplink);
    Derate(um, spec.link.efficiency, &spec.uplink);
  }
  if (spec.sockets > 1) {
    Field socket_link = m.Require("socket_link", "sockets is " + std::to_string(spec.sockets));
    spec.socket_link =
        Link(Map(*this, socket_link, {"bandwidth", "latency", "duplex", "efficiency"}),
             LinkKind::kSocket, gpu);
  } else if (auto socket_link = m.Get("socket_link")) {
    spec.socket_link =
        Link(Map(*this, *socket_link, {"bandwidth", "latency", "duplex", "efficiency"}),
             LinkKind::kSocket, gpu);
  }
  return spec;
}

NetworkSpec Loader::Network(const Field& f) const {
  Map m(*this, f, {"kind", "latency", "servers_per_leaf", "oversubscription"});
  NetworkSpec spec;
  Field kind = m.Require("kind");
  std::string k = String(kind);
  if (k == "single_switch") {
    spec.kind = NetworkKind::kSingleSwitch;
    for (const char* key : {"servers_per_leaf", "oversubscription"}) {
      if (auto extra = m.Get(key)) {
        Fail(*extra, "only allowed with kind leaf_spine or rail_optimized");
      }
    }
  } else if (k == "leaf_spine") {
    spec.kind = NetworkKind::kLeafSpine;
    spec.servers_per_leaf = Int(m.Require("servers_per_leaf", "kind leaf_spine needs it"), 1);
    if (auto ratio = m.Get("oversubscription")) spec.oversubscription = Ratio(*ratio);
  } else if (k == "rail_optimized") {
    spec.kind = NetworkKind::kRailOptimized;
    if (auto extra = m.Get("servers_per_leaf")) {
      Fail(*extra, "not allowed with kind rail_optimized (NIC k of every server is on leaf k)");
    }
    if (auto ratio = m.Get("oversubscription")) spec.oversubscription = Ratio(*ratio);
  } else {
    Fail(kind, "must be one of: single_switch, leaf_spine, rail_optimized");
  }
  if (auto latency = m.Get("latency")) spec.switch_latency_s = Seconds(*latency);
  return spec;
}

// "2", "1.5" or "2:1" -> a downlink/uplink ratio >= 1.
double Loader::Ratio(const Field& f) const {
  const std::string rule = "must be a number in [1, 1000] or a ratio like \"2:1\"";
  std::string text = f.value.IsScalar() ? f.value.Scalar() : "";
  double ratio = 0;
  size_t colon = text.find(':');
  if (colon == std::string::npos) {
    if (!ParseNumber(text, &ratio)) Fail(f, rule);
  } else {
    double down = 0;
    double up = 0;
    if (!ParseNumber(text.substr(0, colon), &down) || !ParseNumber(text.substr(colon + 1), &up) ||
        up <= 0) {
      Fail(f, rule);
    }
    ratio = down / up;
  }
  if (!(ratio >= 1 && ratio <= limits::kMaxOversubscription)) Fail(f, rule);
  return ratio;
}

ModelSpec Loader::Model(const Field& f) const {
  const std::vector<std::string> common = {"preset", "kind", "recompute", "recompute_layers"};
  std::vector<std::string> all = common;
  for (const std::string& kind : ModelKinds()) {
    for (const std::string& key : ModelKeysOf(kind)) {
      if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
    }
  }
  Map m(*this, f, all);
  ModelSpec spec;
  const std::optional<Field> kind = m.Get("kind");
  if (kind) {
    spec.kind = String(*kind);
    const std::vector<std::string>& kinds = ModelKinds();
    if (std::find(kinds.begin(), kinds.end(), spec.kind) == kinds.end()) {
      Fail(*kind, "unknown model kind (known: " + Join(kinds) + ")");
    }
  }
  if (auto preset = m.Get("preset")) {
    const ModelSpec* found = FindModelPreset(String(*preset));
    if (found == nullptr) {
      Fail(*preset, "unknown preset (known: " + Join(ModelPresetNames()) + ")");
    }
    // An MoE model is GPT-style: a GPT preset gives its dense dimensions.
    const bool moe_of_gpt = kind && spec.kind == "moe" && found->kind == "gpt";
    if (kind && spec.kind != found->kind && !moe_of_gpt) {
      std::vector<std::string> same;
      for (const std::string& name : ModelPresetNames()) {
        if (FindModelPreset(name)->kind == spec.kind) same.push_back(name);
      }
      Fail(*preset, "is a " + found->kind + " preset, not " + spec.kind +
                        (same.empty() ? "" : " (" + spec.kind + " presets: " + Join(same) + ")"));
    }
    const std::string chosen = spec.kind;
    spec = *found;
    if (moe_of_gpt) spec.kind = chosen;
  }
  spec.where = Where(f.key);
  const bool custom = spec.preset.empty();

  // A key the kind does not use is an error, not ignored.
  const std::vector<std::string> own = ModelKeysOf(spec.kind);
  for (const std::string& key : all) {
    auto field = m.Get(key);
    if (!field || std::find(common.begin(), common.end(), key) != common.end() ||
        std::find(own.begin(), own.end(), key) != own.end()) {
      continue;
    }
    std::vector<std::string> users;
    for (const std::string& k : ModelKinds()) {
      const std::vector<std::string> keys = ModelKeysOf(k);
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) users.push_back(k);
    }
    FailAt(field->key, field->path,
           "only used by kind " + Join(users) + " (this model is " + spec.kind + ")");
  }
  auto positive = [&](const char* key, int* target, const char* why) {
    if (auto value = m.Get(key)) {
      *target = Int(*value, 1);
    } else if (custom && why != nullptr) {
      m.Require(key, why);
    }
  };

  if (IsTransformerKind(spec.kind)) {
    const std::pair<const char*, int*> dims[] = {{"layers", &spec.layers},
                                                 {"hidden", &spec.hidden},
                                                 {"heads", &spec.heads},
                                                 {"sequence", &spec.sequence},
                                                 {"vocabulary", &spec.vocabulary}};
    for (const auto& [key, target] : dims) positive(key, target, "or name a preset");
    positive("ffn_hidden", &spec.ffn_hidden, nullptr);
    if (spec.hidden % spec.heads != 0) {
      // Presets are consistent, so an override made it wrong: blame the field that was written.
      if (auto heads = m.Get("heads")) {
        Fail(*heads, "must divide hidden (" + std::to_string(spec.hidden) + ")");
      }
      Fail(*m.Get("hidden"), "must be a multiple of heads (" + std::to_string(spec.heads) + ")");
    }
  }
  if (spec.kind == "llama") {
    positive("kv_heads", &spec.kv_heads, nullptr);
    if (spec.kv_heads == 0) spec.kv_heads = spec.heads;
    if (spec.heads % spec.kv_heads != 0) {
      if (auto kv = m.Get("kv_heads")) {
        Fail(*kv, "must divide heads (" + std::to_string(spec.heads) + ")");
      }
      Fail(*m.Get("heads"),
           "must be a multiple of kv_heads (" + std::to_string(spec.kv_heads) + ")");
    }
  }
  if (spec.kind == "moe") {
    spec.experts = Int(m.Require("experts", "kind moe needs it"), 1);
    spec.top_k = 1;  // Switch Transformer routing (Fedus et al. 2022)
    if (auto top_k = m.Get("top_k")) {
      spec.top_k = Int(*top_k, 1);
      if (spec.top_k > spec.experts) {
        Fail(*top_k, "must be <= experts (" + std::to_string(spec.experts) + ")");
      }
    }
    spec.capacity_factor = 1.25;  // Fedus et al. 2022, Switch Transformer's training setting
    if (auto cf = m.Get("capacity_factor")) {
      double v = 0;
      if (!cf->value.IsScalar() || !ParseNumber(cf->value.Scalar(), &v) || v <= 0) {
        Fail(*cf, "must be a number greater than 0");
      }
      spec.capacity_factor = v;
    }
  }
  if (spec.kind == "resnet50" || spec.kind == "vgg16") {
    if (spec.image_size == 0) spec.image_size = 224;
    if (spec.classes == 0) spec.classes = 1000;
    if (auto size = m.Get("image_size")) {
      spec.image_size = Int(*size, 32);
      if (spec.image_size % 32 != 0) {
        Fail(*size, "must be a multiple of 32 (the network halves it five times)");
      }
    }
    positive("classes", &spec.classes, nullptr);
  }
  if (spec.kind == "graphsage") {
    const char* why = "kind graphsage needs it, or name a preset";
    if (auto fanouts = m.Get("fanouts")) {
      spec.fanouts.clear();
      for (const Field& item : List(*fanouts, true)) spec.fanouts.push_back(Int(item, 1));
    } else if (custom) {
      m.Require("fanouts", why);
    }
    spec.layers = static_cast<int>(spec.fanouts.size());
    positive("feature_dim", &spec.feature_dim, why);
    positive("hidden", &spec.hidden, why);
    positive("classes", &spec.classes, why);
    if (auto vertices = m.Get("graph_vertices")) {
      spec.graph_vertices = static_cast<double>(Integer(*vertices, 1, LLONG_MAX));
    } else if (custom) {
      m.Require("graph_vertices", why);
    }
    if (auto degree = m.Get("graph_degree")) {
      double v = 0;
      if (!degree->value.IsScalar() || !ParseNumber(degree->value.Scalar(), &v) || v <= 0) {
        Fail(*degree, "must be a number greater than 0");
      }
      spec.graph_degree = v;
    } else if (custom) {
      m.Require("graph_degree", why);
    }
  }

  if (auto recompute = m.Get("recompute")) {
    const std::string v = String(*recompute);
    if (v == "none") {
      spec.recompute = Recompute::kNone;
    } else if (v == "full") {
      spec.recompute = Recompute::kFull;
    } else if (v == "selective") {
      if (!IsTransformerKind(spec.kind)) {
        Fail(*recompute,
             "selective recomputation drops attention activations: only for kinds "
             "gpt, bert, llama, moe");
      }
      spec.recompute = Recompute::kSelective;
    } else {
      Fail(*recompute, "must be one of: none, selective, full");
    }
  }
  if (auto count = m.Get("recompute_layers")) {
    if (!IsTransformerKind(spec.kind)) {
      Fail(*count, "only for kinds gpt, bert, llama, moe (it counts transformer layers)");
    }
    spec.recompute_layers = Int(*count, 0);
    if (spec.recompute_layers > spec.layers) {
      Fail(*count, "must be <= layers (" + std::to_string(spec.layers) + ")");
    }
    if (spec.recompute == Recompute::kNone && spec.recompute_layers > 0) {
      Fail(*count, "needs recompute: selective or full");
    }
  }
  return spec;
}

TrainingSpec Loader::Training(const Field& f) const {
  Map m(*this, f, {"global_batch", "micro_batch", "precision", "iterations", "seed"});
  TrainingSpec spec;
  spec.global_batch = Int(m.Require("global_batch"), 1);
  if (auto micro = m.Get("micro_batch")) {
    spec.micro_batch = Int(*micro, 1);
    if (spec.global_batch % spec.micro_batch != 0) {
      Fail(*micro, "must divide global_batch (" + std::to_string(spec.global_batch) + ")");
    }
  }
  if (auto precision = m.Get("precision")) {
    std::optional<DType> d = ParseDType(String(*precision));
    if (!d) Fail(*precision, "unknown precision (known: fp32, tf32, fp16, bf16, fp8, int8)");
    spec.precision = *d;
  }
  if (auto iterations = m.Get("iterations")) {
    Map im(*this, *iterations, {"warmup", "measured"});
    // Bounded so that warm-up + measured never overflows an int (docs/limits.md).
    if (auto warmup = im.Get("warmup")) {
      spec.warmup_iterations = static_cast<int>(Integer(*warmup, 0, limits::kMaxIterations));
    }
    if (auto measured = im.Get("measured")) {
      spec.measured_iterations = static_cast<int>(Integer(*measured, 1, limits::kMaxIterations));
    }
  }
  if (auto seed = m.Get("seed")) {
    std::string text = seed->value.IsScalar() ? seed->value.Scalar() : "";
    bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
    errno = 0;
    unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
    if (!digits || errno == ERANGE) Fail(*seed, "must be an integer in [0, 2^64 - 1]");
    spec.seed = v;
  }
  return spec;
}

SimulationSpec Loader::Simulation(const Field& f) const {
  Map m(*this, f,
        {"compute_efficiency", "memory_efficiency", "kernel_launch", "fidelity", "collectives",
         "calibration", "fold", "fuse", "max_tasks"});
  SimulationSpec spec;
  if (auto e = m.Get("compute_efficiency")) spec.compute_efficiency = Efficiency(*e);
  if (auto e = m.Get("memory_efficiency")) spec.memory_efficiency = Efficiency(*e);
  if (auto launch = m.Get("kernel_launch")) spec.kernel_launch_s = Seconds(*launch);
  if (auto fidelity = m.Get("fidelity")) {
    const std::string v = String(*fidelity);
    if (v == "step") {
      spec.fidelity = Fidelity::kStep;
    } else if (v == "stream") {
      spec.fidelity = Fidelity::kStream;
    } else if (v == "analytic") {
      spec.fidelity = Fidelity::kAnalytic;
    } else {
      Fail(*fidelity, "must be one of: step, stream, analytic");
    }
  }
  if (auto fold = m.Get("fold")) spec.fold = AutoOrOff(*fold);
  if (auto fuse = m.Get("fuse")) spec.fuse = AutoOrOff(*fuse);
  if (auto limit = m.Get("max_tasks")) {
    long long v = 0;
    const bool is_auto = limit->value.IsScalar() && limit->value.Scalar() == "auto";
    if (!is_auto && (!limit->value.IsScalar() || !ParseInteger(limit->value.Scalar(), &v) ||
                     v < 1 || v > 0x7fffffff)) {
      Fail(*limit, "must be auto or an integer in [1, 2147483647]");
    }
    spec.max_tasks = is_auto ? 0 : v;
  }
  if (auto coll = m.Get("collectives")) spec.collectives = Collectives(*coll);
  if (auto calibration = m.Get("calibration")) {
    // Relative to the scenario file, so a scenario and its calibration move together.
    std::filesystem::path path = Name(*calibration);
    if (path.is_relative()) path = std::filesystem::path(file_).parent_path() / path;
    spec.calibration = LoadCalibrationFile(path.lexically_normal().string());
  }
  return spec;
}

CollectiveSettings Loader::Collectives(const Field& f) const {
  Map m(*this, f, {"algorithms", "protocol", "channels"});
  CollectiveSettings s;
  if (auto algorithms = m.Get("algorithms")) {
    std::vector<std::string> kinds;
    for (CollectiveKind k : kAllCollectiveKinds) kinds.emplace_back(ToString(k));
    Map am(*this, *algorithms, kinds);
    for (CollectiveKind k : kAllCollectiveKinds) {
      auto a = am.Get(std::string(ToString(k)));
      if (!a) continue;
      const std::string name = String(*a);
      if (!IsCollectiveAlgorithm(k, name)) {
        Fail(*a, "must be one of: " + Join(CollectiveAlgorithms(k)));
      }
      s.algorithm[k] = name;
    }
  }
  if (auto protocol = m.Get("protocol")) {
    s.protocol = String(*protocol);
    const auto& known = CollectiveProtocols();
    if (std::find(known.begin(), known.end(), s.protocol) == known.end()) {
      Fail(*protocol, "must be one of: " + Join(known));
    }
  }
  if (auto channels = m.Get("channels")) {
    if (channels->value.IsScalar() && channels->value.Scalar() == "auto") {
      s.channels = 0;
    } else {
      s.channels = static_cast<int>(Integer(*channels, 1, 64));
    }
  }
  return s;
}

std::vector<StrategySpec> Loader::Strategies(const Field& f) const {
  std::vector<StrategySpec> out;
  std::vector<YAML::Node> name_nodes;
  for (const Field& item : List(f, true)) {
    Map m(*this, item, {"name", "kind", "options"});
    StrategySpec s;
    Field name = m.Require("name");
    s.name = PlainName(name);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].name == s.name) {
        Fail(name, "duplicate strategy name (" + FirstAt(name_nodes[i]) + ")");
      }
    }
    s.kind = Name(m.Require("kind"));
    s.where = Where(item.value);
    s.key_path = item.path;
    if (auto options = m.Get("options")) {
      Map om(*this, *options, {}, /*any_key=*/true);
      for (const auto& [key, value] : om.entries()) {
        if (!value.value.IsScalar()) {
          Fail(value,
               "must be a scalar (a number, a string, true or false), not " + KindOf(value.value));
        }
        s.options[key] = OptionValue{value.value.Scalar(), WhereOf(value)};
      }
    }
    out.push_back(s);
    name_nodes.push_back(name.value);
  }
  return out;
}

Scenario Loader::Load(const YAML::Node& root) const {
  Map m(*this, Field{"", root, root},
        {"name", "cluster", "model", "training", "simulation", "strategies"});
  Scenario s;
  s.name = PlainName(m.Require("name"));
  s.file = file_;
  s.cluster = Cluster(m.Require("cluster"));
  s.model = Model(m.Require("model"));
  s.training = Training(m.Require("training"));
  if (auto simulation = m.Get("simulation")) s.simulation = Simulation(*simulation);
  if (s.simulation.calibration) ApplyLinkCalibration(&*s.simulation.calibration, &s.cluster);
  s.strategies = Strategies(m.Require("strategies"));
  return s;
}

}  // namespace

Scenario LoadScenarioText(const std::string& text, const std::string& file_label) {
  return Loader(file_label).Load(yaml::ParseDocument(text, file_label).value);
}

Scenario LoadScenarioFile(const std::string& path) {
  return LoadScenarioText(ReadInputFile(path, limits::kScenarioFileBytes, "a scenario file"), path);
}

}  // namespace stratasim
