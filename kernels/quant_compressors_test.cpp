#include "kernels/quant_compressors.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <iostream>

#include "core/error.h"
#include "kernels/casq_ref.h"
#include "models/split_mix64.h"

namespace stratasim::kernels {
namespace {

CompressionSpec Spec(CompressionMethod m) {
  CompressionSpec s;
  s.method = m;
  return s;
}

// A heavy-tailed gradient: Laplace values of scale b (inverse CDF of SplitMix64 uniforms).
std::vector<float> Laplace(long long n, std::uint64_t seed, double b) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    const double u = rng.Unit() - 0.5;
    x = static_cast<float>(-b * (u < 0 ? -1 : 1) * std::log(1 - 2 * std::fabs(u)));
  }
  return v;
}

WorkerGradients LaplaceWorkers(GradientShape shape, int workers, std::uint64_t seed) {
  WorkerGradients g;
  g.shape = shape;
  for (int w = 0; w < workers; ++w) g.workers.push_back(Laplace(shape.Elements(), seed + w, 1e-3));
  return g;
}

std::vector<double> ExactSum(const WorkerGradients& g) {
  std::vector<double> s(g.shape.Elements(), 0.0);
  for (const auto& w : g.workers)
    for (std::size_t i = 0; i < s.size(); ++i) s[i] += w[i];
  return s;
}

double RelativeError(const std::vector<float>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

// Bits each element costs on the wire: one worker's block over its elements.
double BitsPerElement(const CompressionRun& run, long long n) {
  return 8 * run.payloads[0].bytes_per_worker / static_cast<double>(n);
}

std::vector<CompressionSpec> QuantSpecs() {
  std::vector<CompressionSpec> specs;
  for (int q : {1, 2, 3, 8}) {
    CompressionSpec s = Spec(CompressionMethod::kCasq);
    s.casq_bits = q;
    specs.push_back(s);
  }
  for (int levels : {1, 2, 15, 127}) {
    CompressionSpec s = Spec(CompressionMethod::kQsgd);
    s.qsgd_levels = levels;
    specs.push_back(s);
  }
  specs.push_back(Spec(CompressionMethod::kTernGrad));
  specs.push_back(Spec(CompressionMethod::kFp16));
  specs.push_back(Spec(CompressionMethod::kFp8));
  specs.push_back(Spec(CompressionMethod::kInt8));
  return specs;
}

TEST(QuantCompressors, MeasuredPayloadsEqualCompressedPayloads) {
  const GradientShape shape{1001, 3};  // not a multiple of buckets, blocks or code words
  for (const CompressionSpec& spec : QuantSpecs()) {
    for (int workers : {1, 2, 5}) {
      const WorkerGradients g = LaplaceWorkers(shape, workers, 40);
      const CompressionRun run = MakeCompressor(spec)->Run(g, 0);
      const std::vector<WirePayload> want = CompressedPayloads(spec, shape, 4, workers, {});
      const std::string where =
          std::string(ToString(spec.method)) + " workers " + std::to_string(workers);
      ASSERT_EQ(run.payloads.size(), want.size()) << where;
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(run.payloads[i].kind, want[i].kind) << where;
        EXPECT_DOUBLE_EQ(run.payloads[i].bytes, want[i].bytes) << where;
        EXPECT_DOUBLE_EQ(run.payloads[i].bytes_per_worker, want[i].bytes_per_worker) << where;
        EXPECT_EQ(run.payloads[i].what, want[i].what) << where;
      }
      EXPECT_EQ(run.sum.size(), static_cast<std::size_t>(shape.Elements())) << where;
    }
  }
}

TEST(QuantCompressors, CasqAllGatherGrowsByOneWorkersBlock) {
  const GradientShape shape{5000, 1};
  const CompressionSpec spec = Spec(CompressionMethod::kCasq);
  // One worker's block: 2-bit codes, the tables' FP32 means, 4 FP32 centres.
  const double block = 4.0 * casq::CodeWords(5000, 2) + 4.0 * CasqTableBuckets(spec, 5000) + 16;
  double previous = 0;
  for (int workers = 1; workers <= 6; ++workers) {
    const double bytes =
        MakeCompressor(spec)->Run(LaplaceWorkers(shape, workers, 1), 0).payloads[0].bytes;
    EXPECT_DOUBLE_EQ(bytes - previous, block) << workers << " workers";
    previous = bytes;
  }
}

TEST(CasqReference, TablesFollowTheAuthorsSplit) {
  // The authors' q = 2 tables: [500000, 200, 200, 500000].
  EXPECT_EQ(casq::LayoutTables(1000400, 2).offsets,
            (std::vector<long long>{0, 500000, 500200, 500400, 1000400}));
  // Too few buckets for the ratio: one per bulk table, tails share the rest.
  EXPECT_EQ(casq::LayoutTables(7, 2).offsets, (std::vector<long long>{0, 2, 3, 4, 7}));
  EXPECT_EQ(casq::LayoutTables(9, 1).offsets, (std::vector<long long>{0, 4, 9}));
  try {
    casq::LayoutTables(3, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "casq: 3 buckets cannot hold 4 cluster tables");
  }
}

TEST(CasqReference, CentresAreTailMeansAndBulkKMeans) {
  std::vector<float> s;
  for (int v = 1; v <= 100; ++v) {
    s.push_back(static_cast<float>(v));
    s.push_back(-static_cast<float>(v));
  }
  // q = 2, per sign: the tail (the top 5: 96..100) has mean 98, the bulk's one centre 48.
  EXPECT_EQ(casq::ClusterCentres(s, 2), (std::vector<float>{-98, -48, 48, 98}));
  // q = 1: one centre per sign, its mean.
  EXPECT_EQ(casq::ClusterCentres({-3, -1, 2, 4}, 1), (std::vector<float>{-2, 3}));
  // No negative values: their centres are 0.
  EXPECT_EQ(casq::ClusterCentres({1, 1}, 1), (std::vector<float>{0, 1}));
  // q = 3 on a bimodal bulk: k-means finds the two modes.
  std::vector<float> b;
  for (int i = 0; i < 50; ++i) {
    b.push_back(1.0f);
    b.push_back(5.0f);
  }
  b.push_back(100.0f);  // the tail
  const std::vector<float> c = casq::ClusterCentres(b, 3);
  ASSERT_EQ(c.size(), 8u);
  EXPECT_FLOAT_EQ(c[7], 24.0f);  // the top 5 of 101 values: four 5s and 100
  EXPECT_FLOAT_EQ(c[4], 1.0f);
  EXPECT_FLOAT_EQ(c[6], 5.0f);
}

// Every decoded value is the mean of the values that share its code's bucket, and the codes
// are each element's nearest centre.
TEST(CasqReference, DecodeIsTheBucketMean) {
  const long long n = 3000;
  const std::vector<float> x = Laplace(n, 5, 1.0);
  const std::vector<float> centres = casq::ClusterCentres(x, 2);
  const casq::TableLayout layout = casq::LayoutTables(60, 2);
  const casq::Encoded e = casq::Encode(x, centres, layout, 7);
  const std::vector<float> d = casq::Decode({e}, n, layout, 7);
  std::vector<double> sum(layout.Buckets(), 0);
  std::vector<int> count(layout.Buckets(), 0);
  std::vector<long long> bucket(n);
  for (long long i = 0; i < n; ++i) {
    const int c = casq::ReadCode(e.codes.data(), i, 2);
    ASSERT_EQ(c, casq::NearestCentre(x[i], centres.data(), 4));
    bucket[i] = casq::Bucket(layout, c, i, 7);
    sum[bucket[i]] += x[i];
    ++count[bucket[i]];
  }
  for (long long i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(d[i], static_cast<float>(sum[bucket[i]] / count[bucket[i]])) << i;
}

// The figures of the report: relative error ||estimate - sum|| / ||sum|| of 4 workers' Laplace
// gradients (n = 2^17, more than CASQ's 100k samples) at about 2 bits per element. CASQ's
// tables cost table_ratio * 32 = 0.32 bits per element on top of its 2-bit codes. CASQ is
// biased (its bulk collapses to bucket means) where QSGD and TernGrad are unbiased with a large
// variance at 2 bits; one step's error is what this compares.
TEST(QuantCompressors, CasqBeatsQsgdAndTernGradAtTwoBits) {
  const GradientShape shape{1 << 17, 1};
  const WorkerGradients g = LaplaceWorkers(shape, 4, 77);
  const std::vector<double> exact = ExactSum(g);
  // CASQ with tables cut to 0.002 x 32 = 0.064 bits per element: 2.06 bits, QSGD's and
  // TernGrad's exactly (their FP32 scale per 512 elements costs 0.0625).
  CompressionSpec casq_small = Spec(CompressionMethod::kCasq);
  casq_small.table_ratio = 0.002;
  CompressionSpec qsgd1 = Spec(CompressionMethod::kQsgd);
  qsgd1.qsgd_levels = 1;
  CompressionSpec qsgd3 = Spec(CompressionMethod::kQsgd);
  qsgd3.qsgd_levels = 3;
  const struct {
    const char* name;
    CompressionSpec spec;
  } cases[] = {
      {"casq q=2", Spec(CompressionMethod::kCasq)},     {"qsgd s=1", qsgd1},
      {"terngrad", Spec(CompressionMethod::kTernGrad)}, {"qsgd s=3", qsgd3},
      {"int8", Spec(CompressionMethod::kInt8)},         {"casq q=2 tables 0.002", casq_small}};
  std::vector<double> error;
  for (const auto& c : cases) {
    const CompressionRun run = MakeCompressor(c.spec)->Run(g, 0);
    error.push_back(RelativeError(run.sum, exact));
    std::cout << "[figure] " << c.name << ": " << BitsPerElement(run, shape.Elements())
              << " bits/element, relative error " << error.back() << "\n";
  }
  EXPECT_LT(error[0], error[1]);  // casq q=2 < qsgd s=1
  EXPECT_LT(error[0], error[2]);  // casq q=2 < terngrad
  EXPECT_LT(error[5], error[1]);  // at equal bits too
  EXPECT_LT(error[5], error[2]);
}

// QSGD and TernGrad are unbiased: the mean of the decoded sum over many rounding seeds
// (iterations) approaches the exact sum, its error shrinking as 1/sqrt(trials).
TEST(QuantCompressors, QsgdAndTernGradAreUnbiased) {
  const WorkerGradients g = LaplaceWorkers({512, 1}, 2, 3);
  const std::vector<double> exact = ExactSum(g);
  for (const CompressionSpec& spec :
       {Spec(CompressionMethod::kQsgd), Spec(CompressionMethod::kTernGrad)}) {
    const auto compressor = MakeCompressor(spec);
    std::vector<double> mean(exact.size(), 0.0);
    std::vector<double> bias;
    int trials = 0;
    for (int target : {16, 256, 4096}) {
      for (; trials < target; ++trials) {
        const CompressionRun run = compressor->Run(g, trials);
        for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += run.sum[i];
      }
      std::vector<float> m(mean.size());
      for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(mean[i] / trials);
      bias.push_back(RelativeError(m, exact));
    }
    // 16x the trials: 4x less error, give or take the sampling noise.
    EXPECT_LT(bias[1], bias[0] / 2.5) << ToString(spec.method);
    EXPECT_LT(bias[2], bias[1] / 2.5) << ToString(spec.method);
    std::cout << "[figure] " << ToString(spec.method) << " bias at 16/256/4096 trials: " << bias[0]
              << " " << bias[1] << " " << bias[2] << "\n";
  }
}

// fp16 and fp8 add the workers in the format, rounding each partial sum: per element the error
// is at most the unit roundoff u times the partial sums' magnitudes, over 2W - 1 roundings
// (each input and each add), plus half the smallest subnormal per rounding.
TEST(QuantCompressors, CastErrorsWithinTheFormatBounds) {
  const struct {
    CompressionMethod method;
    double u;
    double half_subnormal;
  } formats[] = {{CompressionMethod::kFp16, 0x1p-11, 0x1p-25},
                 {CompressionMethod::kFp8, 0x1p-4, 0x1p-10}};
  const int workers = 4;
  const WorkerGradients g = LaplaceWorkers({4096, 1}, workers, 9);
  std::vector<double> abs_sum(4096, 0);
  for (const auto& w : g.workers)
    for (std::size_t i = 0; i < abs_sum.size(); ++i) abs_sum[i] += std::fabs(w[i]) * 1000;
  for (const auto& f : formats) {
    WorkerGradients big = g;  // scaled into the formats' normal range (gradients x 1000)
    for (auto& w : big.workers)
      for (float& v : w) v *= 1000;
    const std::vector<double> exact = ExactSum(big);
    const CompressionRun run = MakeCompressor(Spec(f.method))->Run(big, 0);
    double worst_ratio = 0;
    for (std::size_t i = 0; i < exact.size(); ++i) {
      const double growth = std::pow(1 + f.u, 2 * workers);
      const double bound = (2 * workers - 1) * (f.u * abs_sum[i] * growth + f.half_subnormal);
      const double err = std::fabs(run.sum[i] - exact[i]);
      ASSERT_LE(err, bound) << ToString(f.method) << " element " << i;
      worst_ratio = std::max(worst_ratio, err / (f.u * std::fabs(exact[i]) + 1e-30));
    }
    EXPECT_GT(worst_ratio, 0.5) << ToString(f.method);  // it does round
  }
}

// INT8 codes with per-block scales: each worker's error is at most half its block's step
// (absmax / 127 / 2), and the sum's at most the sum of those.
TEST(QuantCompressors, Int8ErrorWithinHalfAStepPerWorker) {
  const int workers = 3;
  const long long n = 3000;
  const WorkerGradients g = LaplaceWorkers({n, 1}, workers, 21);
  CompressionSpec spec = Spec(CompressionMethod::kInt8);
  spec.int8_block = 100;
  const CompressionRun run = MakeCompressor(spec)->Run(g, 0);
  const std::vector<double> exact = ExactSum(g);
  for (long long b = 0; b * 100 < n; ++b) {
    double step_sum = 0;
    for (const auto& w : g.workers) {
      float absmax = 0;
      for (long long i = b * 100; i < (b + 1) * 100; ++i)
        absmax = std::max(absmax, std::fabs(w[i]));
      step_sum += absmax / 127.0;
    }
    for (long long i = b * 100; i < (b + 1) * 100; ++i)
      ASSERT_LE(std::fabs(run.sum[i] - exact[i]), 0.5 * step_sum * (1 + 1e-5)) << i;
  }
}

TEST(QuantCompressors, ReproducibleFromTheSeed) {
  const WorkerGradients g = LaplaceWorkers({120000, 1}, 2, 13);  // casq samples 100k of 120k
  for (const CompressionSpec& spec :
       {Spec(CompressionMethod::kCasq), Spec(CompressionMethod::kQsgd),
        Spec(CompressionMethod::kTernGrad)}) {
    const auto c = MakeCompressor(spec);
    EXPECT_EQ(c->Run(g, 3).sum, c->Run(g, 3).sum) << ToString(spec.method);
    EXPECT_NE(c->Run(g, 3).sum, c->Run(g, 4).sum) << ToString(spec.method);
    CompressionSpec other = spec;
    other.seed = 1;
    EXPECT_NE(c->Run(g, 3).sum, MakeCompressor(other)->Run(g, 3).sum) << ToString(spec.method);
  }
}

TEST(QuantCompressors, ErrorsNameTheProblem) {
  CompressionSpec spec = Spec(CompressionMethod::kInt8);
  spec.int8_block = 1LL << 40;
  try {
    MakeCompressor(spec);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "compressor int8: int8_block 1099511627776 exceeds the kernels' limit 2147483647");
  }
  try {
    MakeQuantCompressor(Spec(CompressionMethod::kDense));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "compressor dense is not a quantizer");
  }
  WorkerGradients g;
  g.shape = {2, 2};
  g.workers = {{1, 2, 3, 4}, {1, 2}};
  try {
    MakeCompressor(Spec(CompressionMethod::kCasq))->Run(g, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "compressor: worker 1 has 2 values, the shape 2 x 2 needs 4");
  }
}

}  // namespace
}  // namespace stratasim::kernels
