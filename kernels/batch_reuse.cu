#include <cub/device/device_scan.cuh>
#include <string>

#include "core/error.h"
#include "kernels/batch_reuse.h"
#include "kernels/batch_reuse_ref.h"
#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"

namespace stratasim::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void SearchKernel(const std::int64_t* sorted_ids, const std::int32_t* sorted_slots,
                             long long n_previous, const std::int64_t* current, long long n_current,
                             std::int32_t* hit_slot, std::int32_t* miss) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n_current;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const std::int64_t id = current[i];
    long long lo = 0, hi = n_previous;  // first position whose id is >= `id`
    while (lo < hi) {
      const long long mid = lo + (hi - lo) / 2;
      if (sorted_ids[mid] < id) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    const bool hit = lo < n_previous && sorted_ids[lo] == id;
    hit_slot[i] = hit ? sorted_slots[lo] : -1;
    miss[i] = hit ? 0 : 1;
  }
}

__global__ void CompactKernel(const std::int32_t* miss, const std::int32_t* place,
                              long long n_current, std::int32_t* misses, std::int32_t* miss_count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n_current;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    if (miss[i] != 0) misses[place[i]] = static_cast<std::int32_t>(i);
    if (i == n_current - 1) *miss_count = place[i] + miss[i];
  }
}

int Blocks(long long n) {
  const long long blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 ? (blocks < 1 ? 1 : blocks) : 65535);
}

}  // namespace

void FindBatchReuse(const std::int64_t* sorted_ids, const std::int32_t* sorted_slots,
                    long long n_previous, const std::int64_t* current, long long n_current,
                    std::int32_t* hit_slot, std::int32_t* misses, std::int32_t* miss_count,
                    cudaStream_t stream) {
  if (n_previous < 0 || n_current < 0 || n_previous > batch_reuse::kMaxBatchVertices ||
      n_current > batch_reuse::kMaxBatchVertices) {
    throw Error("FindBatchReuse: batch sizes " + std::to_string(n_previous) + " and " +
                std::to_string(n_current) + " must be in [0, " +
                std::to_string(batch_reuse::kMaxBatchVertices) + "]");
  }
  if (n_current == 0) {
    STRATASIM_CUDA_CHECK(cudaMemsetAsync(miss_count, 0, sizeof(std::int32_t), stream));
    return;
  }
  DeviceBuffer flags(static_cast<std::size_t>(n_current) * sizeof(std::int32_t));
  DeviceBuffer places(static_cast<std::size_t>(n_current) * sizeof(std::int32_t));
  SearchKernel<<<Blocks(n_current), kThreads, 0, stream>>>(
      sorted_ids, sorted_slots, n_previous, current, n_current, hit_slot, flags.as<std::int32_t>());
  STRATASIM_CUDA_CHECK(cudaGetLastError());
  std::size_t scratch_bytes = 0;
  const int n = static_cast<int>(n_current);
  STRATASIM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
      nullptr, scratch_bytes, flags.as<std::int32_t>(), places.as<std::int32_t>(), n, stream));
  DeviceBuffer scratch(scratch_bytes > 0 ? scratch_bytes : 1);
  STRATASIM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.get(), scratch_bytes,
                                                     flags.as<std::int32_t>(),
                                                     places.as<std::int32_t>(), n, stream));
  CompactKernel<<<Blocks(n_current), kThreads, 0, stream>>>(
      flags.as<std::int32_t>(), places.as<std::int32_t>(), n_current, misses, miss_count);
  STRATASIM_CUDA_CHECK(cudaGetLastError());
  // The scratch buffers are freed when this returns: wait for the kernels that use them.
  STRATASIM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace stratasim::kernels
