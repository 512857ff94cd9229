// Fused scaled-dot-product attention (FlashAttention; Dao et al. 2022, Dao 2023) on the GPU
// through cuDNN 9's backend graph API: the cuda backend's kernel for kFusedAttention tasks.
//
// The forward is one operation graph that cuDNN's fused flash-attention engine recognises
// (cuDNN developer guide, "Fused Attention fprop"): S = Q·K^T (matmul), S *= 1/sqrt(d)
// (pointwise), with `causal` a mask of keys past the query (row and column indices, row >= col,
// binary select of -inf), the softmax as reduction max, subtract, exp, reduction sum, divide,
// its row statistics lse = max + log(sum) as an FP32 output, and O = P·V (matmul). The engine
// runs it as one kernel that never writes S or P to memory.
//
// Layout, per batch entry (one sequence and head; entries packed one after the other):
// Q, O [s_q][d]; K, V [s_kv][d], in FP16 or BF16 (the formats the engine takes); the
// statistics [s_q] in FP32. cuDNN sees them as [batch][1][s][d] tensors.
//
// Built when cuDNN (cudnn_graph.h, libcudnn) is found next to CUDA (STRATASIM_HAVE_CUDNN);
// otherwise flash_attention_stub.cpp provides the same names, CudnnAvailable() is false and
// constructing a FlashAttention throws the reason.
#ifndef STRATASIM_KERNELS_FLASH_ATTENTION_H_
#define STRATASIM_KERNELS_FLASH_ATTENTION_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "core/dtype.h"

namespace stratasim::kernels {

struct FlashAttentionShape {
  long long batch = 1;  // sequences x heads
  long long s_q = 0;
  long long s_kv = 0;
  long long d = 0;
  bool causal = false;  // query i attends to keys 0..i (s_q == s_kv)
};

// Whether this build links cuDNN's fused attention.
bool CudnnAvailable();
// Why not, for error messages: empty when it does.
std::string CudnnUnavailableReason();

// "bf16 fused attention batch=32 s_q=4096 s_kv=4096 d=128 causal", for messages.
inline std::string Describe(DType dtype, const FlashAttentionShape& s) {
  return std::string(ToString(dtype)) + " fused attention batch=" + std::to_string(s.batch) +
         " s_q=" + std::to_string(s.s_q) + " s_kv=" + std::to_string(s.s_kv) +
         " d=" + std::to_string(s.d) + (s.causal ? " causal" : "");
}

// One cuDNN handle and the execution plans built on it, for one device (create it on the
// device that runs the kernels, use it from one thread at a time).
class FlashAttention {
 public:
  FlashAttention();
  ~FlashAttention();
  FlashAttention(const FlashAttention&) = delete;
  FlashAttention& operator=(const FlashAttention&) = delete;

  // Builds the forward's execution plan for this format and shape (once; later calls find it)
  // and grows the workspace it needs. Building takes milliseconds, so callers do it before
  // anything is timed. Throws stratasim::Error naming the shape when cuDNN has no engine for
  // it (a dtype other than fp16/bf16, a head dimension it does not take, ...).
  void PrepareForward(DType dtype, const FlashAttentionShape& s);

  // Enqueues the forward on `stream`: o and stats (FP32, batch x s_q) from q, k, v. Prepares
  // the plan first if PrepareForward was not called for this shape.
  void Forward(DType dtype, const FlashAttentionShape& s, const void* q, const void* k,
               const void* v, void* o, float* stats, cudaStream_t stream);

  // Bytes of cuDNN workspace held (the largest any prepared plan needs).
  std::size_t workspace_bytes() const;

  struct Plan;

 private:
  using Key = std::tuple<int, long long, long long, long long, long long, bool>;
  Plan& PlanFor(DType dtype, const FlashAttentionShape& s);

  struct State;
  std::unique_ptr<State> state_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_FLASH_ATTENTION_H_
