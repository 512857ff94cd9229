// What `stratasim compress-check` measures of a compressor's decoded sum ŝ against the exact
// sum s of the workers' gradients (docs/compress-check.md, "Metrics"):
// - relative error ||ŝ - s|| / ||s|| (Euclidean norms over every element, in double);
// - bias ||mean over trials of ŝ - s|| / ||s||: what is left of the error when trials with
//   other seeds are averaged (an unbiased compressor's bias falls as 1/sqrt(trials), a biased
//   one's, e.g. top-k's, does not);
// - rows: a row is non-zero when any of its elements is; recovered = decoded non-zero rows that
//   are non-zero in s, false = decoded non-zero rows that are zero in s.
// s is summed in double, so it is exact to far below any compressor's error.
#ifndef STRATASIM_CLI_COMPRESSION_METRICS_H_
#define STRATASIM_CLI_COMPRESSION_METRICS_H_

#include <vector>

#include "core/median.h"
#include "kernels/compressor.h"

namespace stratasim {

struct ExactSum {
  GradientShape shape;
  std::vector<double> sum;        // shape.Elements()
  double norm = 0;                // ||s||
  std::vector<char> nonzero_row;  // shape.rows: 1 where the row of s is non-zero
  long long nonzero_rows = 0;
};

// Throws stratasim::Error for mis-shaped gradients (kernels::CheckWorkerGradients), or when
// s is zero (no relative error is defined then).
ExactSum ExactSumOf(const kernels::WorkerGradients& g);

struct TrialMetrics {
  double relative_error = 0;
  long long decoded_rows = 0;    // non-zero rows of ŝ
  long long recovered_rows = 0;  // of them, non-zero in s
  long long false_rows = 0;      // of them, zero in s
};

// Throws stratasim::Error when `estimate` does not have s's elements.
TrialMetrics MeasureTrial(const ExactSum& exact, const std::vector<float>& estimate);

// The running mean of ŝ over trials, for the bias.
class BiasMeter {
 public:
  explicit BiasMeter(const ExactSum& exact);
  void Add(const std::vector<float>& estimate);
  // ||mean of the added estimates - s|| / ||s||; 0 before any is added.
  double Bias() const;

 private:
  const ExactSum& exact_;
  std::vector<double> total_;
  int trials_ = 0;
};

}  // namespace stratasim

#endif  // STRATASIM_CLI_COMPRESSION_METRICS_H_
