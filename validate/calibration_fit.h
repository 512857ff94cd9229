// From micro-benchmark timings to the cost model's parameters (core/calibration.h), and the
// calibration file that `stratasim run --calibration` reads.
//
// The simulator costs a compute task as
//     t = max(flops / (peak x eff(op, flops)), bytes / (bandwidth x memory_eff)) + launch
// (core/compute_model.h) and a calibrated collective as t = latency + bytes / bandwidth
// (core/calibration.h). The fit inverts exactly these formulas, so that the simulator
// reproduces the measured micro-benchmarks:
//   launch       the median time of an empty task;
//   eff(op, f)   per measured compute-bound task, flops / (peak x (t - launch)), clamped to
//                (0, 1]; samples sorted by FLOPs become bands whose edges are the geometric
//                means of neighbouring samples' FLOPs (samples with equal FLOPs averaged);
//   memory_eff   the median over memory-bound samples of bytes / (bandwidth x (t - launch)),
//                clamped to (0, 1];
//   collectives  per kind and group size, a least-squares fit of t = alpha + bytes / beta over
//                the size sweep, weighted by 1 / t^2 so that small sizes (latency-bound) and
//                large ones (bandwidth-bound) count alike in relative terms; alpha < 0 is
//                refitted with alpha = 0.
#ifndef STRATASIM_VALIDATE_CALIBRATION_FIT_H_
#define STRATASIM_VALIDATE_CALIBRATION_FIT_H_

#include <string>
#include <vector>

#include "core/calibration.h"
#include "core/task_graph.h"

namespace stratasim::validate {

struct ComputeSample {
  OpKind op = OpKind::kGemm;
  double flops = 0;
  double seconds = 0;
};

struct MemorySample {
  double bytes = 0;
  double seconds = 0;
};

struct CollectiveSample {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int group_size = 2;
  double bytes = 0;
  double seconds = 0;
};

struct CalibrationMeasurements {
  std::string gpu;        // the GPU kind name the calibration is for
  std::string source;     // free text for the file's `source`
  double peak_flops = 0;  // the kind's peak for the dtype the compute samples ran in
  double memory_bandwidth_Bps = 0;
  double launch_s = 0;
  std::vector<ComputeSample> compute;
  std::vector<MemorySample> memory;
  std::vector<CollectiveSample> collectives;
};

// Throws stratasim::Error when a figure cannot be fitted (no samples of a collective, a
// non-positive peak).
Calibration FitCalibration(const CalibrationMeasurements& m);

// alpha-beta fit of one collective's sweep (exposed for tests): {latency_s, bandwidth_Bps}.
std::pair<double, double> FitAlphaBeta(const std::vector<CollectiveSample>& sweep);

// The calibration as the YAML file core/calibration.cpp reads (format stratasim-calibration,
// version 1). Numbers are written with enough digits to read back within 1e-6 relative.
std::string CalibrationToYaml(const Calibration& c);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_CALIBRATION_FIT_H_
