// kernels/flash_attention.h in a build without cuDNN: the names exist so that the cuda backend
// links, and every use says why it cannot run.
#include <string>

#include "core/error.h"
#include "kernels/flash_attention.h"

namespace stratasim::kernels {

struct FlashAttention::Plan {};
struct FlashAttention::State {};

bool CudnnAvailable() { return false; }

std::string CudnnUnavailableReason() {
  return "this build has no cuDNN (cudnn_graph.h and libcudnn were not found next to CUDA when "
         "it was configured; install cuDNN 9 and re-run cmake)";
}

FlashAttention::FlashAttention() { throw Error("fused attention: " + CudnnUnavailableReason()); }
FlashAttention::~FlashAttention() = default;

std::size_t FlashAttention::workspace_bytes() const { return 0; }

FlashAttention::Plan& FlashAttention::PlanFor(DType, const FlashAttentionShape&) {
  throw Error("fused attention: " + CudnnUnavailableReason());
}

void FlashAttention::PrepareForward(DType dtype, const FlashAttentionShape& s) {
  PlanFor(dtype, s);
}

void FlashAttention::Forward(DType dtype, const FlashAttentionShape& s, const void*, const void*,
                             const void*, void*, float*, cudaStream_t) {
  PlanFor(dtype, s);
}

}  // namespace stratasim::kernels
