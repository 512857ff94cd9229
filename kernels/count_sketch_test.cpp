#include "kernels/count_sketch.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kernels/gpu_test_util.h"
#include "kernels/row_bitmap.h"
#include "kernels/sparse_test_data.h"

namespace stratasim::kernels {
namespace {

using testing::AllClose;
using testing::RandomVector;
using testing::ZipfEmbeddingGradients;

// The GPU's merged sketch of `g`: every worker encoded into the same zeroed table and bitmap.
CountSketch GpuMergedSketch(const WorkerGradients& g, const CountSketchParams& p) {
  const std::size_t table_bytes = sizeof(float) * p.rows * p.columns;
  const std::size_t word_bytes = sizeof(std::uint32_t) * BitmapWords(g.shape.rows);
  DeviceBuffer table(table_bytes), words(word_bytes), values(sizeof(float) * g.shape.Elements());
  STRATASIM_CUDA_CHECK(cudaMemset(table.get(), 0, table_bytes));
  STRATASIM_CUDA_CHECK(cudaMemset(words.get(), 0, word_bytes));
  for (const std::vector<float>& w : g.workers) {
    STRATASIM_CUDA_CHECK(
        cudaMemcpy(values.get(), w.data(), values.bytes(), cudaMemcpyHostToDevice));
    CountSketchEncode(values.as<float>(), g.shape.rows, g.shape.cols, p, table.as<float>(),
                      words.as<std::uint32_t>(), nullptr);
  }
  CountSketch s;
  s.table.resize(static_cast<std::size_t>(p.rows * p.columns));
  STRATASIM_CUDA_CHECK(
      cudaMemcpy(s.table.data(), table.get(), table_bytes, cudaMemcpyDeviceToHost));
  std::vector<std::uint8_t> word_bytes_host(word_bytes);
  STRATASIM_CUDA_CHECK(
      cudaMemcpy(word_bytes_host.data(), words.get(), word_bytes, cudaMemcpyDeviceToHost));
  // The wire bitmap is the words' first ceil(rows / 8) bytes (little-endian).
  s.bitmap.assign(word_bytes_host.begin(), word_bytes_host.begin() + BitmapBytes(g.shape.rows));
  return s;
}

// The GPU's decode of `s` (uploaded as is).
std::vector<float> GpuDecode(const CountSketch& s, const GradientShape& shape,
                             const CountSketchParams& p) {
  DeviceBuffer table(sizeof(float) * s.table.size()),
      words(sizeof(std::uint32_t) * BitmapWords(shape.rows)), out(sizeof(float) * shape.Elements());
  STRATASIM_CUDA_CHECK(
      cudaMemcpy(table.get(), s.table.data(), table.bytes(), cudaMemcpyHostToDevice));
  std::vector<std::uint8_t> padded(words.bytes(), 0);
  std::memcpy(padded.data(), s.bitmap.data(), s.bitmap.size());
  STRATASIM_CUDA_CHECK(
      cudaMemcpy(words.get(), padded.data(), words.bytes(), cudaMemcpyHostToDevice));
  CountSketchDecode(table.as<float>(), words.as<std::uint32_t>(), shape.rows, shape.cols, p,
                    out.as<float>(), nullptr);
  std::vector<float> host(static_cast<std::size_t>(shape.Elements()));
  STRATASIM_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

CountSketch CpuMergedSketch(const WorkerGradients& g, const CountSketchParams& p) {
  CountSketch merged = EncodeCountSketch(g.workers[0].data(), g.shape, p);
  for (std::size_t w = 1; w < g.workers.size(); ++w) {
    MergeCountSketch(merged, EncodeCountSketch(g.workers[w].data(), g.shape, p));
  }
  return merged;
}

TEST(CountSketchGpuTest, MatchesTheCpuReferenceBitForBitOnExactData) {
  STRATASIM_REQUIRE_GPU();
  // Values in 1/32 steps: every order of addition gives the same sums, so atomics cannot
  // differ from the sequential reference, and any bucket or sign mismatch shows.
  const WorkerGradients g = ZipfEmbeddingGradients(4, 3001, 20, 256, 1.1, 31);
  const CountSketchParams p{5, 1777, 9};
  const CountSketch cpu = CpuMergedSketch(g, p);
  const CountSketch gpu = GpuMergedSketch(g, p);
  EXPECT_EQ(gpu.table, cpu.table);
  EXPECT_EQ(gpu.bitmap, cpu.bitmap);
  EXPECT_EQ(GpuDecode(gpu, g.shape, p), DecodeCountSketch(cpu, g.shape, p));
}

TEST(CountSketchGpuTest, MatchesTheCpuReferenceOnRandomFloats) {
  STRATASIM_REQUIRE_GPU();
  // Arbitrary floats in every tenth row: atomics sum in another order, so the tables agree to
  // rounding; the decode of one table is the same on both sides (even r: a mean of two).
  WorkerGradients g;
  g.shape = {2000, 33};
  for (std::uint32_t w = 0; w < 3; ++w) {
    std::vector<float> x = RandomVector(2000 * 33, 40 + w, -1, 1);
    for (long long i = 0; i < 2000; ++i) {
      if ((i + w) % 10 != 0) std::fill(x.begin() + i * 33, x.begin() + (i + 1) * 33, 0.0f);
    }
    g.workers.push_back(std::move(x));
  }
  const CountSketchParams p{4, 3000, 2};
  const CountSketch cpu = CpuMergedSketch(g, p);
  const CountSketch gpu = GpuMergedSketch(g, p);
  EXPECT_TRUE(AllClose(gpu.table, cpu.table, 1e-5, 1e-5));
  EXPECT_EQ(gpu.bitmap, cpu.bitmap);
  EXPECT_EQ(GpuDecode(cpu, g.shape, p), DecodeCountSketch(cpu, g.shape, p));
}

TEST(CountSketchGpuTest, RejectsBadParameters) {
  // Checked before any launch: no device needed.
  try {
    CountSketchEncode(nullptr, 10, 4, {65, 8, 0}, nullptr, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "CountSketchEncode: a 10 x 4 gradient, a 65 x 8 sketch: need a non-empty "
                 "gradient, 1 <= r <= 64 and c >= 1");
  }
  try {
    CountSketchDecode(nullptr, nullptr, 0, 4, {1, 8, 0}, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "CountSketchDecode: a 0 x 4 gradient, a 1 x 8 sketch: need a non-empty "
                 "gradient, 1 <= r <= 64 and c >= 1");
  }
}

}  // namespace
}  // namespace stratasim::kernels
