// What fraction of a link's line rate data actually moves at: the default a scenario's link
// gets when it gives the datasheet rate and no `efficiency` of its own (docs/links.md).
//
// NVLink and NVSwitch ports follow the per-link rate NCCL's topology code assumes for each GPU
// generation (NVIDIA/nccl src/graph/topo.h, 2.30.7: SM70/SM80 20 GB/s, SM86 12, SM90 20.6,
// SM100 40.1 per link) against the datasheet's per-link rate (25 GB/s NVLink 2-4, 14.06 on the
// RTX 3090 bridge, 50 on NVLink 5). nccl-tests on DGX A100 and H100 measure ring busbw at
// 230 and 365-370 GB/s (nccl-tests#149, nccl#1455), within 4% of those figures. PCIe follows
// NCCL's width x speed / 80 (src/graph/topo.cc: x16 Gen3 12 GB/s, Gen4 24, Gen5 48), 0.76 of
// the 128b/130b line rate at every generation. NICs: ib_write_bw measures 96.6 of 100 Gb/s
// (EDR) and 194 of 200 Gb/s (HDR); NCCL itself takes the line rate. Socket links (QPI, UPI,
// xGMI) are given as achieved figures already and keep theirs.
#ifndef STRATASIM_CORE_LINK_EFFICIENCY_H_
#define STRATASIM_CORE_LINK_EFFICIENCY_H_

#include <optional>
#include <string>

namespace stratasim {

enum class LinkKind { kNvSwitch, kNvLink, kPcie, kSocket, kNic };

const char* ToString(LinkKind kind);
std::optional<LinkKind> ParseLinkKind(const std::string& text);

// The default achievable fraction of line rate for a link of `kind` in a server of `gpu`
// GPUs (a catalog name; any other name gets the generic NVLink figure, 20 of 25 GB/s).
double DefaultLinkEfficiency(LinkKind kind, const std::string& gpu);

}  // namespace stratasim

#endif  // STRATASIM_CORE_LINK_EFFICIENCY_H_
