#include "validate/host/host_kernels.h"

#include <Eigen/Core>
#include <cmath>
#include <sstream>
#include <string>

#include "core/error.h"
#include "validate/host/host_attention.h"

namespace stratasim::validate::host {
namespace {

template <typename T>
using Matrix = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>;

template <typename T>
void Gemm(const GemmShape& s, unsigned char* workspace) {
  const Eigen::Index m = static_cast<Eigen::Index>(s.m), n = static_cast<Eigen::Index>(s.n),
                     k = static_cast<Eigen::Index>(s.k);
  T* base = reinterpret_cast<T*>(workspace);
  Matrix<T> a(base, m, k), b(base + m * k, k, n), c(base + m * k + k * n, m, n);
  const long long batch = std::max(1LL, std::llround(s.batch));
  // One product per batch entry on the same buffers: the operands stay the task's size, as a
  // batched GEMM's do per entry, and the work is batch times that of one entry.
  for (long long i = 0; i < batch; ++i) c.noalias() = a * b;
}

double ElementBytes(DType d) {
  switch (d) {
    case DType::kFP32:
    case DType::kTF32:
      return 4;
    case DType::kFP16:
    case DType::kBF16:
      return 2;
    default:
      throw Error("host backend: no CPU GEMM for dtype " + std::string(ToString(d)) +
                  " (it runs fp32, tf32, fp16 and bf16)");
  }
}

// Dimensions past this are refused before any size is computed from them (cuBLAS's bound too).
constexpr double kMaxAttentionDim = 2147483647.0;

double Aligned(double bytes) { return std::ceil(bytes / 64) * 64; }

}  // namespace

FusedAttentionBuffers FusedAttentionLayout(const Task& t) {
  const GemmShape& g = t.gemm;
  if (!g.known()) {
    throw Error(
        "fused attention task has no shape (gemm batch = sequences x heads, m = query rows, "
        "n = key rows, k = head dimension)");
  }
  if (g.m > kMaxAttentionDim || g.n > kMaxAttentionDim || g.k > kMaxAttentionDim) {
    std::ostringstream m;
    m << "fused attention: s_q " << g.m << ", s_kv " << g.n << " and d " << g.k
      << " must be below 2^31";
    throw Error(m.str());
  }
  FusedAttentionBuffers l;
  l.dims.batch = 1;
  l.dims.s_q = std::max(1LL, std::llround(g.m));
  l.dims.s_kv = std::max(1LL, std::llround(g.n));
  l.dims.d = std::max(1LL, std::llround(g.k));
  l.dims.causal = t.causal;
  CheckFusedAttention(t.dtype, l.dims);
  l.backward = t.phase == Phase::kBackward;
  const double e = BytesPerElement(t.dtype);
  const double q_bytes = Aligned(e * l.dims.s_q * l.dims.d);
  const double kv_bytes = Aligned(e * l.dims.s_kv * l.dims.d);
  double at = 0;
  auto take = [&at](double bytes) {
    const double p = at;
    at += bytes;
    return p;
  };
  l.q = take(q_bytes);
  l.k = take(kv_bytes);
  l.v = take(kv_bytes);
  l.o = take(q_bytes);
  l.lse = take(Aligned(4.0 * l.dims.s_q));
  if (l.backward) {
    l.dout = take(q_bytes);
    l.dq = take(q_bytes);
    l.dk = take(kv_bytes);
    l.dv = take(kv_bytes);
  }
  l.scratch = take(4.0 * FusedAttentionScratchFloats(l.dims, l.backward));
  l.total = at;
  return l;
}

namespace {

void RunFusedAttention(const Task& t, unsigned char* ws) {
  const FusedAttentionBuffers l = FusedAttentionLayout(t);
  auto at = [ws](double offset) { return ws + static_cast<std::size_t>(offset); };
  float* lse = reinterpret_cast<float*>(at(l.lse));
  float* scratch = reinterpret_cast<float*>(at(l.scratch));
  const long long batch = std::max(1LL, std::llround(t.gemm.batch));
  for (long long i = 0; i < batch; ++i) {
    if (l.backward) {
      FusedAttentionBackward(t.dtype, l.dims, at(l.q), at(l.k), at(l.v), at(l.o), at(l.dout), lse,
                             at(l.dq), at(l.dk), at(l.dv), scratch);
    } else {
      FusedAttentionForward(t.dtype, l.dims, at(l.q), at(l.k), at(l.v), at(l.o), lse, scratch);
    }
  }
}

}  // namespace

GemmShape HostGemmShape(const Task& t) {
  if (t.gemm.known()) return t.gemm;
  if ((t.op == OpKind::kGemm || t.op == OpKind::kAttention) && t.flops > 0) {
    const double edge = std::max(1.0, std::round(std::cbrt(t.flops / 2)));
    return GemmShape{edge, edge, edge, 1};
  }
  return GemmShape{};
}

double ComputeWorkspaceBytes(const Task& t) {
  if (t.op == OpKind::kFusedAttention) return FusedAttentionLayout(t).total;
  const GemmShape s = HostGemmShape(t);
  if (s.known()) {
    return (s.m * s.k + s.k * s.n + s.m * s.n) * ElementBytes(t.dtype);
  }
  return t.bytes;
}

void RunMemoryLoop(double bytes, unsigned char* workspace) {
  const std::size_t n = static_cast<std::size_t>(bytes / 2 / sizeof(float));
  float* x = reinterpret_cast<float*>(workspace);
  float* y = x + n;
  Eigen::Map<Eigen::ArrayXf> xs(x, n), ys(y, n);
  ys = 1.0001f * xs + 0.5f;
}

void RunCompute(const Task& t, unsigned char* workspace) {
  if (t.op == OpKind::kFusedAttention) {
    RunFusedAttention(t, workspace);
    return;
  }
  const GemmShape s = HostGemmShape(t);
  if (!s.known()) {
    RunMemoryLoop(t.bytes, workspace);
    return;
  }
  switch (t.dtype) {
    case DType::kFP32:
    case DType::kTF32:
      Gemm<float>(s, workspace);
      return;
    case DType::kFP16:
      Gemm<Eigen::half>(s, workspace);
      return;
    case DType::kBF16:
      Gemm<Eigen::bfloat16>(s, workspace);
      return;
    default:
      ElementBytes(t.dtype);  // throws the message naming the dtype
  }
}

}  // namespace stratasim::validate::host
