#include "sim/collectives/member_order.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

namespace stratasim::sim {

namespace {

// Whether the members of `block` (one server's) lie on their server's NVLink cycles
// (GroupMember::nvlink_cycle_positions; MakeGroupView finds them for 3 or more members).
bool OnNvLinkCycle(const GroupView& view, const std::vector<int>& block) {
  return !block.empty() && std::all_of(block.begin(), block.end(), [&](int m) {
    return !view.members[m].nvlink_cycle_positions.empty();
  });
}

// `block` (on NVLink cycles) in the order of its server's cycle `cycle`.
std::vector<int> CycleOrder(const GroupView& view, std::vector<int> block, int cycle) {
  std::sort(block.begin(), block.end(), [&](int a, int b) {
    return view.members[a].nvlink_cycle_positions[cycle] <
           view.members[b].nvlink_cycle_positions[cycle];
  });
  return block;
}

// The NVLink cycle channel `channel` walks on a server with `cycles` of them: channels 2q and
// 2q + 1 walk cycle q (mod cycles) in opposite directions, so C channels use min(C, 2 x cycles)
// NVLinks out of each GPU, as evenly as C allows.
int ChannelCycle(const GroupView& view, const std::vector<int>& block, int channel) {
  const int cycles = static_cast<int>(view.members[block[0]].nvlink_cycle_positions.size());
  return (channel / 2) % cycles;
}

}  // namespace

std::vector<std::vector<int>> ServerBlocks(const GroupView& view) {
  std::vector<std::vector<int>> blocks;
  std::map<int, size_t> block_of_server;
  for (int m = 0; m < static_cast<int>(view.members.size()); ++m) {
    auto [it, added] = block_of_server.emplace(view.members[m].server, blocks.size());
    if (added) blocks.emplace_back();
    blocks[it->second].push_back(m);
  }
  // A server whose members lie on NVLink cycles lists them in the first cycle's order.
  for (std::vector<int>& block : blocks) {
    if (OnNvLinkCycle(view, block)) block = CycleOrder(view, block, 0);
  }
  return blocks;
}

std::vector<int> Rotate(const std::vector<int>& block, int shift) {
  const int n = static_cast<int>(block.size());
  std::vector<int> out(block.size());
  for (int i = 0; i < n; ++i) out[i] = block[(i + shift % n + n) % n];
  return out;
}

int InstanceShift(int index, int count, int size) {
  return count <= 0 ? 0 : static_cast<int>(static_cast<long long>(index) * size / count);
}

std::vector<std::vector<int>> ServerRings(const GroupView& view, const std::vector<int>& block) {
  if (!OnNvLinkCycle(view, block)) return {block};
  std::vector<std::vector<int>> rings;
  const int cycles = static_cast<int>(view.members[block[0]].nvlink_cycle_positions.size());
  for (int cycle = 0; cycle < cycles; ++cycle) {
    rings.push_back(CycleOrder(view, block, cycle));
    rings.push_back(std::vector<int>(rings.back().rbegin(), rings.back().rend()));
  }
  return rings;
}

int InstanceHead(const GroupView& view, const std::vector<int>& block, int instance,
                 int instances) {
  const int size = static_cast<int>(block.size());
  std::map<int, std::vector<int>> by_nic;  // the block's members by NIC, in block order
  for (int m : block) by_nic[view.members[m].nic].push_back(m);
  const int nics = static_cast<int>(by_nic.size());
  if (nics == 1 || nics == size) return block[InstanceShift(instance, instances, size)];
  auto nic = by_nic.begin();
  std::advance(nic, instance % nics);
  return nic->second[(instance / nics) % nic->second.size()];
}

std::vector<int> InstanceChain(const GroupView& view, const std::vector<int>& block, int instance,
                               int instances) {
  return CycleChain(view, block, InstanceHead(view, block, instance, instances), instance);
}

std::vector<int> CycleChain(const GroupView& view, const std::vector<int>& block, int head,
                            int instance) {
  std::vector<int> order = block;
  if (OnNvLinkCycle(view, block)) {
    const int cycles = static_cast<int>(view.members[block[0]].nvlink_cycle_positions.size());
    order = CycleOrder(view, block, instance % cycles);
  }
  const auto at = std::find(order.begin(), order.end(), head);
  return Rotate(order, static_cast<int>(at - order.begin()));
}

namespace {

// Whether every server block has the same size and the same NIC at each position, so a
// position names one rail in every server.
bool RailsAlign(const GroupView& view, const std::vector<std::vector<int>>& blocks) {
  for (const std::vector<int>& block : blocks) {
    if (block.size() != blocks[0].size()) return false;
    for (size_t j = 0; j < block.size(); ++j) {
      if (view.members[block[j]].nic != view.members[blocks[0][j]].nic) return false;
    }
  }
  return true;
}

// The positions of a block of `k` from `enter` to `exit` (mod k), visiting each once: forward
// when exit is just before enter, backward when just after, else forward with exit moved last.
std::vector<int> Walk(int k, int enter, int exit) {
  auto mod = [k](int x) { return ((x % k) + k) % k; };
  enter = mod(enter);
  exit = mod(exit);
  std::vector<int> out;
  const bool backward = k > 2 && exit == mod(enter + 1);
  for (int i = 0; i < k; ++i) out.push_back(mod(backward ? enter - i : enter + i));
  if (!backward && exit != enter && exit != mod(enter - 1)) {
    out.erase(std::find(out.begin(), out.end(), exit));
    out.push_back(exit);
  }
  return out;
}

// Where the channels walking a server along its NVLink cycles enter and leave it: channels 2j
// and 2j + 1 walk cycle ChannelCycle from one end of its NVLink (u_j, u_j + 1) to the other,
// the first from u_j + 1 forward to u_j, the second from u_j backward to u_j + 1, so each
// NVLink carries channels both ways. Returns u_j (a position in that cycle's order) per pair j,
// chosen greedily so that the channel ends spread as evenly as they can over the NICs: on a
// DGX-1 with a NIC per GPU the edges form a perfect matching and every channel enters and
// leaves through its own NIC. (Entering at the member the plain rotation leaves from, as before,
// sent two channels into one NIC whenever two rings on different cycles met there.)
std::vector<int> PairEdges(const GroupView& view, const std::vector<int>& block, int channels) {
  const int k = static_cast<int>(block.size());
  const int pairs = (channels + 1) / 2;
  std::map<int, int> load;  // NIC -> channel ends so far
  std::vector<int> edges;
  for (int j = 0; j < pairs; ++j) {
    const std::vector<int> order = CycleOrder(view, block, ChannelCycle(view, block, 2 * j));
    auto nic = [&](int position) { return view.members[order[position % k]].nic; };
    const int start = InstanceShift(j, pairs, k);
    int best = start, best_load = -1;
    for (int i = 0; i < k; ++i) {
      const int u = (start + i) % k;
      // Growth of the sum of squared loads: spreads channel ends over the NICs, and prefers
      // an NVLink between two NICs to one inside a NIC's pair of GPUs.
      const int x = nic(u), y = nic(u + 1);
      const int l = x == y ? 4 * load[x] + 4 : 2 * load[x] + 2 * load[y] + 2;
      if (best_load < 0 || l < best_load) {
        best = u;
        best_load = l;
      }
    }
    ++load[nic(best)];
    ++load[nic(best + 1)];
    edges.push_back(best);
  }
  return edges;
}

// The cycle positions channel `channel` enters a server at and leaves it from (PairEdges).
std::pair<int, int> CycleEnds(const GroupView& view, const std::vector<int>& block, int channel,
                              int channels) {
  const int u = PairEdges(view, block, channels)[channel / 2];
  return channel % 2 == 0 ? std::pair{u + 1, u} : std::pair{u, u + 1};
}

// One server's part of channel `channel`'s ring. Plain: the block rotated by InstanceShift,
// leaving from the member before the shift. Along NVLink cycles: the channel's cycle from the
// ends CycleEnds gives.
std::vector<int> ChannelBlock(const GroupView& view, const std::vector<int>& block, int channel,
                              int channels) {
  const int size = static_cast<int>(block.size());
  if (!OnNvLinkCycle(view, block)) return Rotate(block, InstanceShift(channel, channels, size));
  const std::vector<int> order = CycleOrder(view, block, ChannelCycle(view, block, channel));
  const auto [enter, exit] = CycleEnds(view, block, channel, channels);
  std::vector<int> out;
  for (int position : Walk(size, enter, exit)) out.push_back(order[position]);
  return out;
}

}  // namespace

std::vector<int> ChannelRing(const GroupView& view, int channel, int channels) {
  std::vector<int> ring;
  std::vector<std::vector<int>> blocks = ServerBlocks(view);
  if (blocks.empty()) return ring;
  // Servers on NVLink cycles: each block along the channel's cycle.
  bool cycles = true;
  for (std::vector<int>& block : blocks) {
    if (!OnNvLinkCycle(view, block)) {
      cycles = false;
      continue;
    }
    block = CycleOrder(view, block, ChannelCycle(view, block, channel));
  }
  if (blocks.size() == 1) {
    ring = blocks[0];
    if (cycles && channel % 2 == 1) std::reverse(ring.begin(), ring.end());
    return ring;
  }
  const int servers = static_cast<int>(blocks.size());
  const int k = static_cast<int>(blocks[0].size());
  if (!view.rail_optimized || k < 2 || !RailsAlign(view, blocks)) {
    for (const std::vector<int>& block : blocks) {
      for (int m : ChannelBlock(view, block, channel, channels)) ring.push_back(m);
    }
    return ring;
  }
  // Entries alternate between rails a and b: a = c, b = c - 1 for the plain rotation's shift
  // c; along NVLink cycles the ends CycleEnds gives, so odd channels walk each server the
  // other way round from even ones and each NVLink carries channels both ways.
  int a = InstanceShift(channel, channels, k), b = a - 1;
  if (cycles) std::tie(a, b) = CycleEnds(view, blocks[0], channel, channels);
  std::vector<int> enter(servers);
  for (int p = 0; p < servers; ++p) enter[p] = p % 2 == 0 ? a : b;
  if (servers % 2 == 1 && k > 2) enter[servers - 1] = 2 * b - a;
  for (int p = 0; p < servers; ++p) {
    for (int j : Walk(k, enter[p], enter[(p + 1) % servers])) ring.push_back(blocks[p][j]);
  }
  return ring;
}

}  // namespace stratasim::sim
