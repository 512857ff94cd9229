// The processes of one multi-process `validate` or `calibrate --fabric` run: one process per
// rank (a GPU, or a host rank), started by `mpirun -np N` or Slurm's `srun` (docs/validate.md,
// "On a cluster"). This interface is all the backends know of how the processes talk:
//
//   - the MPI implementation (cli/mpi_process_group.*) is the real one;
//   - an in-process one over threads (validate/local_process_group.*) lets unit tests run the
//     multi-process paths without MPI.
//
// Process p runs the plan's rank p (RunOptions::processes in backend.h).
//
// Two planes:
//   - the data plane (Send, Recv, SendRecv) moves the host backend's collective and send/recv
//     bytes. It is thread-safe, since several stream threads of one process call it at once.
//   - the control plane (Barrier, Broadcast, AllGather, GatherToRoot) is called by every
//     process's main thread, in the same order.
//
// No call waits forever. A peer that does not answer within timeout_s() gives a
// ProcessGroupError naming it, so that a dead or hung rank ends the run with a clear error
// instead of hanging it.
#ifndef STRATASIM_VALIDATE_PROCESS_GROUP_H_
#define STRATASIM_VALIDATE_PROCESS_GROUP_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace stratasim::validate {

// A failed or timed-out exchange with a peer (peer() = -1 when not one peer's fault).
class ProcessGroupError : public Error {
 public:
  ProcessGroupError(int peer, const std::string& message) : Error(message), peer_(peer) {}
  int peer() const { return peer_; }

 private:
  int peer_;
};

// What a data-plane call is doing, for its error message ("all_reduce 'grads' (task 12)"), and
// how the caller's run tells it to give up. The call polls `cancelled`; once it returns true
// the call throws Cancelled (the run is already ending with another error).
struct Wait {
  std::string what;
  std::function<bool()> cancelled;
};

// Thrown by a data-plane call whose Wait::cancelled became true.
struct Cancelled {};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The server this process runs on (MPI_Get_processor_name). Processes with the same name
  // share a server, which is how `calibrate --fabric` tells intra- from inter-server links.
  virtual std::string host() const = 0;
  // Seconds a call waits for a peer before failing (validate --comm-timeout).
  virtual double timeout_s() const = 0;

  // ---- Data plane: thread-safe. ----
  // `channel` (0 <= channel <= kMaxChannel) separates independent message streams: a
  // collective's id, a transfer's number. Messages of one (sender, receiver, channel) arrive
  // in the order they were sent. Sizes must match on both ends. Implementations split
  // messages larger than their transport's limit (MPI counts are int).
  static constexpr int kMaxChannel = (1 << 30) - 1;
  virtual void Send(int peer, int channel, const void* data, std::size_t bytes,
                    const Wait& wait) = 0;
  virtual void Recv(int peer, int channel, void* data, std::size_t bytes, const Wait& wait) = 0;
  // A send to `to` and a receive from `from` at once (a ring step), without the deadlock that
  // two blocking calls in a ring would risk.
  virtual void SendRecv(int to, const void* send, std::size_t send_bytes, int from, void* recv,
                        std::size_t recv_bytes, int channel, const Wait& wait) = 0;

  // ---- Control plane: every process's main thread, in the same order. ----
  virtual void Barrier() = 0;
  // `root`'s text replaces every process's `text`.
  virtual void Broadcast(std::string* text, int root) = 0;
  // Every process's text, by rank, on every process.
  virtual std::vector<std::string> AllGather(const std::string& mine) = 0;
  // Rank 0 gets every process's text by rank; a rank that sent nothing within timeout_s() is
  // nullopt (it died or hangs), so that rank 0 can still report what it has. Other ranks get
  // an empty vector.
  virtual std::vector<std::optional<std::string>> GatherToRoot(const std::string& mine) = 0;
};

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_PROCESS_GROUP_H_
