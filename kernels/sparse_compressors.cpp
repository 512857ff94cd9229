#include "kernels/sparse_compressors.h"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "core/error.h"
#include "kernels/count_sketch_cpu.h"
#include "kernels/row_bitmap.h"
#include "kernels/sparse_encoding.h"

namespace stratasim::kernels {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// acc[row][:] += the cols FP32 values at `src` (wire bytes, not necessarily aligned for float:
// copied through `scratch`, a cols-vector reused across rows).
void AddRowFromBytes(float* acc, long long row, long long cols, const std::uint8_t* src,
                     Eigen::VectorXf& scratch) {
  std::memcpy(scratch.data(), src, static_cast<std::size_t>(cols) * sizeof(float));
  Eigen::Map<Eigen::VectorXf>(acc + row * cols, cols) += scratch;
}

// Each worker's non-zero rows with their indices; all-gathered in blocks padded to the largest
// row count, as all-gather needs equal blocks (Panlichen/Sparse_Sketch_Reducer's COO baseline).
// A block of m rows is m indices then m x cols FP32 values; padding rows carry the index
// `rows`, which names no row, so the decoder skips them without a separate count.
class CooCompressor : public Compressor {
 public:
  explicit CooCompressor(const CompressionSpec& spec) : index_bytes_(spec.index_bytes) {}

  CompressionRun Run(const WorkerGradients& g, int /*iteration*/) const override {
    CheckWorkerGradients(g);
    const GradientShape& shape = g.shape;
    // Row indices 0 .. rows - 1 plus the padding index `rows`.
    CheckIndexWidth("coo", shape.rows + 1, "row indices (with the padding index)", index_bytes_);
    const long long row_bytes = index_bytes_ + shape.cols * 4;
    CompressionRun run;

    const auto encode_start = Clock::now();
    std::vector<std::vector<std::uint8_t>> blocks;
    std::vector<long long> counts;
    for (const std::vector<float>& w : g.workers) {
      std::vector<long long> rows;
      for (long long i = 0; i < shape.rows; ++i) {
        if (RowIsNonZero(w.data(), i, shape.cols)) rows.push_back(i);
      }
      const auto m = static_cast<long long>(rows.size());
      std::vector<std::uint8_t> block(static_cast<std::size_t>(m * row_bytes));
      std::uint8_t* values = block.data() + m * index_bytes_;
      for (long long r = 0; r < m; ++r) {
        PutIndex(block.data() + r * index_bytes_, static_cast<std::uint64_t>(rows[r]),
                 index_bytes_);
        std::memcpy(values + r * shape.cols * 4, w.data() + rows[r] * shape.cols,
                    static_cast<std::size_t>(shape.cols) * 4);
      }
      blocks.push_back(std::move(block));
      counts.push_back(m);
    }
    run.encode_seconds = SecondsSince(encode_start);

    const auto decode_start = Clock::now();
    long long max_rows = 0;
    for (long long m : counts) max_rows = std::max(max_rows, m);
    // The all-gather: every block padded to max_rows rows, concatenated.
    const long long padded_bytes = max_rows * row_bytes;
    std::vector<std::uint8_t> gathered(static_cast<std::size_t>(padded_bytes * blocks.size()), 0);
    for (std::size_t w = 0; w < blocks.size(); ++w) {
      std::uint8_t* out = gathered.data() + w * padded_bytes;
      const long long m = counts[w];
      std::memcpy(out, blocks[w].data(), static_cast<std::size_t>(m * index_bytes_));
      for (long long r = m; r < max_rows; ++r) {
        PutIndex(out + r * index_bytes_, static_cast<std::uint64_t>(shape.rows), index_bytes_);
      }
      std::memcpy(out + max_rows * index_bytes_, blocks[w].data() + m * index_bytes_,
                  static_cast<std::size_t>(m * shape.cols * 4));
    }
    // Decode: every worker's rows added in worker order, as the dense all-reduce sums.
    run.sum.assign(static_cast<std::size_t>(shape.Elements()), 0.0f);
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(shape.rows), 0);
    Eigen::VectorXf scratch(shape.cols);
    for (std::size_t w = 0; w < blocks.size(); ++w) {
      const std::uint8_t* in = gathered.data() + w * padded_bytes;
      const std::uint8_t* values = in + max_rows * index_bytes_;
      for (long long r = 0; r < max_rows; ++r) {
        const std::uint64_t row = GetIndex(in + r * index_bytes_, index_bytes_);
        if (row >= static_cast<std::uint64_t>(shape.rows)) continue;  // padding
        AddRowFromBytes(run.sum.data(), static_cast<long long>(row), shape.cols,
                        values + r * shape.cols * 4, scratch);
        seen[row] = 1;
      }
    }
    for (std::uint8_t s : seen) run.decoded_nonzero_rows += s;
    run.decode_seconds = SecondsSince(decode_start);

    const double gathered_bytes = static_cast<double>(gathered.size());
    run.payloads = {{CollectiveKind::kAllGather, gathered_bytes, static_cast<double>(padded_bytes),
                     "rows+indices"}};
    return run;
  }

 private:
  int index_bytes_;
};

// OmniReduce (Fei et al., SIGCOMM 2021) as S2Reducer's code runs it: an OR all-reduce of the
// row bitmaps, then a sum all-reduce of every worker's values at the union rows (dense, zeros
// where a worker has none).
class OmniReduceCompressor : public Compressor {
 public:
  CompressionRun Run(const WorkerGradients& g, int /*iteration*/) const override {
    CheckWorkerGradients(g);
    const GradientShape& shape = g.shape;
    CompressionRun run;

    auto start = Clock::now();
    std::vector<std::vector<std::uint8_t>> bitmaps;
    for (const std::vector<float>& w : g.workers) bitmaps.push_back(RowBitmap(w.data(), shape));
    run.encode_seconds += SecondsSince(start);

    start = Clock::now();
    std::vector<std::uint8_t> union_bitmap = bitmaps[0];
    for (std::size_t w = 1; w < bitmaps.size(); ++w) OrInto(union_bitmap, bitmaps[w]);
    const std::vector<long long> union_rows = BitmapRows(union_bitmap, shape.rows);
    const auto u = static_cast<long long>(union_rows.size());
    run.decode_seconds += SecondsSince(start);

    start = Clock::now();
    std::vector<RowMajor> packed;
    for (const std::vector<float>& w : g.workers) {
      RowMajor block(u, shape.cols);
      for (long long r = 0; r < u; ++r) {
        block.row(r) =
            Eigen::Map<const Eigen::RowVectorXf>(w.data() + union_rows[r] * shape.cols, shape.cols);
      }
      packed.push_back(std::move(block));
    }
    run.encode_seconds += SecondsSince(start);

    start = Clock::now();
    RowMajor reduced = RowMajor::Zero(u, shape.cols);
    for (const RowMajor& block : packed) reduced += block;
    run.sum.assign(static_cast<std::size_t>(shape.Elements()), 0.0f);
    for (long long r = 0; r < u; ++r) {
      Eigen::Map<Eigen::RowVectorXf>(run.sum.data() + union_rows[r] * shape.cols, shape.cols) =
          reduced.row(r);
    }
    run.decoded_nonzero_rows = u;
    run.decode_seconds += SecondsSince(start);

    const auto bitmap_bytes = static_cast<double>(union_bitmap.size());
    const auto rows_bytes = static_cast<double>(packed[0].size() * sizeof(float));
    run.payloads = {{CollectiveKind::kAllReduce, bitmap_bytes, bitmap_bytes, "bitmap"},
                    {CollectiveKind::kAllReduce, rows_bytes, rows_bytes, "union rows"}};
    return run;
  }
};

// S2Reducer (Ge et al., arXiv 2110.02140): each worker's count sketch and row bitmap
// (kernels/count_sketch_cpu.h), merged by one sum all-reduce, decoded for the union rows.
class S2ReducerCompressor : public Compressor {
 public:
  explicit S2ReducerCompressor(const CompressionSpec& spec) : spec_(spec) {}

  CompressionRun Run(const WorkerGradients& g, int /*iteration*/) const override {
    CheckWorkerGradients(g);
    const CountSketchParams params = SketchParamsFor(spec_, g.shape);
    CompressionRun run;

    const auto encode_start = Clock::now();
    std::vector<CountSketch> sketches;
    for (const std::vector<float>& w : g.workers) {
      sketches.push_back(EncodeCountSketch(w.data(), g.shape, params));
    }
    run.encode_seconds = SecondsSince(encode_start);

    const auto decode_start = Clock::now();
    CountSketch merged = sketches[0];
    for (std::size_t w = 1; w < sketches.size(); ++w) MergeCountSketch(merged, sketches[w]);
    run.sum = DecodeCountSketch(merged, g.shape, params);
    run.decoded_nonzero_rows =
        static_cast<long long>(BitmapRows(merged.bitmap, g.shape.rows).size());
    run.decode_seconds = SecondsSince(decode_start);

    const auto bytes = static_cast<double>(sketches[0].WireBytes());
    run.payloads = {{CollectiveKind::kAllReduce, bytes, bytes, "sketch+bitmap"}};
    return run;
  }

 private:
  CompressionSpec spec_;
};

// Top-k (Aji & Heafield 2017; Lin et al. 2018): each worker's k largest-magnitude elements, k
// indices then k FP32 values, all-gathered (every block has k pairs: no padding) and summed.
class TopKCompressor : public Compressor {
 public:
  explicit TopKCompressor(const CompressionSpec& spec) : spec_(spec) {}

  CompressionRun Run(const WorkerGradients& g, int /*iteration*/) const override {
    CheckWorkerGradients(g);
    const long long n = g.shape.Elements();
    const int ib = spec_.index_bytes;
    CheckIndexWidth("topk", n, "element indices", ib);
    const long long k = TopKElements(spec_, n);
    const long long block_bytes = k * (ib + 4);
    CompressionRun run;

    const auto encode_start = Clock::now();
    std::vector<std::uint8_t> gathered;  // each worker's block written in place
    gathered.resize(static_cast<std::size_t>(block_bytes * g.workers.size()));
    for (std::size_t w = 0; w < g.workers.size(); ++w) {
      const float* values = g.workers[w].data();
      const std::vector<long long> idx = TopKIndices(values, n, k);
      std::uint8_t* out = gathered.data() + w * block_bytes;
      for (long long e = 0; e < k; ++e) {
        PutIndex(out + e * ib, static_cast<std::uint64_t>(idx[e]), ib);
        std::memcpy(out + k * ib + e * 4, values + idx[e], 4);
      }
    }
    run.encode_seconds = SecondsSince(encode_start);

    const auto decode_start = Clock::now();
    run.sum.assign(static_cast<std::size_t>(n), 0.0f);
    for (std::size_t w = 0; w < g.workers.size(); ++w) {
      const std::uint8_t* in = gathered.data() + w * block_bytes;
      for (long long e = 0; e < k; ++e) {
        float v;
        std::memcpy(&v, in + k * ib + e * 4, 4);
        run.sum[GetIndex(in + e * ib, ib)] += v;
      }
    }
    run.decoded_nonzero_rows = NonZeroRows(run.sum, g.shape);
    run.decode_seconds = SecondsSince(decode_start);

    run.payloads = {{CollectiveKind::kAllGather, static_cast<double>(gathered.size()),
                     static_cast<double>(block_bytes), "values+indices"}};
    return run;
  }

 private:
  CompressionSpec spec_;
};

}  // namespace

std::unique_ptr<Compressor> MakeSparseCompressor(const CompressionSpec& spec) {
  switch (spec.method) {
    case CompressionMethod::kCoo:
      return std::make_unique<CooCompressor>(spec);
    case CompressionMethod::kOmniReduce:
      return std::make_unique<OmniReduceCompressor>();
    case CompressionMethod::kS2Reducer:
      return std::make_unique<S2ReducerCompressor>(spec);
    case CompressionMethod::kTopK:
      return std::make_unique<TopKCompressor>(spec);
    default:
      break;
  }
  throw Error("compressor " + std::string(ToString(spec.method)) +
              ": not a sparse method (coo, omnireduce, s2reducer, topk)");
}

}  // namespace stratasim::kernels
