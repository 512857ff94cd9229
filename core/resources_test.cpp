#include "core/resources.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace stratasim {
namespace {

TEST(Resources, ReadsMemAvailableAndVmSize) {
  const std::string meminfo = "MemTotal:  24000000 kB\nMemAvailable:   2048 kB\nFoo: 1 kB\n";
  EXPECT_DOUBLE_EQ(MemAvailableBytes(meminfo), 2048.0 * 1024);
  EXPECT_DOUBLE_EQ(MemAvailableBytes("MemTotal: 5 kB\n"), 0);
  EXPECT_DOUBLE_EQ(VmSizeBytes("Name: x\nVmPeak: 9 kB\nVmSize:\t  100 kB\n"), 100.0 * 1024);
}

TEST(Resources, CgroupHeadroomIsTheLimitLessUse) {
  EXPECT_DOUBLE_EQ(CgroupHeadroomBytes("1000\n", "400\n"), 600);
  EXPECT_DOUBLE_EQ(CgroupHeadroomBytes("1000\n", "4000\n"), 0);
  EXPECT_DOUBLE_EQ(CgroupHeadroomBytes("max\n", "400\n"), -1);  // no limit
}

// Run in its own process (one per test): lowering the limit touches nothing else.
TEST(Resources, AddressSpaceLimitBoundsTheHeadroom) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer needs an unlimited address space";
#endif
  struct rlimit as;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &as), 0);
  const struct rlimit saved = as;
  as.rlim_cur = static_cast<rlim_t>(4) << 30;  // ulimit -v 4 GiB
  ASSERT_EQ(setrlimit(RLIMIT_AS, &as), 0);
  const MemoryHeadroom limited = ReadMemoryHeadroom();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
  EXPECT_GT(limited.bytes, 0);
  EXPECT_LE(limited.bytes, 4.0 * (1 << 30));
  // Unless the machine or its cgroup has less than this process's headroom under 4 GiB, the
  // address space is the bound.
  if (limited.bound != "ulimit -v") {
    EXPECT_TRUE(limited.bound == "MemAvailable" || limited.bound == "cgroup memory.max")
        << limited.bound;
  }
}

}  // namespace
}  // namespace stratasim
