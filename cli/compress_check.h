// `stratasim compress-check`'s measurement: each compressor's CPU kernels
// (kernels/compressor.h) run on the workers' gradients over several trials, and what their
// decoded sums, wire payloads and wall times say (docs/compress-check.md).
//
// Trial t (0-based) runs the compressor with iteration t and seed spec.seed + t: the stochastic
// methods round differently and the sketching methods hash differently each trial, on the same
// tensors, so that the mean over trials shows the bias. Every figure but the wall times is a
// function of the tensors and specs alone: the same inputs give the same figures.
#ifndef STRATASIM_CLI_COMPRESS_CHECK_H_
#define STRATASIM_CLI_COMPRESS_CHECK_H_

#include <string>
#include <vector>

#include "cli/compression_metrics.h"
#include "core/compression.h"
#include "kernels/compressor.h"

namespace stratasim {

// A compressor to check: `name` labels it (a strategy's name, or the method's with --methods),
// `strategy` is the scenario strategy it comes from ("" for none).
struct CompressorToCheck {
  std::string name;
  std::string strategy;
  CompressionSpec spec;
};

struct CompressorCheck {
  CompressorToCheck what;
  bool ok = false;
  std::string error;  // why it could not run (ok false): the compressor's message

  // Accuracy, over the trials: relative error (mean and largest), bias; rows as means.
  double relative_error = 0;
  double relative_error_max = 0;
  double bias = 0;
  double decoded_rows = 0;
  double recovered_row_fraction = 0;  // recovered rows / the non-zero rows of s
  double false_rows = 0;

  // The wire, from CompressionRun::payloads (the largest over the trials): per worker, the
  // collectives' sizes as Collective::bytes counts them, and per worker against the dense FP32
  // all-reduce of the same gradient.
  std::vector<WirePayload> payloads;
  double bytes_per_worker = 0;
  double bytes_total = 0;
  double ratio_to_dense = 0;

  // Measured wall times, medians over the trials (std::chrono::steady_clock in the kernels):
  // they vary run to run, so they are kept apart from every figure above. Per element: the
  // encode of one worker's gradient (encode_s / workers / elements) and the decode of the sum
  // (decode_s / elements), what a calibration file's compression entries hold.
  double encode_s = 0;
  double decode_s = 0;
  double encode_s_per_element = 0;
  double decode_s_per_element = 0;
};

// Runs `c` for `trials` trials on `g`, whose exact sum is `exact`. A compressor that throws
// stratasim::Error (a method not built, a spec it refuses, a shape it cannot take) gives ok false
// with the message; other exceptions (std::bad_alloc) propagate.
CompressorCheck CheckCompressor(const CompressorToCheck& c, const kernels::WorkerGradients& g,
                                const ExactSum& exact, int trials);

// Non-zero rows of each worker's gradient, and of their union.
struct RowCounts {
  std::vector<long long> per_worker;
  long long union_rows = 0;
};
RowCounts CountRows(const kernels::WorkerGradients& g);

}  // namespace stratasim

#endif  // STRATASIM_CLI_COMPRESS_CHECK_H_
