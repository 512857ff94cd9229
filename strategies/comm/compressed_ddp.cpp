// The lowering of the compressed kinds (strategies/comm/compressed_ddp.h) on DDP's step
// (strategies/data/ddp_step.h).
#include "strategies/comm/compressed_ddp.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/units.h"
#include "models/token_distribution.h"
#include "strategies/comm/codec_work.h"
#include "strategies/comm/compression_scope.h"
#include "strategies/comm/embedding_rows.h"
#include "strategies/data/ddp_step.h"
#include "strategies/gradient_buckets.h"

namespace stratasim {
namespace {

std::string Str(long long n) { return std::to_string(n); }

// One gradient that goes through the compressor.
struct CompressedGradient {
  std::string name;  // "embedding", "bucket3"
  GradientShape shape;
  int ready_layer = -1;  // the layer whose backward completes it
  bool table = false;    // the sparse token table: its rows follow the batch's ids
};

// The collective of a payload; its dtype is that of what it carries (the executor moves bytes).
Collective PayloadCollective(const WirePayload& p, const CompressionSpec& c, DType grad,
                             const std::string& all_reduce_algorithm) {
  Collective col;
  col.kind = p.kind;
  col.bytes = p.bytes;
  col.algorithm = p.kind == CollectiveKind::kAllReduce ? all_reduce_algorithm : "auto";
  switch (c.method) {
    case CompressionMethod::kS2Reducer:
      col.dtype = DType::kFP32;
      break;
    case CompressionMethod::kFp16:
      col.dtype = DType::kFP16;
      break;
    case CompressionMethod::kFp8:
      col.dtype = DType::kFP8;
      break;
    case CompressionMethod::kCasq:
    case CompressionMethod::kQsgd:
    case CompressionMethod::kTernGrad:
    case CompressionMethod::kInt8:
      col.dtype = DType::kINT8;  // packed codes
      break;
    default:
      col.dtype = grad;
  }
  return col;
}

class CompressedLowering {
 public:
  CompressedLowering(const Scenario& s, const CompressionSpec& c, DdpStep& step)
      : s_(s), c_(c), step_(step) {}

  // The work of the encode or decode of `g` on rank r in iteration `it`: from the mechanism
  // (codec_work.h), or the calibration's measured time for the rank's GPU kind.
  Task CodecTask(const CompressedGradient& g, int r, int it, bool encode,
                 const CodecInput& in) const {
    Task t;
    t.kind = TaskKind::kCompute;
    t.op = OpKind::kElementwise;
    t.phase = Phase::kCommunication;
    t.category = "compression";
    t.rank = r;
    t.stream = step_.comm_stream();
    t.iteration = it;
    t.dtype = DType::kFP32;
    t.name = "it" + Str(it) + "/" + (encode ? "encode/" : "decode/") + g.name;
    const GpuSpec* gpu = s_.simulation.calibration ? &s_.cluster.GpuOfRank(r) : nullptr;
    const GpuCalibration* cal = gpu ? s_.simulation.calibration->FindGpu(gpu->name) : nullptr;
    const CompressionCalibration* measured = cal ? cal->FindCompression(c_.method) : nullptr;
    if (measured != nullptr) {
      const double per_element =
          encode ? measured->encode_s_per_element : measured->decode_s_per_element;
      t.bytes = CalibratedCodecBytes(per_element * static_cast<double>(g.shape.Elements()), *gpu,
                                     s_.simulation);
      return t;
    }
    const CodecWork work = encode ? EncodeWork(c_, in) : DecodeWork(c_, in);
    t.bytes = work.bytes;
    t.flops = work.flops;
    return t;
  }

  // encode -> payloads in order -> decode on every rank; returns the decode tasks per rank.
  std::vector<TaskId> Exchange(const CompressedGradient& g, const GradientsReady& ready,
                               const RowSparsity& rows, const std::vector<long long>& nonzero) {
    TaskGraph& graph = step_.graph();
    const int it = ready.iteration;
    const int gpus = step_.gpus();
    auto input = [&](int r) {
      return CodecInput{g.shape, step_.grad_bytes(), gpus, nonzero[r], rows};
    };
    std::vector<TaskId> prev(gpus, -1);
    for (int r = 0; r < step_.block(); ++r) {
      Task enc = CodecTask(g, r, it, true, input(r));
      enc.deps = {step_.ReadyAfter(ready, r, g.ready_layer)};
      prev[r] = graph.Add(std::move(enc));
    }
    const std::vector<WirePayload> payloads =
        CompressedPayloads(c_, g.shape, step_.grad_bytes(), gpus, rows);
    for (const WirePayload& p : payloads) {
      wire_bytes_ += p.bytes;
      prev = step_.AddCollective(
          PayloadCollective(p, c_, step_.act(), step_.settings().algorithm), it,
          "it" + Str(it) + "/" + std::string(ToString(p.kind)) + "/" + g.name + "/" + p.what, "dp",
          [&](int r) { return std::vector<TaskId>{prev[r]}; });
    }
    std::vector<TaskId> decoded(gpus, -1);
    for (int r = 0; r < step_.block(); ++r) {
      Task dec = CodecTask(g, r, it, false, input(r));
      dec.deps = {prev[r]};
      decoded[r] = graph.Add(std::move(dec));
    }
    return decoded;
  }

  double wire_bytes() const { return wire_bytes_; }

 private:
  const Scenario& s_;
  const CompressionSpec& c_;
  DdpStep& step_;
  double wire_bytes_ = 0;  // over all iterations
};

}  // namespace

Plan PlanCompressedDdp(const Scenario& s, const StrategySpec& spec) {
  // Reads and checks the compressor's options; then DDP's.
  const CompressionSpec c = *CompressionOf(s, spec);
  OptionReader opt(spec, CompressedDdpOptions());
  const DdpSettings o = ReadDdpSettings(opt);
  const CompressionScope scope = ReadCompressionScope(spec, c.method);
  opt.Finish();

  DdpStep step(s, o, opt);
  const Workload& w = step.workload();
  const std::optional<SparseEmbedding>& table = w.sparse_embedding;
  if (scope == CompressionScope::kEmbedding && !table) {
    throw opt.Fail(opt.Given("scope") ? "scope" : "",
                   std::string("scope embedding") +
                       (opt.Given("scope") ? "" : " (the default of kind " + spec.kind + ")") +
                       " compresses the sparse token table: needs a model with "
                       "sparse_embedding: true (a gpt model key, docs/models.md, \"Sparse "
                       "embedding\"), or scope: all");
  }
  const TrainingSpec& tr = s.training;
  const int gpus = step.gpus();
  const int iterations = tr.warmup_iterations + tr.measured_iterations;

  // The table leaves DDP's buckets: it is exchanged on its own, compressed.
  std::vector<LayerCost> bucketed = w.layers;
  if (table) bucketed[table->layer].params -= table->rows * table->row_params;
  const std::vector<GradientBucket> buckets =
      MakeGradientBuckets(bucketed, step.grad_bytes(), o.bucket_cap_bytes);

  std::vector<CompressedGradient> compressed;
  if (scope == CompressionScope::kAll) {
    for (size_t k = 0; k < buckets.size(); ++k) {
      compressed.push_back({"bucket" + Str(static_cast<long long>(k)),
                            {static_cast<long long>(buckets[k].params), 1},
                            buckets[k].ready_after_layer,
                            false});
    }
  }
  EmbeddingRows rows;
  if (table) {
    compressed.push_back(
        {"embedding",
         {static_cast<long long>(table->rows), static_cast<long long>(table->row_params)},
         table->layer,
         true});
    const long long draws = static_cast<long long>(step.micro_batches()) * tr.micro_batch *
                            static_cast<long long>(w.tokens_per_sample);
    rows = CountEmbeddingRows(TokenDistribution::Of(s.model), draws, gpus, iterations, tr.seed);
    if (rows.drawn && IsRowSparse(c.method)) {
      step.RefuseFold("the compressed embedding's non-zero rows differ per replica");
    }
  }
  // A dense gradient: every row non-zero on every worker.
  auto dense_rows = [](const CompressedGradient& g) {
    return RowSparsity{g.shape.rows, g.shape.rows};
  };

  // Buffers: DDP's for the buckets all-reduced densely, and each compressed gradient's payloads
  // (the largest over the iterations).
  double dense_total = 0;
  if (scope == CompressionScope::kEmbedding) {
    for (const GradientBucket& b : buckets) dense_total += b.params * step.grad_bytes();
  }
  double payload_buffers = 0;
  for (const CompressedGradient& g : compressed) {
    double most = 0;
    for (int it = 0; it < iterations; ++it) {
      double sum = 0;
      for (const WirePayload& p : CompressedPayloads(c, g.shape, step.grad_bytes(), gpus,
                                                     g.table ? rows.Sparsity(it) : dense_rows(g))) {
        sum += p.bytes;
      }
      most = std::max(most, sum);
    }
    payload_buffers += most;
  }

  CompressedLowering lowering(s, c, step);
  Plan plan = step.Lower(
      [&](const GradientsReady& ready) {
        const int it = ready.iteration;
        std::vector<std::vector<TaskId>> step_deps(gpus);
        if (scope == CompressionScope::kEmbedding) {
          for (size_t k = 0; k < buckets.size(); ++k) {
            const std::vector<TaskId> ids = step.AddBucketAllReduce(
                ready, buckets[k].ready_after_layer, buckets[k].params * step.grad_bytes(),
                "it" + Str(it) + "/allreduce/bucket" + Str(static_cast<long long>(k)));
            for (int r = 0; r < gpus; ++r) step_deps[r].push_back(ids[r]);
          }
        }
        for (const CompressedGradient& g : compressed) {
          const RowSparsity sparsity = g.table ? rows.Sparsity(it) : dense_rows(g);
          const std::vector<long long> nonzero =
              g.table ? rows.per_replica[it] : std::vector<long long>(gpus, g.shape.rows);
          const std::vector<TaskId> ids = lowering.Exchange(g, ready, sparsity, nonzero);
          for (int r = 0; r < gpus; ++r) step_deps[r].push_back(ids[r]);
        }
        return step_deps;
      },
      [&](TaskGraph& g, const TaskPlace& at) {
        if (!o.bucket_view && dense_total > 0) {
          AddMemory(g, at, "ddp_buckets", "comm_buffers", dense_total);
        }
        AddMemory(g, at, "compression_payloads", "comm_buffers", payload_buffers);
      });

  const double dense_bytes = w.params * step.grad_bytes();
  plan.notes.push_back(
      std::string(ToString(c.method)) + " compression of " +
      (scope == CompressionScope::kAll ? "every gradient" : "the sparse token table") + ": " +
      FormatBytes(lowering.wire_bytes() / iterations) +
      " of compressed payload collectives per iteration (all-gathers: every worker's block)" +
      (scope == CompressionScope::kEmbedding
           ? " and " + FormatBytes(dense_total) + " all-reduced densely in " +
                 Str(static_cast<long long>(buckets.size())) + " bucket(s)"
           : "") +
      ", against " + FormatBytes(dense_bytes) + " all-reduced by dense DDP");
  if (table) {
    long long lo = -1, hi = 0;
    for (const auto& per_it : rows.per_replica) {
      for (long long n : per_it) {
        lo = lo < 0 ? n : std::min(lo, n);
        hi = std::max(hi, n);
      }
    }
    plan.notes.push_back("sparse embedding: " + Str(lo) + "-" + Str(hi) + " non-zero rows of " +
                         Str(static_cast<long long>(table->rows)) + " per replica, union " +
                         Str(rows.union_rows.front()) + " (expected over " + Str(gpus) +
                         " replicas)" +
                         (rows.drawn ? ""
                                     : "; per-replica counts expected, not drawn: over " +
                                           Str(kMaxDrawnTokens) + " tokens"));
  }
  if (c.method == CompressionMethod::kS2Reducer && table) {
    plan.notes.push_back("count sketch " + Str(c.sketch_rows) + " x " +
                         Str(SketchColumns(c, {static_cast<long long>(table->rows),
                                               static_cast<long long>(table->row_params)})) +
                         " FP32 counters plus a " + Str(static_cast<long long>(table->rows)) +
                         "-bit row bitmap");
  }
  return plan;
}

}  // namespace stratasim
