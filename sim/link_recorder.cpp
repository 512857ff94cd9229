#include "sim/link_recorder.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace stratasim::sim {

LinkRecorder::LinkRecorder(double first_width_s) : width_s_(first_width_s) {}

int LinkRecorder::AddLink(const std::string& name, double bandwidth_Bps) {
  links_.push_back(Link{name, bandwidth_Bps, {}});
  return static_cast<int>(links_.size()) - 1;
}

void LinkRecorder::Add(int link, double bytes, double now) {
  if (!(bytes > 0)) return;
  Link& l = links_[static_cast<size_t>(link)];
  if (l.bytes.empty()) {
    l.bytes.assign(static_cast<size_t>(kMaxLinkIntervals) + 1, 0.0);
    used_.push_back(link);
  }
  const int open = closed();
  const int at = open > 0 && now <= edges_.back() ? open - 1 : open;
  l.bytes[static_cast<size_t>(at)] += bytes;
}

void LinkRecorder::Close(double now) {
  if (!(now > edges_.back())) return;
  if (closed() >= kMaxLinkIntervals) MergePairs();
  edges_.push_back(now);
}

// Intervals 2i and 2i + 1 become interval i (an odd last one stays alone); the open interval
// follows them.
void LinkRecorder::MergePairs() {
  const int n = closed();
  const int merged = (n + 1) / 2;
  std::vector<double> edges;
  edges.reserve(static_cast<size_t>(merged) + 1);
  for (int i = 0; i < n; i += 2) edges.push_back(edges_[static_cast<size_t>(i)]);
  edges.push_back(edges_.back());
  edges_ = std::move(edges);
  for (int link : used_) {
    std::vector<double>& b = links_[static_cast<size_t>(link)].bytes;
    for (int i = 0; i < merged; ++i) {
      const size_t a = static_cast<size_t>(2 * i);
      b[static_cast<size_t>(i)] = b[a] + (2 * i + 1 < n ? b[a + 1] : 0.0);
    }
    b[static_cast<size_t>(merged)] = b[static_cast<size_t>(n)];  // the open interval
    std::fill(b.begin() + merged + 1, b.end(), 0.0);
  }
  width_s_ *= 2;
}

LinkUsage LinkRecorder::Finish(double end_s,
                               const std::function<std::string(const std::string&)>& label) {
  LinkUsage u;
  if (used_.empty()) return u;
  if (end_s > edges_.back()) {
    Close(end_s);
  } else if (closed() == 0) {
    edges_.push_back(edges_.back());  // everything moved at time 0: one interval of no width
  } else {
    // Nothing runs past the end, so the open interval holds at most what ended at its start.
    for (int link : used_) {
      std::vector<double>& b = links_[static_cast<size_t>(link)].bytes;
      b[static_cast<size_t>(closed() - 1)] += b[static_cast<size_t>(closed())];
      b[static_cast<size_t>(closed())] = 0;
    }
  }
  const size_t n = static_cast<size_t>(closed());
  std::vector<LinkSeries> all;
  all.reserve(used_.size());
  for (int link : used_) {
    const Link& l = links_[static_cast<size_t>(link)];
    LinkSeries s;
    s.name = l.name;
    s.bandwidth_Bps = l.bandwidth_Bps;
    s.bytes_per_interval.assign(l.bytes.begin(), l.bytes.begin() + static_cast<long>(n));
    // The sum of the series in order, so that a reader adding them up finds the same figure.
    s.bytes = std::accumulate(s.bytes_per_interval.begin(), s.bytes_per_interval.end(), 0.0);
    all.push_back(std::move(s));
  }
  std::sort(all.begin(), all.end(), [](const LinkSeries& a, const LinkSeries& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
  u.edges_s = edges_;
  u.links_used = static_cast<int>(all.size());
  for (const LinkSeries& s : all) u.bytes_total += s.bytes;
  if (all.size() > static_cast<size_t>(kMaxLinkSeries)) all.resize(kMaxLinkSeries);
  for (LinkSeries& s : all) s.label = label(s.name);
  u.links = std::move(all);
  return u;
}

}  // namespace stratasim::sim
