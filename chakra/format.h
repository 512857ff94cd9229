// What stratasim's Chakra export and import share: the file naming, the length-delimited framing
// of Chakra's per-rank files, the mapping between collective kinds, and typed attribute access.
//
// A Chakra execution trace is one file per rank, `<prefix>.<rank>.et` (the name ASTRA-sim's
// workload layer opens, astra-sim/workload/Workload.cc), holding a GlobalMetadata message and
// then Node messages, each preceded by its size as a varint (Chakra's
// src/third_party/utils/protolib.py, encodeMessage/decodeMessage).
#ifndef STRATASIM_CHAKRA_FORMAT_H_
#define STRATASIM_CHAKRA_FORMAT_H_

#include <optional>
#include <string>

#include "chakra/et_def.pb.h"
#include "core/task_graph.h"

namespace stratasim::chakra {

// The schema version our files declare (GlobalMetadata.version), that of the public schema
// revision et_def.proto follows.
inline constexpr char kSchemaVersion[] = "0.0.4";

// Attributes stratasim writes beyond Chakra's own (num_ops, tensor_size, is_cpu_op, comm_type,
// comm_size, comm_src, comm_dst, comm_tag, pg_name): what a TaskGraph holds and Chakra has no
// field for, so that an exported graph imports whole. Other tools ignore them.
namespace attr {
inline constexpr char kStream[] = "stream";             // string: the task's stream
inline constexpr char kIteration[] = "iteration";       // int64
inline constexpr char kPhase[] = "phase";               // string: ToString(Phase)
inline constexpr char kOp[] = "op";                     // string: ToString(OpKind)
inline constexpr char kDType[] = "dtype";               // string: ToString(DType)
inline constexpr char kCategory[] = "category";         // string
inline constexpr char kFlops[] = "flops";               // double: exact, beside num_ops
inline constexpr char kBytes[] = "bytes";               // double: exact, beside the integer size
inline constexpr char kGemm[] = "gemm";                 // double list: m, n, k, batch
inline constexpr char kCausal[] = "causal";             // bool
inline constexpr char kCommDType[] = "comm_dtype";      // string: the collective's element type
inline constexpr char kRoot[] = "comm_root";            // int32: the collective's root rank
inline constexpr char kAlgorithm[] = "comm_algorithm";  // string, when not "auto"
inline constexpr char kMatrix[] = "comm_matrix";        // double list: all-to-all-v, row-major
inline constexpr char kMemoryDelta[] = "memory_delta_bytes";  // double, on a METADATA_NODE
// GlobalMetadata: every stream in TaskGraph order and their priorities (when any is not 0).
inline constexpr char kStreams[] = "streams";                     // string list
inline constexpr char kStreamPriorities[] = "stream_priorities";  // int64 list
}  // namespace attr

// `<prefix>.<rank>.et`.
std::string RankFile(const std::string& prefix, int rank);
// `<prefix>.comm_groups.json`: the process groups, {"<pg_name>": [ranks in ring order]}, the
// form of ASTRA-sim's --comm-group-configuration file (Workload::initialize_comm_groups).
std::string CommGroupsFile(const std::string& prefix);

// Appends `m` to `out` preceded by its size as a varint.
void AppendDelimited(const google::protobuf::MessageLite& m, std::string* out);

ChakraProtoMsg::CollectiveCommType ToCommType(CollectiveKind k);
// kAllToAllV is written as ALL_TO_ALL with a comm_matrix attribute; REDUCE_SCATTER_BLOCK reads as
// a reduce-scatter. nullopt: no stratasim collective (BARRIER, unknown values).
std::optional<CollectiveKind> FromCommType(long long type);

// Attributes of one node by name, typed as Chakra's readers accept them. Integer getters take
// any of the integer value kinds (files written by other tools differ: int32 vs int64); a value
// of another kind throws the rule broken, which the caller locates.
const ChakraProtoMsg::AttributeProto* FindAttr(const ChakraProtoMsg::Node& n,
                                               const std::string& name);
std::optional<long long> IntAttr(const ChakraProtoMsg::Node& n, const std::string& name);
std::optional<double> DoubleAttr(const ChakraProtoMsg::Node& n, const std::string& name);
std::optional<std::string> StringAttr(const ChakraProtoMsg::Node& n, const std::string& name);
std::optional<bool> BoolAttr(const ChakraProtoMsg::Node& n, const std::string& name);

// Adds an attribute to a node or the metadata.
ChakraProtoMsg::AttributeProto* AddAttr(
    google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>* attrs,
    const std::string& name);

}  // namespace stratasim::chakra

#endif  // STRATASIM_CHAKRA_FORMAT_H_
