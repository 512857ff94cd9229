#include "kernels/count_sketch_cpu.h"

#include <Eigen/Core>
#include <string>

#include "core/error.h"
#include "kernels/row_bitmap.h"
#include "kernels/sketch_hash.h"

namespace stratasim::kernels {
namespace {

void CheckParams(const CountSketchParams& p) {
  if (p.rows < 1 || p.rows > sketch::kMaxSketchRows || p.columns < 1) {
    throw Error("count sketch: " + std::to_string(p.rows) + " x " + std::to_string(p.columns) +
                ": need 1 <= rows <= " + std::to_string(sketch::kMaxSketchRows) +
                " and columns >= 1");
  }
}

}  // namespace

CountSketchParams SketchParamsFor(const CompressionSpec& spec, const GradientShape& shape) {
  return {spec.sketch_rows, SketchColumns(spec, shape), spec.seed};
}

CountSketch EncodeCountSketch(const float* values, const GradientShape& shape,
                              const CountSketchParams& params) {
  CheckParams(params);
  CountSketch s;
  s.table.assign(static_cast<std::size_t>(params.rows) * params.columns, 0.0f);
  s.bitmap = RowBitmap(values, shape);
  const auto c = static_cast<std::uint64_t>(params.columns);
  std::uint64_t keys[sketch::kMaxSketchRows];
  for (int k = 0; k < params.rows; ++k) keys[k] = sketch::RowKey(params.seed, k);
  for (long long i = 0; i < shape.rows; ++i) {
    if (!((s.bitmap[i / 8] >> (i % 8)) & 1u)) continue;
    for (long long j = 0; j < shape.cols; ++j) {
      const float v = values[i * shape.cols + j];
      // A zero adds nothing to a sum that starts at +0: skipping it changes no bit.
      if (v == 0.0f) continue;
      const auto element = static_cast<std::uint64_t>(i * shape.cols + j);
      for (int k = 0; k < params.rows; ++k) {
        const std::uint64_t h = sketch::ElementHash(keys[k], element);
        s.table[k * c + sketch::Bucket(h, c)] += sketch::Sign(h) * v;
      }
    }
  }
  return s;
}

void MergeCountSketch(CountSketch& into, const CountSketch& other) {
  if (into.table.size() != other.table.size() || into.bitmap.size() != other.bitmap.size()) {
    throw Error("count sketch: merging sketches of different sizes");
  }
  const auto n = static_cast<Eigen::Index>(into.table.size());
  Eigen::Map<Eigen::ArrayXf>(into.table.data(), n) +=
      Eigen::Map<const Eigen::ArrayXf>(other.table.data(), n);
  OrInto(into.bitmap, other.bitmap);
}

std::vector<float> DecodeCountSketch(const CountSketch& sketch, const GradientShape& shape,
                                     const CountSketchParams& params) {
  CheckParams(params);
  const auto c = static_cast<std::uint64_t>(params.columns);
  if (sketch.table.size() != params.rows * c ||
      static_cast<long long>(sketch.bitmap.size()) != BitmapBytes(shape.rows)) {
    throw Error("count sketch: the sketch does not match its parameters or the gradient shape");
  }
  std::vector<float> out(static_cast<std::size_t>(shape.Elements()), 0.0f);
  std::uint64_t keys[sketch::kMaxSketchRows];
  for (int k = 0; k < params.rows; ++k) keys[k] = sketch::RowKey(params.seed, k);
  float estimates[sketch::kMaxSketchRows];
  for (long long i : BitmapRows(sketch.bitmap, shape.rows)) {
    for (long long j = 0; j < shape.cols; ++j) {
      const auto element = static_cast<std::uint64_t>(i * shape.cols + j);
      for (int k = 0; k < params.rows; ++k) {
        const std::uint64_t h = sketch::ElementHash(keys[k], element);
        estimates[k] = sketch::Sign(h) * sketch.table[k * c + sketch::Bucket(h, c)];
      }
      out[element] = sketch::MedianInPlace(estimates, params.rows);
    }
  }
  return out;
}

}  // namespace stratasim::kernels
