// The GPU catalog: datasheet figures per GPU kind, each entry citing its source.
#ifndef STRATASIM_CORE_HARDWARE_H_
#define STRATASIM_CORE_HARDWARE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"

namespace stratasim {

// One GPU kind. Peaks are dense (no structured sparsity); FP16/BF16 are tensor-core peaks with
// FP32 accumulation, which is what mixed-precision training runs. A dtype the part cannot run
// is absent from `peak_flops`.
struct GpuSpec {
  std::string name;
  std::map<DType, double> peak_flops;  // FLOP/s per dtype
  double memory_bytes = 0;
  double memory_bandwidth_Bps = 0;
  std::string source;  // datasheet the figures come from
  // Streaming multiprocessors: the cost model spreads a GEMM's output tiles over them (wave
  // quantisation, core/compute_model.h). 0 = unknown, and the model then ignores waves.
  int sm_count = 0;

  bool Supports(DType d) const { return peak_flops.count(d) != 0; }
  // Peak for `d`; throws stratasim::Error naming the GPU when the part has no such unit.
  double Peak(DType d) const;
};

// The built-in catalog (core/hardware_catalog.cpp), in a fixed order.
const std::vector<GpuSpec>& BuiltinGpuCatalog();
// Looks a name up in the built-in catalog; nullptr when absent.
const GpuSpec* FindBuiltinGpu(std::string_view name);

}  // namespace stratasim

#endif  // STRATASIM_CORE_HARDWARE_H_
