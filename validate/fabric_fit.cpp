#include "validate/fabric_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.h"
#include "core/limits.h"
#include "core/median.h"

namespace stratasim::validate {
namespace {

std::string Describe(const FabricSample& s) {
  return s.link_class + "/" + s.protocol + " " + std::string(ToString(s.op)) + " x" +
         std::to_string(s.group_size);
}

}  // namespace

std::string_view ToString(FabricOp op) {
  switch (op) {
    case FabricOp::kAllReduce:
      return "all_reduce";
    case FabricOp::kAllGather:
      return "all_gather";
    case FabricOp::kReduceScatter:
      return "reduce_scatter";
    case FabricOp::kAllToAll:
      return "all_to_all";
    case FabricOp::kSendRecv:
      return "sendrecv";
  }
  return "all_reduce";
}

std::optional<FabricOp> ParseFabricOp(const std::string& name) {
  for (FabricOp op : kAllFabricOps) {
    if (ToString(op) == name) return op;
  }
  return std::nullopt;
}

double BusBandwidthFactor(FabricOp op, int n) {
  const double members = std::max(1, n);
  switch (op) {
    case FabricOp::kAllReduce:
      return 2 * (members - 1) / members;
    case FabricOp::kAllGather:
    case FabricOp::kReduceScatter:
    case FabricOp::kAllToAll:
      return (members - 1) / members;
    case FabricOp::kSendRecv:
      return 1;
  }
  return 1;
}

int LatencySteps(FabricOp op, int n) {
  const int members = std::max(2, n);
  switch (op) {
    case FabricOp::kAllReduce:
      return 2 * (members - 1);
    case FabricOp::kAllGather:
    case FabricOp::kReduceScatter:
    case FabricOp::kAllToAll:
      return members - 1;
    case FabricOp::kSendRecv:
      return 1;
  }
  return 1;
}

FabricOpFit FitFabricOp(const std::vector<FabricSample>& sweep) {
  if (sweep.empty()) throw Error("fabric fit: an operation has no samples");
  const FabricSample& first = sweep.front();
  const double factor = BusBandwidthFactor(first.op, first.group_size);
  // Repetitions of one size become their median: (bus bytes, seconds) by increasing size.
  std::map<double, std::vector<double>> by_size;
  for (const FabricSample& s : sweep) {
    if (!(s.seconds > 0) || !(s.bytes > 0)) {
      throw Error("fabric fit: " + Describe(s) + ": a sample of " + std::to_string(s.bytes) +
                  " bytes in " + std::to_string(s.seconds) + " s (both must be > 0)");
    }
    by_size[s.bytes * factor].push_back(s.seconds);
  }
  std::vector<std::pair<double, double>> points;
  for (const auto& [x, times] : by_size) points.emplace_back(x, Median(times));
  const int k = static_cast<int>(points.size());
  if (k < 2) throw Error("fabric fit: " + Describe(first) + ": needs 2 or more sizes");
  const int large = std::max(2, (k + 2) / 3);
  const int small = std::max(1, (k + 2) / 3);
  std::vector<double> slopes;
  for (int i = k - large; i < k; ++i) {
    for (int j = i + 1; j < k; ++j) {
      slopes.push_back((points[j].second - points[i].second) / (points[j].first - points[i].first));
    }
  }
  const double slope = Median(slopes);
  if (!(slope > 0)) {
    throw Error("fabric fit: " + Describe(first) +
                ": time does not grow with size over the largest sizes (sweep to larger sizes "
                "with --max-bytes)");
  }
  std::vector<double> alphas;
  for (int i = 0; i < small; ++i) alphas.push_back(points[i].second - points[i].first * slope);
  FabricOpFit fit;
  fit.op = first.op;
  fit.group_size = first.group_size;
  // Within what the calibration reader takes (core/limits.h).
  fit.alpha_s = std::clamp(Median(alphas), 0.0, limits::kMaxLatencySeconds);
  fit.bandwidth_Bps = std::clamp(1 / slope, limits::kMinBandwidthBps, limits::kMaxBandwidthBps);
  fit.hop_latency_s = fit.alpha_s / LatencySteps(first.op, first.group_size);
  return fit;
}

std::vector<FabricClassFit> FitFabric(const std::vector<FabricSample>& samples) {
  // (class, protocol) in order of appearance, and within each the operations' sweeps.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>,
           std::map<std::pair<FabricOp, int>, std::vector<FabricSample>>>
      sweeps;
  for (const FabricSample& s : samples) {
    const auto key = std::make_pair(s.link_class, s.protocol);
    if (sweeps.count(key) == 0) order.push_back(key);
    sweeps[key][{s.op, s.group_size}].push_back(s);
  }
  std::vector<FabricClassFit> fits;
  for (const auto& key : order) {
    FabricClassFit c;
    c.link_class = key.first;
    c.protocol = key.second;
    std::vector<double> latencies, bandwidths;
    for (const auto& [op, sweep] : sweeps[key]) {
      try {
        c.ops.push_back(FitFabricOp(sweep));
        latencies.push_back(c.ops.back().hop_latency_s);
        bandwidths.push_back(c.ops.back().bandwidth_Bps);
      } catch (const Error& e) {
        c.skipped.push_back(e.what());
      }
    }
    if (c.ops.empty()) {
      std::string why;
      for (const std::string& s : c.skipped) why += "\n  " + s;
      throw Error("fabric fit: link class " + c.link_class + " (" + c.protocol +
                  "): no operation could be fitted:" + why);
    }
    c.latency_s = Median(latencies);
    c.bandwidth_Bps = Median(bandwidths);
    fits.push_back(c);
  }
  return fits;
}

std::vector<FabricCalibration> ToFabricCalibration(const std::vector<FabricClassFit>& fits) {
  std::vector<FabricCalibration> entries;
  for (const FabricClassFit& f : fits) {
    FabricCalibration e;
    e.link_class = f.link_class;
    e.protocol = f.protocol;
    e.latency_s = std::clamp(f.latency_s, 0.0, limits::kMaxLatencySeconds);
    e.bandwidth_Bps =
        std::clamp(f.bandwidth_Bps, limits::kMinBandwidthBps, limits::kMaxBandwidthBps);
    entries.push_back(e);
  }
  return entries;
}

}  // namespace stratasim::validate
