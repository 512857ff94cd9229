// Fuzzes the calibration reader, LoadCalibrationText (core/calibration.cpp, through
// core/yaml_util.cpp): YAML text in, a checked Calibration or a ConfigError out. An accepted
// file is also queried the way the simulator queries it.
#include "core/calibration.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = stratasim::fuzz::Text(data, size);
  stratasim::Calibration c;
  if (!stratasim::fuzz::Accepts([&] { c = stratasim::LoadCalibrationText(text, "fuzz.yaml"); })) {
    return 0;
  }
  for (const stratasim::GpuCalibration& g : c.gpus) {
    for (const auto& [kind, bands] : g.compute) {
      for (double flops : {0.0, 1e9, 1e15}) (void)g.ComputeEfficiency(kind, flops);
    }
    (void)c.FindGpu(g.gpu);
  }
  for (const stratasim::CollectiveCalibration& e : c.collectives) {
    (void)c.FindCollective(e.kind, e.group_size, e.gpu);
  }
  return 0;
}
