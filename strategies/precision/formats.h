// The formats a weight layer may compute in under layer-wise precision (dpc,
// uniform-precision), and the checks on them: each a located ConfigError.
#ifndef STRATASIM_STRATEGIES_PRECISION_FORMATS_H_
#define STRATASIM_STRATEGIES_PRECISION_FORMATS_H_

#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/scenario.h"
#include "core/strategy_options.h"

namespace stratasim {

// "bf16", "fp16", "fp8", "int8", "int4": the 16-bit floating formats of mixed-precision
// training and the low-precision ones GPUs have tensor-core peaks for.
const std::vector<std::string>& LayerFormatNames();

// Bits per element of a format (BytesPerElement x 8): its precision, for the ordering rule.
double FormatBits(DType d);

// Parses option `key`'s comma-separated list (spaces around entries ignored), highest precision
// first. Located errors (opt.Fail at `key`): an empty list or entry, a format not in
// LayerFormatNames(), and a list whose bit widths do not strictly decrease (bf16 and fp16, or
// fp8 and int8, have the same width: neither is lower than the other).
std::vector<DType> ParseFormatList(const OptionReader& opt, const std::string& key,
                                   const std::string& text);

// Each of `formats` must have a peak on every GPU kind of the cluster (core/hardware_catalog.cpp
// lists none for a format the part has no tensor-core path for, e.g. fp8 on A100, int4 on
// H100): else a located error at `key`.
void CheckFormatsRun(const ClusterSpec& cluster, const std::vector<DType>& formats,
                     const OptionReader& opt, const std::string& key);

// Layer-wise precision chooses the GEMMs' formats itself over a 16- or 32-bit workload: FP8
// training (whose GEMMs are already FP8, models/fp8.h) is a located error at the strategy.
void CheckStorageFormat(const TrainingSpec& training, const OptionReader& opt);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PRECISION_FORMATS_H_
