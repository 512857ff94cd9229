#include "search/pareto.h"

#include <algorithm>
#include <numeric>

namespace stratasim::search {

std::vector<size_t> ParetoFront(const std::vector<std::pair<double, double>>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  // By time, then memory, then index: a sweep keeps each point whose memory is below every
  // faster (or equally fast and earlier) point's.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].first != points[b].first) return points[a].first < points[b].first;
    if (points[a].second != points[b].second) return points[a].second < points[b].second;
    return a < b;
  });
  std::vector<size_t> front;
  for (size_t i : order) {
    if (front.empty() || points[i].second < points[front.back()].second) front.push_back(i);
  }
  return front;
}

}  // namespace stratasim::search
