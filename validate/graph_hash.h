// A fingerprint of a task graph, so that the processes of a multi-process `validate` run can
// check at start that they planned the same graphs (same scenario, options and program) before
// any of them runs one: a process that planned differently would pair its collectives with the
// wrong peers, deadlock or compare garbage.
//
// The hash covers everything an executor acts on: the ranks, the streams and their priorities,
// every task's fields (kind, rank, stream, iteration, deps, sizes, FLOPs, GEMM shape, dtype,
// name, peer and tag) and every collective (kind, members, bytes, matrix, root, algorithm).
// Floating-point figures are hashed by their bits: the planners are deterministic, so the same
// plan gives the same bits on every process of one build.
#ifndef STRATASIM_VALIDATE_GRAPH_HASH_H_
#define STRATASIM_VALIDATE_GRAPH_HASH_H_

#include <cstdint>
#include <string>

#include "core/task_graph.h"

namespace stratasim::validate {

// 64-bit FNV-1a (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/) over the graph's
// fields in a fixed order, each integer as 8 little-endian bytes and each string with its length
// first, so that adjacent fields cannot run into each other.
std::uint64_t GraphHash(const TaskGraph& g);

// The hash as 16 lowercase hex digits, for messages and the report.
std::string GraphHashHex(std::uint64_t hash);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_GRAPH_HASH_H_
