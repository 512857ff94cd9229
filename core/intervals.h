// Arithmetic on sets of time intervals, for figures read from an execution trace (busy,
// exposed, idle time).
#ifndef STRATASIM_CORE_INTERVALS_H_
#define STRATASIM_CORE_INTERVALS_H_

#include <utility>
#include <vector>

namespace stratasim {

using Interval = std::pair<double, double>;  // [first, second), seconds

// Sorts and merges overlapping intervals; empty ones are dropped.
std::vector<Interval> Union(std::vector<Interval> v);

// Total length of the merged union `a` within [lo, hi].
double CoveredLength(const std::vector<Interval>& a, double lo, double hi);

// Length of (a minus b), both merged unions, clipped to [lo, hi].
double ExclusiveLength(const std::vector<Interval>& a, const std::vector<Interval>& b, double lo,
                       double hi);

}  // namespace stratasim

#endif  // STRATASIM_CORE_INTERVALS_H_
