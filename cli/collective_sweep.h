// `stratasim collective`: the table nccl-tests prints, simulated on a scenario's cluster.
#ifndef STRATASIM_CLI_COLLECTIVE_SWEEP_H_
#define STRATASIM_CLI_COLLECTIVE_SWEEP_H_

#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim {

// What a sweep times at each size: one NCCL collective, or nccl-tests' sendrecv_perf (every rank
// r sends the buffer to (r+1) % n and receives one from (r-1+n) % n, grouped, so all at once).
enum class SweepOp { kCollective, kSendRecv };

struct CollectiveSweep {
  SweepOp op = SweepOp::kCollective;
  CollectiveKind kind = CollectiveKind::kAllReduce;  // op == kCollective only
  DType dtype = DType::kFP32;                        // nccl-tests' default type is float
  double min_bytes = 8;                              // -b
  double max_bytes = 128.0 * 1024 * 1024;            // -e
  double factor = 2;                                 // -f
  int gpus = 0;  // the first `gpus` ranks; 0 = every GPU of the cluster
  int root = 0;  // broadcast, reduce, gather, scatter
};

// The op as `--op` spells it: "sendrecv", or the collective's name.
std::string SweepOpName(const CollectiveSweep& sweep);

struct SweepRow {
  double bytes = 0;
  double count = 0;  // elements of the dtype
  double time_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  std::string algorithm;  // what the executor chose, e.g. "ring/simple/8ch"; sendrecv: "p2p"
};

// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce, (n-1)/n for
// reduce-scatter, all-gather, all-to-all, gather and scatter, 1 for broadcast and reduce (and
// for sendrecv, which RunCollectiveSweep handles without a CollectiveKind).
double BusBandwidthFactor(CollectiveKind kind, int n);

// nccl-tests size syntax: a number with an optional K, M or G suffix (powers of 1024), or any
// form core/units.h parses ("1GiB", "64MB"). Throws UnitError.
double ParseSweepSize(const std::string& text);

// A sweep's largest size and most rows: sizes stay exact in a double, and the sweep's graph
// small (docs/limits.md).
constexpr double kMaxSweepBytes = 1099511627776.0;  // 1 TiB
constexpr int kMaxSweepRows = 1000;

// Simulates one collective (or one sendrecv exchange) per size, a barrier between sizes, in one
// simulation and returns a row per size. Throws stratasim::Error for an impossible sweep.
// The options' own errors (stratasim::Error): sizes, factor, GPUs, root.
void CheckCollectiveSweep(const Scenario& s, const CollectiveSweep& sweep);

// The bytes a row of the sweep moves on `n` GPUs come in multiples of this; and the rows' sizes
// (-b to -e by -f, rounded down to it, duplicates dropped). Call after CheckCollectiveSweep's
// bounds on -b, -e and -f.
double SweepUnit(const CollectiveSweep& sweep, int n);
std::vector<double> SweepSizes(const Scenario& s, const CollectiveSweep& sweep);

std::vector<SweepRow> RunCollectiveSweep(const Scenario& s, const CollectiveSweep& sweep);

std::string FormatSweepTable(const Scenario& s, const CollectiveSweep& sweep,
                             const std::vector<SweepRow>& rows);
std::string SweepToJson(const Scenario& s, const CollectiveSweep& sweep,
                        const std::vector<SweepRow>& rows);

}  // namespace stratasim

#endif  // STRATASIM_CLI_COLLECTIVE_SWEEP_H_
