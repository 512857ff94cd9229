// The micro-benchmarks `stratasim calibrate` runs on a backend, like nccl-tests and the GEMM
// sweeps of vendor performance guides: what the cost model's parameters are fitted from
// (calibration_fit.h). Generic over backends (backend.h).
//
//   launch        an empty task;
//   gemm          square m = n = k from 32, doubling until one GEMM takes `enough_s` (or 16384);
//   attention     batched 128 x 128 x 64 products (a GPT-2 head on a short sequence), batch x4
//                 from 1 until `enough_s`;
//   memory-bound  elementwise tasks from 1 MiB, x4 until `enough_s` (or 1 GiB);
//   copies        host<->device, 64 MiB (16 MiB quick) each way: printed, as the calibration
//                 file has no entry for them (the cluster spec's PCIe figures cost copies);
//   collectives   each kind in `collectives`, over group sizes 2, 4, 8... up to the backend's
//                 ranks (and the ranks themselves), sizes min_bytes x4 up to max_bytes.
#ifndef STRATASIM_VALIDATE_CALIBRATION_SWEEP_H_
#define STRATASIM_VALIDATE_CALIBRATION_SWEEP_H_

#include <ostream>
#include <vector>

#include "validate/backend.h"
#include "validate/calibration_fit.h"

namespace stratasim::validate {

struct CalibrationSweep {
  DType dtype = DType::kFP32;  // of the GEMMs: calibrate in the precision the plans train in
  double min_bytes = 1024;
  double max_bytes = 16.0 * 1024 * 1024;
  // Fewer repetitions and an earlier stop: for tests and smoke checks (seconds, not minutes).
  bool quick = false;
  std::vector<CollectiveKind> collectives = {
      CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
      CollectiveKind::kBroadcast, CollectiveKind::kReduce,        CollectiveKind::kAllToAll};
};

// Runs the sweep on `b` (GPU kind and peaks from b.Describe()), printing each figure on `log`
// when not null. Throws BackendError from the backend, stratasim::Error when the GPU kind has
// no peak for the sweep's dtype.
CalibrationMeasurements MeasureForCalibration(Backend& b, const CalibrationSweep& sweep,
                                              std::ostream* log);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_CALIBRATION_SWEEP_H_
