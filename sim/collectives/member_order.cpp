#include "sim/collectives/member_order.h"

#include <map>

namespace stratasim::sim {

std::vector<std::vector<int>> ServerBlocks(const GroupView& view) {
  std::vector<std::vector<int>> blocks;
  std::map<int, size_t> block_of_server;
  for (int m = 0; m < static_cast<int>(view.members.size()); ++m) {
    auto [it, added] = block_of_server.emplace(view.members[m].server, blocks.size());
    if (added) blocks.emplace_back();
    blocks[it->second].push_back(m);
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

std::vector<int> ChannelRing(const GroupView& view, int channel, int channels) {
  std::vector<int> ring;
  const std::vector<std::vector<int>> blocks = ServerBlocks(view);
  if (blocks.size() <= 1) return blocks.empty() ? ring : blocks[0];
  for (const std::vector<int>& block : blocks) {
    const int size = static_cast<int>(block.size());
    for (int m : Rotate(block, InstanceShift(channel, channels, size))) ring.push_back(m);
  }
  return ring;
}

}  // namespace stratasim::sim
