#include "cli/compression_metrics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

void CheckSize(const ExactSum& exact, const std::vector<float>& estimate) {
  if (estimate.size() != exact.sum.size()) {
    throw Error("the decoded sum has " + std::to_string(estimate.size()) +
                " values, the gradient " + std::to_string(exact.sum.size()));
  }
}

}  // namespace

ExactSum ExactSumOf(const kernels::WorkerGradients& g) {
  kernels::CheckWorkerGradients(g);
  ExactSum e;
  e.shape = g.shape;
  e.sum.assign(static_cast<size_t>(g.shape.Elements()), 0.0);
  for (const std::vector<float>& w : g.workers) {
    for (size_t i = 0; i < w.size(); ++i) e.sum[i] += w[i];
  }
  double sq = 0;
  for (double v : e.sum) sq += v * v;
  e.norm = std::sqrt(sq);
  if (!(e.norm > 0))
    throw Error("the workers' gradients sum to zero: no relative error is defined");
  e.nonzero_row.assign(static_cast<size_t>(g.shape.rows), 0);
  for (long long r = 0; r < g.shape.rows; ++r) {
    for (long long c = 0; c < g.shape.cols; ++c) {
      if (e.sum[r * g.shape.cols + c] != 0.0) {
        e.nonzero_row[r] = 1;
        ++e.nonzero_rows;
        break;
      }
    }
  }
  return e;
}

TrialMetrics MeasureTrial(const ExactSum& exact, const std::vector<float>& estimate) {
  CheckSize(exact, estimate);
  TrialMetrics m;
  double sq = 0;
  for (size_t i = 0; i < estimate.size(); ++i) {
    const double d = static_cast<double>(estimate[i]) - exact.sum[i];
    sq += d * d;
  }
  m.relative_error = std::sqrt(sq) / exact.norm;
  const long long cols = exact.shape.cols;
  for (long long r = 0; r < exact.shape.rows; ++r) {
    bool nonzero = false;
    for (long long c = 0; c < cols && !nonzero; ++c) nonzero = estimate[r * cols + c] != 0.0f;
    if (!nonzero) continue;
    ++m.decoded_rows;
    if (exact.nonzero_row[r]) {
      ++m.recovered_rows;
    } else {
      ++m.false_rows;
    }
  }
  return m;
}

BiasMeter::BiasMeter(const ExactSum& exact) : exact_(exact), total_(exact.sum.size(), 0.0) {}

void BiasMeter::Add(const std::vector<float>& estimate) {
  CheckSize(exact_, estimate);
  for (size_t i = 0; i < estimate.size(); ++i) total_[i] += estimate[i];
  ++trials_;
}

double BiasMeter::Bias() const {
  if (trials_ == 0) return 0;
  double sq = 0;
  for (size_t i = 0; i < total_.size(); ++i) {
    const double d = total_[i] / trials_ - exact_.sum[i];
    sq += d * d;
  }
  return std::sqrt(sq) / exact_.norm;
}

}  // namespace stratasim
