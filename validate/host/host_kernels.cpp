#include "validate/host/host_kernels.h"

#include <Eigen/Core>
#include <cmath>
#include <string>

#include "core/error.h"

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
