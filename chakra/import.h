// Chakra execution traces as a task graph that stratasim simulates on its own platform models
// (docs/chakra.md): the workload of a trace made for ASTRA-sim, run on a scenario's cluster.
#ifndef STRATASIM_CHAKRA_IMPORT_H_
#define STRATASIM_CHAKRA_IMPORT_H_

#include <string>

#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim::chakra {

struct ImportOptions {
  // The ranks may be at most the cluster's GPUs; rank r runs on GPU r.
  const ClusterSpec* cluster = nullptr;
  // Compute nodes with a duration_micros and no num_ops are costed so that the rank's GPU takes
  // that long under this compute model (core/compute_model.h).
  const SimulationSpec* simulation = nullptr;
  // The element type of compute nodes without a dtype attribute (the training precision).
  DType dtype = DType::kBF16;
  // Iterations to simulate (warm-up + measured): a trace of one iteration is repeated that many
  // times, each starting on a rank when the rank's previous iteration has ended; a trace whose
  // nodes carry the iteration attribute must hold at least that many (the first are kept).
  int iterations = 1;
  // Whether ctrl_deps are dependencies. Tools disagree: Chakra's PyTorch converter writes an
  // operator's parent in the call tree there, Chakra's feeder reads data_deps only and its
  // FeederV3 has a switch for each; stratasim's export writes the task before on its stream,
  // which the stream attribute orders anyway. Off by default.
  bool ctrl_deps = false;
};

// Reads `<prefix>.0.et`, `<prefix>.1.et`, ... (as many as exist; or, when `prefix` is a folder,
// the one set of `*.0.et` files in it) and `<prefix>.comm_groups.json` when it exists.
// Collectives are matched across ranks by process group (pg_name; "" or "0" is every rank) and
// order in the files; sends and receives by (comm_src, comm_dst, comm_tag) and order. Throws
// ConfigError located at the file, naming the node id and the rule broken, for bad input:
// unreadable or malformed files, more ranks than the cluster has GPUs, more than
// limits::kChakraNodes nodes, dependencies on missing nodes or cycles, unmatched collectives or
// transfers, unsupported node types or attribute values.
TaskGraph ImportChakra(const std::string& prefix, const ImportOptions& options);

// The prefix `path` names: itself, or for a folder, the folder joined with the stem of its one
// `*.0.et` file. Throws ConfigError at `path` when a folder has none or several.
std::string ResolvePrefix(const std::string& path);

}  // namespace stratasim::chakra

#endif  // STRATASIM_CHAKRA_IMPORT_H_
