// The median of a sample: what calibration fits and measurement summaries quote, since one
// scheduler hiccup moves a mean but not a median.
#ifndef STRATASIM_CORE_MEDIAN_H_
#define STRATASIM_CORE_MEDIAN_H_

#include <algorithm>
#include <vector>

namespace stratasim {

// The middle value of `values` (the mean of the middle two for an even count); 0 for none.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace stratasim

#endif  // STRATASIM_CORE_MEDIAN_H_
