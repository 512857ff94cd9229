// Internal to kernels/*.cu: sum and max over the threads of a block (warp shuffles, then one
// value per warp through shared memory), as the row-wise kernels need one per row.
#ifndef STRATASIM_KERNELS_BLOCK_REDUCE_CUH_
#define STRATASIM_KERNELS_BLOCK_REDUCE_CUH_

namespace stratasim::kernels::detail {

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Every thread of the block gets the reduction of all threads' `v`. blockDim.x must be a
// multiple of 32 and at most 1024. Contains __syncthreads(): call from all threads.
template <typename Op>
__device__ float BlockReduce(float v, Op op) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  __syncthreads();  // partial[] may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = partial[0];
  for (int w = 1; w < warps; ++w) v = op(v, partial[w]);
  return v;
}

}  // namespace stratasim::kernels::detail

#endif  // STRATASIM_KERNELS_BLOCK_REDUCE_CUH_
