#include "kernels/casq.h"

#include <gtest/gtest.h>

#include "kernels/casq_ref.h"
#include "kernels/gpu_test_util.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::RandomVector;
using testing::ToDevice;
using testing::ToHost;

class CasqKernelTest : public ::testing::TestWithParam<int> {};

// Codes are exact (no arithmetic but comparisons); bucket means differ from the reference's
// double sums only by the float atomics' rounding (a bulk bucket here sums ~45k values: a
// relative 1e-3 allows for it, while a wrong bucket or cluster would be off by far more); the
// decode of the kernel's own payloads is the reference decode of them, bit for bit (the same adds
// in the same order).
TEST_P(CasqKernelTest, EncodeAndDecodeMatchReference) {
  STRATASIM_REQUIRE_GPU();
  const int bits = GetParam();
  const long long n = 100003;  // codes straddle words for bits 3
  const int workers = 3;
  const std::uint64_t seed = 11;
  const casq::TableLayout layout = casq::LayoutTables(n / 50, bits);
  const long long words = casq::CodeWords(n, bits);
  const DeviceBuffer offsets = ToDevice(layout.offsets);
  std::vector<casq::Encoded> got(workers);
  std::vector<std::uint32_t> all_codes;
  std::vector<float> all_means;
  for (int w = 0; w < workers; ++w) {
    const std::vector<float> x = RandomVector(n, 100 + w, -1e-3f, 1e-3f);
    const std::vector<float> centres = casq::ClusterCentres(casq::SampleValues(x, w), bits);
    const casq::Encoded want = casq::Encode(x, centres, layout, seed);
    const DeviceBuffer dx = ToDevice(x), dc = ToDevice(centres);
    DeviceBuffer codes(words * 4), means(layout.Buckets() * 4), counts(layout.Buckets() * 4);
    CasqEncode(dx.as<float>(), n, bits, dc.as<float>(), offsets.as<long long>(), layout.Buckets(),
               seed, codes.as<std::uint32_t>(), means.as<float>(), counts.as<unsigned>(), nullptr);
    got[w].codes = ToHost<std::uint32_t>(codes, words);
    got[w].means = ToHost<float>(means, layout.Buckets());
    got[w].centres = centres;
    EXPECT_EQ(got[w].codes, want.codes) << "worker " << w;
    EXPECT_TRUE(AllClose(got[w].means, want.means, 1e-3, 1e-10)) << "worker " << w;
    all_codes.insert(all_codes.end(), got[w].codes.begin(), got[w].codes.end());
    all_means.insert(all_means.end(), got[w].means.begin(), got[w].means.end());
  }
  const DeviceBuffer dcodes = ToDevice(all_codes), dmeans = ToDevice(all_means);
  DeviceBuffer dsum(n * sizeof(float));
  CasqDecode(dcodes.as<std::uint32_t>(), dmeans.as<float>(), workers, n, bits,
             offsets.as<long long>(), layout.Buckets(), seed, dsum.as<float>(), nullptr);
  EXPECT_EQ(ToHost<float>(dsum, n), casq::Decode(got, n, layout, seed));
}

INSTANTIATE_TEST_SUITE_P(Bits, CasqKernelTest, ::testing::Values(1, 2, 3, 8));

TEST(CasqKernel, RejectsBadBits) {
  try {
    CasqEncode(nullptr, 10, 9, nullptr, nullptr, 0, 0, nullptr, nullptr, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "CasqEncode: bits 9 must be in [1, 8]");
  }
}

}  // namespace
}  // namespace stratasim::kernels
