// The multi-process steps of `mpirun -np N stratasim validate` (docs/validate.md, "On a
// cluster"): every process loads the scenario and plans, then
//   1. CheckAgreement: the processes compare the graphs they planned (validate/graph_hash.h)
//      and their number with the plan's ranks; any difference stops every process, with the
//      same message, before anything runs;
//   2. per strategy, RunAndGather: process p runs rank p (RunOptions::processes) and sends its
//      trace, or its error with the partial trace, to rank 0, which merges them
//      (validate/trace_gather.h); rank 0 then simulates, compares and writes the report as a
//      single process does (cli/validate_command.cpp).
#ifndef STRATASIM_CLI_VALIDATE_MPI_H_
#define STRATASIM_CLI_VALIDATE_MPI_H_

#include <string>
#include <utility>
#include <vector>

#include "cli/mpi_process_group.h"
#include "core/cluster.h"
#include "core/task_graph.h"
#include "core/trace.h"
#include "validate/backend.h"

namespace stratasim {

// One strategy as every process planned it: its name and graph (nullptr when it could not be
// planned, which every process then agrees on too).
struct PlannedGraph {
  std::string name;
  const TaskGraph* graph = nullptr;
};

struct Agreement {
  std::string error;               // empty when the processes agree
  std::vector<std::string> hosts;  // each process's server (MPI_Get_processor_name), by rank
};

// Exchanges (AllGather) every process's count of ranks and graph hashes, then checks on each
// process, with the same result everywhere:
//   - every process planned what rank 0 did, else the error names the ranks that differ and the
//     first strategy where they do;
//   - there are as many processes as the plan has ranks (`ranks`), else the error gives both
//     counts and what to do (-np, --fit).
// `scenario` names the file in the messages.
Agreement CheckAgreement(validate::ProcessGroup& group, const std::string& scenario, int ranks,
                         const std::vector<PlannedGraph>& plans);

// What rank 0 gets back from one strategy's run on every process.
struct GatheredRun {
  ExecutionTrace trace;       // the merged trace (all tasks; -1 where unmeasured)
  bool measured = false;      // every process ran its rank to the end
  std::string error;          // else: each failed or silent rank named, "; "-separated
  bool lost_process = false;  // a process sent nothing: it died or hangs, the job cannot go on
};

// Runs this process's rank of `g` (a fresh data plane first, so that a failed run's messages
// cannot reach this one), then gathers every process's outcome on rank 0 and merges them. Other
// ranks get an empty GatheredRun. Throws validate::ProcessGroupError when this process cannot
// reach the others (rank 0 gone, or a process missing from the fresh data plane).
GatheredRun RunAndGather(validate::Backend& backend, const TaskGraph& g, validate::RunOptions run,
                         mpi::MpiProcessGroup& group);

// The cluster a multi-process run is simulated on: `server` (the backend's description of one
// server, with one GPU per process there) once per server of `hosts` (each process's server,
// by rank), joined by the scenario's NICs and network (`scenario`: the backend sees no fabric;
// `calibrate --fabric` measures it, docs/validate.md). That needs every server to hold the same
// number of processes with consecutive ranks, as mpirun and srun place them by default;
// otherwise the run is simulated as one server of all the processes and `*note` says why.
// Throws Error unless `server` has one group of one server.
ClusterSpec ClusterOfProcesses(ClusterSpec server, const std::vector<std::string>& hosts,
                               const ClusterSpec& scenario, std::string* note);

// "2 MPI processes on 1 server (node1)" for the report's hardware line.
std::string ProcessesLine(const std::vector<std::string>& hosts);

}  // namespace stratasim

#endif  // STRATASIM_CLI_VALIDATE_MPI_H_
