// Fuzzes the scenario loader, LoadScenarioText (core/scenario_loader.cpp): YAML text in, a
// checked Scenario or a ConfigError out. Seeds: scenarios/*.yaml; dictionary: scenario.dict.
// The label puts the file in a directory that does not exist, so a relative
// simulation.calibration path resolves to no file (an absolute one is still read).
#include "core/scenario.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = stratasim::fuzz::Text(data, size);
  stratasim::fuzz::Accepts(
      [&] { stratasim::LoadScenarioText(text, "/nonexistent-fuzz-dir/fuzz.yaml"); });
  return 0;
}
