// A plan's task graph as Chakra execution traces (docs/chakra.md): one `<prefix>.<rank>.et` per
// rank and `<prefix>.comm_groups.json` for the process groups.
#ifndef STRATASIM_CHAKRA_EXPORT_H_
#define STRATASIM_CHAKRA_EXPORT_H_

#include <string>
#include <vector>

#include "core/task_graph.h"

namespace stratasim::chakra {

// Node types and attributes written (Chakra's names, as its feeder and ASTRA-sim read them):
//   compute     COMP_NODE       num_ops (FLOPs), tensor_size (bytes), is_cpu_op
//   collective  COMM_COLL_NODE  comm_type, comm_size (bytes, nccl-tests' size), pg_name
//   send        COMM_SEND_NODE  comm_src, comm_dst, comm_tag, comm_size
//   receive     COMM_RECV_NODE  comm_src, comm_dst, comm_tag, comm_size
//   copy        MEM_LOAD_NODE (host to device), MEM_STORE_NODE (device to host), tensor_size
//   memory      METADATA_NODE   memory_delta_bytes (ASTRA-sim skips metadata nodes it cannot use)
// data_deps are the task's dependencies; ctrl_deps the task before it on its stream (a stream
// runs its tasks in order, which Chakra has no other way to say). What Chakra has no field for
// (stream, iteration, phase, op, dtype, category, GEMM shape, exact FLOPs and bytes, the
// collective's root, algorithm and all-to-all-v matrix) travels in attributes of its own names,
// which other tools ignore, so that ImportChakra gives back the same graph.
struct ChakraFiles {
  std::vector<std::string> ranks;  // the bytes of `<prefix>.<rank>.et`, in rank order
  std::string comm_groups;         // the JSON of `<prefix>.comm_groups.json`
  long long nodes = 0;
};

// The files of `g` (written by the caller: cli/chakra_export_command.cpp). Throws
// stratasim::Error for a graph Chakra cannot hold, naming the task: a folded graph (mirror tasks
// stand for ranks not simulated), a dependency on another rank's task (a Chakra file holds one
// rank), ranks with start times (a shared-cluster run).
ChakraFiles ExportChakra(const TaskGraph& g);

}  // namespace stratasim::chakra

#endif  // STRATASIM_CHAKRA_EXPORT_H_
