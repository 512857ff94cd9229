// Which real kernel a compute task of the TaskGraph becomes on a GPU, and the launcher that
// runs it. The plan keeps the task's shape, format and bytes moved; the choice of kernel only
// decides how those bytes and FLOPs are spent:
//
//   a task with a GEMM shape (kGemm, kAttention, kOther)  -> cuBLAS(Lt) strided-batched GEMM of
//       m, n, k, batch in the task's format (kernels/gemm.h). Attention tasks are the batched
//       GEMMs the models emit (attn_scores, attn_values); the softmax between them is its own
//       elementwise task. INT4 has no cuBLAS GEMM and runs as INT8; FP8 rounds m, n, k up to
//       multiples of 16 and INT8 k up to a multiple of 4 (cuBLAS alignment rules).
//   kOptimizer                  -> AdamW over flops / 10 parameters (AdamStepTask counts 10
//                                  FLOPs per parameter; strategies/layer_tasks.cpp), FP32
//                                  master weights and moments, gradients in the task's format.
//   kGemm/kOther with FLOPs but no shape -> a square GEMM of the same FLOPs.
//   everything else with bytes  -> a memory-bound kernel chosen by name, sized so that it moves
//       the task's bytes: "softmax" -> row softmax, "norm" -> LayerNorm (rows of kRowLength),
//       "gelu"/"swiglu"/"relu" -> GELU, "quant" -> INT8 quantization, otherwise a scale-add
//       (residual add: 2 reads + 1 write). 8- and 4-bit formats run these in FP16.
//   nothing to do (no FLOPs, no bytes) -> no kernel; the task is timed as an empty interval.
#ifndef STRATASIM_VALIDATE_CUDA_TASK_KERNELS_H_
#define STRATASIM_VALIDATE_CUDA_TASK_KERNELS_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/task_graph.h"
#include "kernels/device_buffer.h"
#include "kernels/gemm.h"

namespace stratasim::validate::cuda {

enum class KernelKind { kNone, kGemm, kScaleAdd, kGelu, kSoftmax, kLayerNorm, kAdam, kQuantize };

std::string_view ToString(KernelKind k);

// Row length of the row-wise kernels when the task does not say (an elementwise task carries
// bytes only): 1024 values fill a 256-thread block with 4 values per thread.
inline constexpr int kRowLength = 1024;
// Quantization block of the INT8 kernel (values per scale).
inline constexpr int kQuantBlock = 256;

struct KernelPlan {
  KernelKind kind = KernelKind::kNone;
  DType dtype = DType::kFP32;  // the format the kernel runs in
  kernels::GemmProblem gemm;   // kGemm
  long long elements = 0;      // the other kinds: values processed (Adam: parameters)
  double flops = 0;            // of the kernel as launched
  double bytes = 0;            // read + written in device memory by the kernel as launched
  // Scratch buffers the launch reads and writes (bytes each).
  std::array<std::size_t, 4> buffers{};
};

// The kernel for a kCompute task; throws stratasim::Error naming the task if it is not one.
KernelPlan PlanKernel(const Task& task);

// Launches plans on one device with scratch buffers shared by all launches (their contents
// do not change the timing of dense kernels). Create on the device that runs the kernels.
class KernelLauncher {
 public:
  explicit KernelLauncher(kernels::Blas& blas) : blas_(blas) {}

  // Grows the scratch needs to cover `p`; call for every plan before Allocate().
  void Reserve(const KernelPlan& p);
  // Allocates the scratch buffers and fills them with reproducible values from `seed`
  // (kernels::FillUniform as BF16 in [-1, 1): finite in every format read from them).
  void Allocate(std::uint64_t seed, cudaStream_t stream);
  // Enqueues the kernel of `p` on `stream`. Throws stratasim::Error from kernels/.
  void Launch(const KernelPlan& p, cudaStream_t stream);

 private:
  kernels::Blas& blas_;
  std::array<std::size_t, 4> need_{};
  std::array<kernels::DeviceBuffer, 4> buf_;
};

}  // namespace stratasim::validate::cuda

#endif  // STRATASIM_VALIDATE_CUDA_TASK_KERNELS_H_
