// The pipeline planner: stages of tensor-parallel groups, replicated for data parallelism (3D).
// Reads and checks the options, then PipelineLowering (pipeline_lowering.h) lowers them to a
// TaskGraph following a schedule of pipeline_schedule.cpp.
#include "strategies/pipeline/pipeline.h"

#include <utility>

#include "core/limits.h"
#include "models/recompute.h"
#include "strategies/parallel_layout.h"
#include "strategies/pipeline/context_parallel.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/tensor/megatron.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {
namespace {

// Declared with the lowering, which takes it.
using Options = PipelineShape;

std::string Str(int n) { return std::to_string(n); }

Recompute ParseRecompute(const std::string& word, OptionReader& opt) {
  if (word == "none") return Recompute::kNone;
  if (word == "selective") return Recompute::kSelective;
  if (word == "full") return Recompute::kFull;
  throw opt.Fail("recompute", "\"" + word +
                                  "\" is not none, selective or full (give one for all stages, "
                                  "or one per stage separated by commas)");
}

}  // namespace

PipelineShape ReadPipelineDegrees(const Scenario& s, OptionReader& opt, bool three_d) {
  const int gpus = s.cluster.NumGpus();
  Options o;
  o.p = opt.Int("stages");
  o.t = opt.Int("tensor");
  o.d = three_d ? opt.Int("data") : opt.Int("data", 0);
  o.c = three_d ? opt.Int("context") : 1;
  const std::string tp = "tensor (" + Str(o.t) + ") x stages (" + Str(o.p) + ")";
  if (o.d > 0) {
    const long product = static_cast<long>(o.t) * o.c * o.p * o.d;
    if (product != gpus) {
      const std::string tcp = o.c == 1 ? tp
                                       : "tensor (" + Str(o.t) + ") x context (" + Str(o.c) +
                                             ") x stages (" + Str(o.p) + ")";
      throw opt.Fail("data", tcp + " x data (" + Str(o.d) + ") = " + std::to_string(product) +
                                 " must equal the GPU count (" + Str(gpus) + ")");
    }
  } else if (gpus % (o.t * o.p) != 0) {
    if (o.t == 1) {
      throw opt.Fail("stages",
                     "stages (" + Str(o.p) + ") must divide the GPU count (" + Str(gpus) + ")");
    }
    throw opt.Fail("tensor",
                   tp + " = " + Str(o.t * o.p) + " must divide the GPU count (" + Str(gpus) + ")");
  } else {
    o.d = gpus / (o.t * o.p);
  }
  if (o.t > 1) CheckTensorDegree(s.model, o.t, opt, "tensor");
  CheckContextDegree(s.model, o.c, opt);
  o.sp = opt.Bool("sequence_parallel");
  if (o.sp && o.t == 1) throw opt.Fail("sequence_parallel", "only applies with tensor > 1");
  o.scatter_gather = opt.Bool("scatter_gather");
  o.order = opt.Choice("rank_order");
  o.dp_overlap = opt.Bool("dp_overlap");
  o.bucket_cap = opt.Bytes("bucket_size");
  if (three_d) {
    o.tp_comm_overlap = opt.Bool("tp_comm_overlap");
    if (o.tp_comm_overlap && !o.sp) {
      throw opt.Fail("tp_comm_overlap",
                     "needs sequence_parallel: true (it overlaps the "
                     "all-gathers and reduce-scatters of sequence parallelism)");
    }
    o.optimizer = ReadDataParallelOptimizer(opt);
  }
  return o;
}

int ReadMicroBatches(const Scenario& s, OptionReader& opt, int data) {
  const TrainingSpec& tr = s.training;
  const int m = opt.Int("micro_batches", 0);
  if (m > 0) return m;
  const long per = static_cast<long>(tr.micro_batch) * data;
  if (tr.global_batch % per != 0) {
    throw opt.Fail("micro_batches",
                   "default micro_batches = global_batch / (micro_batch x data-parallel "
                   "degree) = " +
                       std::to_string(tr.global_batch) + " / (" + Str(tr.micro_batch) + " x " +
                       Str(data) + ") is not an integer");
  }
  return static_cast<int>(tr.global_batch / per);
}

namespace {

Options ReadOptions(const Scenario& s, const StrategySpec& spec, OptionReader& opt) {
  Options o = ReadPipelineDegrees(s, opt, spec.kind == "3d");
  o.schedule = opt.Choice("schedule");
  if (o.schedule == "interleaved") {
    o.v = opt.Int("virtual_stages");
  } else if (opt.Given("virtual_stages")) {
    throw opt.Fail("virtual_stages", "only applies to schedule interleaved");
  }
  if (o.schedule == "pipedream_2bw" && o.optimizer.distributed) {
    throw opt.Fail("distributed_optimizer",
                   "does not apply to schedule pipedream_2bw, whose stages step without a flush");
  }
  o.m = ReadMicroBatches(s, opt, o.d);
  if (o.schedule == "interleaved" && o.m % o.p != 0) {
    throw opt.Fail("micro_batches", "interleaved needs micro_batches (" + Str(o.m) +
                                        ") to be a multiple of stages (" + Str(o.p) +
                                        "), as Megatron-LM does");
  }
  o.partition = opt.Text("partition");
  const std::string rc = opt.Text("recompute");
  if (!rc.empty()) {
    size_t at = 0;
    while (at <= rc.size()) {
      size_t comma = rc.find(',', at);
      if (comma == std::string::npos) comma = rc.size();
      std::string word = rc.substr(at, comma - at);
      while (!word.empty() && word.front() == ' ') word.erase(word.begin());
      while (!word.empty() && word.back() == ' ') word.pop_back();
      o.recompute.push_back(ParseRecompute(word, opt));
      at = comma + 1;
    }
    if (o.recompute.size() == 1) o.recompute.assign(o.p, o.recompute.front());
    if (static_cast<int>(o.recompute.size()) != o.p) {
      throw opt.Fail("recompute", "gives " + Str(static_cast<int>(o.recompute.size())) +
                                      " choices but the pipeline has " + Str(o.p) + " stages");
    }
  }
  return o;
}

// The workload one GPU of a stage runs: the model's sequences split c ways (context
// parallelism) and the model split t ways (tensor parallelism), with the recomputation `mode`
// applied (the model's own choice when `use_model` is set).
Workload StageWorkload(const Scenario& s, const Options& o, bool use_model, Recompute mode) {
  const TrainingSpec& tr = s.training;
  ModelSpec model = s.model;
  if (!use_model) {
    model.recompute = mode;
    model.recompute_layers = 0;
  }
  if (o.t == 1 && o.c == 1) return BuildWorkload(model, tr.micro_batch, tr.precision, tr.seed);
  ModelSpec plain = s.model;
  plain.recompute = Recompute::kNone;
  Workload w = o.c > 1 ? ContextParallelWorkload(plain, tr.micro_batch, tr.precision, tr.seed, o.c)
                       : BuildWorkload(plain, tr.micro_batch, tr.precision, tr.seed);
  if (o.t == 1) {
    ApplyRecompute(w, model.recompute, model.recompute_layers);
    return w;
  }
  return TensorParallelShard(w, o.t, o.sp, model);
}

// The index in w.layers of each chunk's first layer, then w.layers.size(), as the option
// `partition` asks.
std::vector<int> Partition(const Workload& w, const Options& o, OptionReader& opt) {
  const int chunks = o.p * o.v;
  if (o.partition != "even") return PartitionFromCounts(w, o.partition, chunks, opt);
  if (chunks > static_cast<int>(w.layers.size())) {
    throw opt.Fail("stages", "the model has " + std::to_string(w.layers.size()) +
                                 " layers, fewer than stages x virtual_stages (" + Str(chunks) +
                                 ")");
  }
  return o.v > 1 ? EvenInterleavedPartition(w, o.p, o.v) : EvenPartition(w, chunks);
}

}  // namespace

const OptionSpecs& PipelineOptions(bool three_d) {
  // Stage counts, degrees and micro-batches are bounded by what a cluster and a run can hold.
  constexpr int kMaxMicroBatches = 1 << 24;
  auto make = [](bool three_d) {
    OptionSpecs specs{
        three_d ? Integer("stages", 1, limits::kMaxGpus, "the number of pipeline stages (>= 1)")
                : Integer("stages", 2, limits::kMaxGpus, "the number of pipeline stages (>= 2)"),
        three_d ? Integer("tensor", 1, limits::kMaxGpus, "the tensor-parallel degree")
                : Integer("tensor", 1, limits::kMaxGpus,
                          "each stage's layers split over a tensor-parallel group of t GPUs as "
                          "the tensor strategy does; t must divide the model's heads")
                      .Default("1"),
        three_d ? Integer("data", 1, limits::kMaxGpus, "the data-parallel degree")
                : Integer("data", 1, limits::kMaxGpus,
                          "the data-parallel degree; tensor x stages x data must equal the GPUs")
                      .Derived("GPUs / (tensor x stages), which must be an integer"),
        OneOf("rank_order", ParallelLayout::Orders(),
              three_d ? "a permutation of t, p, d, fastest-varying first: tpd puts a tensor group "
                        "on consecutive ranks, then the stages of a replica, then the replicas; "
                        "the context index varies right after the tensor index (tpd is t, c, p, "
                        "d; strategies/parallel_layout.h)"
                      : "a permutation of t, p, d, fastest-varying first: tpd puts a tensor group "
                        "on consecutive ranks, then the stages of a replica, then the replicas "
                        "(strategies/parallel_layout.h)")
            .Default("tpd"),
        Flag("sequence_parallel", "Korthikanti et al. 2022's sequence parallelism (tensor > 1)")
            .Default("false"),
        Flag("scatter_gather",
             "tensor > 1 without sequence parallelism: each GPU of a tensor group sends 1/t of "
             "the boundary tensor and the receiving group all-gathers it (Narayanan et al. 2021, "
             "SC, 4.1)")
            .Default("true"),
        Integer("micro_batches", 1, kMaxMicroBatches,
                "m; samples per iteration are m x micro_batch x data")
            .Derived("global_batch / (micro_batch x data), which must be an integer"),
        OneOf("schedule", {"gpipe", "1f1b", "interleaved", "pipedream_2bw"},
              "gpipe (Huang et al. 2019), 1f1b (PipeDream-Flush), interleaved (Megatron-LM's "
              "interleaved 1F1B; micro_batches a multiple of stages) or pipedream_2bw (1F1B "
              "without a flush, two weight versions)")
            .Default(three_d ? "1f1b" : "gpipe"),
        Integer("virtual_stages", 2, limits::kMaxGpus,
                "v chunks per stage, for schedule interleaved only")
            .Default("2"),
        FreeText("partition",
                 "even: contiguous stages minimising the largest forward FLOPs of a stage (for "
                 "interleaved, chunks balancing each stage's sum); or layer counts per stage (per "
                 "chunk for interleaved) over the repeated blocks, such as \"6,6,6,6\", the "
                 "embedding joining the first stage and the head the last")
            .Default("even"),
        FreeText("recompute",
                 "none, selective or full, for all stages or one per stage (\"full,none\"); "
                 "empty: the model's recompute")
            .Default(""),
        Flag("dp_overlap",
             "each stage's data-parallel all-reduce runs in buckets launched as the batch's last "
             "backward of each chunk finishes their layers (Megatron-LM's "
             "--overlap-grad-reduce); false: one all-reduce after the flush")
            .Default("true"),
        Size("bucket_size", "gradient bucket cap of the data-parallel all-reduce").Default("25MiB"),
    };
    if (three_d) {
      // After `data`: tensor x context x stages x data GPUs.
      specs.insert(specs.begin() + 3,
                   Integer("context", 1, limits::kMaxGpus,
                           "context parallelism: each sequence split over c GPUs (zig-zag, 2c "
                           "chunks; the sequence a multiple of 2c) whose attention runs as a ring "
                           "passing K/V blocks (Megatron-Core; Liu et al. 2023); tensor x context "
                           "x stages x data must equal the GPUs")
                       .Default("1"));
    }
    return specs;
  };
  // The 3d kind's training-stack options (the tensor kind has them too).
  auto make_3d = [&make]() {
    OptionSpecs o = make(true);
    o.push_back(TpCommOverlapOption());
    return Join(o, DataParallelOptimizerOptions());
  };
  static const OptionSpecs pipeline = make(false), three_d_options = make_3d();
  return three_d ? three_d_options : pipeline;
}

Plan PlanPipeline(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, PipelineOptions(spec.kind == "3d"));
  const Options o = ReadOptions(s, spec, opt);
  opt.Finish();
  Workload w = StageWorkload(s, o, true, s.model.recompute);
  std::vector<Workload> per_stage;  // only with a per-stage recompute choice
  for (Recompute mode : o.recompute) per_stage.push_back(StageWorkload(s, o, false, mode));
  std::vector<int> bounds = Partition(w, o, opt);
  return PipelineLowering(s, o, std::move(w), std::move(per_stage), std::move(bounds)).Lower();
}

}  // namespace stratasim
