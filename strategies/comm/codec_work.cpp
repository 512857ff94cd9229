#include "strategies/comm/codec_work.h"

#include <algorithm>
#include <cmath>

namespace stratasim {
namespace {

// The bytes of one worker's payloads (all-gather: its block), summed.
double PayloadBytesPerWorker(const CompressionSpec& spec, const CodecInput& in) {
  double bytes = 0;
  for (const WirePayload& p :
       CompressedPayloads(spec, in.shape, in.value_bytes, in.workers, in.rows)) {
    bytes += p.bytes_per_worker;
  }
  return bytes;
}

}  // namespace

CodecWork EncodeWork(const CompressionSpec& spec, const CodecInput& in) {
  const double n = static_cast<double>(in.shape.Elements());
  const double cols = static_cast<double>(in.shape.cols);
  const double v = in.value_bytes;
  const double i = spec.index_bytes;
  const double z = static_cast<double>(in.nonzero_rows);
  const double u = static_cast<double>(in.rows.union_rows);
  const double bitmap = std::ceil(static_cast<double>(in.shape.rows) / 8);
  const double payload = PayloadBytesPerWorker(spec, in);
  switch (spec.method) {
    case CompressionMethod::kDense:
      return {};
    case CompressionMethod::kCoo:
      return {z * cols * v + z * (cols * v + i), 0};
    case CompressionMethod::kOmniReduce:
      return {bitmap + 2 * u * cols * v, 0};
    case CompressionMethod::kS2Reducer: {
      const double r = spec.sketch_rows;
      const double c = static_cast<double>(SketchColumns(spec, in.shape));
      return {4 * r * c + z * cols * (v + 8 * r) + bitmap, 0};
    }
    case CompressionMethod::kCasq: {
      const double k = static_cast<double>(1 << spec.casq_bits);
      const double tables = static_cast<double>(CasqTableBuckets(spec, in.shape.Elements()));
      return {n * v + n * spec.casq_bits / 8.0 + 16 * n + 8 * tables, 2 * k * n};
    }
    case CompressionMethod::kTopK:
      return {2 * n * v + static_cast<double>(TopKElements(spec, in.shape.Elements())) * (v + i),
              0};
    case CompressionMethod::kQsgd:
    case CompressionMethod::kTernGrad:
    case CompressionMethod::kInt8:
      return {2 * n * v + payload, 0};
    case CompressionMethod::kFp16:
    case CompressionMethod::kFp8:
      return {n * v + payload, 0};
  }
  return {};
}

CodecWork DecodeWork(const CompressionSpec& spec, const CodecInput& in) {
  const double n = static_cast<double>(in.shape.Elements());
  const double cols = static_cast<double>(in.shape.cols);
  const double v = in.value_bytes;
  const double i = spec.index_bytes;
  const double w = in.workers;
  const double u = static_cast<double>(in.rows.union_rows);
  const double z_max = static_cast<double>(in.rows.max_nonzero_rows);
  const double bitmap = std::ceil(static_cast<double>(in.shape.rows) / 8);
  const double payload = PayloadBytesPerWorker(spec, in);
  switch (spec.method) {
    case CompressionMethod::kDense:
      return {};
    case CompressionMethod::kCoo:
      return {w * z_max * (cols * v + i) + 2 * w * z_max * cols * v, 0};
    case CompressionMethod::kOmniReduce:
      return {2 * u * cols * v, 0};
    case CompressionMethod::kS2Reducer:
      return {bitmap + u * cols * (4.0 * spec.sketch_rows + v), 0};
    case CompressionMethod::kCasq:
      return {w * n * (spec.casq_bits / 8.0 + 4) + n * v, w * n};
    case CompressionMethod::kTopK: {
      const double k = static_cast<double>(TopKElements(spec, in.shape.Elements()));
      return {n * v + w * k * (v + i) + 2 * w * k * v, 0};
    }
    case CompressionMethod::kQsgd:
    case CompressionMethod::kTernGrad:
    case CompressionMethod::kInt8:
      return {w * payload + n * v, w * n};
    case CompressionMethod::kFp16:
    case CompressionMethod::kFp8:
      return {payload + n * v, 0};
  }
  return {};
}

double CalibratedCodecBytes(double seconds, const GpuSpec& gpu, const SimulationSpec& sim) {
  const GpuCalibration* cal = sim.calibration ? sim.calibration->FindGpu(gpu.name) : nullptr;
  const double efficiency =
      cal && cal->memory_efficiency ? *cal->memory_efficiency : sim.memory_efficiency;
  const double launch_s = cal && cal->kernel_launch_s ? *cal->kernel_launch_s : sim.kernel_launch_s;
  return std::max(0.0, seconds - launch_s) * gpu.memory_bandwidth_Bps * efficiency;
}

}  // namespace stratasim
