// Up to N child processes at once over a list of items: the loop `stratasim sweep` runs its
// points in (cli/sweep_command.cpp). Each item runs in a child started with sim::StartChild (or
// sim::StartSimulation) and is finished with sim::FinishChild; the order in which children end
// changes nothing, since each item's result goes to its own place.
#ifndef STRATASIM_CLI_CHILD_POOL_H_
#define STRATASIM_CLI_CHILD_POOL_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "sim/executor.h"

namespace stratasim {

struct ChildPoolTasks {
  // Starts item i's child; std::nullopt when the item needs none. A stratasim::Error thrown is
  // the item's failure.
  std::function<std::optional<sim::SimulationProcess>(size_t i)> start;
  // Reads item i's reply and reaps its child (sim::FinishChild); an Error is the item's failure.
  std::function<void(size_t i, sim::SimulationProcess& process)> finish;
  std::function<void(size_t i, const std::string& error)> fail;
  // Called at least every `idle_ms` while children run (MPI: rank 0 receives the other ranks'
  // results meanwhile); not called when idle_ms is 0.
  std::function<void()> idle;
  int idle_ms = 0;
};

// Runs items [0, n), at most `at_once` (>= 1) at a time, in index order.
void RunChildPool(size_t n, int at_once, const ChildPoolTasks& tasks);

}  // namespace stratasim

#endif  // STRATASIM_CLI_CHILD_POOL_H_
