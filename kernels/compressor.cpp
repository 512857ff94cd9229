#include "kernels/compressor.h"

#include <Eigen/Core>
#include <chrono>

#include "core/error.h"
#include "kernels/quant_compressors.h"
#include "kernels/sparse_compressors.h"

namespace stratasim::kernels {
namespace {

// The uncompressed baseline: a sum all-reduce of FP32 values.
class DenseCompressor : public Compressor {
 public:
  CompressionRun Run(const WorkerGradients& g, int /*iteration*/) const override {
    CheckWorkerGradients(g);
    const long long n = g.shape.Elements();
    CompressionRun run;
    const auto start = std::chrono::steady_clock::now();
    Eigen::VectorXf sum = Eigen::VectorXf::Zero(n);
    for (const std::vector<float>& w : g.workers)
      sum += Eigen::Map<const Eigen::VectorXf>(w.data(), n);
    run.decode_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.sum.assign(sum.data(), sum.data() + n);
    run.payloads =
        CompressedPayloads(CompressionSpec{}, g.shape, 4, static_cast<int>(g.workers.size()), {});
    run.decoded_nonzero_rows = NonZeroRows(run.sum, g.shape);
    return run;
  }
};

}  // namespace

void CheckWorkerGradients(const WorkerGradients& g) {
  if (g.shape.rows < 1 || g.shape.cols < 1) throw Error("compressor: empty gradient shape");
  if (g.workers.empty()) throw Error("compressor: no workers");
  for (size_t w = 0; w < g.workers.size(); ++w) {
    if (static_cast<long long>(g.workers[w].size()) != g.shape.Elements()) {
      throw Error("compressor: worker " + std::to_string(w) + " has " +
                  std::to_string(g.workers[w].size()) + " values, the shape " +
                  std::to_string(g.shape.rows) + " x " + std::to_string(g.shape.cols) + " needs " +
                  std::to_string(g.shape.Elements()));
    }
  }
}

long long NonZeroRows(const std::vector<float>& values, const GradientShape& shape) {
  long long rows = 0;
  for (long long r = 0; r < shape.rows; ++r) {
    for (long long c = 0; c < shape.cols; ++c) {
      if (values[r * shape.cols + c] != 0.0f) {
        ++rows;
        break;
      }
    }
  }
  return rows;
}

std::unique_ptr<Compressor> MakeCompressor(const CompressionSpec& spec) {
  const std::string bad = CheckCompressionSpec(spec);
  if (!bad.empty()) throw Error("compressor " + std::string(ToString(spec.method)) + ": " + bad);
  switch (spec.method) {
    case CompressionMethod::kDense:
      return std::make_unique<DenseCompressor>();
    case CompressionMethod::kCoo:
    case CompressionMethod::kOmniReduce:
    case CompressionMethod::kS2Reducer:
    case CompressionMethod::kTopK:
      return MakeSparseCompressor(spec);
    case CompressionMethod::kCasq:
    case CompressionMethod::kQsgd:
    case CompressionMethod::kTernGrad:
    case CompressionMethod::kFp16:
    case CompressionMethod::kFp8:
    case CompressionMethod::kInt8:
      return MakeQuantCompressor(spec);
  }
  throw Error("compressor: unknown method");
}

}  // namespace stratasim::kernels
