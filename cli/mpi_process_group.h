// validate::ProcessGroup over OpenMPI (validate/process_group.h): the processes of
// `mpirun -np N stratasim validate` (or `srun --mpi=pmix`), one per rank of the plan.
//
// Data plane: a duplicate of MPI_COMM_WORLD of its own, MPI tag = channel; every call posts
// MPI_Isend/MPI_Irecv and polls MPI_Test until done, the deadline (timeout_s) or
// Wait::cancelled, and cancels the request when it gives up. Messages larger than an MPI count
// (int) go in pieces of at most max_piece_bytes.
// Control plane: another duplicate, point-to-point through rank 0 with the same polling, so that
// a silent process is named rather than waited for; each call has its own tag (the calls are
// made in the same order everywhere), so that a late message of one call never matches the next.
//
// Needs MPI_THREAD_MULTIPLE: the host backend's stream threads call the data plane at once.
#ifndef STRATASIM_CLI_MPI_PROCESS_GROUP_H_
#define STRATASIM_CLI_MPI_PROCESS_GROUP_H_

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "validate/process_group.h"

namespace stratasim::mpi {

class MpiProcessGroup : public validate::ProcessGroup {
 public:
  // Initialises MPI (MPI_Init_thread, MPI_THREAD_MULTIPLE) unless already done. Throws
  // stratasim::Error when built without MPI or when MPI cannot give MPI_THREAD_MULTIPLE.
  // `max_piece_bytes` < INT_MAX only in tests, to split messages without gigabytes of memory.
  explicit MpiProcessGroup(double timeout_s, std::size_t max_piece_bytes = INT_MAX);
  // Finalises MPI, unless a peer failed (MPI_Finalize would wait for it): the process then
  // exits without it, and mpirun reports that.
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string host() const override { return host_; }
  double timeout_s() const override { return timeout_s_; }

  void Send(int peer, int channel, const void* data, std::size_t bytes,
            const validate::Wait& wait) override;
  void Recv(int peer, int channel, void* data, std::size_t bytes,
            const validate::Wait& wait) override;
  void SendRecv(int to, const void* send, std::size_t send_bytes, int from, void* recv,
                std::size_t recv_bytes, int channel, const validate::Wait& wait) override;

  void Barrier() override;
  void Broadcast(std::string* text, int root) override;
  std::vector<std::string> AllGather(const std::string& mine) override;
  std::vector<std::optional<std::string>> GatherToRoot(const std::string& mine) override;

  // A fresh data-plane communicator, called by every process at the same point between two
  // runs (a control-plane call): messages a failed run left in flight can then never match the
  // next run's receives, which reuse the same channels.
  void FreshDataPlane();

  // Whether every exchange so far completed (no timeout, no MPI error).
  bool healthy() const { return healthy_; }
  // Ends every process of the job (MPI_Abort); `code` is the exit status mpirun reports.
  [[noreturn]] void Abort(int code);

 private:
  void CountSendForTestKill();

  struct Comms;
  Comms* comms_ = nullptr;  // MPI types stay out of this header
  int rank_ = 0;
  int size_ = 1;
  std::string host_;
  double timeout_s_;
  std::size_t max_piece_bytes_;
  // The control plane's tag: the call's number, wrapped within MPI_TAG_UB.
  int NextControlTag() { return static_cast<int>(++control_calls_ % TagBound()); }
  long long TagBound() const;
  long long control_calls_ = 0;
  bool finalize_ = false;
  std::atomic<bool> healthy_{true};
  std::atomic<long long> sends_{0};  // for the test hook STRATASIM_VALIDATE_TEST_KILL_AFTER
};

// The control plane's framing, here to be tested without MPI. A length a peer announces is
// checked against limits::kControlMessageBytes before anything is allocated (Error naming the
// peer); Unpack refuses a count or length beyond what `packed` holds.
void CheckControlLength(std::uint64_t bytes, int peer);
std::string Pack(const std::vector<std::string>& texts);
std::vector<std::string> Unpack(const std::string& packed);

}  // namespace stratasim::mpi

#endif  // STRATASIM_CLI_MPI_PROCESS_GROUP_H_
