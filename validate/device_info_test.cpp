#include "validate/device_info.h"

#include <gtest/gtest.h>

namespace stratasim::validate {
namespace {

TEST(DeviceInfo, ReportsLibraryVersionsWithOrWithoutAGpu) {
  const DeviceInfo info = QueryDevices();
  EXPECT_GE(info.nccl_version, 20000);  // NCCL 2.x encodes 2.28.x as 22800 + x
  EXPECT_GT(info.cuda_runtime_version, 0);
  // Either devices are listed, or the reason none can be used is.
  EXPECT_NE(info.devices.empty(), info.unavailable_reason.empty());
}

TEST(DeviceInfo, ListsDevicesWhenThereAreAny) {
  const DeviceInfo info = QueryDevices();
  if (info.devices.empty()) GTEST_SKIP() << "no GPU: " << info.unavailable_reason;
  EXPECT_GT(info.device_memory_bytes.at(0), 1e9);
}

}  // namespace
}  // namespace stratasim::validate
