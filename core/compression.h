// Gradient compression as data: which compressor, its parameters, and what it puts on the wire.
//
// One description serves both sides of stratasim: the strategies (strategies/comm/) lower a
// compressed data-parallel step to collectives of exactly these sizes, and `stratasim
// compress-check` runs the compressor's kernels (kernels/compressor.h) on real tensors, whose
// encoded buffers have exactly these sizes (the kernel tests hold the two equal).
//
// A gradient is a row-major rows x cols matrix (an embedding table's gradient: vocabulary x
// hidden; any other tensor: n x 1). Row-sparse methods (COO, OmniReduce, S2Reducer) exploit
// that only some rows are non-zero, as an embedding's rows are for the ids of a batch.
//
// The systems and their sources:
// - dense: a sum all-reduce of the whole gradient.
// - coo: each worker's non-zero rows with their indices, all-gathered, padded to the largest
//   count over workers as all-gather needs equal blocks (the baseline of S2Reducer's code,
//   Panlichen/Sparse_Sketch_Reducer).
// - omnireduce: an all-reduce of the row bitmap (OR), then a sum all-reduce of the union of the
//   non-zero rows (Fei et al. 2021, "Efficient Sparse Collective Communication and its
//   Application to Accelerate Distributed Deep Learning", SIGCOMM).
// - s2reducer: a count sketch of the non-zero rows, r x c FP32 counters, plus the n-bit row
//   bitmap, both merged by one sum all-reduce (the sketch is linear); decode takes the median
//   over the r rows for the union rows only (Ge et al., "S2 Reducer", arXiv 2110.02140).
// - casq: q-bit codes of every element (nearest of 2^q cluster centres) plus per-cluster hash
//   tables of bucket means, all-gathered because codes do not add (CASQ, CLUSTER 2021; code
//   LSTM/CASQ/LSSkernel.cu).
// - topk: the k largest-magnitude elements with their indices, all-gathered (Aji & Heafield
//   2017; Lin et al. 2018, "Deep Gradient Compression").
// - qsgd: stochastic rounding to s levels of |x| / ||bucket||, sign + level packed, one FP32
//   norm per bucket, all-gathered (Alistarh et al. 2017, NeurIPS).
// - terngrad: stochastic ternary {-1, 0, 1} times the bucket's max |x|, 2 bits per element,
//   one FP32 scale per bucket, all-gathered (Wen et al. 2017, NeurIPS).
// - fp16, fp8: every element rounded to that format, a sum all-reduce in it (NCCL reduces
//   FP16, and FP8 from 2.24 on).
// - int8: blockwise symmetric INT8 codes plus one FP32 scale per block, all-gathered (INT8
//   codes with different scales do not add).
#ifndef STRATASIM_CORE_COMPRESSION_H_
#define STRATASIM_CORE_COMPRESSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/task_graph.h"

namespace stratasim {

enum class CompressionMethod {
  kDense,
  kCoo,
  kOmniReduce,
  kS2Reducer,
  kCasq,
  kTopK,
  kQsgd,
  kTernGrad,
  kFp16,
  kFp8,
  kInt8,
};
inline constexpr CompressionMethod kAllCompressionMethods[] = {
    CompressionMethod::kDense,     CompressionMethod::kCoo,      CompressionMethod::kOmniReduce,
    CompressionMethod::kS2Reducer, CompressionMethod::kCasq,     CompressionMethod::kTopK,
    CompressionMethod::kQsgd,      CompressionMethod::kTernGrad, CompressionMethod::kFp16,
    CompressionMethod::kFp8,       CompressionMethod::kInt8};

// "dense", "coo", "omnireduce", "s2reducer", "casq", "topk", "qsgd", "terngrad", "fp16", "fp8",
// "int8".
std::string_view ToString(CompressionMethod m);
std::optional<CompressionMethod> ParseCompressionMethod(std::string_view text);
// Whether the method only exploits row sparsity (coo, omnireduce, s2reducer): applied to a dense
// gradient it saves nothing.
bool IsRowSparse(CompressionMethod m);

// Every field has a default; only the method's own fields matter. Bounds are checked by
// CheckCompressionSpec, which names the field and the rule.
struct CompressionSpec {
  CompressionMethod method = CompressionMethod::kDense;
  // s2reducer: r hash rows (the authors' code uses 1) and c columns; c = 0 sizes the sketch as
  // the authors do, c = ceil(sketch_ratio * rows * cols) (GNMT: density 0.02 x rank 0.25 =
  // 0.005 of the table).
  int sketch_rows = 1;
  long long sketch_columns = 0;
  double sketch_ratio = 0.005;
  // casq: q bits per element (2^q clusters, 1 <= q <= 8); table_ratio: hash-table buckets of all
  // clusters together per element (the authors' q = 2 tables hold 1,000,400 buckets).
  int casq_bits = 2;
  double table_ratio = 0.01;
  // topk: the fraction of elements kept, in (0, 1].
  double topk_fraction = 0.01;
  // qsgd: s levels (1..127); qsgd and terngrad: elements per bucket sharing one FP32 scale.
  int qsgd_levels = 15;
  long long bucket_elements = 512;
  // int8: elements per FP32 scale.
  long long int8_block = 256;
  // coo, topk: bytes per index (4 for up to 2^32 rows or elements, else 8).
  int index_bytes = 4;
  // The seed of the hashes (s2reducer, casq) and of stochastic rounding (qsgd, terngrad); every
  // worker shares the hash seed, as the sketch must be the same on all of them.
  std::uint64_t seed = 0;
};

// An empty string when `spec` is valid, else "<field> <rule>", e.g. "sketch_columns must be at
// least 1" — callers prefix the location.
std::string CheckCompressionSpec(const CompressionSpec& spec);

struct GradientShape {
  long long rows = 0;
  long long cols = 1;
  long long Elements() const { return rows * cols; }
};

// The row counts that size row-sparse payloads in one step.
struct RowSparsity {
  long long max_nonzero_rows = 0;  // the most non-zero rows any worker has (coo pads to it)
  long long union_rows = 0;        // rows non-zero on at least one worker (omnireduce)
};

// One collective of a compressed step: its kind and the buffer size as Collective::bytes counts
// it (all-reduce: the buffer; all-gather: the output, i.e. workers x one worker's block).
struct WirePayload {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0;
  double bytes_per_worker = 0;  // what one worker contributes (all-reduce: the buffer)
  std::string what;             // e.g. "sketch+bitmap", "codes+tables"
};

// The collectives, in order, that one compressed step of a `shape` gradient over `workers`
// workers runs. `value_bytes`: bytes of one uncompressed element as the training sends it (2 for
// BF16 gradients; compress-check's FP32 tensors: 4); sketches, tables, norms and scales are FP32
// whatever it is. `rows` matters for coo and omnireduce only.
std::vector<WirePayload> CompressedPayloads(const CompressionSpec& spec, const GradientShape& shape,
                                            double value_bytes, int workers,
                                            const RowSparsity& rows);

// s2reducer's columns for `shape` (spec.sketch_columns, or sized by sketch_ratio, at least 1).
long long SketchColumns(const CompressionSpec& spec, const GradientShape& shape);
// casq's hash-table buckets over all clusters for `elements` elements (at least 2^q).
long long CasqTableBuckets(const CompressionSpec& spec, long long elements);
// topk's k for `elements` elements (at least 1).
long long TopKElements(const CompressionSpec& spec, long long elements);
// qsgd's bits per element: a sign and a level in [0, levels].
int QsgdBitsPerElement(int levels);

}  // namespace stratasim

#endif  // STRATASIM_CORE_COMPRESSION_H_
