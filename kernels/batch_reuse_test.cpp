#include "kernels/batch_reuse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/batch_reuse_ref.h"
#include "kernels/gpu_test_util.h"

namespace stratasim::kernels {
namespace {

using testing::ToDevice;
using testing::ToHost;

// `count` distinct vertices of [0, range), shuffled, from `seed`.
std::vector<std::int64_t> Batch(int count, int range, std::uint32_t seed) {
  std::vector<std::int64_t> all(range);
  for (int i = 0; i < range; ++i) all[i] = i;
  std::mt19937 gen(seed);
  std::shuffle(all.begin(), all.end(), gen);
  all.resize(count);
  return all;
}

// Hits, misses and their order are exact: the kernel and the reference search the same ids.
TEST(BatchReuseGpuTest, MatchesTheCpuReference) {
  STRATASIM_REQUIRE_GPU();
  for (const auto& [previous_count, current_count] :
       std::vector<std::pair<int, int>>{{0, 1000}, {5000, 7000}, {70000, 50000}}) {
    const std::vector<std::int64_t> previous = Batch(previous_count, 100000, 1);
    const std::vector<std::int64_t> current = Batch(current_count, 100000, 2);
    const batch_reuse::Reuse want = batch_reuse::FindReuse(previous, current);
    const batch_reuse::SortedIds sorted = batch_reuse::SortWithSlots(previous);
    const DeviceBuffer ids = ToDevice(sorted.ids), slots = ToDevice(sorted.slots);
    const DeviceBuffer cur = ToDevice(current);
    DeviceBuffer hit(current.size() * sizeof(std::int32_t));
    DeviceBuffer misses(current.size() * sizeof(std::int32_t));
    DeviceBuffer count(sizeof(std::int32_t));
    FindBatchReuse(ids.as<std::int64_t>(), slots.as<std::int32_t>(), previous_count,
                   cur.as<std::int64_t>(), current_count, hit.as<std::int32_t>(),
                   misses.as<std::int32_t>(), count.as<std::int32_t>(), nullptr);
    EXPECT_EQ(ToHost<std::int32_t>(hit, current.size()), want.hit_slot);
    const std::int32_t n = ToHost<std::int32_t>(count, 1)[0];
    ASSERT_EQ(n, static_cast<std::int32_t>(want.misses.size()));
    EXPECT_EQ(ToHost<std::int32_t>(misses, n), want.misses);
  }
}

TEST(BatchReuseGpuTest, RejectsBadSizes) {
  try {
    FindBatchReuse(nullptr, nullptr, -1, nullptr, 0, nullptr, nullptr, nullptr, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "FindBatchReuse: batch sizes -1 and 0 must be in [0, 1073741824]");
  }
}

}  // namespace
}  // namespace stratasim::kernels
