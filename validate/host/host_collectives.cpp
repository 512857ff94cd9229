#include "validate/host/host_collectives.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/error.h"

namespace stratasim::validate::host {
namespace {

constexpr double kFloat = sizeof(float);

std::size_t Floats(double bytes) { return static_cast<std::size_t>(bytes / kFloat); }

// [begin, end) of chunk `j` of `total` elements cut into `parts`.
std::size_t ChunkBegin(std::size_t total, int parts, int j) {
  return total * static_cast<std::size_t>(j) / static_cast<std::size_t>(parts);
}

int Mod(int a, int n) { return ((a % n) + n) % n; }

// Elements of all-to-all-v's matrix row/column sums.
double RowBytes(const Collective& c, int i) {
  const int n = static_cast<int>(c.ranks.size());
  double s = 0;
  for (int j = 0; j < n; ++j) s += c.matrix[static_cast<std::size_t>(i * n + j)];
  return s;
}
double ColumnBytes(const Collective& c, int j) {
  const int n = static_cast<int>(c.ranks.size());
  double s = 0;
  for (int i = 0; i < n; ++i) s += c.matrix[static_cast<std::size_t>(i * n + j)];
  return s;
}

// Floats of the send buffer of member `i`; the receive buffer follows it in the workspace.
double SendBytes(const Collective& c, int i) {
  const int n = static_cast<int>(c.ranks.size());
  switch (c.kind) {
    case CollectiveKind::kAllToAllV:
      return RowBytes(c, i);
    case CollectiveKind::kGather:
      return c.bytes / n;
    case CollectiveKind::kScatter:
      return c.ranks[static_cast<std::size_t>(i)] == c.root ? c.bytes : 0;
    default:
      return c.bytes;  // in place, or all-to-all's send buffer
  }
}

double RecvBytes(const Collective& c, int i) {
  const int n = static_cast<int>(c.ranks.size());
  switch (c.kind) {
    case CollectiveKind::kAllToAll:
      return c.bytes;
    case CollectiveKind::kAllToAllV:
      return ColumnBytes(c, i);
    case CollectiveKind::kGather:
      return c.ranks[static_cast<std::size_t>(i)] == c.root ? c.bytes : 0;
    case CollectiveKind::kScatter:
      return c.bytes / n;
    default:
      return 0;
  }
}

int RootMember(const Collective& c) {
  auto it = std::find(c.ranks.begin(), c.ranks.end(), c.root);
  return it == c.ranks.end() ? 0 : static_cast<int>(it - c.ranks.begin());
}

}  // namespace

std::string HostCollectiveAlgorithm(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return "ring";
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
      return "pairwise";
    case CollectiveKind::kGather:
    case CollectiveKind::kScatter:
      return "direct";
  }
  return "direct";
}

std::size_t CollectiveSendFloats(const Collective& c, int member) {
  return Floats(SendBytes(c, member));
}

std::size_t CollectiveRecvFloats(const Collective& c, int member) {
  return Floats(RecvBytes(c, member));
}

std::size_t CollectiveChunkBegin(std::size_t total, int parts, int j) {
  return ChunkBegin(total, parts, j);
}

int CollectiveRootMember(const Collective& c) { return RootMember(c); }

double CollectiveWorkspaceBytes(const Collective& c, int member) {
  // Rounded to whole floats, each buffer separately (the layout Send/Recv use).
  return static_cast<double>(Floats(SendBytes(c, member)) + Floats(RecvBytes(c, member))) * kFloat;
}

GroupRun::GroupRun(const Collective& c, AbortFlag* abort)
    : c_(c), n_(static_cast<int>(c.ranks.size())), barrier_(n_, abort), workspace_(n_, nullptr) {}

float* GroupRun::Send(int member) const {
  return reinterpret_cast<float*>(workspace_[static_cast<std::size_t>(member)]);
}

float* GroupRun::Recv(int member) const { return Send(member) + Floats(SendBytes(c_, member)); }

void GroupRun::Run(int member, unsigned char* workspace, const Clock& clock, double* joined_s) {
  workspace_[static_cast<std::size_t>(member)] = workspace;
  *joined_s = barrier_.Wait(clock);
  switch (c_.kind) {
    case CollectiveKind::kAllReduce:
      ReduceScatter(member, clock);
      AllGather(member, clock);
      break;
    case CollectiveKind::kReduceScatter:
      ReduceScatter(member, clock);
      break;
    case CollectiveKind::kAllGather:
      AllGather(member, clock);
      break;
    case CollectiveKind::kBroadcast:
      Broadcast(member, clock);
      break;
    case CollectiveKind::kReduce:
      Reduce(member, clock);
      break;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllV:
      AllToAll(member, clock);
      break;
    case CollectiveKind::kGather:
      Gather(member, clock);
      break;
    case CollectiveKind::kScatter:
      Scatter(member, clock);
      break;
  }
  // Nobody leaves while a peer may still read its buffers.
  barrier_.Wait(clock);
}

// Ring reduce-scatter: in step s member i adds its left neighbour's chunk (i-1-s) mod N into
// its own. The neighbour finished that chunk in step s-1, and in step s it writes a different
// chunk, so a barrier per step is the only synchronisation needed.
void GroupRun::ReduceScatter(int i, const Clock& clock) {
  const std::size_t total = Floats(c_.bytes);
  float* mine = Send(i);
  const float* left = Send(Mod(i - 1, n_));
  for (int s = 0; s < n_ - 1; ++s) {
    const int j = Mod(i - 1 - s, n_);
    const std::size_t b = ChunkBegin(total, n_, j), e = ChunkBegin(total, n_, j + 1);
    for (std::size_t x = b; x < e; ++x) mine[x] += left[x];
    barrier_.Wait(clock);
  }
}

// Ring all-gather: after the reduce-scatter member i holds chunk (i+1) mod N; in step s it
// copies chunk (i-s) mod N, which its left neighbour received in step s-1.
void GroupRun::AllGather(int i, const Clock& clock) {
  const std::size_t total = Floats(c_.bytes);
  float* mine = Send(i);
  const float* left = Send(Mod(i - 1, n_));
  for (int s = 0; s < n_ - 1; ++s) {
    const int j = Mod(i - s, n_);
    const std::size_t b = ChunkBegin(total, n_, j), e = ChunkBegin(total, n_, j + 1);
    std::memcpy(mine + b, left + b, (e - b) * sizeof(float));
    barrier_.Wait(clock);
  }
}

// Pipelined chain from the root: the member at distance p copies slice (s - p + 1) from its
// predecessor in step s; N slices, 2N - 2 steps.
void GroupRun::Broadcast(int i, const Clock& clock) {
  const std::size_t total = Floats(c_.bytes);
  const int root = RootMember(c_);
  const int p = Mod(i - root, n_);
  const int slices = n_;
  float* mine = Send(i);
  const float* prev = Send(Mod(i - 1, n_));
  for (int s = 0; s < slices + n_ - 2; ++s) {
    const int j = s - p + 1;
    if (p > 0 && j >= 0 && j < slices) {
      const std::size_t b = ChunkBegin(total, slices, j), e = ChunkBegin(total, slices, j + 1);
      std::memcpy(mine + b, prev + b, (e - b) * sizeof(float));
    }
    barrier_.Wait(clock);
  }
}

// Pipelined chain ending at the root: position p = distance after the root (the root is last,
// p = N-1); in step s the member at p >= 1 adds its predecessor's partial slice (s - p + 1).
void GroupRun::Reduce(int i, const Clock& clock) {
  const std::size_t total = Floats(c_.bytes);
  const int root = RootMember(c_);
  const int p = Mod(i - root - 1, n_);
  const int slices = n_;
  float* mine = Send(i);
  const float* prev = Send(Mod(i - 1, n_));
  for (int s = 0; s < slices + n_ - 2; ++s) {
    const int j = s - p + 1;
    if (p > 0 && j >= 0 && j < slices) {
      const std::size_t b = ChunkBegin(total, slices, j), e = ChunkBegin(total, slices, j + 1);
      for (std::size_t x = b; x < e; ++x) mine[x] += prev[x];
    }
    barrier_.Wait(clock);
  }
}

// Pairwise exchange: send buffers are only read, so the steps need no barrier between them.
void GroupRun::AllToAll(int i, const Clock& /*clock*/) {
  const bool v = c_.kind == CollectiveKind::kAllToAllV;
  const std::size_t n = static_cast<std::size_t>(n_);
  for (int s = 0; s < n_; ++s) {
    const int src = Mod(i - s, n_);
    std::size_t from = 0, to = 0, count = 0;
    if (v) {
      // Offset of block i in src's send buffer, and of block src in i's receive buffer.
      for (int j = 0; j < i; ++j) from += Floats(c_.matrix[src * n + static_cast<std::size_t>(j)]);
      for (int k = 0; k < src; ++k) to += Floats(c_.matrix[k * n + static_cast<std::size_t>(i)]);
      count = Floats(c_.matrix[static_cast<std::size_t>(src) * n + static_cast<std::size_t>(i)]);
    } else {
      const std::size_t block = Floats(c_.bytes) / n;
      from = block * static_cast<std::size_t>(i);
      to = block * static_cast<std::size_t>(src);
      count = block;
    }
    std::memcpy(Recv(i) + to, Send(src) + from, count * sizeof(float));
  }
}

void GroupRun::Gather(int i, const Clock& /*clock*/) {
  if (i != RootMember(c_)) return;
  const std::size_t block = Floats(c_.bytes / n_);
  for (int m = 0; m < n_; ++m) {
    std::memcpy(Recv(i) + block * static_cast<std::size_t>(m), Send(m), block * sizeof(float));
  }
}

void GroupRun::Scatter(int i, const Clock& /*clock*/) {
  const std::size_t block = Floats(c_.bytes / n_);
  std::memcpy(Recv(i), Send(RootMember(c_)) + block * static_cast<std::size_t>(i),
              block * sizeof(float));
}

}  // namespace stratasim::validate::host
