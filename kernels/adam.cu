#include <cmath>

#include "kernels/adam.h"
#include "kernels/cuda_check.h"
#include "kernels/dtype_dispatch.cuh"

namespace stratasim::kernels {
namespace {

using detail::GridFor;
using detail::Load;

struct AdamScalars {
  float lr, beta1, beta2, eps, decay;
  float inv_bc1, inv_sqrt_bc2;  // bias corrections, computed once on the host in double
};

template <typename G>
__global__ void AdamKernel(AdamScalars s, float* p, const G* g, float* m, float* v, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float gi = Load(g[i]);
    const float mi = s.beta1 * m[i] + (1.0f - s.beta1) * gi;
    const float vi = s.beta2 * v[i] + (1.0f - s.beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    float pi = p[i];
    pi -= s.lr * s.decay * pi;
    pi -= s.lr * (mi * s.inv_bc1) / (sqrtf(vi) * s.inv_sqrt_bc2 + s.eps);
    p[i] = pi;
  }
}

constexpr int kBlock = 256;

}  // namespace

void AdamStep(const reference::AdamConfig& c, DType grad_dtype, float* params, const void* grads,
              float* m, float* v, long long n, cudaStream_t stream) {
  if (c.step < 1) throw Error("AdamStep: step must be >= 1, got " + std::to_string(c.step));
  if (n <= 0) return;
  const AdamScalars s{c.lr,
                      c.beta1,
                      c.beta2,
                      c.eps,
                      c.weight_decay,
                      static_cast<float>(1.0 / (1.0 - std::pow(double{c.beta1}, c.step))),
                      static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double{c.beta2}, c.step)))};
  detail::DispatchFloat(grad_dtype, "AdamStep", [&](auto tag) {
    using G = decltype(tag);
    AdamKernel<G><<<GridFor(n, kBlock), kBlock, 0, stream>>>(s, params,
                                                             static_cast<const G*>(grads), m, v, n);
  });
  STRATASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stratasim::kernels
