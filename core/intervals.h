// Arithmetic on sets of time intervals, for figures read from an execution trace (busy,
// exposed, idle time).
#ifndef STRATASIM_CORE_INTERVALS_H_
#define STRATASIM_CORE_INTERVALS_H_

#include <cstddef>
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

// Interval sets of every rank, fed in any order and measured piece by piece, so that a run
// of many iterations keeps only the intervals still open (docs/scale.md, "Iterations"). Once
// no interval still to come starts before a time t, everything before t is final: Seal(t)
// hands each rank's merged sets to a measure for the part before t and keeps only what lies
// after it.
class SealedIntervals {
 public:
  SealedIntervals(int ranks, int sets);
  int sets() const { return sets_; }
  int AddSet();  // returns its index
  void Add(int set, int rank, Interval iv);
  // measure(rank, sets): `sets` are the rank's sets merged (Union), whole; the caller clips
  // what it measures to before `t`. Then every set keeps only its part after `t`.
  template <typename Measure>
  void Seal(double t, Measure measure) {
    for (int r = 0; r < ranks_; ++r) {
      std::vector<std::vector<Interval>>& sets = of_[static_cast<size_t>(r)];
      for (std::vector<Interval>& set : sets) set = Union(std::move(set));
      measure(r, static_cast<const std::vector<std::vector<Interval>>&>(sets));
      for (std::vector<Interval>& set : sets) Keep(&set, t);
    }
  }

 private:
  static void Keep(std::vector<Interval>* set, double t);

  int ranks_;
  int sets_;
  std::vector<std::vector<std::vector<Interval>>> of_;  // [rank][set]
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_INTERVALS_H_
