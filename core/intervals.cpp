#include "core/intervals.h"

#include <algorithm>

namespace stratasim {

std::vector<Interval> Union(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

double CoveredLength(const std::vector<Interval>& a, double lo, double hi) {
  double total = 0;
  for (const Interval& i : a)
    total += std::max(0.0, std::min(hi, i.second) - std::max(lo, i.first));
  return total;
}

double ExclusiveLength(const std::vector<Interval>& a, const std::vector<Interval>& b, double lo,
                       double hi) {
  // Both sorted and disjoint: one pass with a cursor into b.
  double total = 0;
  size_t j = 0;
  for (const Interval& i : a) {
    const double s = std::max(i.first, lo), e = std::min(i.second, hi);
    if (e <= s) continue;
    while (j < b.size() && b[j].second <= s) ++j;
    double covered = 0;
    for (size_t k = j; k < b.size() && b[k].first < e; ++k) {
      covered += std::max(0.0, std::min(e, b[k].second) - std::max(s, b[k].first));
    }
    total += (e - s) - covered;
  }
  return total;
}

SealedIntervals::SealedIntervals(int ranks, int sets)
    : ranks_(ranks),
      sets_(sets),
      of_(static_cast<size_t>(ranks),
          std::vector<std::vector<Interval>>(static_cast<size_t>(sets))) {}

int SealedIntervals::AddSet() {
  for (auto& sets : of_) sets.emplace_back();
  return sets_++;
}

void SealedIntervals::Add(int set, int rank, Interval iv) {
  of_[static_cast<size_t>(rank)][static_cast<size_t>(set)].push_back(iv);
}

void SealedIntervals::Keep(std::vector<Interval>* set, double t) {
  size_t out = 0;
  for (const Interval& i : *set) {
    if (i.second <= t) continue;
    (*set)[out++] = Interval{std::max(i.first, t), i.second};
  }
  set->resize(out);
}

}  // namespace stratasim
