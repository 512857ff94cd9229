#include "core/calibration.h"

#include <climits>

#include "core/cluster.h"
#include "core/limits.h"
#include "core/yaml_util.h"

namespace stratasim {
namespace {

using yaml::Field;
using yaml::Map;
using yaml::Reader;

std::vector<std::string> OpKindNames() {
  std::vector<std::string> names;
  for (OpKind k : kAllOpKinds) names.emplace_back(ToString(k));
  return names;
}

std::vector<EfficiencyBand> Bands(const Reader& r, const Field& f) {
  std::vector<EfficiencyBand> bands;
  const std::vector<Field> items = r.List(f, true);
  for (size_t i = 0; i < items.size(); ++i) {
    Map m(r, items[i], {"max_flops", "efficiency"});
    EfficiencyBand b;
    b.efficiency = r.Fraction(m.Require("efficiency"));
    const bool last = i + 1 == items.size();
    if (auto max = m.Get("max_flops")) {
      if (last) r.Fail(*max, "the last band covers the rest: leave max_flops out");
      b.max_flops = r.PositiveNumber(*max);
      if (!bands.empty() && b.max_flops <= bands.back().max_flops) {
        r.Fail(*max, "must be greater than the previous band's max_flops");
      }
    } else if (!last) {
      r.FailAt(items[i].value, items[i].path + ".max_flops",
               "required field missing (only the last band may leave it out)");
    }
    bands.push_back(b);
  }
  return bands;
}

std::map<CompressionMethod, CompressionCalibration> CompressionEntries(const Reader& r,
                                                                       const Field& f) {
  std::map<CompressionMethod, CompressionCalibration> entries;
  for (const Field& item : r.List(f, true)) {
    Map m(r, item, {"method", "encode", "decode"});
    const Field method = m.Require("method");
    const std::optional<CompressionMethod> parsed = ParseCompressionMethod(r.String(method));
    if (!parsed) {
      std::vector<std::string> known;
      for (CompressionMethod k : kAllCompressionMethods) known.emplace_back(ToString(k));
      r.Fail(method, "unknown compression method (known: " + yaml::Join(known) + ")");
    }
    if (entries.count(*parsed) > 0) r.Fail(method, "method listed twice for this GPU kind");
    CompressionCalibration c;
    c.encode_s_per_element = r.Seconds(m.Require("encode"));
    c.decode_s_per_element = r.Seconds(m.Require("decode"));
    entries[*parsed] = c;
  }
  return entries;
}

GpuCalibration GpuEntry(const Reader& r, const Field& f, const Calibration& so_far) {
  Map m(r, f,
        {"gpu", "memory_efficiency", "kernel_launch", "sm_interference", "compute", "compression"});
  GpuCalibration g;
  const Field gpu = m.Require("gpu");
  g.gpu = r.String(gpu);
  if (g.gpu.empty()) r.Fail(gpu, "must not be empty");
  if (so_far.FindGpu(g.gpu) != nullptr) r.Fail(gpu, "GPU kind listed twice");
  if (auto e = m.Get("memory_efficiency")) g.memory_efficiency = r.Fraction(*e);
  if (auto launch = m.Get("kernel_launch")) g.kernel_launch_s = r.Seconds(*launch);
  if (auto sm = m.Get("sm_interference")) g.sm_interference = r.Fraction(*sm);
  if (auto compute = m.Get("compute")) {
    const std::vector<std::string> names = OpKindNames();
    Map cm(r, *compute, names);
    for (OpKind k : kAllOpKinds) {
      if (auto table = cm.Get(std::string(ToString(k)))) g.compute[k] = Bands(r, *table);
    }
  }
  if (auto compression = m.Get("compression")) g.compression = CompressionEntries(r, *compression);
  return g;
}

CollectiveCalibration CollectiveEntry(const Reader& r, const Field& f) {
  Map m(r, f, {"kind", "gpu", "group_size", "latency", "bandwidth"});
  CollectiveCalibration c;
  const Field kind = m.Require("kind");
  const std::string name = r.String(kind);
  std::vector<std::string> known;
  bool found = false;
  for (CollectiveKind k : kAllCollectiveKinds) {
    known.emplace_back(ToString(k));
    if (ToString(k) == name) {
      c.kind = k;
      found = true;
    }
  }
  if (!found) r.Fail(kind, "unknown collective kind (known: " + yaml::Join(known) + ")");
  if (auto gpu = m.Get("gpu")) c.gpu = r.String(*gpu);
  c.group_size = static_cast<int>(r.Integer(m.Require("group_size"), 2, INT_MAX));
  c.latency_s = r.Seconds(m.Require("latency"));
  c.bandwidth_Bps = r.Bandwidth(m.Require("bandwidth"));
  return c;
}

// One of `names`, else a located error listing them.
std::string OneOf(const Reader& r, const Field& f, const std::vector<std::string>& names,
                  const std::string& what) {
  const std::string v = r.String(f);
  for (const std::string& n : names) {
    if (v == n) return v;
  }
  r.Fail(f, "unknown " + what + " (known: " + yaml::Join(names) + ")");
}

FabricCalibration FabricEntry(const Reader& r, const Field& f) {
  Map m(r, f, {"class", "protocol", "gpu", "latency", "bandwidth"});
  FabricCalibration e;
  e.link_class = OneOf(
      r, m.Require("class"),
      std::vector<std::string>(std::begin(kFabricClasses), std::end(kFabricClasses)), "link class");
  e.protocol =
      OneOf(r, m.Require("protocol"),
            std::vector<std::string>(std::begin(kFabricProtocols), std::end(kFabricProtocols)),
            "protocol");
  if (auto gpu = m.Get("gpu")) {
    e.gpu = r.String(*gpu);
    if (e.gpu.empty()) r.Fail(*gpu, "must not be empty (leave gpu out for any GPU kind)");
  }
  e.latency_s = r.Seconds(m.Require("latency"));
  e.bandwidth_Bps = r.Bandwidth(m.Require("bandwidth"));
  return e;
}

}  // namespace

std::optional<double> GpuCalibration::ComputeEfficiency(OpKind kind, double flops) const {
  auto it = compute.find(kind);
  if (it == compute.end() || it->second.empty()) return std::nullopt;
  for (const EfficiencyBand& b : it->second) {
    if (flops <= b.max_flops) return b.efficiency;
  }
  return it->second.back().efficiency;
}

const CompressionCalibration* GpuCalibration::FindCompression(CompressionMethod method) const {
  auto it = compression.find(method);
  return it == compression.end() ? nullptr : &it->second;
}

const GpuCalibration* Calibration::FindGpu(const std::string& gpu) const {
  for (const GpuCalibration& g : gpus) {
    if (g.gpu == gpu) return &g;
  }
  return nullptr;
}

const CollectiveCalibration* Calibration::FindCollective(CollectiveKind kind, int group_size,
                                                         const std::string& gpu) const {
  const CollectiveCalibration* any = nullptr;
  for (const CollectiveCalibration& c : collectives) {
    if (c.kind != kind || c.group_size != group_size) continue;
    if (c.gpu == gpu) return &c;
    if (c.gpu.empty() && any == nullptr) any = &c;
  }
  return any;
}

const FabricCalibration* Calibration::FindFabric(const std::string& link_class,
                                                 const std::string& protocol,
                                                 const std::string& gpu) const {
  const FabricCalibration* any = nullptr;
  for (const FabricCalibration& f : fabric) {
    if (f.link_class != link_class || f.protocol != protocol) continue;
    if (f.gpu == gpu) return &f;
    if (f.gpu.empty() && any == nullptr) any = &f;
  }
  return any;
}

Calibration LoadCalibrationText(const std::string& text, const std::string& file_label) {
  const Reader r(file_label);
  const Field root = yaml::ParseDocument(text, file_label);
  Map m(r, root, {"format", "version", "source", "gpus", "collectives", "links", "fabric"});
  const Field format = m.Require("format");
  if (r.String(format) != "stratasim-calibration") {
    r.Fail(format, "must be \"stratasim-calibration\"");
  }
  r.Integer(m.Require("version"), 1, 1);
  Calibration c;
  c.file = file_label;
  if (auto source = m.Get("source")) c.source = r.String(*source);
  if (auto gpus = m.Get("gpus")) {
    for (const Field& item : r.List(*gpus, false)) {
      c.gpus.push_back(GpuEntry(r, item, c));
    }
  }
  if (auto collectives = m.Get("collectives")) {
    for (const Field& item : r.List(*collectives, false)) {
      CollectiveCalibration entry = CollectiveEntry(r, item);
      for (const CollectiveCalibration& seen : c.collectives) {
        if (seen.kind == entry.kind && seen.group_size == entry.group_size &&
            seen.gpu == entry.gpu) {
          r.FailAt(item.value, item.path, "duplicate entry for this kind, group_size and gpu");
        }
      }
      c.collectives.push_back(entry);
    }
  }
  if (auto links = m.Get("links")) {
    Map lm(r, *links, {"nvswitch", "nvlink", "pcie", "socket", "nic"});
    for (const char* kind : {"nvswitch", "nvlink", "pcie", "socket", "nic"}) {
      if (auto e = lm.Get(kind)) c.link_efficiency[*ParseLinkKind(kind)] = r.Efficiency(*e);
    }
  }
  if (auto fabric = m.Get("fabric")) {
    for (const Field& item : r.List(*fabric, false)) {
      FabricCalibration entry = FabricEntry(r, item);
      for (const FabricCalibration& seen : c.fabric) {
        if (seen.link_class == entry.link_class && seen.protocol == entry.protocol &&
            seen.gpu == entry.gpu) {
          r.FailAt(item.value, item.path, "duplicate entry for this class, protocol and gpu");
        }
      }
      c.fabric.push_back(entry);
    }
  }
  return c;
}

namespace {

// The `fabric:` entries for servers of g's GPU kind: the `simple` entry's bandwidth on the
// links a class's traffic crosses (LL and LL128 run below line rate by their own documented
// caps, sim/collectives/protocol.h), every protocol's per-hop latency. Links whose scenario
// gives an efficiency keep it, as with `links:`.
void ApplyFabric(const Calibration* calibration, ServerGroup* g) {
  g->measured_intra_step_s.clear();
  g->measured_inter_step_s.clear();
  if (calibration == nullptr) return;
  auto set_rate = [](double bandwidth_Bps, LinkSpec* link) {
    if (link->efficiency_given) return;
    link->bandwidth_Bps = bandwidth_Bps;
    if (link->line_Bps > 0) link->efficiency = bandwidth_Bps / link->line_Bps;
  };
  if (const FabricCalibration* intra = calibration->FindFabric("intra", "simple", g->gpu)) {
    // The hop between two GPUs of the server: an NVSwitch port, a direct NVLink, or the
    // GPU's PCIe link (uplinks and socket links keep their figures: a measurement between
    // two processes does not say which of them it crossed).
    if (g->nvswitch) set_rate(intra->bandwidth_Bps, &g->nvswitch->link);
    if (g->nvlink) set_rate(intra->bandwidth_Bps, &g->nvlink->link);
    if (g->pcie) set_rate(intra->bandwidth_Bps, &g->pcie->link);
  }
  if (const FabricCalibration* inter = calibration->FindFabric("inter", "simple", g->gpu)) {
    set_rate(inter->bandwidth_Bps, &g->nics.link);
  }
  for (const char* protocol : kFabricProtocols) {
    if (const FabricCalibration* e = calibration->FindFabric("intra", protocol, g->gpu)) {
      g->measured_intra_step_s[protocol] = e->latency_s;
    }
    if (const FabricCalibration* e = calibration->FindFabric("inter", protocol, g->gpu)) {
      g->measured_inter_step_s[protocol] = e->latency_s;
    }
  }
}

}  // namespace

void ApplyLinkCalibration(const Calibration* calibration, ClusterSpec* cluster) {
  for (ServerGroup& g : cluster->groups) {
    auto apply = [&](LinkKind kind, LinkSpec* link) {
      if (link->line_Bps <= 0 || link->efficiency_given) return;  // built in code, or set
      link->efficiency = DefaultLinkEfficiency(kind, g.gpu);
      if (calibration != nullptr) {
        auto it = calibration->link_efficiency.find(kind);
        if (it != calibration->link_efficiency.end()) link->efficiency = it->second;
      }
      link->bandwidth_Bps = link->line_Bps * link->efficiency;
    };
    if (g.nvswitch) apply(LinkKind::kNvSwitch, &g.nvswitch->link);
    if (g.nvlink) apply(LinkKind::kNvLink, &g.nvlink->link);
    if (g.pcie) {
      apply(LinkKind::kPcie, &g.pcie->link);
      apply(LinkKind::kPcie, &g.pcie->uplink);
      apply(LinkKind::kSocket, &g.pcie->socket_link);
    }
    apply(LinkKind::kNic, &g.nics.link);
    ApplyFabric(calibration, &g);
  }
}

Calibration LoadCalibrationFile(const std::string& path) {
  return LoadCalibrationText(
      yaml::ReadFile(path, limits::kCalibrationFileBytes, "a calibration file"), path);
}

}  // namespace stratasim
