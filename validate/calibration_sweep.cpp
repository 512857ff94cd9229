#include "validate/calibration_sweep.h"

#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "core/units.h"
#include "validate/optional_log.h"

namespace stratasim::validate {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::vector<int> GroupSizes(int ranks) {
  std::vector<int> sizes;
  for (int g = 2; g <= ranks; g *= 2) sizes.push_back(g);
  if (ranks >= 2 && sizes.back() != ranks) sizes.push_back(ranks);
  return sizes;
}

}  // namespace

CalibrationMeasurements MeasureForCalibration(Backend& b, const CalibrationSweep& sweep,
                                              std::ostream* out) {
  OptionalLog log{out};
  const ClusterSpec cluster = b.Describe();
  const GpuSpec& gpu = cluster.gpu_kinds.at(0);
  if (!gpu.Supports(sweep.dtype)) {
    throw Error("calibrate: " + gpu.name + " has no peak for " +
                std::string(ToString(sweep.dtype)));
  }
  CalibrationMeasurements m;
  m.gpu = gpu.name;
  m.peak_flops = gpu.Peak(sweep.dtype);
  m.memory_bandwidth_Bps = gpu.memory_bandwidth_Bps;
  m.source = "stratasim calibrate --backend " + b.Name() + " on " + gpu.source + "; " +
             std::string(ToString(sweep.dtype)) + " GEMMs";
  BenchOptions bench;
  bench.warmup = sweep.quick ? 1 : 2;
  bench.repetitions = sweep.quick ? 3 : 5;
  bench.min_total_s = sweep.quick ? 0.005 : 0.02;
  // Stop growing a sweep once one op takes this long: larger ones add time, not information.
  const double enough_s = sweep.quick ? 0.02 : 0.1;

  log << "calibrating " << gpu.name << " (" << b.NumRanks() << " ranks, backend " << b.Name()
      << ")\n";
  m.launch_s = b.TimeLaunch(bench).median_s;
  log << "  launch: " << FormatSeconds(m.launch_s) << "\n";
  log << "  gemm " << ToString(sweep.dtype) << " (square m=n=k):\n";
  for (double edge = 32; edge <= 16384; edge *= 2) {
    const Task t = GemmTask(GemmShape{edge, edge, edge, 1}, sweep.dtype);
    const double s = b.TimeCompute(t, bench).median_s;
    m.compute.push_back({OpKind::kGemm, t.flops, s});
    log << "    " << edge << ": " << FormatSeconds(s) << ", " << Fixed(t.flops / s / 1e9, 2)
        << " GFLOP/s\n";
    if (s > enough_s) break;
  }
  log << "  attention (batched 128x128x64):\n";
  for (double batch = 1; batch <= 4096; batch *= 4) {
    Task t = GemmTask(GemmShape{128, 128, 64, batch}, sweep.dtype);
    t.op = OpKind::kAttention;
    const double s = b.TimeCompute(t, bench).median_s;
    m.compute.push_back({OpKind::kAttention, t.flops, s});
    log << "    batch " << batch << ": " << FormatSeconds(s) << ", " << Fixed(t.flops / s / 1e9, 2)
        << " GFLOP/s\n";
    if (s > enough_s) break;
  }
  log << "  memory-bound (elementwise):\n";
  for (double bytes = 1 << 20; bytes <= (1u << 30); bytes *= 4) {
    const double s = b.TimeCompute(ElementwiseTask(bytes, sweep.dtype), bench).median_s;
    m.memory.push_back({bytes, s});
    log << "    " << FormatBytes(bytes) << ": " << FormatSeconds(s) << ", "
        << FormatBandwidth(bytes / s) << "\n";
    if (s > enough_s) break;
  }
  const double copy_bytes = (sweep.quick ? 16.0 : 64.0) * (1 << 20);
  for (CopyDirection d : {CopyDirection::kHostToDevice, CopyDirection::kDeviceToHost}) {
    const double s = b.TimeCopy(copy_bytes, d, bench).median_s;
    log << "  copy " << ToString(d) << " " << FormatBytes(copy_bytes) << ": "
        << FormatBandwidth(copy_bytes / s) << " (not in the file: the cluster's PCIe figures "
        << "cost copies)\n";
  }
  for (int group : GroupSizes(b.NumRanks())) {
    for (CollectiveKind kind : sweep.collectives) {
      log << "  " << ToString(kind) << " x" << group << ":";
      for (double bytes = sweep.min_bytes; bytes <= sweep.max_bytes; bytes *= 4) {
        const double s = b.TimeCollective(kind, group, bytes, sweep.dtype, bench).median_s;
        m.collectives.push_back({kind, group, bytes, s});
        log << " " << FormatBytes(bytes) << "=" << FormatSeconds(s);
      }
      log << "\n";
    }
  }
  return m;
}

}  // namespace stratasim::validate
