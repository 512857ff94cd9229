// The Pareto front of plans over two costs to minimise (iteration time, peak memory per GPU):
// the plans no other plan beats on one cost without losing on the other.
#ifndef STRATASIM_SEARCH_PARETO_H_
#define STRATASIM_SEARCH_PARETO_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace stratasim::search {

// Indices of the points (time, memory) on the front, by time ascending. A point equal on both
// costs to an earlier one (by index) is left out, so each front point is listed once.
std::vector<std::size_t> ParetoFront(const std::vector<std::pair<double, double>>& points);

}  // namespace stratasim::search

#endif  // STRATASIM_SEARCH_PARETO_H_
