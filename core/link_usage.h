// How busy each link of the platform was over simulated time: the bytes it carried per
// interval. The simulator records it (sim/executor.cpp) while flows run; it is the "why" behind
// a slow strategy (which link is the bottleneck, and when), shown in the HTML report and as
// counter tracks in the Chrome trace, and written to links.json (docs/report-formats.md).
//
// The figures integrate exactly: a link's bytes_per_interval sum to its bytes, which are the
// payload of every flow that crossed it (a flow crossing k links counts on each of the k).
// Analytic collectives (`fidelity: analytic`) move no flows, so they load no link.
#ifndef STRATASIM_CORE_LINK_USAGE_H_
#define STRATASIM_CORE_LINK_USAGE_H_

#include <string>
#include <vector>

namespace stratasim {

// At most this many links keep their series (the busiest by bytes); the rest are only counted.
inline constexpr int kMaxLinkSeries = 32;
// At most this many intervals: the recorder merges neighbours when it would exceed it, so a
// long run costs the same memory as a short one.
inline constexpr int kMaxLinkIntervals = 512;

struct LinkSeries {
  std::string name;   // the platform's link name (sim/platform.cpp), e.g. "s0_nic0_UP"
  std::string label;  // for people, e.g. "server 0 NIC 0 → fabric"
  double bandwidth_Bps = 0;
  double bytes = 0;  // carried over the whole run
  // Bytes carried in [edges_s[i], edges_s[i + 1]), one per interval of LinkUsage::edges_s.
  std::vector<double> bytes_per_interval;
};

struct LinkUsage {
  // Interval bounds in simulated seconds: front() == 0, back() == the makespan; empty when
  // nothing was recorded (another executor, or no flow ran).
  std::vector<double> edges_s;
  std::vector<LinkSeries> links;  // the busiest, most bytes first (ties: by name)
  int links_used = 0;             // links that carried any byte, kept or not
  double bytes_total = 0;         // over all links, kept or not
};

// One strategy's usage as a JSON object {"edges_s": [...], "links": [...], "links_used": N,
// "bytes_total": B}; LinkUsageFromJson reads it back (throws stratasim::Error naming the key
// when the text does not match).
std::string LinkUsageToJson(const LinkUsage& u);
LinkUsage LinkUsageFromJson(const std::string& text);

}  // namespace stratasim

#endif  // STRATASIM_CORE_LINK_USAGE_H_
