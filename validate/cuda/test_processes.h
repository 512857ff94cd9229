// Test-only: the control plane of a multi-process run with its processes as threads of one
// process (the data plane is not needed by the tests that use it, and throws).
#ifndef STRATASIM_VALIDATE_CUDA_TEST_PROCESSES_H_
#define STRATASIM_VALIDATE_CUDA_TEST_PROCESSES_H_

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "validate/process_group.h"

namespace stratasim::validate::cuda {

// The control plane of `size` processes as threads: each collective call is one round in
// which every process deposits its text and takes all of them. The data plane is not used by
// the bootstrap.
class Rounds {
 public:
  explicit Rounds(int size) : size_(size) {}

  std::vector<std::string> Exchange(int rank, const std::string& mine) {
    std::unique_lock<std::mutex> lock(mu_);
    const long round = next_[rank]++;
    Round& r = rounds_[round];
    r.texts.resize(size_);
    r.texts[rank] = mine;
    if (++r.arrived == size_) cv_.notify_all();
    cv_.wait(lock, [&] { return r.arrived == size_; });
    return r.texts;
  }

 private:
  struct Round {
    int arrived = 0;
    std::vector<std::string> texts;
  };
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, long> next_;
  std::map<long, Round> rounds_;
};

class ThreadProcessGroup : public ProcessGroup {
 public:
  ThreadProcessGroup(Rounds& rounds, int rank, int size, std::string host)
      : rounds_(rounds), rank_(rank), size_(size), host_(std::move(host)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string host() const override { return host_; }
  double timeout_s() const override { return 5; }
  void Send(int, int, const void*, std::size_t, const Wait&) override { Unused(); }
  void Recv(int, int, void*, std::size_t, const Wait&) override { Unused(); }
  void SendRecv(int, const void*, std::size_t, int, void*, std::size_t, int, const Wait&) override {
    Unused();
  }
  void Barrier() override { rounds_.Exchange(rank_, ""); }
  void Broadcast(std::string* text, int root) override {
    *text = rounds_.Exchange(rank_, *text).at(root);
  }
  std::vector<std::string> AllGather(const std::string& mine) override {
    return rounds_.Exchange(rank_, mine);
  }
  std::vector<std::optional<std::string>> GatherToRoot(const std::string& mine) override {
    const std::vector<std::string> all = rounds_.Exchange(rank_, mine);
    if (rank_ != 0) return {};
    return {all.begin(), all.end()};
  }

 private:
  static void Unused() { throw std::logic_error("the bootstrap uses no data plane"); }
  Rounds& rounds_;
  int rank_, size_;
  std::string host_;
};

}  // namespace stratasim::validate::cuda

#endif  // STRATASIM_VALIDATE_CUDA_TEST_PROCESSES_H_
