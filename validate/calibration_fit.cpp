#include "validate/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/limits.h"
#include "core/median.h"

namespace stratasim::validate {
namespace {

// The calibration reader's range for a measured efficiency (core/limits.h).
double Clamp01(double v) { return std::min(1.0, std::max(limits::kMinMeasuredEfficiency, v)); }

// Time left for the work once the fixed launch cost is taken off; a sample at or under the
// launch cost (noise) keeps a tenth of its time, which the clamp to 1 then absorbs.
double WorkSeconds(double seconds, double launch_s) {
  return std::max(seconds - launch_s, seconds * 0.1);
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

}  // namespace

std::pair<double, double> FitAlphaBeta(const std::vector<CollectiveSample>& sweep) {
  if (sweep.empty()) throw Error("calibration fit: a collective has no samples");
  // Weighted least squares of t = a + b x (x = bytes, b = 1 / bandwidth), weights 1 / t^2.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const CollectiveSample& s : sweep) {
    const double w = 1 / (s.seconds * s.seconds);
    sw += w;
    sx += w * s.bytes;
    sy += w * s.seconds;
    sxx += w * s.bytes * s.bytes;
    sxy += w * s.bytes * s.seconds;
  }
  const double det = sw * sxx - sx * sx;
  double a = 0, b = 0;
  if (det > 0) {
    b = (sw * sxy - sx * sy) / det;
    a = (sy - b * sx) / sw;
  }
  if (det <= 0 || b <= 0) {
    // Time does not grow with size over the sweep: all latency (the weighted mean time), and
    // a bandwidth so high that it adds nothing over the sizes measured.
    double largest = 0;
    for (const CollectiveSample& s : sweep) largest = std::max(largest, s.bytes);
    a = sy / sw;
    b = 1e-6 * a / std::max(1.0, largest);
  } else if (a < 0) {
    // A negative latency cannot be written: refit through the origin (bandwidth only).
    a = 0;
    b = sxy / sxx;
  }
  // Within what the calibration reader takes (core/limits.h): a flat, noisy sweep can fit a
  // slope near 0, a bandwidth past 1 PB/s, and the file written would not load.
  return {std::min(a, limits::kMaxLatencySeconds),
          std::clamp(1 / b, limits::kMinBandwidthBps, limits::kMaxBandwidthBps)};
}

Calibration FitCalibration(const CalibrationMeasurements& m) {
  if (m.peak_flops <= 0) throw Error("calibration fit: peak FLOP/s of " + m.gpu + " must be > 0");
  Calibration c;
  c.source = m.source;
  GpuCalibration g;
  g.gpu = m.gpu;
  g.kernel_launch_s = m.launch_s;
  if (!m.memory.empty() && m.memory_bandwidth_Bps > 0) {
    std::vector<double> eff;
    for (const MemorySample& s : m.memory) {
      eff.push_back(s.bytes / (m.memory_bandwidth_Bps * WorkSeconds(s.seconds, m.launch_s)));
    }
    g.memory_efficiency = Clamp01(Median(eff));
  }
  // Efficiency per op kind and FLOP count (samples with the same FLOPs averaged).
  std::map<OpKind, std::map<double, std::vector<double>>> by_op;
  for (const ComputeSample& s : m.compute) {
    by_op[s.op][s.flops].push_back(s.flops / (m.peak_flops * WorkSeconds(s.seconds, m.launch_s)));
  }
  for (const auto& [op, samples] : by_op) {
    std::vector<std::pair<double, double>> points;  // flops, efficiency
    for (const auto& [flops, effs] : samples) {
      double sum = 0;
      for (double e : effs) sum += e;
      points.emplace_back(flops, Clamp01(sum / effs.size()));
    }
    std::vector<EfficiencyBand> bands;
    for (std::size_t i = 0; i < points.size(); ++i) {
      EfficiencyBand b;
      b.efficiency = points[i].second;
      if (i + 1 < points.size()) b.max_flops = std::sqrt(points[i].first * points[i + 1].first);
      bands.push_back(b);
    }
    g.compute[op] = bands;
  }
  c.gpus.push_back(g);
  std::map<std::pair<CollectiveKind, int>, std::vector<CollectiveSample>> sweeps;
  for (const CollectiveSample& s : m.collectives) sweeps[{s.kind, s.group_size}].push_back(s);
  for (const auto& [key, sweep] : sweeps) {
    const auto [alpha, bandwidth] = FitAlphaBeta(sweep);
    CollectiveCalibration cc;
    cc.kind = key.first;
    cc.group_size = key.second;
    cc.gpu = m.gpu;
    cc.latency_s = alpha;
    cc.bandwidth_Bps = bandwidth;
    c.collectives.push_back(cc);
  }
  return c;
}

std::string CalibrationToYaml(const Calibration& c) {
  std::ostringstream y;
  y << "# Written by stratasim (calibrate, compress-check); read by `stratasim run --calibration "
       "FILE`.\n"
    << "# Format: core/calibration.h. Efficiencies are achieved fractions of the GPU kind's peak\n"
    << "# FLOP/s and memory bandwidth as the cluster spec gives them.\n"
    << "format: stratasim-calibration\n"
    << "version: 1\n";
  if (!c.source.empty()) {
    std::string s = c.source;
    std::replace(s.begin(), s.end(), '"', '\'');
    y << "source: \"" << s << "\"\n";
  }
  if (!c.gpus.empty()) {
    y << "gpus:\n";
    for (const GpuCalibration& g : c.gpus) {
      y << "  - gpu: " << g.gpu << "\n";
      if (g.memory_efficiency) y << "    memory_efficiency: " << Num(*g.memory_efficiency) << "\n";
      if (g.kernel_launch_s)
        y << "    kernel_launch: \"" << Num(*g.kernel_launch_s * 1e6) << "us\"\n";
      if (!g.compute.empty()) {
        y << "    compute:\n";
        for (const auto& [op, bands] : g.compute) {
          y << "      " << ToString(op) << ":\n";
          for (const EfficiencyBand& b : bands) {
            y << "        - {";
            if (std::isfinite(b.max_flops)) y << "max_flops: " << Num(b.max_flops) << ", ";
            y << "efficiency: " << Num(b.efficiency) << "}\n";
          }
        }
      }
      if (!g.compression.empty()) {
        // Per gradient element; ns keeps the figures readable (a CPU's are ~0.1-10 ns).
        y << "    compression:\n";
        for (const auto& [method, t] : g.compression) {
          y << "      - {method: " << ToString(method) << ", encode: \""
            << Num(t.encode_s_per_element * 1e9) << "ns\", decode: \""
            << Num(t.decode_s_per_element * 1e9) << "ns\"}\n";
        }
      }
    }
  }
  if (!c.collectives.empty()) {
    y << "collectives:\n";
    for (const CollectiveCalibration& cc : c.collectives) {
      y << "  - {kind: " << ToString(cc.kind);
      if (!cc.gpu.empty()) y << ", gpu: " << cc.gpu;
      y << ", group_size: " << cc.group_size << ", latency: \"" << Num(cc.latency_s * 1e6)
        << "us\", bandwidth: \"" << Num(cc.bandwidth_Bps) << "B/s\"}\n";
    }
  }
  if (!c.link_efficiency.empty()) {
    y << "links: {";
    const char* sep = "";
    for (const auto& [kind, efficiency] : c.link_efficiency) {
      y << sep << ToString(kind) << ": " << Num(efficiency);
      sep = ", ";
    }
    y << "}\n";
  }
  if (!c.fabric.empty()) {
    // Written by `calibrate --fabric` (validate/fabric_fit.h): per-hop latency and achievable
    // bandwidth per link class and protocol.
    y << "fabric:\n";
    for (const FabricCalibration& f : c.fabric) {
      y << "  - {class: " << f.link_class << ", protocol: " << f.protocol;
      if (!f.gpu.empty()) y << ", gpu: " << f.gpu;
      y << ", latency: \"" << Num(f.latency_s * 1e6) << "us\", bandwidth: \""
        << Num(f.bandwidth_Bps) << "B/s\"}\n";
    }
  }
  return y.str();
}

}  // namespace stratasim::validate
