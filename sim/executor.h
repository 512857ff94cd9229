// The SimGrid executor: runs a TaskGraph on the platform of a cluster and records when every
// task ran.
//
// Compute tasks become Execs on their GPU's host (duration from core/compute_model.h), transfers
// and host<->device copies become Comms along the platform's routes, and each collective is
// lowered into flows (sim/collectives/lowering.h) that start as their dependencies complete.
// Activities are created only when they become ready, from SimGrid's completion signal, with
// no actors: this avoids SimGrid 3.32's quadratic cost of a DAG created up front
// (shared/notes/simgrid-3.32.md). Fixed delays (protocol latencies) are SimGrid kernel timers,
// not activities (docs/collectives.md, "Speed"). Stream priorities (TaskGraph::SetStreamPriority)
// hold a rank's communication tasks while a higher-priority one is in flight there
// (sim/stream_gate.h; docs/architecture.md, "Stream priorities").
#ifndef STRATASIM_SIM_EXECUTOR_H_
#define STRATASIM_SIM_EXECUTOR_H_

#include <functional>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/scenario.h"
#include "core/task_graph.h"
#include "core/trace.h"
#include "sim/trace_wire.h"

namespace stratasim::sim {

// Where the executor takes its tasks from: a whole graph, or a graph planned while it is
// simulated (strategies/iteration_feed.h), whose finished tasks are retired to bound memory.
class TaskSource {
 public:
  virtual ~TaskSource() = default;
  // The graph as far as it goes; valid until the next More() or Retire().
  virtual const TaskGraph& graph() const = 0;
  // Adds every task of the iterations up to `iteration`; false once the graph is complete.
  virtual bool More(int iteration) = 0;
  // Whether finished tasks leave the graph (Retire); a whole graph keeps them.
  virtual bool retires() const = 0;
  virtual void Retire(TaskId below) = 0;
};

// What a simulation hands out as tasks retire, in id order, once each and every task before
// it finished: the task, when it ran, and for a collective member the algorithm its
// collective ran ("ring/simple/4ch"; "" for other tasks). Between batches, `seal`, when set,
// with a time before which no task handed out later started.
struct RetireSink {
  std::function<void(const Task&, const TraceRecord&, const std::string& algorithm)> task;
  std::function<void(double safe_s)> seal;
};

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

// The same for any work: StartChild runs `work` in a forked child, which writes its reply
// with the WireWrite it is given (an exception becomes the child's error, as does running out
// of memory or being killed); FinishChild hands the reply to `read` and reaps the child,
// throwing stratasim::Error with the child's error.
SimulationProcess StartChild(const std::function<void(const WireWrite&)>& work);
void FinishChild(SimulationProcess& p, const std::function<void(const WireRead&)>& read);

// Runs the simulation in this process: at most once per process.
ExecutionTrace SimulateInProcess(const TaskGraph& g, const ClusterSpec& cluster,
                                 const SimulationSpec& spec);

// Simulates `source`'s tasks in this process (at most once per process), handing each to
// `sink` as it retires; returns the trace without records or collective algorithms.
ExecutionTrace SimulateStreaming(TaskSource& source, const ClusterSpec& cluster,
                                 const SimulationSpec& spec, const RetireSink& sink);

// The same, writing the trace in its wire form (sim/trace_wire.h) record by record instead of
// returning it: what the simulation child does. Returns false if `write` failed.
bool SimulateInProcessToWire(const TaskGraph& g, const ClusterSpec& cluster,
                             const SimulationSpec& spec,
                             const std::function<bool(const void*, size_t)>& write);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_EXECUTOR_H_
