#include "models/spec_check.h"

#include <cstdio>

#include "core/error.h"

namespace stratasim {
namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

void FailModel(const ModelSpec& spec, const std::string& key, const std::string& value,
               const std::string& rule) {
  throw ConfigError(spec.where, "model." + key, value, rule);
}

void RequirePositive(const ModelSpec& spec, const std::string& key, double value) {
  if (!(value >= 1)) FailModel(spec, key, Number(value), "must be >= 1");
}

void CheckTransformerSpec(const ModelSpec& s) {
  RequirePositive(s, "layers", s.layers);
  RequirePositive(s, "hidden", s.hidden);
  RequirePositive(s, "heads", s.heads);
  if (s.hidden % s.heads != 0) FailModel(s, "heads", Number(s.heads), "must divide hidden");
  RequirePositive(s, "sequence", s.sequence);
  RequirePositive(s, "vocabulary", s.vocabulary);
  if (s.ffn_hidden < 0) FailModel(s, "ffn_hidden", Number(s.ffn_hidden), "must be >= 1");
}

void CheckMicroBatch(const ModelSpec& spec, int micro_batch) {
  if (micro_batch < 1) {
    throw ConfigError(spec.where, "training.micro_batch", Number(micro_batch), "must be >= 1");
  }
}

}  // namespace stratasim
