// The fabric sweep of `stratasim calibrate --fabric`: nccl-tests' all_reduce, all_gather,
// reduce_scatter, alltoall and sendrecv measurements, per link class, over the processes of a
// multi-process run (validate/process_group.h), for the fit of validate/fabric_fit.h.
//
// Link classes, from the processes' server names (ProcessGroup::host()):
//   intra  the processes on rank 0's server (two or more): GPU-to-GPU links inside a server
//          (NVSwitch, NVLink, PCIe; the host backend: shared memory);
//   inter  the first process of each server (two or more servers): one process per server,
//          so the traffic crosses the NICs and the network.
// A class the run cannot measure (one server: no inter; one process per server: no intra) is
// named in FabricMeasurements::unmeasured with why.
//
// Each measurement is a tiny TaskGraph over all the run's ranks holding warm-up + timed
// repetitions of one operation over the class's ranks, on one stream, run through the
// backend's Run with RunOptions::processes (every process runs its own rank; processes
// outside the class run nothing). A repetition's time is the slowest member's: from the last
// member's start to the last member's end, on the processes' common clock (backend.h). Each
// process sends its records to rank 0 (GatherToRoot), which computes the times and broadcasts
// them, so that every process takes the same decisions (more repetitions, next size) in the
// same order. Repetitions double until the timed ones total BenchOptions::min_total_s, like
// the single-process `calibrate` (validate/host/host_backend.cpp).
#ifndef STRATASIM_VALIDATE_FABRIC_SWEEP_H_
#define STRATASIM_VALIDATE_FABRIC_SWEEP_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/task_graph.h"
#include "core/trace.h"
#include "validate/backend.h"
#include "validate/fabric_fit.h"
#include "validate/process_group.h"

namespace stratasim::validate {

struct FabricSweep {
  // Sizes double from min_bytes to max_bytes (nccl-tests -b 8 -e 8G -f 2). A size smaller
  // than one element per member for the operation is skipped.
  double min_bytes = 8;
  double max_bytes = 64.0 * 1024 * 1024;
  DType dtype = DType::kFP32;
  std::vector<FabricOp> ops = {std::begin(kAllFabricOps), std::end(kAllFabricOps)};
  BenchOptions bench;
  // Stop growing an operation's size once one repetition takes this long: the sweep's time
  // stays bounded on a slow transport, and the fit has its large sizes already.
  double max_op_s = 2.0;
};

// The ranks of one link class.
struct FabricClassGroup {
  std::string link_class;
  std::vector<int> ranks;
};

// The link classes a run of processes on `hosts` (server name by rank) can measure;
// `unmeasured` receives "CLASS: why" for the others.
std::vector<FabricClassGroup> FabricClassGroups(const std::vector<std::string>& hosts,
                                                std::vector<std::string>* unmeasured);

// Runs one graph over the run's ranks: every process calls it with the same graph, in the same
// order, and gets back its own trace (records of ranks other processes ran: start_s = -1).
using FabricRunner = std::function<ExecutionTrace(const TaskGraph&)>;

struct FabricMeasurements {
  std::vector<FabricSample> samples;    // on every process, identical
  std::vector<std::string> measured;    // link classes measured
  std::vector<std::string> unmeasured;  // "CLASS: why"
};

// Every process calls this with the same arguments. `processes` null: one process runs all
// `world_ranks` ranks, which then count as one server. `protocol` labels the samples (the
// caller chose it for the transport: host "simple", NCCL_PROTO on cuda). The log (rank 0's;
// null for none) prints each size's time and bus bandwidth as nccl-tests does. Throws
// BackendError from the runner, ProcessGroupError when a process's records do not arrive.
FabricMeasurements MeasureFabric(const FabricRunner& run, ProcessGroup* processes, int world_ranks,
                                 const FabricSweep& sweep, const std::string& protocol,
                                 std::ostream* log);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_FABRIC_SWEEP_H_
