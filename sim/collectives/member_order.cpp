#include "sim/collectives/member_order.h"

#include <algorithm>
#include <map>

namespace stratasim::sim {

namespace {

// Whether the members of `block` (one server's) lie on their server's NVLink cycle
// (GroupView::nvlink_ring_position; MakeGroupView gives one only to 3 or more members).
bool OnNvLinkCycle(const GroupView& view, const std::vector<int>& block) {
  return !block.empty() && std::all_of(block.begin(), block.end(), [&](int m) {
    return view.members[m].nvlink_ring_position >= 0;
  });
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
  // A server whose members have NVLink-cycle positions lists them in that cycle's order.
  for (std::vector<int>& block : blocks) {
    if (!OnNvLinkCycle(view, block)) continue;
    std::sort(block.begin(), block.end(), [&](int a, int b) {
      return view.members[a].nvlink_ring_position < view.members[b].nvlink_ring_position;
    });
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

// One server's part of channel `channel`'s ring. Plain: the block rotated by InstanceShift,
// leaving from the member before the shift. Along an NVLink cycle: odd channels walk it the
// other way (each NVLink then carries half the channels each way, as NCCL's rings in both
// directions do), and each channel leaves from the same member as the plain rotation of the
// member order would, so channels still leave through different NICs.
std::vector<int> ChannelBlock(const GroupView& view, const std::vector<int>& block, int channel,
                              int channels) {
  const int size = static_cast<int>(block.size());
  const int shift = InstanceShift(channel, channels, size);
  if (!OnNvLinkCycle(view, block)) return Rotate(block, shift);
  std::vector<int> plain = block;  // member order
  std::sort(plain.begin(), plain.end());
  const int exit = plain[(shift + size - 1) % size];
  std::vector<int> order = block;
  if (channel % 2 == 1) std::reverse(order.begin(), order.end());
  const int at = static_cast<int>(std::find(order.begin(), order.end(), exit) - order.begin());
  return Rotate(order, at + 1);
}

}  // namespace

std::vector<int> ChannelRing(const GroupView& view, int channel, int channels) {
  std::vector<int> ring;
  const std::vector<std::vector<int>> blocks = ServerBlocks(view);
  if (blocks.empty()) return ring;
  if (blocks.size() == 1) {
    ring = blocks[0];
    if (OnNvLinkCycle(view, ring) && channel % 2 == 1) std::reverse(ring.begin(), ring.end());
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
  const int c = InstanceShift(channel, channels, k);
  std::vector<int> enter(servers);
  for (int p = 0; p < servers; ++p) enter[p] = p % 2 == 0 ? c : c - 1;
  if (servers % 2 == 1 && k > 2) enter[servers - 1] = c - 2;
  for (int p = 0; p < servers; ++p) {
    for (int j : Walk(k, enter[p], enter[(p + 1) % servers])) ring.push_back(blocks[p][j]);
  }
  return ring;
}

}  // namespace stratasim::sim
