#include "kernels/attention.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "kernels/rowwise.h"

namespace stratasim::kernels {

void AttentionForward(Blas& blas, DType dtype, const AttentionShape& s, const void* q,
                      const void* k, const void* v, void* scores, void* out, cudaStream_t stream) {
  if (dtype != DType::kFP32 && dtype != DType::kTF32 && dtype != DType::kFP16 &&
      dtype != DType::kBF16) {
    throw Error("AttentionForward: dtype " + std::string(ToString(dtype)) +
                " is not supported (fp32, tf32, fp16, bf16 are)");
  }
  // S = Q · K^T: K is stored [seq][head_dim], i.e. B stored [n][k].
  blas.Gemm(GemmProblem{dtype, s.seq, s.seq, s.head_dim, s.batch_heads, true}, q, k, scores,
            stream);
  Softmax(dtype, scores, scores, s.batch_heads * s.seq, static_cast<int>(s.seq),
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim))), stream);
  // O = P · V: V is stored [seq][head_dim], i.e. B stored [k][n].
  blas.Gemm(GemmProblem{dtype, s.seq, s.head_dim, s.seq, s.batch_heads, false}, scores, v, out,
            stream);
}

}  // namespace stratasim::kernels
