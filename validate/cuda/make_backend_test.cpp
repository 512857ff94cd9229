// The cuda backend as the commands reach it: by name through MakeBackend (full builds only;
// the standalone GPU-check build has no host backend and no factory).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kernels/device.h"
#include "validate/backend.h"

namespace stratasim::validate {
namespace {

TEST(MakeCudaBackend, IsListedAmongTheBackends) {
  const std::vector<std::string> names = BackendNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
}

TEST(MakeCudaBackend, ReportsNoCudaDeviceClearly) {
  if (kernels::CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  try {
    MakeBackend("cuda", 0);
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.kind(), BackendError::Kind::kUnavailable);
    EXPECT_EQ(std::string(e.what()).rfind("cuda backend: no CUDA device (", 0), 0u) << e.what();
  }
}

TEST(MakeCudaBackend, OffersEveryVisibleDevice) {
  const int devices = kernels::CudaDeviceCount();
  if (devices == 0) GTEST_SKIP() << kernels::CudaUnavailableReason();
  EXPECT_EQ(MakeBackend("cuda", 0)->NumRanks(), devices);
  EXPECT_EQ(MakeBackend("cuda", 0)->Name(), "cuda");
}

}  // namespace
}  // namespace stratasim::validate
