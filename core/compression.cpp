#include "core/compression.h"

#include <cmath>

namespace stratasim {
namespace {

struct MethodName {
  CompressionMethod method;
  std::string_view name;
};
constexpr MethodName kNames[] = {
    {CompressionMethod::kDense, "dense"},
    {CompressionMethod::kCoo, "coo"},
    {CompressionMethod::kOmniReduce, "omnireduce"},
    {CompressionMethod::kS2Reducer, "s2reducer"},
    {CompressionMethod::kCasq, "casq"},
    {CompressionMethod::kTopK, "topk"},
    {CompressionMethod::kQsgd, "qsgd"},
    {CompressionMethod::kTernGrad, "terngrad"},
    {CompressionMethod::kFp16, "fp16"},
    {CompressionMethod::kFp8, "fp8"},
    {CompressionMethod::kInt8, "int8"},
};

double CeilDiv(double a, double b) { return std::ceil(a / b); }

WirePayload AllReduce(double bytes, std::string what) {
  return {CollectiveKind::kAllReduce, bytes, bytes, std::move(what)};
}
WirePayload AllGather(double per_worker, int workers, std::string what) {
  return {CollectiveKind::kAllGather, per_worker * workers, per_worker, std::move(what)};
}

}  // namespace

std::string_view ToString(CompressionMethod m) {
  for (const MethodName& n : kNames) {
    if (n.method == m) return n.name;
  }
  return "?";
}

std::optional<CompressionMethod> ParseCompressionMethod(std::string_view text) {
  for (const MethodName& n : kNames) {
    if (n.name == text) return n.method;
  }
  return std::nullopt;
}

bool IsRowSparse(CompressionMethod m) {
  return m == CompressionMethod::kCoo || m == CompressionMethod::kOmniReduce ||
         m == CompressionMethod::kS2Reducer;
}

std::string CheckCompressionSpec(const CompressionSpec& s) {
  if (s.sketch_rows < 1 || s.sketch_rows > 64) return "sketch_rows must be in [1, 64]";
  if (s.sketch_columns < 0) return "sketch_columns must be at least 1 (0: sized by sketch_ratio)";
  if (!(s.sketch_ratio > 0 && s.sketch_ratio <= 1)) return "sketch_ratio must be in (0, 1]";
  if (s.casq_bits < 1 || s.casq_bits > 8) return "casq_bits must be in [1, 8]";
  if (!(s.table_ratio > 0 && s.table_ratio <= 1)) return "table_ratio must be in (0, 1]";
  if (!(s.topk_fraction > 0 && s.topk_fraction <= 1)) return "topk_fraction must be in (0, 1]";
  if (s.qsgd_levels < 1 || s.qsgd_levels > 127) return "qsgd_levels must be in [1, 127]";
  if (s.bucket_elements < 1) return "bucket_elements must be at least 1";
  if (s.int8_block < 1) return "int8_block must be at least 1";
  if (s.index_bytes != 4 && s.index_bytes != 8) return "index_bytes must be 4 or 8";
  return "";
}

long long SketchColumns(const CompressionSpec& spec, const GradientShape& shape) {
  if (spec.sketch_columns > 0) return spec.sketch_columns;
  const double c = std::ceil(spec.sketch_ratio * static_cast<double>(shape.Elements()));
  return c < 1 ? 1 : static_cast<long long>(c);
}

long long CasqTableBuckets(const CompressionSpec& spec, long long elements) {
  const long long clusters = 1LL << spec.casq_bits;
  const double b = std::ceil(spec.table_ratio * static_cast<double>(elements));
  return b < clusters ? clusters : static_cast<long long>(b);
}

int QsgdBitsPerElement(int levels) {
  int bits = 1;
  while ((1 << bits) < levels + 1) ++bits;
  return bits + 1;
}

long long TopKElements(const CompressionSpec& spec, long long elements) {
  const double k = std::ceil(spec.topk_fraction * static_cast<double>(elements));
  return k < 1 ? 1 : static_cast<long long>(k);
}

std::vector<WirePayload> CompressedPayloads(const CompressionSpec& spec, const GradientShape& shape,
                                            double value_bytes, int workers,
                                            const RowSparsity& rows) {
  const double n = static_cast<double>(shape.Elements());
  const double cols = static_cast<double>(shape.cols);
  const double bitmap = CeilDiv(static_cast<double>(shape.rows), 8);
  switch (spec.method) {
    case CompressionMethod::kDense:
      return {AllReduce(n * value_bytes, "dense")};
    case CompressionMethod::kCoo:
      return {AllGather(
          static_cast<double>(rows.max_nonzero_rows) * (spec.index_bytes + cols * value_bytes),
          workers, "rows+indices")};
    case CompressionMethod::kOmniReduce:
      return {AllReduce(bitmap, "bitmap"),
              AllReduce(static_cast<double>(rows.union_rows) * cols * value_bytes, "union rows")};
    case CompressionMethod::kS2Reducer:
      return {AllReduce(
          4.0 * spec.sketch_rows * static_cast<double>(SketchColumns(spec, shape)) + bitmap,
          "sketch+bitmap")};
    case CompressionMethod::kCasq: {
      const double codes = 4 * CeilDiv(n * spec.casq_bits, 32);
      const double tables = 4.0 * static_cast<double>(CasqTableBuckets(spec, shape.Elements()));
      const double centres = 4.0 * static_cast<double>(1 << spec.casq_bits);
      return {AllGather(codes + tables + centres, workers, "codes+tables")};
    }
    case CompressionMethod::kTopK:
      return {AllGather(static_cast<double>(TopKElements(spec, shape.Elements())) *
                            (spec.index_bytes + value_bytes),
                        workers, "values+indices")};
    case CompressionMethod::kQsgd:
      return {AllGather(CeilDiv(n * QsgdBitsPerElement(spec.qsgd_levels), 8) +
                            4 * CeilDiv(n, static_cast<double>(spec.bucket_elements)),
                        workers, "levels+norms")};
    case CompressionMethod::kTernGrad:
      return {
          AllGather(CeilDiv(n * 2, 8) + 4 * CeilDiv(n, static_cast<double>(spec.bucket_elements)),
                    workers, "ternary+scales")};
    case CompressionMethod::kFp16:
      return {AllReduce(n * 2, "fp16")};
    case CompressionMethod::kFp8:
      return {AllReduce(n, "fp8")};
    case CompressionMethod::kInt8:
      return {AllGather(n + 4 * CeilDiv(n, static_cast<double>(spec.int8_block)), workers,
                        "codes+scales")};
  }
  return {};
}

}  // namespace stratasim
