// BRGraph's batch reuse (Concurrency and Computation: Practice and Experience, 2022; from its
// abstract, the paper's text is not in our corpora): a sampled GNN
// mini-batch's vertex features are copied host-to-device, and consecutive mini-batches share
// many vertices, so the previous batch's features are kept on the GPU and only the vertices
// not among them (the misses) cross PCIe. Row s of the kept buffer holds the features of
// previous[s]. For each vertex of the current batch this finds its row there (a hit, gathered
// device-to-device) or -1, and the positions of the misses in increasing order: the compaction
// (a prefix sum of the miss flags on the GPU) that lets the host copy only those rows.
//
// This is the CPU reference of kernels/batch_reuse.h; both are checked against each other in
// kernels/batch_reuse_test.cpp.
#ifndef STRATASIM_KERNELS_BATCH_REUSE_REF_H_
#define STRATASIM_KERNELS_BATCH_REUSE_REF_H_

#include <cstdint>
#include <vector>

namespace stratasim::kernels::batch_reuse {

struct Reuse {
  std::vector<std::int32_t> hit_slot;  // per current vertex: its row in the kept buffer, or -1
  std::vector<std::int32_t> misses;    // positions in `current` whose hit_slot is -1, ascending
};

// Batches hold at most this many vertices (row indices are 32-bit, as in the GPU kernel).
inline constexpr std::int64_t kMaxBatchVertices = 1LL << 30;

// Throws stratasim::Error when a batch exceeds kMaxBatchVertices or `previous` repeats a vertex
// (a sampled batch's vertex list is deduplicated before its features are loaded).
Reuse FindReuse(const std::vector<std::int64_t>& previous,
                const std::vector<std::int64_t>& current);

// `previous` sorted by id, with each id's row beside it: the search structure the GPU kernel
// takes (built once per batch).
struct SortedIds {
  std::vector<std::int64_t> ids;
  std::vector<std::int32_t> slots;
};
SortedIds SortWithSlots(const std::vector<std::int64_t>& previous);

}  // namespace stratasim::kernels::batch_reuse

#endif  // STRATASIM_KERNELS_BATCH_REUSE_REF_H_
