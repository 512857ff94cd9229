// Which gradients a compressed kind compresses (option `scope`, strategies/comm/compressed_ddp.h).
#ifndef STRATASIM_STRATEGIES_COMM_COMPRESSION_SCOPE_H_
#define STRATASIM_STRATEGIES_COMM_COMPRESSION_SCOPE_H_

#include "core/compression.h"
#include "core/scenario.h"

namespace stratasim {

enum class CompressionScope {
  kEmbedding,  // the sparse token table only; the other buckets all-reduced densely
  kAll,        // the table and every bucket
};

// The spec's `scope`, or the method's default (embedding for row-sparse methods, else all);
// ConfigError located at the option for another value.
CompressionScope ReadCompressionScope(const StrategySpec& spec, CompressionMethod method);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_COMM_COMPRESSION_SCOPE_H_
