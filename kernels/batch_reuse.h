// BRGraph's duplicate detection on the GPU (kernels/batch_reuse_ref.h says what it computes):
// one thread per vertex of the current batch binary-searches the previous batch's sorted ids,
// writing its row in the kept buffer or -1; an exclusive prefix sum of the miss flags (CUB)
// gives each miss its place, and a second pass writes the misses' positions in order.
#ifndef STRATASIM_KERNELS_BATCH_REUSE_H_
#define STRATASIM_KERNELS_BATCH_REUSE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace stratasim::kernels {

// Device arrays: sorted_ids/sorted_slots (n_previous, batch_reuse::SortWithSlots's layout),
// current (n_current ids), hit_slot (n_current), misses (n_current; the first *miss_count are
// written) and miss_count (one int). Scratch is allocated on the current device; an allocation
// that fails throws stratasim::Error. Counts must be at most batch_reuse::kMaxBatchVertices.
void FindBatchReuse(const std::int64_t* sorted_ids, const std::int32_t* sorted_slots,
                    long long n_previous, const std::int64_t* current, long long n_current,
                    std::int32_t* hit_slot, std::int32_t* misses, std::int32_t* miss_count,
                    cudaStream_t stream);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_BATCH_REUSE_H_
