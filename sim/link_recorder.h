// Bytes per link per interval of simulated time, as the simulator reports them (the
// bookkeeping behind ExecutionTrace::link_usage, core/link_usage.h). Plain data, no SimGrid:
// sim/link_probe.h reads the flows' progress from SimGrid and hands the bytes here.
//
// Intervals are bounded by the times the probe closes them (at events the simulation already
// has, so they are irregular). They aim at a target width that starts small and doubles each
// time the intervals would pass kMaxLinkIntervals, when neighbours are merged in pairs: a long
// run costs the same memory as a short one, and merging is exact, as bytes add.
#ifndef STRATASIM_SIM_LINK_RECORDER_H_
#define STRATASIM_SIM_LINK_RECORDER_H_

#include <functional>
#include <string>
#include <vector>

#include "core/link_usage.h"

namespace stratasim::sim {

// The first target width of an interval. Small enough that a run of a few milliseconds still
// gets a shape; each doubling after the first 512 intervals costs 256 more closes, so a run of
// 10 s makes about 4,000 (a choice of resolution against cost, not a model parameter).
inline constexpr double kFirstLinkIntervalS = 1e-6;

class LinkRecorder {
 public:
  explicit LinkRecorder(double first_width_s = kFirstLinkIntervalS);

  // Registers a link (its platform name and bandwidth); returns its index.
  int AddLink(const std::string& name, double bandwidth_Bps);
  int num_links() const { return static_cast<int>(links_.size()); }

  // Whether the open interval has reached the target width at `now`.
  bool Due(double now) const { return now >= edges_.back() + width_s_; }

  // `bytes` crossed link `link` up to `now` since they were last counted: they go to the open
  // interval, or, when `now` is the bound an interval was just closed at (a flow that ended at
  // the instant of a close, reported after it), to that closed interval, where they moved.
  void Add(int link, double bytes, double now);

  // Closes the open interval at `now` (after every running flow's bytes up to `now` were
  // added); a `now` not past the last bound does nothing.
  void Close(double now);

  // The usage over [0, end_s]: the open interval closed at `end_s`, the busiest
  // kMaxLinkSeries links (most bytes, ties by name) labelled by `label(name)`. Empty when no
  // link carried a byte. Call once, at the end.
  LinkUsage Finish(double end_s, const std::function<std::string(const std::string&)>& label);

  // Bounds so far (front() == 0) and the target width, for tests.
  const std::vector<double>& edges_s() const { return edges_; }
  double width_s() const { return width_s_; }

 private:
  int closed() const { return static_cast<int>(edges_.size()) - 1; }
  void MergePairs();

  struct Link {
    std::string name;
    double bandwidth_Bps = 0;
    // Per closed interval, then the open one; empty until the link carries a byte.
    std::vector<double> bytes;
  };
  std::vector<Link> links_;
  std::vector<int> used_;  // links with a series, in the order they were first used
  std::vector<double> edges_{0.0};
  double width_s_;
};

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_LINK_RECORDER_H_
