#include "core/link_efficiency.h"

#include <cstring>

namespace stratasim {
namespace {

struct NvLinkGeneration {
  const char* gpu;
  double nccl_GBps;       // NCCL's per-link figure (topo.h)
  double datasheet_GBps;  // per link, per direction
};

// By catalog name (core/hardware_catalog.cpp); data/hardware.md has the datasheets.
constexpr NvLinkGeneration kNvLink[] = {
    {"V100-SXM2", 20.0, 25.0},       // NVLink 2, SM70
    {"RTX2080Ti", 20.0, 25.0},       // NVLink 2 bridge, SM75 (NCCL's SM70 figure)
    {"A100-SXM4-80GB", 20.0, 25.0},  // NVLink 3, SM80
    {"A100-SXM4-40GB", 20.0, 25.0}, {"RTX3090", 12.0, 14.0625},  // NVLink 3 bridge, 4 links, SM86
    {"H100-SXM5", 20.6, 25.0},                                   // NVLink 4, SM90
    {"H200", 20.6, 25.0},
};

constexpr double kGenericNvLink = 20.0 / 25.0;
constexpr double kPcie = 12.0 / 15.75;  // NCCL's x16 Gen3 figure over the line rate
constexpr double kNic = 0.96;           // ib_write_bw, EDR and HDR

}  // namespace

const char* ToString(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvSwitch:
      return "nvswitch";
    case LinkKind::kNvLink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kSocket:
      return "socket";
    case LinkKind::kNic:
      return "nic";
  }
  return "?";
}

std::optional<LinkKind> ParseLinkKind(const std::string& text) {
  for (LinkKind k : {LinkKind::kNvSwitch, LinkKind::kNvLink, LinkKind::kPcie, LinkKind::kSocket,
                     LinkKind::kNic}) {
    if (text == ToString(k)) return k;
  }
  return std::nullopt;
}

double DefaultLinkEfficiency(LinkKind kind, const std::string& gpu) {
  switch (kind) {
    case LinkKind::kNvSwitch:
    case LinkKind::kNvLink:
      for (const NvLinkGeneration& g : kNvLink) {
        if (gpu == g.gpu) return g.nccl_GBps / g.datasheet_GBps;
      }
      return kGenericNvLink;
    case LinkKind::kPcie:
      return kPcie;
    case LinkKind::kNic:
      return kNic;
    case LinkKind::kSocket:
      return 1.0;
  }
  return 1.0;
}

}  // namespace stratasim
