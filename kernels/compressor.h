// A gradient compressor as `stratasim compress-check` runs it on the CPU: every worker's
// gradient in, the decoded estimate of their sum out, with the buffers each worker really
// encoded (their sizes are the wire bytes) and the time each stage took.
//
// Each method of core/compression.h has one implementation, registered in MakeCompressor; its
// kernels are the CPU references (Eigen) of the CUDA kernels beside them, so compress-check
// measures what the GPU code computes. The simulator sends CompressedPayloads' sizes; the
// kernel tests hold every implementation's encoded sizes equal to them.
#ifndef STRATASIM_KERNELS_COMPRESSOR_H_
#define STRATASIM_KERNELS_COMPRESSOR_H_

#include <memory>
#include <vector>

#include "core/compression.h"

namespace stratasim::kernels {

// Row-major rows x cols FP32 values, one per worker, all of `shape`.
struct WorkerGradients {
  GradientShape shape;
  std::vector<std::vector<float>> workers;
};

struct CompressionRun {
  std::vector<float> sum;  // the decoded estimate of the sum over workers, shape.Elements()
  // What the encoded step put on the wire, in CompressedPayloads' order and terms (all-gather:
  // workers x the largest block), measured from the buffers the encoders produced.
  std::vector<WirePayload> payloads;
  // Rows the decoder reports non-zero (row-sparse methods: the union it reconstructs; others:
  // rows with any non-zero element in `sum`).
  long long decoded_nonzero_rows = 0;
  double encode_seconds = 0;  // all workers' encodes, wall time (std::chrono::steady_clock)
  double decode_seconds = 0;  // the merge/reduction and decode, wall time
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  // Compresses each worker's gradient, exchanges the payloads as the collectives would
  // (summing mergeable ones, concatenating gathered ones) and decodes the sum. `iteration`
  // feeds the stochastic methods' rounding seed (spec.seed, worker, iteration), so the same
  // inputs give the same output. Throws stratasim::Error for an empty or mis-shaped input.
  virtual CompressionRun Run(const WorkerGradients& g, int iteration) const = 0;
};

// Throws stratasim::Error unless g has workers, a non-empty shape and Elements() values each.
void CheckWorkerGradients(const WorkerGradients& g);
// Rows of a rows x cols matrix with at least one non-zero value.
long long NonZeroRows(const std::vector<float>& values, const GradientShape& shape);

// The implementation of spec.method; spec must pass CheckCompressionSpec (else Error).
std::unique_ptr<Compressor> MakeCompressor(const CompressionSpec& spec);

}  // namespace stratasim::kernels

#endif  // STRATASIM_KERNELS_COMPRESSOR_H_
