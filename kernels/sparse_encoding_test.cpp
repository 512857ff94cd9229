#include "kernels/sparse_encoding.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim::kernels {
namespace {

TEST(SparseEncodingTest, IndicesRoundTripInTheirWidth) {
  std::uint8_t buf[8];
  PutIndex(buf, 0xfffffffeULL, 4);
  EXPECT_EQ(GetIndex(buf, 4), 0xfffffffeULL);
  PutIndex(buf, 0x1234567890ULL, 8);
  EXPECT_EQ(GetIndex(buf, 8), 0x1234567890ULL);
}

TEST(SparseEncodingTest, IndexWidthMustNameEveryPosition) {
  CheckIndexWidth("topk", 1LL << 32, "element indices", 4);  // 0 .. 2^32 - 1 fit
  CheckIndexWidth("topk", 1LL << 40, "element indices", 8);
  try {
    CheckIndexWidth("coo", (1LL << 32) + 1, "row indices (with the padding index)", 4);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "coo: 4294967297 row indices (with the padding index) do not fit in 4-byte "
                 "indices (index_bytes = 4); use index_bytes = 8");
  }
  try {
    CheckIndexWidth("topk", 10, "element indices", 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "topk: index_bytes = 2: must be 4 or 8");
  }
}

TEST(SparseEncodingTest, TopKTakesTheLargestMagnitudesAndBreaksTiesByPosition) {
  const std::vector<float> x = {0.5f, -3, 2, 3, -2, 0, 1};
  EXPECT_EQ(TopKIndices(x.data(), 7, 1), (std::vector<long long>{1}));
  EXPECT_EQ(TopKIndices(x.data(), 7, 3), (std::vector<long long>{1, 2, 3}));
  EXPECT_EQ(TopKIndices(x.data(), 7, 4), (std::vector<long long>{1, 2, 3, 4}));
  EXPECT_EQ(TopKIndices(x.data(), 7, 7).size(), 7u);
  try {
    TopKIndices(x.data(), 7, 8);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "top-k: k = 8 of 7 elements: need 1 <= k <= n");
  }
}

}  // namespace
}  // namespace stratasim::kernels
