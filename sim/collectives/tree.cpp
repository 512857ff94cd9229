#include "sim/collectives/tree.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "sim/collectives/member_order.h"

namespace stratasim::sim {

std::vector<int> BinaryTreeParents(int n) {
  std::vector<int> parent(n, -1);
  for (int r = 1; r < n; ++r) {
    const int bit = r & -r;
    int up = (r ^ bit) | (bit << 1);  // the neighbour at the next level up
    if (up >= n) up = r ^ bit;        // past the end: the one below instead
    parent[r] = up;
  }
  return parent;
}

std::vector<int> MirroredTreeParents(int n) {
  auto map = [n](int p) { return n % 2 == 0 ? n - 1 - p : (p + n - 1) % n; };
  auto unmap = [n](int q) { return n % 2 == 0 ? n - 1 - q : (q + 1) % n; };
  const std::vector<int> first = BinaryTreeParents(n);
  std::vector<int> parent(n, -1);
  for (int node = 0; node < n; ++node) {
    const int up = first[map(node)];
    parent[node] = up < 0 ? -1 : unmap(up);
  }
  return parent;
}

void TreePipeline(const std::vector<int>& parent, double bytes, TreeDirection direction,
                  bool stream, FlowBuilder* b) {
  const int n = static_cast<int>(parent.size());
  const bool up = direction != TreeDirection::kDown;
  const bool down = direction != TreeDirection::kUp;
  std::vector<std::vector<int>> children(n);
  std::vector<int> depth(n, 0);
  int root = -1;
  for (int v = 0; v < n; ++v) {
    if (parent[v] < 0)
      root = v;
    else
      children[parent[v]].push_back(v);
  }
  if (root < 0 || n < 2) return;
  // Members by depth from the root: parents before children.
  std::vector<int> order{root};
  for (size_t i = 0; i < order.size(); ++i) {
    for (int w : children[order[i]]) {
      depth[w] = depth[order[i]] + 1;
      order.push_back(w);
    }
  }
  const int height = *std::max_element(depth.begin(), depth.end());
  const int chunks = PipelineChunks(bytes, height);
  if (stream) {
    // Every edge at once, each paying the tree's latency path (up and/or down its height, in
    // step and route latencies of the edge's own kind): what step adds is the fill's transfers.
    const int path = (up ? height : 0) + (down ? height : 0);
    for (int v : order) {
      if (v == root) continue;
      if (up) b->Add(v, parent[v], bytes, {}, path, path - 1);
      if (down) b->Add(parent[v], v, bytes, {}, path, path - 1);
    }
    return;
  }
  std::vector<int> up_prev(n, -1), down_prev(n, -1);  // flow of chunk c-1, by child member
  for (int c = 0; c < chunks; ++c) {
    std::vector<int> up_now(n, -1), down_now(n, -1);
    const int latency_steps = c == 0 ? 1 : 0;  // see ChainPipeline
    if (up) {
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const int v = *it;
        if (v == root) continue;
        std::vector<int> deps;
        for (int w : children[v]) deps.push_back(up_now[w]);
        up_now[v] = b->Add(v, parent[v], bytes / chunks, std::move(deps), latency_steps);
        if (c > 0) b->SetFollows(up_now[v], up_prev[v]);
      }
    }
    if (down) {
      for (int w : order) {
        if (w == root) continue;
        const int p = parent[w];
        std::vector<int> deps;
        if (p != root) {
          deps.push_back(down_now[p]);
        } else if (up) {
          for (int x : children[root]) deps.push_back(up_now[x]);
        }
        down_now[w] = b->Add(p, w, bytes / chunks, std::move(deps), latency_steps);
        if (c > 0) b->SetFollows(down_now[w], down_prev[w]);
      }
    }
    up_prev = std::move(up_now);
    down_prev = std::move(down_now);
  }
}

namespace {

// Member tree over servers: `server_parent` over positions of `blocks` (servers), each server
// the chain `chain_of(server position)` whose first member is the head.
template <typename ChainOf>
std::vector<int> MemberTree(const std::vector<std::vector<int>>& blocks,
                            const std::vector<int>& server_parent, int members, ChainOf chain_of) {
  std::vector<int> parent(members, -1);
  std::vector<int> head(blocks.size());
  std::vector<std::vector<int>> chains(blocks.size());
  for (size_t s = 0; s < blocks.size(); ++s) {
    chains[s] = chain_of(static_cast<int>(s));
    head[s] = chains[s][0];
    for (size_t j = 1; j < chains[s].size(); ++j) parent[chains[s][j]] = chains[s][j - 1];
  }
  for (size_t s = 0; s < blocks.size(); ++s) {
    if (server_parent[s] >= 0) parent[head[s]] = head[server_parent[s]];
  }
  return parent;
}

}  // namespace

void LowerTree(const LowerArgs& a, FlowBuilder* b) {
  const int channels = std::max(1, a.channels);
  const double part = a.c.bytes / channels;
  std::vector<std::vector<int>> blocks = ServerBlocks(a.view);
  const int servers = static_cast<int>(blocks.size());
  for (int ch = 0; ch < channels; ++ch) {
    if (a.c.kind == CollectiveKind::kAllReduce) {
      for (int t = 0; t < 2; ++t) {
        const std::vector<int> servers_parent =
            t == 0 ? BinaryTreeParents(servers) : MirroredTreeParents(servers);
        auto chain = [&](int s) {
          return InstanceChain(a.view, blocks[s], 2 * ch + t, 2 * channels);
        };
        TreePipeline(MemberTree(blocks, servers_parent, a.n(), chain), part / 2,
                     TreeDirection::kUpDown, a.stream(), b);
      }
      continue;
    }
    if (a.c.kind != CollectiveKind::kBroadcast && a.c.kind != CollectiveKind::kReduce) {
      throw Error("tree has no lowering for " + std::string(ToString(a.c.kind)));
    }
    // Rooted tree: the root's server at position 0 with the root as its head.
    int root_server = 0;
    for (int s = 0; s < servers; ++s) {
      if (std::count(blocks[s].begin(), blocks[s].end(), a.root)) root_server = s;
    }
    std::vector<std::vector<int>> rotated(blocks.begin() + root_server, blocks.end());
    rotated.insert(rotated.end(), blocks.begin(), blocks.begin() + root_server);
    const std::vector<int>& rb = rotated[0];
    const int root_pos = static_cast<int>(std::find(rb.begin(), rb.end(), a.root) - rb.begin());
    auto head = [&](int s) { return InstanceHead(a.view, rotated[s], ch, channels); };
    auto chain = [&](int s) {
      return s == 0 ? CycleChain(a.view, rb, a.root, ch)
                    : InstanceChain(a.view, rotated[s], ch, channels);
    };
    const std::vector<int> server_parent = BinaryTreeParents(servers);
    std::vector<int> parent = MemberTree(rotated, server_parent, a.n(), chain);
    // The root's server chains from the root and hands the data to its child servers itself,
    // unless the channel's head there (InstanceHead, on the children heads' rail) has another
    // NIC: then that member hands it on, so each channel leaves through its own NIC rather
    // than all through the root's. It comes second in the chain; or, when the chain follows
    // an NVLink cycle, stays where the cycle puts it, the data reaching it over NVLink rather
    // than over a PCIe hop the cycle does not have.
    const int attach = head(0);
    if (servers > 1 && a.view.members[attach].nic != a.view.members[a.root].nic) {
      if (a.view.members[a.root].nvlink_cycle_positions.empty()) {
        std::vector<int> chain{a.root, attach};
        for (int m : Rotate(rb, root_pos)) {
          if (m != a.root && m != attach) chain.push_back(m);
        }
        for (size_t j = 1; j < chain.size(); ++j) parent[chain[j]] = chain[j - 1];
      }
      for (int s = 1; s < servers; ++s) {
        if (server_parent[s] == 0) parent[head(s)] = attach;
      }
    }
    TreePipeline(parent, part,
                 a.c.kind == CollectiveKind::kBroadcast ? TreeDirection::kDown : TreeDirection::kUp,
                 a.stream(), b);
  }
}

}  // namespace stratasim::sim
