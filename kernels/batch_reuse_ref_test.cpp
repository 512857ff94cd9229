#include "kernels/batch_reuse_ref.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::kernels::batch_reuse {
namespace {

TEST(BatchReuseRef, HitsGiveTheirRowMissesAreCompactedInOrder) {
  // The kept buffer holds vertices 40, 7, 19, 3 in rows 0..3.
  const Reuse r = FindReuse({40, 7, 19, 3}, {3, 8, 40, 41, 19, 2});
  EXPECT_EQ(r.hit_slot, (std::vector<std::int32_t>{3, -1, 0, -1, 2, -1}));
  EXPECT_EQ(r.misses, (std::vector<std::int32_t>{1, 3, 5}));
}

TEST(BatchReuseRef, EmptyBatches) {
  EXPECT_TRUE(FindReuse({}, {}).misses.empty());
  const Reuse first = FindReuse({}, {5, 6});  // the first batch: nothing kept yet
  EXPECT_EQ(first.misses, (std::vector<std::int32_t>{0, 1}));
  EXPECT_TRUE(FindReuse({1, 2}, {}).hit_slot.empty());
}

TEST(BatchReuseRef, SortedIdsKeepTheirRows) {
  const SortedIds s = SortWithSlots({40, 7, 19, 3});
  EXPECT_EQ(s.ids, (std::vector<std::int64_t>{3, 7, 19, 40}));
  EXPECT_EQ(s.slots, (std::vector<std::int32_t>{3, 1, 2, 0}));
}

TEST(BatchReuseRef, ARepeatedVertexInThePreviousBatchIsAnError) {
  try {
    FindReuse({4, 9, 4}, {4});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "batch reuse: vertex 4 appears twice in the previous batch (its vertex list "
                 "must be deduplicated)");
  }
}

}  // namespace
}  // namespace stratasim::kernels::batch_reuse
