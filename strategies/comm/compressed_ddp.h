// Data parallelism with compressed gradients: PyTorch DDP's step (strategies/data/ddp.h) whose
// gradient exchange runs a compressor's encode, its payload collectives and its decode instead
// of the dense all-reduce.
//
// One option set and one lowering serve every kind; the kind names the compressor
// (core/compression.h says what each one puts on the wire and cites its paper):
//   s2reducer, casq, coo, omnireduce, topk, qsgd, terngrad, uniform-fp16, uniform-fp8,
//   uniform-int8.
// The dense baseline is kind `ddp`.
//
// What is compressed (option `scope`):
// - embedding (the default of the row-sparse methods coo, omnireduce and s2reducer): only the
//   sparse token table of a model with sparse_embedding: true (Workload::sparse_embedding); its
//   non-zero rows per replica are the distinct ids of the replica's batch
//   (models/token_distribution.h). Every other gradient is all-reduced densely in DDP's buckets.
// - all (the default of the quantizers): the table as above (when the model has one) and every
//   bucket, each bucket as a dense n x 1 gradient.
//
// Per compressed gradient and iteration, on every GPU, on the communication stream (in order,
// each after the previous): encode (a memory-bound compute task) -> the payload collectives of
// CompressedPayloads -> decode (a memory-bound compute task); Adam waits for every decode.
// compressed_lowering.cpp documents the bytes each encode and decode moves, and the
// calibration that replaces them with measured times.
#ifndef STRATASIM_STRATEGIES_COMM_COMPRESSED_DDP_H_
#define STRATASIM_STRATEGIES_COMM_COMPRESSED_DDP_H_

#include <optional>

#include "core/compression.h"
#include "strategies/plan.h"

namespace stratasim {

// The options every compressed kind declares: DDP's (bucket_size, overlap, algorithm,
// gradient_as_bucket_view), then the compressors' own and `scope`.
const OptionSpecs& CompressedDdpOptions();

// The CompressionSpec that strategy `spec`'s kind and options give: its options read and checked
// (a ConfigError located at the option for a bad value, an option the method does not use, or an
// undeclared key), the hash and rounding seed from s.training.seed. nullopt for a kind that is
// not one of the compressed kinds above (`ddp` among them): no dense spec is ever returned.
std::optional<CompressionSpec> CompressionOf(const Scenario& s, const StrategySpec& spec);

// The compressor of a compressed kind ("s2reducer" -> kS2Reducer, "uniform-fp16" -> kFp16...);
// nullopt for any other kind.
std::optional<CompressionMethod> CompressedKindMethod(const std::string& kind);

Plan PlanCompressedDdp(const Scenario& s, const StrategySpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_COMM_COMPRESSED_DDP_H_
