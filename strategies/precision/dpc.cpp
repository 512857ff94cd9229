#include <algorithm>
#include <cmath>
#include <numeric>

#include "strategies/data/ddp.h"
#include "strategies/precision/formats.h"
#include "strategies/precision/precision_lowering.h"
#include "strategies/precision/precision_strategies.h"

namespace stratasim {

std::vector<int> CapacityGroups(const std::vector<double>& capacity, int groups) {
  const int n = static_cast<int>(capacity.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return capacity[a] < capacity[b]; });
  std::vector<int> group(n, 0);
  for (int first = 0; first < n;) {
    int last = first;
    while (last + 1 < n && capacity[order[last + 1]] == capacity[order[first]]) ++last;
    const double mean_rank = (first + last) / 2.0;
    const int g = std::min(groups - 1, static_cast<int>(std::floor(mean_rank * groups / n)));
    for (int r = first; r <= last; ++r) group[order[r]] = g;
    first = last + 1;
  }
  return group;
}

const OptionSpecs& DpcOptions() {
  static const OptionSpecs options =
      Join(DdpOptions(),
           {FreeText("formats",
                     "comma-separated formats, highest precision first (bf16, fp16, fp8, int8, "
                     "int4; strictly decreasing bit width): the weight layers ranked by "
                     "parameter count are split into that many groups of equal count, the "
                     "smallest layers in the first format; every GPU kind must have a peak for "
                     "each")
                .Default("bf16,fp8")});
  return options;
}

Plan PlanDpc(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, DpcOptions());
  const DdpSettings o = ReadDdpSettings(opt);
  const std::vector<DType> formats = ParseFormatList(opt, "formats", opt.Text("formats"));
  opt.Finish();
  CheckFormatsRun(s.cluster, formats, opt, "formats");
  CheckStorageFormat(s.training, opt);
  return PlanLayerPrecision(s, o, opt, [&](const std::vector<WeightLayer>& weights) {
    std::vector<double> capacity;
    for (const WeightLayer& x : weights) capacity.push_back(x.params);
    std::vector<DType> chosen;
    for (int g : CapacityGroups(capacity, static_cast<int>(formats.size()))) {
      chosen.push_back(formats[g]);
    }
    return chosen;
  });
}

}  // namespace stratasim
