// Checks of a ModelSpec done when a model is built, for specs that did not come through the
// scenario loader (which checks the same rules with the value's own line).
#ifndef STRATASIM_MODELS_SPEC_CHECK_H_
#define STRATASIM_MODELS_SPEC_CHECK_H_

#include <string>

#include "core/scenario.h"

namespace stratasim {

// Throws ConfigError at spec.where naming "model.<key>".
[[noreturn]] void FailModel(const ModelSpec& spec, const std::string& key, const std::string& value,
                            const std::string& rule);
void RequirePositive(const ModelSpec& spec, const std::string& key, double value);
// layers, hidden, heads, sequence, vocabulary >= 1; heads divide hidden.
void CheckTransformerSpec(const ModelSpec& spec);
void CheckMicroBatch(const ModelSpec& spec, int micro_batch);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_SPEC_CHECK_H_
