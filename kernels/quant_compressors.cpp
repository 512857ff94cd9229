// The quantizing compressors of core/compression.h: casq, qsgd, terngrad, fp16, fp8, int8.
// Each Run encodes every worker's gradient into the buffers it would send, sizes the collective
// from those buffers (all-gather: workers x the largest block), and decodes the sum from the
// buffers alone, as the receiving side would.
#include "kernels/quant_compressors.h"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>

#include "core/error.h"
#include "kernels/bit_quantize_ref.h"
#include "kernels/casq_ref.h"
#include "kernels/reference.h"
#include "kernels/stochastic_quant_ref.h"

namespace stratasim::kernels {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename T>
double Bytes(const std::vector<T>& v) {
  return static_cast<double>(v.size() * sizeof(T));
}

// An all-gather of per-worker blocks: equal blocks are what all-gather moves, so the largest
// one sizes it.
WirePayload Gathered(const std::vector<double>& block_bytes, const char* what) {
  const double block = *std::max_element(block_bytes.begin(), block_bytes.end());
  return {CollectiveKind::kAllGather, block * static_cast<double>(block_bytes.size()), block, what};
}

int Workers(const WorkerGradients& g) { return static_cast<int>(g.workers.size()); }

// CASQ (CLUSTER 2021; the authors' code LSTM/CASQ, LSSkernel.cu). Each worker clusters a sample
// of its own gradient, so its centres travel with its codes and tables. The authors re-cluster
// every 100 iterations; one Run is one step, so it clusters every time. Error feedback (the
// authors add each step's quantization residual to the next gradient) needs state across steps
// and is out of scope for a single step.
class CasqCompressor : public Compressor {
 public:
  explicit CasqCompressor(const CompressionSpec& spec) : spec_(spec) {}
  CompressionRun Run(const WorkerGradients& g, int iteration) const override {
    CheckWorkerGradients(g);
    const long long n = g.shape.Elements();
    const casq::TableLayout layout =
        casq::LayoutTables(CasqTableBuckets(spec_, n), spec_.casq_bits);
    CompressionRun run;
    auto start = Clock::now();
    std::vector<casq::Encoded> encoded;
    std::vector<double> blocks;
    for (int w = 0; w < Workers(g); ++w) {
      const std::vector<float>& x = g.workers[w];
      const std::vector<float> centres = casq::ClusterCentres(
          casq::SampleValues(x, reference::RoundingSeed(spec_.seed, w, iteration)),
          spec_.casq_bits);
      encoded.push_back(casq::Encode(x, centres, layout, spec_.seed));
      const casq::Encoded& e = encoded.back();
      blocks.push_back(Bytes(e.codes) + Bytes(e.means) + Bytes(e.centres));
    }
    run.encode_seconds = SecondsSince(start);
    start = Clock::now();
    run.sum = casq::Decode(encoded, n, layout, spec_.seed);
    run.decode_seconds = SecondsSince(start);
    run.payloads = {Gathered(blocks, "codes+tables")};
    run.decoded_nonzero_rows = NonZeroRows(run.sum, g.shape);
    return run;
  }

 private:
  CompressionSpec spec_;
};

// QSGD and TernGrad (kernels/stochastic_quant_ref.h): all-gathered codes and scales, each
// worker's decoded and added.
class StochasticCompressor : public Compressor {
 public:
  explicit StochasticCompressor(const CompressionSpec& spec) : spec_(spec) {}
  CompressionRun Run(const WorkerGradients& g, int iteration) const override {
    CheckWorkerGradients(g);
    const bool qsgd = spec_.method == CompressionMethod::kQsgd;
    CompressionRun run;
    auto start = Clock::now();
    std::vector<reference::StochasticCodes> codes;
    std::vector<double> blocks;
    for (int w = 0; w < Workers(g); ++w) {
      const std::uint64_t seed = reference::RoundingSeed(spec_.seed, w, iteration);
      codes.push_back(
          qsgd ? reference::QsgdEncode(g.workers[w], spec_.qsgd_levels, spec_.bucket_elements, seed)
               : reference::TernGradEncode(g.workers[w], spec_.bucket_elements, seed));
      blocks.push_back(Bytes(codes.back().packed) + Bytes(codes.back().scales));
    }
    run.encode_seconds = SecondsSince(start);
    start = Clock::now();
    run.sum.assign(g.shape.Elements(), 0.0f);
    for (const reference::StochasticCodes& c : codes) {
      if (qsgd) {
        reference::QsgdDecodeAdd(c, spec_.qsgd_levels, spec_.bucket_elements, run.sum);
      } else {
        reference::TernGradDecodeAdd(c, spec_.bucket_elements, run.sum);
      }
    }
    run.decode_seconds = SecondsSince(start);
    run.payloads = {Gathered(blocks, qsgd ? "levels+norms" : "ternary+scales")};
    run.decoded_nonzero_rows = NonZeroRows(run.sum, g.shape);
    return run;
  }

 private:
  CompressionSpec spec_;
};

// fp16 and fp8 (E4M3): every element rounded to the format, then a sum all-reduce in it. The
// reduction adds the workers in order and rounds each partial sum back to the format, as a ring
// all-reduce's reduce-scatter rounds at every hop (NCCL reduces FP16, and FP8 from 2.24 on).
// FP8 has no scale here: values below E4M3's smallest subnormal (2^-9) flush to zero, which is
// what an unscaled FP8 all-reduce does to small gradients.
template <typename Code, Code (*Encode)(float), float (*Decode)(Code), float (*Round)(float)>
class CastCompressor : public Compressor {
 public:
  explicit CastCompressor(const char* what) : what_(what) {}
  CompressionRun Run(const WorkerGradients& g, int /*iteration*/) const override {
    CheckWorkerGradients(g);
    const long long n = g.shape.Elements();
    CompressionRun run;
    auto start = Clock::now();
    std::vector<std::vector<Code>> buffers(g.workers.size(), std::vector<Code>(n));
    for (size_t w = 0; w < g.workers.size(); ++w) {
      for (long long i = 0; i < n; ++i) buffers[w][i] = Encode(g.workers[w][i]);
    }
    run.encode_seconds = SecondsSince(start);
    start = Clock::now();
    run.sum.resize(n);
    for (long long i = 0; i < n; ++i) run.sum[i] = Decode(buffers[0][i]);
    for (size_t w = 1; w < buffers.size(); ++w) {
      for (long long i = 0; i < n; ++i) run.sum[i] = Round(run.sum[i] + Decode(buffers[w][i]));
    }
    run.decode_seconds = SecondsSince(start);
    const double bytes = Bytes(buffers[0]);
    run.payloads = {{CollectiveKind::kAllReduce, bytes, bytes, what_}};
    run.decoded_nonzero_rows = NonZeroRows(run.sum, g.shape);
    return run;
  }

 private:
  const char* what_;
};

Eigen::half ToHalf(float x) { return Eigen::half(x); }
float FromHalf(Eigen::half h) { return static_cast<float>(h); }
using Fp16Compressor = CastCompressor<Eigen::half, ToHalf, FromHalf, reference::RoundFp16>;
using Fp8Compressor = CastCompressor<std::uint8_t, reference::EncodeFp8E4M3,
                                     reference::DecodeFp8E4M3, reference::RoundFp8E4M3>;

// Blockwise INT8 (kernels/reference.h's QuantizeInt8, the CPU reference of kernels/quantize.h):
// codes with per-block scales do not add, so they are all-gathered and each worker's decoded
// values summed in FP32.
class Int8Compressor : public Compressor {
 public:
  explicit Int8Compressor(const CompressionSpec& spec) : spec_(spec) {
    if (spec.int8_block > INT_MAX) {
      throw Error("compressor int8: int8_block " + std::to_string(spec.int8_block) +
                  " exceeds the kernels' limit " + std::to_string(INT_MAX));
    }
  }
  CompressionRun Run(const WorkerGradients& g, int /*iteration*/) const override {
    CheckWorkerGradients(g);
    const long long n = g.shape.Elements();
    const int block = static_cast<int>(spec_.int8_block);
    CompressionRun run;
    auto start = Clock::now();
    std::vector<std::vector<std::int8_t>> q(g.workers.size());
    std::vector<std::vector<float>> scales(g.workers.size());
    std::vector<double> blocks;
    for (size_t w = 0; w < g.workers.size(); ++w) {
      reference::QuantizeInt8(g.workers[w], block, q[w], scales[w]);
      blocks.push_back(Bytes(q[w]) + Bytes(scales[w]));
    }
    run.encode_seconds = SecondsSince(start);
    start = Clock::now();
    Eigen::VectorXf sum = Eigen::VectorXf::Zero(n);
    for (size_t w = 0; w < g.workers.size(); ++w) {
      const std::vector<float> x = reference::DequantizeInt8(q[w], scales[w], block);
      sum += Eigen::Map<const Eigen::VectorXf>(x.data(), n);
    }
    run.sum.assign(sum.data(), sum.data() + n);
    run.decode_seconds = SecondsSince(start);
    run.payloads = {Gathered(blocks, "codes+scales")};
    run.decoded_nonzero_rows = NonZeroRows(run.sum, g.shape);
    return run;
  }

 private:
  CompressionSpec spec_;
};

}  // namespace

std::unique_ptr<Compressor> MakeQuantCompressor(const CompressionSpec& spec) {
  switch (spec.method) {
    case CompressionMethod::kCasq:
      return std::make_unique<CasqCompressor>(spec);
    case CompressionMethod::kQsgd:
    case CompressionMethod::kTernGrad:
      return std::make_unique<StochasticCompressor>(spec);
    case CompressionMethod::kFp16:
      return std::make_unique<Fp16Compressor>("fp16");
    case CompressionMethod::kFp8:
      return std::make_unique<Fp8Compressor>("fp8");
    case CompressionMethod::kInt8:
      return std::make_unique<Int8Compressor>(spec);
    default:
      break;
  }
  throw Error("compressor " + std::string(ToString(spec.method)) + " is not a quantizer");
}

}  // namespace stratasim::kernels
