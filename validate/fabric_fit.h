// From an nccl-tests-like fabric sweep (validate/fabric_sweep.h) to one achievable bandwidth and
// one per-hop latency per link class and protocol: the `fabric:` entries of the calibration
// file (core/calibration.h), which the simulator puts on its links and its tuner.
//
// Each collective's time is modelled as nccl-tests models it (nccl-tests doc/PERFORMANCE.md):
//     t(size) = alpha + size x busbw_factor / beta
// where busbw_factor converts the buffer size into the bytes one rank moves over its busiest
// link under a ring (or pairwise) algorithm, so that beta is the link's bandwidth whatever the
// collective: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; a send/recv
// pair 1. alpha is the collective's fixed cost; it is divided by the steps the algorithm takes
// in sequence (ring all-reduce 2(n-1), all-gather/reduce-scatter/all-to-all n-1, send/recv 1)
// to give a latency per hop, which is what the simulator pays per step
// (sim/collectives/protocol.h). NCCL's per-collective base latency is thus folded into the
// per-hop figure: with one group size per class a sweep cannot separate the two.
//
// The fit is robust, in two stages:
//   bandwidth  the Theil-Sen slope (median of pairwise slopes) of t over the bus bytes of the
//              largest third of the sizes (at least 2): bandwidth-bound, and a few slow
//              repetitions do not move a median;
//   latency    the median over the smallest third of the sizes (at least 1) of t - x / beta,
//              clamped at 0.
// A link class's figures are the medians over its collectives' fits, so that one collective
// whose implementation is slow (the host's all-to-all) does not set the link's figure alone.
#ifndef STRATASIM_VALIDATE_FABRIC_FIT_H_
#define STRATASIM_VALIDATE_FABRIC_FIT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/calibration.h"

namespace stratasim::validate {

// What the fabric sweep runs: nccl-tests' all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf and sendrecv_perf (here one send/recv pair).
enum class FabricOp { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };
inline constexpr FabricOp kAllFabricOps[] = {FabricOp::kAllReduce, FabricOp::kAllGather,
                                             FabricOp::kReduceScatter, FabricOp::kAllToAll,
                                             FabricOp::kSendRecv};

std::string_view ToString(FabricOp op);
std::optional<FabricOp> ParseFabricOp(const std::string& name);

// nccl-tests' busbw / algbw for `op` over `n` members (see above).
double BusBandwidthFactor(FabricOp op, int n);
// Steps one member takes in sequence per operation (see above).
int LatencySteps(FabricOp op, int n);

// One measured point: the slowest member's time of one operation of `bytes` (nccl-tests'
// size: Collective::bytes; for send/recv the message) over `group_size` members.
struct FabricSample {
  std::string link_class;  // "intra" or "inter" (core/calibration.h)
  std::string protocol;    // "simple", "ll", "ll128"
  FabricOp op = FabricOp::kAllReduce;
  int group_size = 2;
  double bytes = 0;
  double seconds = 0;
};

struct FabricOpFit {
  FabricOp op = FabricOp::kAllReduce;
  int group_size = 2;
  double alpha_s = 0;        // the operation's fixed cost
  double bandwidth_Bps = 0;  // beta: bus bytes per second
  double hop_latency_s = 0;  // alpha / LatencySteps
};

struct FabricClassFit {
  std::string link_class;
  std::string protocol;
  double latency_s = 0;      // per hop: median of the operations' hop latencies
  double bandwidth_Bps = 0;  // median of the operations' bandwidths
  std::vector<FabricOpFit> ops;
  // Operations of the sweep that could not be fitted, with why (time not growing with size).
  std::vector<std::string> skipped;
};

// Fits one operation's sweep (every sample of the same class, protocol, op and group size).
// Throws stratasim::Error when it cannot: fewer than 2 distinct sizes, or time that does not
// grow with size over the large ones.
FabricOpFit FitFabricOp(const std::vector<FabricSample>& sweep);

// Fits every (class, protocol) of `samples`, in the order they first appear. Throws
// stratasim::Error naming the class when none of its operations could be fitted.
std::vector<FabricClassFit> FitFabric(const std::vector<FabricSample>& samples);

// The fits as calibration entries (within the reader's limits, core/limits.h).
std::vector<FabricCalibration> ToFabricCalibration(const std::vector<FabricClassFit>& fits);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_FABRIC_FIT_H_
