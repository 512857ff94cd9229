// Helpers for the GPU tests of kernels/: skip without a device, move FP32 vectors to and from
// device tensors of a given format, and compare with a tolerance.
#ifndef STRATASIM_KERNELS_GPU_TEST_UTIL_H_
#define STRATASIM_KERNELS_GPU_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/convert.h"
#include "kernels/cuda_check.h"
#include "kernels/device.h"
#include "kernels/device_buffer.h"

// GTEST_SKIP when no CUDA device can be used (CI, this project's build machines).
#define STRATASIM_REQUIRE_GPU()                                               \
  do {                                                                        \
    const std::string reason = ::stratasim::kernels::CudaUnavailableReason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;                              \
  } while (0)

namespace stratasim::kernels::testing {

// A device tensor of `dtype` holding `values` rounded to the format; `values` is replaced by
// the rounded values, so the CPU reference sees exactly what the kernel sees.
inline DeviceBuffer Upload(DType dtype, std::vector<float>& values) {
  const long long n = static_cast<long long>(values.size());
  DeviceBuffer f32(values.size() * sizeof(float));
  STRATASIM_CUDA_CHECK(cudaMemcpy(f32.get(), values.data(), f32.bytes(), cudaMemcpyHostToDevice));
  DeviceBuffer out(static_cast<std::size_t>(n * BytesPerElement(dtype) + 0.5));
  FromFloat(dtype, f32.as<float>(), out.get(), n, nullptr);
  ToFloat(dtype, out.get(), f32.as<float>(), n, nullptr);
  STRATASIM_CUDA_CHECK(cudaMemcpy(values.data(), f32.get(), f32.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

inline std::vector<float> Download(DType dtype, const DeviceBuffer& buf, long long n) {
  DeviceBuffer f32(n * sizeof(float));
  ToFloat(dtype, buf.get(), f32.as<float>(), n, nullptr);
  std::vector<float> out(n);
  STRATASIM_CUDA_CHECK(cudaMemcpy(out.data(), f32.get(), f32.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

// Values uniform in [lo, hi) from a small LCG: tests need no device to make inputs.
// A copy of `v` in device memory, and `n` elements of `d` back on the host.
template <typename T>
DeviceBuffer ToDevice(const std::vector<T>& v) {
  DeviceBuffer d(v.empty() ? 1 : v.size() * sizeof(T));
  if (!v.empty()) {
    STRATASIM_CUDA_CHECK(
        cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  return d;
}
template <typename T>
std::vector<T> ToHost(const DeviceBuffer& d, std::size_t n) {
  std::vector<T> v(n);
  if (n > 0) {
    STRATASIM_CUDA_CHECK(cudaMemcpy(v.data(), d.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  return v;
}

inline std::vector<float> RandomVector(std::size_t n, std::uint32_t seed, float lo, float hi) {
  std::vector<float> v(n);
  std::uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / 16777216.0f;
  }
  return v;
}

// Relative precision of a format's rounding (half an ulp at 1), for tolerances.
inline double UnitRoundoff(DType dtype) {
  switch (dtype) {
    case DType::kFP16:
      return std::ldexp(1.0, -11);
    case DType::kBF16:
      return std::ldexp(1.0, -8);
    case DType::kTF32:
      return std::ldexp(1.0, -11);
    default:
      return std::ldexp(1.0, -24);
  }
}

// Every |got - want| <= atol + rtol * |want|; reports the first few mismatches.
inline ::testing::AssertionResult AllClose(const std::vector<float>& got,
                                           const std::vector<float>& want, double rtol,
                                           double atol) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  }
  int bad = 0;
  ::testing::AssertionResult r = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tol = atol + rtol * std::fabs(want[i]);
    if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= tol)) {
      if (bad < 5)
        r << "[" << i << "] got " << got[i] << " want " << want[i] << " (tol " << tol << "); ";
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return r << bad << " of " << got.size() << " values differ";
}

}  // namespace stratasim::kernels::testing

#endif  // STRATASIM_KERNELS_GPU_TEST_UTIL_H_
