// The SimGrid executor: runs a TaskGraph on the platform of a cluster and records when every
// task ran.
//
// Compute tasks become Execs on their GPU's host (duration from sim/compute_model.h), transfers
// and host<->device copies become Comms along the platform's routes, and each collective is
// lowered into flows (sim/collectives/lowering.h) that start as their dependencies complete.
// Activities are created only when they become ready, from SimGrid's completion signal, with
// no actors: this avoids SimGrid 3.32's quadratic cost of a DAG created up front
// (shared/notes/simgrid-3.32.md). Fixed delays (protocol latencies) are SimGrid kernel timers,
// not activities (docs/collectives.md, "Speed").
#ifndef STRATASIM_SIM_EXECUTOR_H_
#define STRATASIM_SIM_EXECUTOR_H_

#include <functional>
#include <vector>

#include "core/cluster.h"
#include "core/scenario.h"
#include "core/task_graph.h"
#include "core/trace.h"

namespace stratasim::sim {

// Runs the simulation in a child process, since SimGrid allows one Engine per process; callable
// any number of times. Throws stratasim::Error with the child's message when it fails.
ExecutionTrace Simulate(const TaskGraph& g, const ClusterSpec& cluster, const SimulationSpec& spec);

// Simulate() in two halves, to run several simulations at once (`stratasim run -j N`):
// StartSimulation forks the child and returns at once; WaitForAnySimulation blocks until one
// of `running` has its reply ready and returns its index; FinishSimulation reads that reply
// and reaps the child (blocking until it is done). Each started process must be finished.
struct SimulationProcess {
  int pid = -1;
  int fd = -1;                         // the read end of the child's reply pipe
  unsigned long long max_records = 0;  // the graph's task count: the trace has that many
  int cleanup_slot = -1;               // core/cleanup.h: a signal kills the child
};
SimulationProcess StartSimulation(const TaskGraph& g, const ClusterSpec& cluster,
                                  const SimulationSpec& spec);
size_t WaitForAnySimulation(const std::vector<SimulationProcess>& running);
ExecutionTrace FinishSimulation(SimulationProcess& p);

// Runs the simulation in this process: at most once per process.
ExecutionTrace SimulateInProcess(const TaskGraph& g, const ClusterSpec& cluster,
                                 const SimulationSpec& spec);

// The same, writing the trace in its wire form (sim/trace_wire.h) record by record instead of
// returning it: what the simulation child does. Returns false if `write` failed.
bool SimulateInProcessToWire(const TaskGraph& g, const ClusterSpec& cluster,
                             const SimulationSpec& spec,
                             const std::function<bool(const void*, size_t)>& write);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_EXECUTOR_H_
