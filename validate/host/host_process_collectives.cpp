#include "validate/host/host_process_collectives.h"

#include <algorithm>
#include <cstring>

#include "validate/host/host_collectives.h"

namespace stratasim::validate::host {
namespace {

constexpr std::size_t kFloat = sizeof(float);

int Mod(int a, int n) { return ((a % n) + n) % n; }

bool Reduces(CollectiveKind k) {
  return k == CollectiveKind::kAllReduce || k == CollectiveKind::kReduceScatter ||
         k == CollectiveKind::kReduce;
}

// One member's view of its collective: buffers and peers.
class Member {
 public:
  Member(const Collective& c, int i, unsigned char* ws, ProcessGroup& pg, int channel,
         const Wait& wait)
      : c_(c),
        n_(static_cast<int>(c.ranks.size())),
        i_(i),
        total_(static_cast<std::size_t>(c.bytes / static_cast<double>(kFloat))),
        send_(reinterpret_cast<float*>(ws)),
        recv_(send_ + CollectiveSendFloats(c, i)),
        scratch_(recv_ + CollectiveRecvFloats(c, i)),
        pg_(pg),
        channel_(channel),
        wait_(wait) {}

  void Run() {
    switch (c_.kind) {
      case CollectiveKind::kAllReduce:
        ReduceScatter();
        AllGather();
        break;
      case CollectiveKind::kReduceScatter:
        ReduceScatter();
        break;
      case CollectiveKind::kAllGather:
        AllGather();
        break;
      case CollectiveKind::kBroadcast:
        Chain(Mod(i_ - CollectiveRootMember(c_), n_), /*reduce=*/false);
        break;
      case CollectiveKind::kReduce:
        Chain(Mod(i_ - CollectiveRootMember(c_) - 1, n_), /*reduce=*/true);
        break;
      case CollectiveKind::kAllToAll:
      case CollectiveKind::kAllToAllV:
        AllToAll();
        break;
      case CollectiveKind::kGather:
        Gather();
        break;
      case CollectiveKind::kScatter:
        Scatter();
        break;
    }
  }

 private:
  int Peer(int member) const { return c_.ranks[static_cast<std::size_t>(Mod(member, n_))]; }
  std::size_t Begin(int parts, int j) const { return CollectiveChunkBegin(total_, parts, j); }
  std::size_t Count(int parts, int j) const { return Begin(parts, j + 1) - Begin(parts, j); }

  void SendRecv(int to, const float* s, std::size_t s_floats, int from, float* r,
                std::size_t r_floats) {
    pg_.SendRecv(Peer(to), s, s_floats * kFloat, Peer(from), r, r_floats * kFloat, channel_, wait_);
  }
  void Send(int to, const float* s, std::size_t floats) {
    pg_.Send(Peer(to), channel_, s, floats * kFloat, wait_);
  }
  void Recv(int from, float* r, std::size_t floats) {
    pg_.Recv(Peer(from), channel_, r, floats * kFloat, wait_);
  }

  static void Add(float* into, const float* from, std::size_t count) {
    for (std::size_t x = 0; x < count; ++x) into[x] += from[x];
  }

  // Step s: send chunk (i - s), which this member completed in step s - 1, to the right;
  // add the left neighbour's chunk (i - 1 - s) into this member's.
  void ReduceScatter() {
    for (int s = 0; s < n_ - 1; ++s) {
      const int sj = Mod(i_ - s, n_), rj = Mod(i_ - 1 - s, n_);
      SendRecv(i_ + 1, send_ + Begin(n_, sj), Count(n_, sj), i_ - 1, scratch_, Count(n_, rj));
      Add(send_ + Begin(n_, rj), scratch_, Count(n_, rj));
    }
  }

  // After the reduce-scatter member i holds chunk (i + 1); step s forwards chunk (i + 1 - s)
  // and receives chunk (i - s) in place.
  void AllGather() {
    for (int s = 0; s < n_ - 1; ++s) {
      const int sj = Mod(i_ + 1 - s, n_), rj = Mod(i_ - s, n_);
      SendRecv(i_ + 1, send_ + Begin(n_, sj), Count(n_, sj), i_ - 1, send_ + Begin(n_, rj),
               Count(n_, rj));
    }
  }

  // The pipelined chain: position p (0 = the chain's head), N slices, 2N - 2 steps.
  void Chain(int p, bool reduce) {
    const int slices = n_;
    for (int s = 0; s < slices + n_ - 2; ++s) {
      const int sj = s - p, rj = s - p + 1;
      const bool sends = p < n_ - 1 && sj >= 0 && sj < slices;
      const bool receives = p > 0 && rj >= 0 && rj < slices;
      float* into = receives ? (reduce ? scratch_ : send_ + Begin(slices, rj)) : nullptr;
      if (sends && receives) {
        SendRecv(i_ + 1, send_ + Begin(slices, sj), Count(slices, sj), i_ - 1, into,
                 Count(slices, rj));
      } else if (sends) {
        Send(i_ + 1, send_ + Begin(slices, sj), Count(slices, sj));
      } else if (receives) {
        Recv(i_ - 1, into, Count(slices, rj));
      }
      if (receives && reduce) Add(send_ + Begin(slices, rj), scratch_, Count(slices, rj));
    }
  }

  // Offsets (floats) of member `to`'s block in member `from`'s send buffer and of member
  // `from`'s block in `to`'s receive buffer, and the block's floats.
  struct Block {
    std::size_t send_at = 0, recv_at = 0, floats = 0;
  };
  Block BlockOf(int from, int to) const {
    Block b;
    if (c_.kind == CollectiveKind::kAllToAllV) {
      const std::size_t n = static_cast<std::size_t>(n_);
      auto cell = [&](int row, int col) {
        return static_cast<std::size_t>(
            c_.matrix[static_cast<std::size_t>(row) * n + static_cast<std::size_t>(col)] /
            static_cast<double>(kFloat));
      };
      for (int j = 0; j < to; ++j) b.send_at += cell(from, j);
      for (int k = 0; k < from; ++k) b.recv_at += cell(k, to);
      b.floats = cell(from, to);
    } else {
      b.floats = total_ / static_cast<std::size_t>(n_);
      b.send_at = b.floats * static_cast<std::size_t>(to);
      b.recv_at = b.floats * static_cast<std::size_t>(from);
    }
    return b;
  }

  void AllToAll() {
    for (int s = 0; s < n_; ++s) {
      const int to = Mod(i_ + s, n_), from = Mod(i_ - s, n_);
      const Block out = BlockOf(i_, to), in = BlockOf(from, i_);
      if (s == 0) {
        std::memcpy(recv_ + in.recv_at, send_ + out.send_at, out.floats * kFloat);
      } else {
        SendRecv(to, send_ + out.send_at, out.floats, from, recv_ + in.recv_at, in.floats);
      }
    }
  }

  std::size_t GatherBlock() const {
    return static_cast<std::size_t>(c_.bytes / n_ / static_cast<double>(kFloat));
  }

  void Gather() {
    const int root = CollectiveRootMember(c_);
    const std::size_t block = GatherBlock();
    if (i_ != root) {
      Send(root, send_, block);
      return;
    }
    for (int m = 0; m < n_; ++m) {
      float* into = recv_ + block * static_cast<std::size_t>(m);
      if (m == root) {
        std::memcpy(into, send_, block * kFloat);
      } else {
        Recv(m, into, block);
      }
    }
  }

  void Scatter() {
    const int root = CollectiveRootMember(c_);
    const std::size_t block = GatherBlock();
    if (i_ != root) {
      Recv(root, recv_, block);
      return;
    }
    for (int m = 0; m < n_; ++m) {
      const float* from = send_ + block * static_cast<std::size_t>(m);
      if (m == root) {
        std::memcpy(recv_, from, block * kFloat);
      } else {
        Send(m, from, block);
      }
    }
  }

  const Collective& c_;
  const int n_;
  const int i_;
  const std::size_t total_;  // floats of c.bytes
  float* const send_;
  float* const recv_;
  float* const scratch_;
  ProcessGroup& pg_;
  const int channel_;
  const Wait& wait_;
};

}  // namespace

double ProcessCollectiveScratchBytes(const Collective& c, int /*member*/) {
  if (!Reduces(c.kind)) return 0;
  // The largest chunk of N (ring) or slice of N (chain): ceil(total / N) floats.
  const std::size_t n = c.ranks.size();
  const std::size_t total = static_cast<std::size_t>(c.bytes / static_cast<double>(kFloat));
  return static_cast<double>((total + n - 1) / n * kFloat);
}

void RunCollectiveOverProcesses(const Collective& c, int member, unsigned char* workspace,
                                ProcessGroup& pg, int channel, const Wait& wait) {
  Member(c, member, workspace, pg, channel, wait).Run();
}

}  // namespace stratasim::validate::host
