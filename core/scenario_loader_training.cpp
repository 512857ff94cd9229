// The scenario's `training:` section: batch sizes, precision, iterations and the seed.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/limits.h"
#include "core/scenario_loader_sections.h"

namespace stratasim::scenario_sections {

using yaml::Field;
using yaml::Map;

namespace {

// The keys both the scenario's section and a strategy's override read.
void ReadMicroBatchAndPrecision(const yaml::Reader& r, const Map& m, TrainingSpec& spec) {
  if (auto micro = m.Get("micro_batch")) {
    spec.micro_batch = r.Int(*micro, 1);
    if (spec.global_batch % spec.micro_batch != 0) {
      r.Fail(*micro, "must divide global_batch (" + std::to_string(spec.global_batch) + ")");
    }
  }
  if (auto precision = m.Get("precision")) {
    std::optional<DType> d = ParseDType(r.String(*precision));
    if (!d) r.Fail(*precision, "unknown precision (known: fp32, tf32, fp16, bf16, fp8, int8)");
    spec.precision = *d;
    spec.precision_where = r.WhereOf(*precision);
  }
}

}  // namespace

TrainingSpec ReadTraining(const yaml::Reader& r, const Field& f) {
  Map m(r, f, {"global_batch", "micro_batch", "precision", "iterations", "seed"});
  TrainingSpec spec;
  spec.precision_where = r.WhereOf(f);
  spec.global_batch = r.Int(m.Require("global_batch"), 1);
  ReadMicroBatchAndPrecision(r, m, spec);
  if (auto iterations = m.Get("iterations")) {
    Map im(r, *iterations, {"warmup", "measured"});
    // Bounded so that warm-up + measured never overflows an int (docs/limits.md).
    if (auto warmup = im.Get("warmup")) {
      spec.warmup_iterations = static_cast<int>(r.Integer(*warmup, 0, limits::kMaxIterations));
    }
    if (auto measured = im.Get("measured")) {
      spec.measured_iterations = static_cast<int>(r.Integer(*measured, 1, limits::kMaxIterations));
    }
  }
  if (auto seed = m.Get("seed")) {
    std::string text = seed->value.IsScalar() ? seed->value.Scalar() : "";
    bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
    errno = 0;
    unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
    if (!digits || errno == ERANGE) r.Fail(*seed, "must be an integer in [0, 2^64 - 1]");
    spec.seed = v;
  }
  return spec;
}

void ReadTrainingOverride(const yaml::Reader& r, const Field& f, const TrainingSpec& base,
                          TrainingChoices* own) {
  Map m(r, f, {}, /*any_key=*/true);
  for (const auto& [key, field] : m.entries()) {
    if (key != "micro_batch" && key != "precision") {
      r.FailAt(field.key, field.path,
               "a strategy may change only how the batch is computed: micro_batch, precision "
               "(the global batch, iterations and seed are the scenario's, so that strategies "
               "compare on the same training)");
    }
  }
  TrainingSpec spec = base;
  ReadMicroBatchAndPrecision(r, m, spec);
  if (m.Get("micro_batch")) own->micro_batch = spec.micro_batch;
  if (m.Get("precision")) {
    own->precision = spec.precision;
    own->precision_where = spec.precision_where;
  }
}

}  // namespace stratasim::scenario_sections
