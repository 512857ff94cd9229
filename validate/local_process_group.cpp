#include "validate/local_process_group.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

namespace stratasim::validate {
namespace {

// How often a waiting Recv looks at Wait::cancelled: short enough that an aborted run ends
// promptly, long enough not to spin.
constexpr double kPollSeconds = 0.005;

std::string Seconds(double s) {
  std::ostringstream o;
  o << s << " s";
  return o.str();
}

// The queues of every (sender, receiver, channel); control-plane calls use channels below 0.
class Mailbox {
 public:
  void Put(int src, int dst, long long channel, const void* data, std::size_t bytes) {
    std::vector<unsigned char> m(bytes);
    if (bytes) std::memcpy(m.data(), data, bytes);
    std::lock_guard<std::mutex> lock(mu_);
    queues_[{src, dst, channel}].push_back(std::move(m));
    cv_.notify_all();
  }

  // The oldest message of (src, dst, channel), or false once `deadline` passed or `cancelled`
  // returned true (then *cancelled_out is set).
  bool Take(int src, int dst, long long channel, std::chrono::steady_clock::time_point deadline,
            const std::function<bool()>& cancelled, std::vector<unsigned char>* out,
            bool* cancelled_out) {
    const auto poll = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(kPollSeconds));
    std::unique_lock<std::mutex> lock(mu_);
    const Key key{src, dst, channel};
    for (;;) {
      auto it = queues_.find(key);
      if (it != queues_.end() && !it->second.empty()) {
        *out = std::move(it->second.front());
        it->second.pop_front();
        return true;
      }
      if (cancelled && cancelled()) {
        *cancelled_out = true;
        return false;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      cv_.wait_until(lock, std::min(deadline, now + poll));
    }
  }

 private:
  using Key = std::tuple<int, int, long long>;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::deque<std::vector<unsigned char>>> queues_;
};

class LocalProcessGroup : public ProcessGroup {
 public:
  LocalProcessGroup(std::shared_ptr<Mailbox> box, int rank, int size, double timeout_s,
                    std::string host)
      : box_(std::move(box)),
        rank_(rank),
        size_(size),
        timeout_s_(timeout_s),
        host_(std::move(host)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string host() const override { return host_; }
  double timeout_s() const override { return timeout_s_; }

  void Send(int peer, int channel, const void* data, std::size_t bytes, const Wait& wait) override {
    CheckPeer(peer, wait);
    CheckChannel(channel, wait);
    box_->Put(rank_, peer, channel, data, bytes);
  }

  void Recv(int peer, int channel, void* data, std::size_t bytes, const Wait& wait) override {
    CheckPeer(peer, wait);
    CheckChannel(channel, wait);
    std::vector<unsigned char> m = Take(peer, channel, wait.what, wait.cancelled, Deadline());
    if (m.size() != bytes) {
      throw ProcessGroupError(peer, Prefix(wait.what) + "rank " + std::to_string(peer) + " sent " +
                                        std::to_string(m.size()) + " bytes on channel " +
                                        std::to_string(channel) + ", expected " +
                                        std::to_string(bytes));
    }
    if (bytes) std::memcpy(data, m.data(), bytes);
  }

  // Send is eager, so sending first and then receiving cannot deadlock a ring.
  void SendRecv(int to, const void* send, std::size_t send_bytes, int from, void* recv,
                std::size_t recv_bytes, int channel, const Wait& wait) override {
    Send(to, channel, send, send_bytes, wait);
    Recv(from, channel, recv, recv_bytes, wait);
  }

  // Gather to rank 0, then rank 0 releases everyone.
  void Barrier() override {
    const long long ch = NextControlChannel();
    const char byte = 0;
    if (rank_ == 0) {
      const auto deadline = Deadline();
      for (int p = 1; p < size_; ++p) Take(p, ch, "barrier", nullptr, deadline);
      for (int p = 1; p < size_; ++p) box_->Put(0, p, ch, &byte, 1);
    } else {
      box_->Put(rank_, 0, ch, &byte, 1);
      Take(0, ch, "barrier", nullptr, Deadline());
    }
  }

  void Broadcast(std::string* text, int root) override {
    const long long ch = NextControlChannel();
    if (root < 0 || root >= size_) {
      throw ProcessGroupError(-1, Prefix("broadcast") + "root " + std::to_string(root) +
                                      " is not a rank of " + std::to_string(size_));
    }
    if (rank_ == root) {
      for (int p = 0; p < size_; ++p) {
        if (p != root) box_->Put(root, p, ch, text->data(), text->size());
      }
    } else {
      std::vector<unsigned char> m = Take(root, ch, "broadcast", nullptr, Deadline());
      text->assign(m.begin(), m.end());
    }
  }

  std::vector<std::string> AllGather(const std::string& mine) override {
    const long long ch = NextControlChannel();
    for (int p = 0; p < size_; ++p) {
      if (p != rank_) box_->Put(rank_, p, ch, mine.data(), mine.size());
    }
    std::vector<std::string> all(static_cast<std::size_t>(size_));
    const auto deadline = Deadline();
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) {
        all[static_cast<std::size_t>(p)] = mine;
        continue;
      }
      std::vector<unsigned char> m = Take(p, ch, "all_gather", nullptr, deadline);
      all[static_cast<std::size_t>(p)].assign(m.begin(), m.end());
    }
    return all;
  }

  std::vector<std::optional<std::string>> GatherToRoot(const std::string& mine) override {
    const long long ch = NextControlChannel();
    if (rank_ != 0) {
      box_->Put(rank_, 0, ch, mine.data(), mine.size());
      return {};
    }
    std::vector<std::optional<std::string>> all(static_cast<std::size_t>(size_));
    all[0] = mine;
    // One deadline for all: a dead rank costs timeout_s() once, not once per rank.
    const auto deadline = Deadline();
    for (int p = 1; p < size_; ++p) {
      std::vector<unsigned char> m;
      bool cancelled = false;
      if (box_->Take(p, 0, ch, deadline, nullptr, &m, &cancelled)) {
        all[static_cast<std::size_t>(p)] = std::string(m.begin(), m.end());
      }
    }
    return all;
  }

 private:
  std::string Prefix(const std::string& what) const {
    return "rank " + std::to_string(rank_) + ": " + (what.empty() ? "" : what + ": ");
  }

  void CheckPeer(int peer, const Wait& wait) const {
    if (peer < 0 || peer >= size_ || peer == rank_) {
      throw ProcessGroupError(-1, Prefix(wait.what) + "peer " + std::to_string(peer) +
                                      " is not another rank of " + std::to_string(size_));
    }
  }

  void CheckChannel(int channel, const Wait& wait) const {
    if (channel < 0 || channel > kMaxChannel) {
      throw ProcessGroupError(-1, Prefix(wait.what) + "channel " + std::to_string(channel) +
                                      " is outside [0, " + std::to_string(kMaxChannel) + "]");
    }
  }

  std::chrono::steady_clock::time_point Deadline() const {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(timeout_s_));
  }

  // Control calls are made in the same order by every process, so the n-th call of each uses
  // the same queues: -1 - n.
  long long NextControlChannel() { return -1 - control_calls_++; }

  std::vector<unsigned char> Take(int peer, long long channel, const std::string& what,
                                  const std::function<bool()>& cancelled,
                                  std::chrono::steady_clock::time_point deadline) {
    std::vector<unsigned char> m;
    bool was_cancelled = false;
    if (box_->Take(peer, rank_, channel, deadline, cancelled, &m, &was_cancelled)) return m;
    if (was_cancelled) throw Cancelled{};
    throw ProcessGroupError(peer, Prefix(what) + "no message from rank " + std::to_string(peer) +
                                      " within " + Seconds(timeout_s_));
  }

  std::shared_ptr<Mailbox> box_;
  const int rank_;
  const int size_;
  const double timeout_s_;
  const std::string host_;
  long long control_calls_ = 0;  // only the main thread makes control calls
};

}  // namespace

std::vector<std::unique_ptr<ProcessGroup>> LocalProcessGroups(
    int n, double timeout_s, const std::vector<std::string>& hosts) {
  if (n < 1) throw Error("LocalProcessGroups: needs at least 1 process, got " + std::to_string(n));
  if (!(timeout_s > 0)) {
    throw Error("LocalProcessGroups: timeout_s must be > 0, got " + std::to_string(timeout_s));
  }
  if (!hosts.empty() && static_cast<int>(hosts.size()) != n) {
    throw Error("LocalProcessGroups: " + std::to_string(hosts.size()) + " host names for " +
                std::to_string(n) + " processes");
  }
  auto box = std::make_shared<Mailbox>();
  std::vector<std::unique_ptr<ProcessGroup>> out;
  for (int p = 0; p < n; ++p) {
    out.push_back(std::make_unique<LocalProcessGroup>(
        box, p, n, timeout_s, hosts.empty() ? "localhost" : hosts[static_cast<std::size_t>(p)]));
  }
  return out;
}

}  // namespace stratasim::validate
