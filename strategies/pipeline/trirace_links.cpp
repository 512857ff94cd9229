#include "strategies/pipeline/trirace_links.h"

#include <algorithm>

namespace stratasim {
namespace {

std::string Str(int n) { return std::to_string(n); }

// The NIC serving a GPU: GPUs share their server's NICs in contiguous blocks.
std::string NicOf(const ClusterSpec& c, const GpuLocation& at) {
  const ServerGroup& g = c.groups[at.group];
  const int per_nic = std::max(1, g.gpus_per_server / std::max(1, g.nics.count));
  return "nic " + Str(at.server) + "." + Str(at.local / per_nic);
}

// Whether GPU-to-GPU traffic between local GPUs a and b of group g runs over the PCIe tree.
bool OverPcie(const ServerGroup& g, int a, int b) {
  if (g.nvswitch) return false;
  if (g.nvlink) {
    for (const auto& [x, y] : g.nvlink->pairs) {
      if ((x == a && y == b) || (x == b && y == a)) return false;
    }
  }
  return g.pcie.has_value();
}

}  // namespace

std::set<std::string> LinksOfTransfer(const ClusterSpec& c, int from, int to) {
  std::set<std::string> links;
  if (from == to) return links;
  const GpuLocation a = c.Locate(from), b = c.Locate(to);
  const ServerGroup& ga = c.groups[a.group];
  const ServerGroup& gb = c.groups[b.group];
  if (a.server != b.server) {
    links.insert(NicOf(c, a) + " out");
    links.insert(NicOf(c, b) + " in");
    // Between the GPU and its NIC the traffic crosses the GPU's PCIe link.
    if (ga.pcie && !ga.nvswitch) links.insert("pcie " + Str(from) + " out");
    if (gb.pcie && !gb.nvswitch) links.insert("pcie " + Str(to) + " in");
    return links;
  }
  if (OverPcie(ga, a.local, b.local)) {
    links.insert("pcie " + Str(from) + " out");
    links.insert("pcie " + Str(to) + " in");
  } else if (!ga.nvswitch) {
    links.insert("nvlink " + Str(from) + "-" + Str(to));
  }
  return links;
}

std::set<std::string> LinksOfTransfers(const ClusterSpec& c,
                                       const std::vector<std::pair<int, int>>& transfers) {
  std::set<std::string> links;
  for (const auto& [from, to] : transfers) {
    const std::set<std::string> l = LinksOfTransfer(c, from, to);
    links.insert(l.begin(), l.end());
  }
  return links;
}

std::vector<std::pair<int, int>> RingTransfers(const std::vector<int>& ranks, int rank) {
  std::vector<std::pair<int, int>> out;
  const size_t n = ranks.size();
  if (n < 2) return out;
  for (size_t i = 0; i < n; ++i) {
    const int from = ranks[i], to = ranks[(i + 1) % n];
    if (rank < 0 || from == rank || to == rank) out.emplace_back(from, to);
  }
  return out;
}

std::vector<std::pair<int, int>> AllToAllTransfers(const std::vector<int>& ranks, int rank) {
  std::vector<std::pair<int, int>> out;
  for (int from : ranks) {
    for (int to : ranks) {
      if (from == to) continue;
      if (rank < 0 || from == rank || to == rank) out.emplace_back(from, to);
    }
  }
  return out;
}

std::string SharedLink(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (const std::string& link : a) {
    if (b.count(link)) return link;
  }
  return "";
}

}  // namespace stratasim
