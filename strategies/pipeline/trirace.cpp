// Reads and checks TriRace's options and lowers it as PipeDream-2BW with its communication
// classes (PipelineShape::classes; trirace_lowering.cpp).
#include "strategies/pipeline/trirace.h"

#include <string>
#include <utility>

#include "core/limits.h"
#include "strategies/parallel_layout.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/pipeline/stage_workload.h"

namespace stratasim {
namespace {

std::string Str(int n) { return std::to_string(n); }

PipelineShape ReadOptions(const Scenario& s, OptionReader& opt) {
  const int gpus = s.cluster.NumGpus();
  PipelineShape o;
  o.schedule = "pipedream_2bw";
  o.p = opt.Int("stages");
  o.t = 1;
  o.c = 1;
  if (gpus % o.p != 0) {
    throw opt.Fail("stages",
                   "stages (" + Str(o.p) + ") must divide the GPU count (" + Str(gpus) + ")");
  }
  o.d = opt.Int("data", gpus / o.p);
  if (static_cast<long>(o.d) * o.p != gpus) {
    throw opt.Fail("data", "stages (" + Str(o.p) + ") x data (" + Str(o.d) +
                               ") must equal the GPU count (" + Str(gpus) + ")");
  }
  o.order = opt.Choice("rank_order");
  o.bucket_cap = opt.Bytes("bucket_size");
  o.dp_overlap = true;
  o.m = ReadMicroBatches(s, opt, o.d);
  if (o.m < o.p) {
    throw opt.Fail("micro_batches",
                   "micro_batches (" + Str(o.m) + ") must be >= stages (" + Str(o.p) +
                       "): PipeDream-2BW's one-version delay, which the deferred all-reduce "
                       "uses, needs each batch to fill the pipeline (Narayanan et al. 2021, "
                       "ICML, §3.1)");
  }
  o.partition = opt.Text("partition");
  o.classes.enabled = true;
  o.classes.defer_dense = opt.Bool("defer_dense");
  o.classes.topology_aware = opt.Bool("topology_aware");
  o.classes.index_bytes = std::stod(opt.Choice("index_bytes"));
  const bool sparse = opt.Bool("sparse_exchange");
  if (sparse && !s.model.sparse_embedding && opt.Given("sparse_exchange")) {
    throw opt.Fail("sparse_exchange",
                   "needs a model with sparse_embedding: true (a gpt model key, docs/models.md, "
                   "\"Sparse embedding\")");
  }
  o.classes.sparse = sparse && s.model.sparse_embedding;
  return o;
}

}  // namespace

const OptionSpecs& TriRaceOptions() {
  constexpr int kMaxMicroBatches = 1 << 24;
  static const OptionSpecs specs{
      Integer("stages", 2, limits::kMaxGpus,
              "PipeDream-2BW stages (>= 2), each on one GPU (no tensor parallelism)"),
      Integer("data", 1, limits::kMaxGpus, "the data-parallel degree; stages x data = GPUs")
          .Derived("GPUs / stages, which must be an integer"),
      Integer("micro_batches", 1, kMaxMicroBatches,
              "m per batch (>= stages); samples per iteration are m x micro_batch x data")
          .Derived("global_batch / (micro_batch x data), which must be an integer"),
      OneOf("rank_order", ParallelLayout::Orders(),
            "a permutation of t, p, d, fastest-varying first: tpd puts the stages of a replica on "
            "consecutive ranks, then the replicas (strategies/parallel_layout.h)")
          .Default("tpd"),
      FreeText("partition",
               "even (contiguous stages minimising the largest forward FLOPs) or layer counts per "
               "stage, as for kind pipeline")
          .Default("even"),
      Size("bucket_size", "gradient bucket cap of the dense all-reduce").Default("25MiB"),
      Flag("defer_dense",
           "the step of batch k waits until the stage's first forward of batch k + 2 "
           "(PipeDream-2BW's one-version delay), so the dense all-reduce spreads over batch k + 1; "
           "false: the step follows the batch's last backward, as plain PipeDream-2BW")
          .Default("true"),
      Flag("sparse_exchange",
           "exchange the sparse embedding's gradient as its non-zero rows plus indices (an "
           "all-to-all-v over stage 0's replicas) instead of all-reducing the whole table; "
           "applies to models with sparse_embedding: true")
          .Default("true"),
      OneOf("index_bytes", {"4", "8"},
            "bytes per row index of the sparse exchange: 8 (int64, torch.sparse_coo_tensor's "
            "indices) or 4 (int32)")
          .Default("8"),
      Flag("topology_aware",
           "hold a class behind point-to-point traffic only on groups whose transfers share a "
           "link with a member's point-to-point transfers (trirace_links.h); false: always")
          .Default("true"),
  };
  return specs;
}

Plan PlanTriRace(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, TriRaceOptions());
  const PipelineShape o = ReadOptions(s, opt);
  opt.Finish();
  Workload w = PipelineStageWorkload(s, o);
  std::vector<int> bounds;
  if (o.partition != "even") {
    bounds = PartitionFromCounts(w, o.partition, o.p, opt);
  } else if (o.p > static_cast<int>(w.layers.size())) {
    throw opt.Fail("stages", "the model has " + std::to_string(w.layers.size()) +
                                 " layers, fewer than stages (" + Str(o.p) + ")");
  } else {
    bounds = EvenPartition(w, o.p);
  }
  return PipelineLowering(s, o, std::move(w), {}, std::move(bounds)).Lower();
}

}  // namespace stratasim
