// The compressed kinds' options and CompressionOf (strategies/comm/compressed_ddp.h).
#include <climits>
#include <string>
#include <vector>

#include "strategies/comm/compressed_ddp.h"
#include "strategies/comm/compression_scope.h"
#include "strategies/data/ddp.h"

namespace stratasim {
namespace {

struct KindMethod {
  const char* kind;
  CompressionMethod method;
};
constexpr KindMethod kKinds[] = {
    {"s2reducer", CompressionMethod::kS2Reducer},
    {"casq", CompressionMethod::kCasq},
    {"coo", CompressionMethod::kCoo},
    {"omnireduce", CompressionMethod::kOmniReduce},
    {"topk", CompressionMethod::kTopK},
    {"qsgd", CompressionMethod::kQsgd},
    {"terngrad", CompressionMethod::kTernGrad},
    {"uniform-fp16", CompressionMethod::kFp16},
    {"uniform-fp8", CompressionMethod::kFp8},
    {"uniform-int8", CompressionMethod::kInt8},
};

// Which methods read each compressor option: given to any other kind, it is an error (it would
// silently do nothing).
struct OptionUse {
  const char* key;
  std::vector<CompressionMethod> methods;
};
const std::vector<OptionUse>& OptionUses() {
  using M = CompressionMethod;
  static const std::vector<OptionUse> uses = {
      {"sketch_rows", {M::kS2Reducer}},  {"sketch_columns", {M::kS2Reducer}},
      {"sketch_ratio", {M::kS2Reducer}}, {"casq_bits", {M::kCasq}},
      {"table_ratio", {M::kCasq}},       {"topk_fraction", {M::kTopK}},
      {"qsgd_levels", {M::kQsgd}},       {"bucket_elements", {M::kQsgd, M::kTernGrad}},
      {"int8_block", {M::kInt8}},        {"index_bytes", {M::kCoo, M::kTopK}},
  };
  return uses;
}

std::string KindOf(CompressionMethod m) {
  for (const KindMethod& k : kKinds) {
    if (k.method == m) return k.kind;
  }
  return "?";
}

const OptionSpecs& CompressorOptions() {
  static const OptionSpecs options = {
      Integer("sketch_rows", 1, 64,
              "s2reducer: hash rows r of the count sketch; the median over them decodes (the "
              "authors' code uses 1)")
          .Default("1"),
      Integer("sketch_columns", 1, INT_MAX,
              "s2reducer: counters c per hash row (FP32); the sketch and bitmap all-reduce moves "
              "4rc + n/8 bytes whatever the number of workers")
          .Derived("ceil(sketch_ratio x vocabulary x hidden)"),
      Number("sketch_ratio", 0, 1,
             "s2reducer, when sketch_columns is not given: c as a fraction of the table's "
             "elements, as the authors size it (GNMT: density 0.02 x rank 0.25 = 0.005)")
          .Default("0.005"),
      Integer("casq_bits", 1, 8,
              "casq: q bits per element, 2^q cluster centres (CASQ, CLUSTER'21: 2 bits reach "
              "the accuracy of 3-bit uniform quantization)")
          .Default("2"),
      Number("table_ratio", 0, 1,
             "casq: hash-table buckets of all clusters together per element (the authors' q = 2 "
             "tables hold 1,000,400 buckets)")
          .Default("0.01"),
      Number("topk_fraction", 0, 1,
             "topk: fraction of elements kept (Lin et al. 2018, Deep Gradient Compression: 0.001 "
             "to 0.01)")
          .Default("0.01"),
      Integer("qsgd_levels", 1, 127,
              "qsgd: s quantization levels of |x| / ||bucket|| (Alistarh et al. 2017)")
          .Default("15"),
      Integer("bucket_elements", 1, INT_MAX,
              "qsgd, terngrad: elements sharing one FP32 norm or scale")
          .Default("512"),
      Integer("int8_block", 1, INT_MAX, "uniform-int8: elements per FP32 scale").Default("256"),
      Integer("index_bytes", 4, 8, "coo, topk: bytes per row or element index: 4 (up to 2^32) or 8")
          .Default("4"),
      OneOf("scope", {"embedding", "all"},
            "embedding: only the sparse token table is compressed (needs model sparse_embedding: "
            "true), the other gradients are all-reduced densely; all: every gradient bucket too")
          .Derived("embedding for coo, omnireduce and s2reducer; all for the others"),
  };
  return options;
}

}  // namespace

const OptionSpecs& CompressedDdpOptions() {
  static const OptionSpecs options = Join(DdpOptions(), CompressorOptions());
  return options;
}

std::optional<CompressionMethod> CompressedKindMethod(const std::string& kind) {
  for (const KindMethod& k : kKinds) {
    if (kind == k.kind) return k.method;
  }
  return std::nullopt;
}

CompressionScope ReadCompressionScope(const StrategySpec& spec, CompressionMethod method) {
  auto it = spec.options.find("scope");
  if (it == spec.options.end()) {
    return IsRowSparse(method) ? CompressionScope::kEmbedding : CompressionScope::kAll;
  }
  if (it->second.text == "embedding") return CompressionScope::kEmbedding;
  if (it->second.text == "all") return CompressionScope::kAll;
  throw ConfigError(it->second.where, spec.key_path + ".options.scope", it->second.text,
                    "must be one of: embedding, all");
}

std::optional<CompressionSpec> CompressionOf(const Scenario& s, const StrategySpec& spec) {
  const std::optional<CompressionMethod> method = CompressedKindMethod(spec.kind);
  if (!method) return std::nullopt;
  OptionReader opt(spec, CompressedDdpOptions());
  for (const OptionUse& use : OptionUses()) {
    if (!opt.Given(use.key)) continue;
    bool used = false;
    std::string kinds;
    for (CompressionMethod m : use.methods) {
      used = used || m == *method;
      kinds += (kinds.empty() ? "" : ", ") + KindOf(m);
    }
    if (!used) throw opt.Fail(use.key, "applies to kind " + kinds + " only, not " + spec.kind);
  }
  CompressionSpec c;
  c.method = *method;
  c.sketch_rows = opt.Int("sketch_rows");
  c.sketch_columns = opt.Int("sketch_columns", 0);
  c.sketch_ratio = opt.Double("sketch_ratio");
  c.casq_bits = opt.Int("casq_bits");
  c.table_ratio = opt.Double("table_ratio");
  c.topk_fraction = opt.Double("topk_fraction");
  c.qsgd_levels = opt.Int("qsgd_levels");
  c.bucket_elements = opt.Int("bucket_elements");
  c.int8_block = opt.Int("int8_block");
  c.index_bytes = opt.Int("index_bytes");
  c.seed = s.training.seed;
  ReadCompressionScope(spec, *method);
  opt.Finish();
  // The contract's own bounds (core/compression.h); its message starts with the field, which is
  // the option of the same name.
  const std::string rule = CheckCompressionSpec(c);
  if (!rule.empty()) throw opt.Fail(rule.substr(0, rule.find(' ')), rule);
  return c;
}

}  // namespace stratasim
