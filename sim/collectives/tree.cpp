#include "sim/collectives/tree.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "sim/collectives/member_order.h"
#include "sim/collectives/registry.h"

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

namespace {

int TreeHeight(int nodes) {
  const std::vector<int> parent = BinaryTreeParents(nodes);
  int height = 0;
  for (int v = 0; v < nodes; ++v) {
    int h = 0;
    for (int u = v; parent[u] >= 0; u = parent[u]) ++h;
    height = std::max(height, h);
  }
  return height;
}

// Time on the busiest intra-server link of `instances` chains through a server, each moving
// `bytes` over every hop in each of `directions` (1: a rooted tree; 2: an all-reduce tree, up
// and down). Over one link per GPU (an NVSwitch port, PCIe) a GPU sends all of it. Along NVLink
// cycles instance i takes cycle i mod cycles (InstanceChain, CycleChain), each direction on
// NVLinks of its own, so each NVLink direction carries the instances of its cycle once.
double ChainLinkSeconds(const AlphaBeta& m, int instances, double bytes, int directions) {
  if (m.nvlink_cycles <= 0) {
    return directions * instances * bytes / std::min(m.intra_Bps, instances * m.flow_intra_Bps);
  }
  const int per_cycle = (instances + m.nvlink_cycles - 1) / m.nvlink_cycles;
  return per_cycle * bytes / std::min(m.intra_Bps, per_cycle * m.flow_intra_Bps);
}

double PredictTree(const PredictArgs& a) {
  const AlphaBeta& m = a.m;
  const int s = m.servers, k = m.per_server, C = a.channels;
  const double S = a.wire_bytes();
  const int height = TreeHeight(s);
  if (a.c.kind == CollectiveKind::kAllReduce) {
    // Two trees of half the buffer per channel, up then down. A member's intra link carries
    // ~2S in all (S/2 up and S/2 down in each tree); a head's NIC up to 3 parts of S/(2C) per
    // tree it is interior in.
    const double intra_s = ChainLinkSeconds(m, 2 * C, S / (2 * C), 2);
    const double inter = std::min(std::min(2 * C, m.nics) * m.inter_Bps, 2 * C * m.flow_inter_Bps);
    const double bw_time = std::max(intra_s, m.multi ? 3 * S / inter : 0.0);
    return m.base_s + 2 * ((k - 1) * m.intra_step_s + height * m.inter_step_s) + bw_time;
  }
  const int chunks = PipelineChunks(a.c.bytes / C, k - 1 + height);
  const double intra = std::min(m.intra_Bps, C * m.flow_intra_Bps);
  const double inter = std::min(std::min(C, m.nics) * m.inter_Bps, C * m.flow_inter_Bps);
  double bw_time = std::max(ChainLinkSeconds(m, C, S / C, 1), m.multi ? 2 * S / inter : 0.0);
  if (m.multi && a.view.ring_intra_fabric == IntraFabric::kPcie) {
    // The chains run over PCIe, and so does the way to the NIC: a GPU's PCIe link carries
    // S/C of each channel it forwards along its chain, and 3 S/C of each it heads (down the
    // chain and to two child servers). 4 PCIe boxes of 4 GPUs, 4 channels: 1.5 S, as
    // simulated (102.6 ms for 1 GiB against the chain's 68.5 ms).
    const int heads = (C + k - 1) / k;
    bw_time = std::max(bw_time, (3.0 * heads + (C - heads)) * S / C / intra);
  }
  // As a chain (ring.cpp, PipelineSeconds): the first chunk crosses the k-1 hops of a server's
  // chain and the tree's height alone on each (an interior head forwards it to two child
  // servers through its one NIC), each later chunk takes the bottleneck's share of bw_time.
  // (Charging bw_time with no fill put a 1 GiB broadcast on 16 DGX-1 with 4 NICs at 43.4 ms;
  // step simulates 48.0 ms, and the chain's 28.8 ms wins.)
  const double chunk = S / C / chunks;
  const double fill = (k - 1) * chunk / std::min(m.intra_Bps, m.flow_intra_Bps) +
                      height * 2 * chunk / std::min(m.inter_Bps, m.flow_inter_Bps);
  return m.base_s + (k - 1) * m.intra_step_s + height * m.inter_step_s + fill +
         (chunks - 1) * bw_time / chunks;
}

}  // namespace

// NCCL's trees: auto may pick them, on as many channels as the tuner gives them; NCCL's tree
// figures.
const CollectiveAlgorithm collective_algorithms::tree{
    NcclAlgorithm::kTree,  // nccl
    true,                  // uses_channels
    true,                  // chosen_by_auto
    nullptr,               // auto_fits
    true,                  // neighbour_steps
    LowerTree,             // lower
    PredictTree,           // predict
};

}  // namespace stratasim::sim
