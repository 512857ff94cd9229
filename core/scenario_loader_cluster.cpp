// The scenario's `cluster:` section: custom GPU kinds, server groups with their links, and the
// network between servers (the format is in core/scenario_loader.cpp and
// docs/scenario-format.md).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/hardware.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "core/link_efficiency.h"
#include "core/scenario_loader_sections.h"
#include "core/text_number.h"

namespace stratasim::scenario_sections {
namespace {

using yaml::Field;
using yaml::Join;
using yaml::Map;

// The section's readers, on top of the scalar readers of the file.
class ClusterReader : public yaml::Reader {
 public:
  explicit ClusterReader(const yaml::Reader& r) : yaml::Reader(r) {}

  ClusterSpec Cluster(const Field& f) const;

 private:
  struct GroupRead {
    ServerGroup group;
    bool has_nics = false;
    Field field;  // the group's map
    Field name;   // its name, for duplicate-name errors
  };

  // A link map: bandwidth (the line rate), latency, duplex and efficiency (default: the
  // achievable fraction for `kind` in a server of `gpu` GPUs, core/link_efficiency.h).
  LinkSpec Link(const Map& m, LinkKind kind, const std::string& gpu) const;
  // Sets a link's achievable rate from its line rate and `efficiency` (if given) or `fallback`.
  void Derate(const Map& m, double fallback, LinkSpec* link) const;
  // `duplex: full | half`, if given.
  void ReadDuplex(const Map& m, LinkSpec* link) const;
  std::vector<GpuSpec> CustomGpus(const Field& f) const;
  GroupRead Group(const Field& f, const std::vector<GpuSpec>& custom,
                  std::vector<GpuSpec>* kinds) const;
  NvLinkSpec NvLink(const Field& f, int gpus, bool has_nvswitch, bool has_pcie,
                    const std::string& gpu) const;
  PcieSpec Pcie(const Field& f, int gpus, const std::string& gpu) const;
  NetworkSpec Network(const Field& f) const;
  double Ratio(const Field& f) const;
  // `cluster.stragglers` (core/stragglers.h), checked against the cluster's GPUs and servers.
  Stragglers ReadStragglers(const Field& f, const ClusterSpec& cluster) const;
  StragglerSpec Straggler(const Field& f, const ClusterSpec& cluster) const;
  // A slowdown factor: a number in [1, 1000].
  double Factor(const Field& f) const;
  // `gpus: [..]` or `servers: [..]`: distinct indices in [0, count).
  std::vector<int> Indices(const Field& f, int count) const;
};

LinkSpec ClusterReader::Link(const Map& m, LinkKind kind, const std::string& gpu) const {
  LinkSpec link;
  link.line_Bps = Bandwidth(m.Require("bandwidth"));
  if (auto f = m.Get("latency")) link.latency_s = Seconds(*f);
  ReadDuplex(m, &link);
  Derate(m, DefaultLinkEfficiency(kind, gpu), &link);
  return link;
}

void ClusterReader::Derate(const Map& m, double fallback, LinkSpec* link) const {
  link->efficiency = fallback;
  if (auto e = m.Get("efficiency")) {
    link->efficiency = Efficiency(*e);
    link->efficiency_given = true;
  }
  link->bandwidth_Bps = link->line_Bps * link->efficiency;
}

void ClusterReader::ReadDuplex(const Map& m, LinkSpec* link) const {
  auto f = m.Get("duplex");
  if (!f) return;
  const std::string mode = f->value.IsScalar() ? f->value.Scalar() : "";
  if (mode != "full" && mode != "half") Fail(*f, "must be \"full\" or \"half\"");
  link->full_duplex = mode == "full";
}

std::vector<GpuSpec> ClusterReader::CustomGpus(const Field& f) const {
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
    g.source = m.Get("source") ? Name(*m.Get("source")) : "custom GPU defined in " + file();
    gpus.push_back(g);
    name_nodes.push_back(name.value);
  }
  return gpus;
}

ClusterSpec ClusterReader::Cluster(const Field& f) const {
  Map m(*this, f, {"gpus", "servers", "network", "stragglers"});
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
  if (auto stragglers = m.Get("stragglers"))
    cluster.stragglers = ReadStragglers(*stragglers, cluster);
  return cluster;
}

ClusterReader::GroupRead ClusterReader::Group(const Field& f, const std::vector<GpuSpec>& custom,
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
  g.gpu_path = gpu.path;
  g.gpu_where = WhereOf(gpu);
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

NvLinkSpec ClusterReader::NvLink(const Field& f, int gpus, bool has_nvswitch, bool has_pcie,
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

PcieSpec ClusterReader::Pcie(const Field& f, int gpus, const std::string& gpu) const {
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

NetworkSpec ClusterReader::Network(const Field& f) const {
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
double ClusterReader::Ratio(const Field& f) const {
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

Stragglers ClusterReader::ReadStragglers(const Field& f, const ClusterSpec& cluster) const {
  Stragglers out;
  for (const Field& item : List(f, false)) out.entries.push_back(Straggler(item, cluster));
  return out;
}

StragglerSpec ClusterReader::Straggler(const Field& f, const ClusterSpec& cluster) const {
  Map m(*this, f, {"gpus", "servers", "level", "factor", "random", "trace"});
  StragglerSpec s;
  s.where = WhereOf(f);
  s.key_path = f.path;
  auto gpus = m.Get("gpus");
  auto servers = m.Get("servers");
  if (gpus && servers) Fail(*servers, "give gpus or servers, not both");
  if (!gpus && !servers) FailAt(f.value, f.path, "needs gpus: [ranks] or servers: [indices]");
  if (gpus) {
    s.ranks = Indices(*gpus, cluster.NumGpus());
  } else {
    s.servers = Indices(*servers, cluster.NumServers());
    for (int rank = 0; rank < cluster.NumGpus(); ++rank) {
      const int server = cluster.Locate(rank).server;
      if (std::find(s.servers.begin(), s.servers.end(), server) != s.servers.end()) {
        s.ranks.push_back(rank);
      }
    }
  }
  Field level = m.Require("level");
  const std::string l = level.value.IsScalar() ? level.value.Scalar() : "";
  if (l == "compute") {
    s.level = StragglerLevel::kCompute;
  } else if (l == "link") {
    s.level = StragglerLevel::kLink;
  } else if (l == "server") {
    s.level = StragglerLevel::kServer;
    if (gpus) Fail(level, "level server selects servers: write servers: [indices], not gpus");
  } else {
    Fail(level, "must be one of: compute, link, server");
  }

  std::vector<Field> given;
  for (const char* key : {"factor", "random", "trace"}) {
    if (auto v = m.Get(key)) given.push_back(*v);
  }
  if (given.empty()) FailAt(f.value, f.path, "needs one of factor, random or trace");
  if (given.size() > 1) Fail(given[1], "give one of factor, random or trace, not several");
  // The platform divides a NIC's bandwidth once, when it is built: link and server factors
  // must be fixed (docs/scenario-format.md, "Stragglers").
  if (s.level != StragglerLevel::kCompute && !m.Get("factor")) {
    Fail(given[0], "level " + l +
                       " takes a fixed factor only (link bandwidths are set when the platform is "
                       "built); use level compute for per-iteration factors");
  }
  if (auto factor = m.Get("factor")) {
    s.draw = StragglerDraw::kFixed;
    s.factor = Factor(*factor);
  } else if (auto random = m.Get("random")) {
    Map rm(*this, *random, {"distribution", "min", "max", "median", "sigma"});
    Field dist = rm.Require("distribution");
    const std::string d = dist.value.IsScalar() ? dist.value.Scalar() : "";
    auto refuse = [&](const char* key) {
      if (auto extra = rm.Get(key)) Fail(*extra, "not a parameter of distribution " + d);
    };
    if (d == "uniform") {
      s.draw = StragglerDraw::kUniform;
      refuse("median");
      refuse("sigma");
      s.min = Factor(rm.Require("min", "distribution uniform needs it"));
      Field max = rm.Require("max", "distribution uniform needs it");
      s.max = Factor(max);
      if (s.max < s.min) Fail(max, "must be at least min (" + rm.Get("min")->value.Scalar() + ")");
    } else if (d == "lognormal") {
      s.draw = StragglerDraw::kLognormal;
      refuse("min");
      refuse("max");
      s.median = Factor(rm.Require("median", "distribution lognormal needs it"));
      Field sigma = rm.Require("sigma", "distribution lognormal needs it");
      double v = -1;
      if (!sigma.value.IsScalar() || !ParseNumber(sigma.value.Scalar(), &v) || v < 0 || v > 10) {
        Fail(sigma, "must be a number in [0, 10]");
      }
      s.sigma = v;
    } else {
      Fail(dist, "must be one of: uniform, lognormal");
    }
  } else {
    Field trace = *m.Get("trace");
    s.draw = StragglerDraw::kTrace;
    // Relative to the scenario file, so a scenario and its traces move together.
    std::filesystem::path path = Name(trace);
    if (path.is_relative()) path = std::filesystem::path(file()).parent_path() / path;
    s.trace_file = path.lexically_normal().string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(s.trace_file, ec)) {
      Fail(trace, "no such file: " + s.trace_file + " (a path relative to the scenario file)");
    }
    s.trace = ParseStragglerTrace(
        ReadInputFile(s.trace_file, limits::kScenarioFileBytes, "a straggler trace"), s.trace_file);
  }
  return s;
}

double ClusterReader::Factor(const Field& f) const {
  double v = 0;
  if (!f.value.IsScalar() || !ParseNumber(f.value.Scalar(), &v) || v < 1 || v > 1000) {
    Fail(f, "must be a slowdown factor, a number in [1, 1000] (2: twice as slow)");
  }
  return v;
}

std::vector<int> ClusterReader::Indices(const Field& f, int count) const {
  std::vector<int> out;
  std::vector<YAML::Node> nodes;
  for (const Field& item : List(f, true)) {
    const int v = static_cast<int>(Integer(item, 0, count - 1));
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == v) Fail(item, "listed twice (" + FirstAt(nodes[i]) + ")");
    }
    out.push_back(v);
    nodes.push_back(item.value);
  }
  return out;
}

}  // namespace

ClusterSpec ReadCluster(const yaml::Reader& r, const Field& f) {
  return ClusterReader(r).Cluster(f);
}

}  // namespace stratasim::scenario_sections
