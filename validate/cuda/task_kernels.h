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
//   kFusedAttention (batch = sequences x heads, m = s_q, n = s_kv, k = d; Task::causal)
//       forward (and recompute, and any phase but backward) -> cuDNN 9's fused flash-attention
//           forward (kernels/flash_attention.h): O and the FP32 logsumexp, never writing S.
//       backward -> the same work as FlashAttention's backward, through cuBLAS and the row
//           kernels on materialised score tiles of a bounded number of batch entries at a time
//           (kBackwardScoreBytes): S = Q K^T, P = softmax(S / sqrt(d)), dV = P^T dO,
//           dP = dO V^T, dS = P * (dP - D) as a scale-add of the same traffic, dQ = dS K,
//           dK = dS^T Q: 10·s_q·s_kv·d FLOPs per entry, the full square even when causal
//           (cuBLAS cannot skip the masked half). docs/validate.md says what this means.
//       cuDNN's engine takes fp16 and bf16: other formats run in BF16; d is rounded up to a
//       multiple of 8 (its alignment). Without cuDNN in the build, the task is refused.
//   nothing to do (no FLOPs, no bytes) -> no kernel; the task is timed as an empty interval.
#ifndef STRATASIM_VALIDATE_CUDA_TASK_KERNELS_H_
#define STRATASIM_VALIDATE_CUDA_TASK_KERNELS_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/task_graph.h"
#include "kernels/device_buffer.h"
#include "kernels/flash_attention.h"
#include "kernels/gemm.h"

namespace stratasim::validate::cuda {

enum class KernelKind {
  kNone,
  kGemm,
  kScaleAdd,
  kGelu,
  kSoftmax,
  kLayerNorm,
  kAdam,
  kQuantize,
  kFlashForward,
  kFlashBackward
};

std::string_view ToString(KernelKind k);

// Row length of the row-wise kernels when the task does not say (an elementwise task carries
// bytes only): 1024 values fill a 256-thread block with 4 values per thread.
inline constexpr int kRowLength = 1024;
// Quantization block of the INT8 kernel (values per scale).
inline constexpr int kQuantBlock = 256;
// The fused-attention backward's score tiles (P and dP of the entries it takes at once) stay
// within this many bytes, so that a long sequence does not need b·h·s² of scratch.
inline constexpr double kBackwardScoreBytes = 512.0 * (1 << 20);

struct KernelPlan {
  KernelKind kind = KernelKind::kNone;
  DType dtype = DType::kFP32;              // the format the kernel runs in
  kernels::GemmProblem gemm;               // kGemm
  kernels::FlashAttentionShape attention;  // kFlashForward, kFlashBackward
  long long chunk = 0;                     // kFlashBackward: batch entries per round
  long long elements = 0;                  // the other kinds: values processed (Adam: parameters)
  double flops = 0;                        // of the kernel as launched
  double bytes = 0;  // read + written in device memory by the kernel as launched
  // Scratch buffers the launch reads and writes (bytes each).
  std::array<std::size_t, 4> buffers{};
};

// The kernel for a kCompute task; throws stratasim::Error naming the task if it is not one, or
// if it is a fused-attention task this build or its shape cannot run.
KernelPlan PlanKernel(const Task& task);

// The error a fused-attention task gets when the build has no cuDNN: names the task and why.
std::string FusedAttentionUnavailable(const Task& task, const std::string& reason);

// Launches plans on one device with scratch buffers shared by all launches (their contents
// do not change the timing of dense kernels). Create on the device that runs the kernels.
class KernelLauncher {
 public:
  explicit KernelLauncher(kernels::Blas& blas);
  ~KernelLauncher();

  // Grows the scratch needs to cover `p`; call for every plan before Allocate(). A fused
  // attention forward also builds its cuDNN plan here, so that no timed launch builds one.
  void Reserve(const KernelPlan& p);
  // Allocates the scratch buffers and fills them with reproducible values from `seed`
  // (kernels::FillUniform as BF16 in [-1, 1): finite in every format read from them).
  void Allocate(std::uint64_t seed, cudaStream_t stream);
  // Enqueues the kernel of `p` on `stream`. Throws stratasim::Error from kernels/.
  void Launch(const KernelPlan& p, cudaStream_t stream);

 private:
  void FlashBackward(const KernelPlan& p, cudaStream_t stream);

  kernels::Blas& blas_;
  std::unique_ptr<kernels::FlashAttention> flash_;  // created by the first fused forward
  std::array<std::size_t, 4> need_{};
  std::array<kernels::DeviceBuffer, 4> buf_;
};

}  // namespace stratasim::validate::cuda

#endif  // STRATASIM_VALIDATE_CUDA_TASK_KERNELS_H_
