// Matrix products through cuBLAS / cuBLASLt: the kernels the cuda backend runs for GEMM and
// attention tasks (TaskGraph GemmShape m, n, k, batch) in the task's format.
//
// Layout: row-major C[p][m][n] = A[p][m][k] · B[p]^T with B stored [n][k] (nn.Linear's weight
// layout, "TN" in cuBLAS terms, the only layout cuBLASLt's FP8 kernels take), or with
// `b_transposed = false` B stored [k][n] (attention's P·V). Batches are packed one after the
// other (strided batched GEMM).
//
// Formats (storage of A and B -> C, accumulation):
//   fp32  fp32 -> fp32, FP32 math        tf32  fp32 -> fp32, TF32 tensor cores
//   fp16  fp16 -> fp16, FP32 accumulate  bf16  bf16 -> bf16, FP32 accumulate
//   int8  int8 -> int32, INT32 accumulate (IMMA; cuBLAS wants k and the ld's multiples of 4)
//   fp8   E4M3 -> BF16, FP32 accumulate through cuBLASLt (compute capability 8.9+, TN only,
//         m, n, k multiples of 16), the FP8 forward GEMM of Transformer Engine.
#ifndef STRATASIM_KERNELS_GEMM_H_
#define STRATASIM_KERNELS_GEMM_H_

#include <cuda_runtime_api.h>

#include "core/dtype.h"

struct cublasContext;
struct cublasLtContext;

namespace stratasim::kernels {

struct GemmProblem {
  DType dtype = DType::kFP32;
  long long m = 0;
  long long n = 0;
  long long k = 0;
  long long batch = 1;
  bool b_transposed = true;  // B stored [n][k]

  // Storage format of C for this dtype (int8 -> INT32 stored as 4 bytes; fp8 -> BF16).
  double bytes_a() const;
  double bytes_b() const;
  double bytes_c() const;
  double flops() const { return 2.0 * m * n * k * batch; }
};

// Element bytes of C for a GEMM in `dtype` (int8 -> 4, fp8 -> 2 (BF16), others as stored).
double GemmOutputBytesPerElement(DType dtype);

// Handles of one device: create on the device (cudaSetDevice) that will run the GEMMs, use from
// one thread at a time. Owns a 32 MiB workspace, which cuBLAS(Lt) needs for its fastest
// Hopper kernels.
class Blas {
 public:
  Blas();
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  // Enqueues C = A · B (see the layout above) on `stream`. Throws stratasim::Error for a
  // format without a GEMM here (int4), a shape cuBLAS refuses, or a cuBLAS failure.
  void Gemm(const GemmProblem& p, const void* a, const void* b, void* c, cudaStream_t stream);

 private:
  void GemmFp8(const GemmProblem& p, const void* a, const void* b, void* c, cudaStream_t stream);

  cublasContext* handle_ = nullptr;
  cublasLtContext* lt_ = nullptr;
  void* workspace_ = nullptr;
  int device_ = -1;
  int compute_capability_ = 0;  // major * 10 + minor
};

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_GEMM_H_
