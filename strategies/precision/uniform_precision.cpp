#include "strategies/data/ddp.h"
#include "strategies/precision/formats.h"
#include "strategies/precision/precision_lowering.h"
#include "strategies/precision/precision_strategies.h"

namespace stratasim {

const OptionSpecs& UniformPrecisionOptions() {
  static const OptionSpecs options =
      Join(DdpOptions(), {OneOf("format", LayerFormatNames(),
                                "the format of every weight layer's GEMMs and gradients; the GPU "
                                "kinds must have a peak for it")});
  return options;
}

Plan PlanUniformPrecision(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, UniformPrecisionOptions());
  const DdpSettings o = ReadDdpSettings(opt);
  const DType format = *ParseDType(opt.Choice("format"));
  opt.Finish();
  CheckFormatsRun(s.cluster, {format}, opt, "format");
  CheckStorageFormat(s.training, opt);
  return PlanLayerPrecision(s, o, opt, [&](const std::vector<WeightLayer>& weights) {
    return std::vector<DType>(weights.size(), format);
  });
}

}  // namespace stratasim
