// The gradient-shaped tensors `stratasim compress-check` runs the compressors on: one per
// worker, generated from a documented sparsity and value distribution, or a user's array
// (docs/compress-check.md, "Tensors"). Every value flows from a seed through SplitMix64
// (models/split_mix64.h), so the same seed gives the same tensors on every run.
#ifndef STRATASIM_CLI_GRADIENT_TENSORS_H_
#define STRATASIM_CLI_GRADIENT_TENSORS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/npy_reader.h"
#include "kernels/compressor.h"
#include "models/token_distribution.h"

namespace stratasim {

// The law of one element's value, both of zero mean and unit variance (then times a scale).
enum class ValueDistribution {
  kNormal,   // N(0, 1): Box-Muller on two uniforms
  kLaplace,  // Laplace(0, 1/sqrt(2)): heavier tails, as gradients' are (inverse CDF)
};
std::optional<ValueDistribution> ParseValueDistribution(const std::string& text);
std::string ToString(ValueDistribution d);

// A sparse token table's gradient (vocabulary x hidden), as a GPT with sparse_embedding has
// one: worker w's batch is `draws_per_worker` token ids drawn from `tokens` with
// BatchSeed(seed, w, 0), the draws stratasim's compressed DDP plans for replica w's first
// iteration (strategies/comm/embedding_rows.h). A row is non-zero iff its id was drawn; an id
// drawn c times gets the sum of c independent per-token contributions of N(0, scale^2) per
// element, i.e. scale * sqrt(c) * N(0, 1). The backward of an embedding lookup adds each
// token's output gradient into its row, so frequent ids have larger rows, as they do in
// training; independence across tokens is the simplification.
kernels::WorkerGradients EmbeddingGradients(const TokenDistribution& tokens, long long cols,
                                            long long draws_per_worker, int workers,
                                            std::uint64_t seed, double scale);

// A dense n x 1 gradient per worker: each element non-zero with probability `density`, then
// scale times a `distribution` draw; every worker draws its own positions and values
// independently.
kernels::WorkerGradients DenseGradients(long long elements, ValueDistribution distribution,
                                        double density, int workers, std::uint64_t seed,
                                        double scale);

// Workers from a user's arrays (all of one shape): one array per worker as given, or one array
// for all `workers`, each then adding its own noise to the array's non-zero elements only (so
// a row-sparse gradient stays row-sparse): N(0, (noise * rms)^2), rms over the non-zero
// elements. Throws stratasim::Error when the shapes differ, or several arrays are given and
// their number is not `workers`.
kernels::WorkerGradients ArrayGradients(const std::vector<NpyArray>& arrays, int workers,
                                        double noise, std::uint64_t seed);

}  // namespace stratasim

#endif  // STRATASIM_CLI_GRADIENT_TENSORS_H_
