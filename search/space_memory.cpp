// The closed-form memory estimate of a candidate (search/space.h EstimateMemory). It replays,
// per stage, the memory events the strategies' lowerings add (strategies/layer_tasks.cpp
// AddForward/AddBackward/AddModelStates, strategies/sharded/fsdp_units.cpp), in the order of
// the stage's schedule (PipelineSchedule), without building a task graph.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "models/memory.h"
#include "models/workload.h"
#include "search/space.h"
#include "strategies/gradient_buckets.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/stage_workload.h"

namespace stratasim::search {
namespace {

// The per-layer sums the estimate reads, for one stage workload (one GPU of a stage: layers
// sharded t ways, the candidate's micro-batch and recomputation).
struct LayerSums {
  std::vector<double> params;      // per layer
  std::vector<double> act_prefix;  // act_prefix[i] = activations of layers [0, i)
  std::vector<double> bwd_top;     // act_prefix[i + 1] + recomputed_bytes of layer i
};

struct Prepared {
  Workload w;
  LayerSums sums;
  std::map<std::pair<int, int>, std::vector<int>> bounds;  // (p, v) -> chunk boundaries
};

// The model and training fields a stage workload is built from (models/workload.h): the cache
// key, so that two scenarios with different models never share an entry.
std::string Fingerprint(const Scenario& s) {
  const ModelSpec& m = s.model;
  std::string out = m.kind + "|" + m.preset + "|" + m.architecture + "|" + m.token_distribution;
  for (double x :
       {static_cast<double>(m.layers), static_cast<double>(m.hidden), static_cast<double>(m.heads),
        static_cast<double>(m.sequence), static_cast<double>(m.vocabulary),
        static_cast<double>(m.kv_heads), static_cast<double>(m.ffn_hidden),
        static_cast<double>(m.attention), m.causal ? (*m.causal ? 1.0 : 0.0) : -1.0,
        m.sparse_embedding ? 1.0 : 0.0, m.zipf_exponent, static_cast<double>(m.experts),
        static_cast<double>(m.top_k), m.capacity_factor, static_cast<double>(m.image_size),
        static_cast<double>(m.classes), static_cast<double>(m.recompute_layers),
        static_cast<double>(s.training.precision), static_cast<double>(s.training.seed)}) {
    out += "|" + std::to_string(x);
  }
  return out;
}

// Cache of stage workloads: the estimate runs on thousands of candidates that share a few
// (t, sp, micro_batch, recompute) shapes.
using WorkloadKey = std::tuple<std::string, int, bool, int, int>;

class WorkloadCache {
 public:
  // Shared, so that an entry outlives a clear of the cache while a caller still reads it.
  std::shared_ptr<Prepared> Get(const Scenario& s, int t, bool sp, int micro_batch, Recompute r) {
    const WorkloadKey key{Fingerprint(s), t, sp, micro_batch, static_cast<int>(r)};
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() > 4096) map_.clear();  // a long-lived process searching many scenarios
    auto it = map_.find(key);
    if (it != map_.end()) return it->second;
    PipelineShape o;
    o.p = 1;
    o.t = t;
    o.sp = sp;
    StageWorkloadChoice choice;
    choice.micro_batch = micro_batch;
    // The candidate's recomputation replaces the model's as the plan's own choice does
    // (ScenarioFor): on the model's first recompute_layers layers when it limits them.
    Scenario with = s;
    with.model.recompute = r;
    auto prepared = std::make_shared<Prepared>();
    prepared->w = PipelineStageWorkload(with, o, choice);
    LayerSums& sums = prepared->sums;
    const std::vector<LayerCost>& layers = prepared->w.layers;
    sums.act_prefix.assign(layers.size() + 1, 0);
    for (size_t i = 0; i < layers.size(); ++i) {
      sums.params.push_back(layers[i].params);
      sums.act_prefix[i + 1] = sums.act_prefix[i] + layers[i].activation_bytes;
      sums.bwd_top.push_back(sums.act_prefix[i + 1] + layers[i].recomputed_bytes);
    }
    map_.emplace(key, prepared);
    return prepared;
  }

  // The chunk boundaries the 3d planner's default partition (`even`) gives for (p, v).
  std::vector<int> Bounds(Prepared& prep, int p, int v) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prep.bounds.find({p, v});
    if (it != prep.bounds.end()) return it->second;
    std::vector<int> b = v > 1 ? EvenInterleavedPartition(prep.w, p, v) : EvenPartition(prep.w, p);
    prep.bounds.emplace(std::make_pair(p, v), b);
    return b;
  }

 private:
  std::mutex mu_;
  std::map<WorkloadKey, std::shared_ptr<Prepared>> map_;
};

WorkloadCache& Cache() {
  static WorkloadCache* cache = new WorkloadCache();  // never destroyed: used until exit
  return *cache;
}

// Activations of chunk [a, b) held after its forward, and the most it holds at once during its
// backward (the layers before i still held, layer i's re-created activations added;
// AddBackward frees a layer's after its kernels).
struct ChunkActivations {
  double held = 0;
  double backward_top = 0;
};

ChunkActivations Chunk(const LayerSums& sums, int a, int b) {
  ChunkActivations c;
  c.held = sums.act_prefix[b] - sums.act_prefix[a];
  double top = 0;
  for (int i = a; i < b; ++i) top = std::max(top, sums.bwd_top[i] - sums.act_prefix[a]);
  c.backward_top = top;
  return c;
}

// The peak of a stage's activations over its schedule: each forward of a chunk adds the
// chunk's activations, each backward reaches the chunk's top and then frees them.
double StageActivationPeak(const std::vector<PipelineOp>& ops,
                           const std::vector<ChunkActivations>& chunk) {
  double held = 0, peak = 0;
  for (const PipelineOp& op : ops) {
    const ChunkActivations& c = chunk[op.chunk];
    if (op.forward) {
      held += c.held;
      peak = std::max(peak, held);
    } else {
      peak = std::max(peak, held - c.held + c.backward_top);
      held -= c.held;
    }
  }
  return peak;
}

// Schedules are shared by every candidate of the same (schedule, p, stage, m, v); shared
// pointers, so that an entry outlives a clear of the cache while a caller still reads it.
using Ops = std::shared_ptr<const std::vector<PipelineOp>>;
Ops Schedule(const std::string& schedule, int p, int stage, int m, int v) {
  static std::mutex mu;
  static auto* cache = new std::map<std::tuple<std::string, int, int, int, int>, Ops>();
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() > 65536) cache->clear();
  const auto key = std::make_tuple(schedule, p, stage, m, v);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  Ops ops =
      std::make_shared<const std::vector<PipelineOp>>(PipelineSchedule(schedule, p, stage, m, v));
  cache->emplace(key, ops);
  return ops;
}

// A data-parallel plan (t = p = 1): ddp, zero1, zero2 or zero3 as strategies/data/ddp.cpp and
// strategies/sharded/zero.cpp lower them with their default options.
MemoryEstimate DataParallelMemory(const Scenario& s, const Candidate& c, Prepared& prep) {
  const Workload& w = prep.w;
  const LayerSums& sums = prep.sums;
  const DType precision = s.training.precision;
  const int d = std::max(1, c.data);
  StateSharding sharding;
  if (c.zero == Zero::kZero1 || c.zero == Zero::kZero2 || c.zero == Zero::kZero3) {
    sharding.optimizer = d;
  }
  if (c.zero == Zero::kZero2 || c.zero == Zero::kZero3) sharding.gradients = d;
  if (c.zero == Zero::kZero3) sharding.weights = d;
  MemoryEstimate out;
  out.states_bytes = AdamStateBytes(w.params, precision, sharding).Total();
  // One micro-batch in flight: micro-batches run one after the other, forward then backward.
  const int n = static_cast<int>(w.layers.size());
  const ChunkActivations all = Chunk(sums, 0, n);
  out.activations_bytes = std::max(all.held, all.backward_top);
  double extra = 0;
  const double e = TrainingBytesPerParam(precision);
  if (c.zero == Zero::kNone) {
    // DDP's bucket buffers, a second copy of the gradients (gradient_as_bucket_view false,
    // PyTorch's default; strategies/data/ddp.cpp).
    double bucketed = 0;
    for (const GradientBucket& b : MakeGradientBuckets(w.layers, e, 25.0 * (1 << 20))) {
      bucketed += b.params;
    }
    extra = bucketed * e;
  } else if (c.zero == Zero::kZero3) {
    // FSDP units of one layer with prefetch (strategies/sharded/fsdp_units.cpp, zero3's
    // defaults unit: layer, prefetch: true): the all-gather of the next pass's unit is issued
    // as the previous pass ends, so each pass holds its own unit's gathered weights and the
    // next one's; a backward pass also holds its unit's full gradient and the previous pass's,
    // whose reduce-scatter is still running (assumed not finished: an upper bound when the
    // reduce-scatter is faster than a layer's backward).
    const std::vector<double>& params = sums.params;
    auto unit = [&](int i) { return i >= 0 && i < n ? params[i] * e : 0.0; };
    double top = 0;
    for (int i = 0; i < n; ++i) {
      top = std::max(top, sums.act_prefix[i + 1] + unit(i) + unit(i + 1));
      top = std::max(top, sums.bwd_top[i] + unit(i) + unit(i - 1) + unit(i) + unit(i + 1));
    }
    out.activations_bytes = top;
  }
  out.activations_bytes += extra;
  out.peak_bytes = out.states_bytes + out.activations_bytes;
  return out;
}

}  // namespace

MemoryEstimate EstimateMemory(const Scenario& s, const Candidate& c) {
  const std::shared_ptr<Prepared> held =
      Cache().Get(s, c.tensor, c.sequence_parallel, c.micro_batch, c.recompute);
  Prepared& prep = *held;
  if (c.tensor * c.pipeline == 1) return DataParallelMemory(s, c, prep);
  const int p = c.pipeline, v = std::max(1, c.virtual_stages);
  if (static_cast<long long>(p) * v > static_cast<long long>(prep.w.layers.size())) {
    // Prune's layer rule comes first; a direct caller gets the reason rather than a bad split.
    throw Error("memory estimate of " + CandidateName(c) + ": " + std::to_string(p * v) +
                " stage chunks for a model of " + std::to_string(prep.w.layers.size()) + " layers");
  }
  const std::vector<int> bounds = Cache().Bounds(prep, p, v);
  const std::string schedule = c.schedule.empty() ? "1f1b" : c.schedule;
  const int m = std::max(1, c.micro_batches);
  const int d = std::max(1, c.data);
  MemoryEstimate out;
  out.peak_bytes = -1;
  for (int st = 0; st < p; ++st) {
    // Chunk k of this stage is global chunk k * p + st (strategies/pipeline/pipeline.h).
    std::vector<ChunkActivations> chunks(v);
    double params = 0;
    for (int k = 0; k < v; ++k) {
      const int j = k * p + st;
      chunks[k] = Chunk(prep.sums, bounds[j], bounds[j + 1]);
      for (int i = bounds[j]; i < bounds[j + 1]; ++i) params += prep.sums.params[i];
    }
    // Megatron-LM's distributed optimizer shards the optimizer states over the d replicas
    // (strategies/pipeline/pipeline_lowering.cpp AddStageModelStates).
    const StateSharding sharding{1, 1, c.zero == Zero::kDistributedOptimizer ? d : 1};
    const double states = AdamStateBytes(params, s.training.precision, sharding).Total();
    const double activations = StageActivationPeak(*Schedule(schedule, p, st, m, v), chunks);
    if (states + activations > out.peak_bytes) {
      out.peak_bytes = states + activations;
      out.states_bytes = states;
      out.activations_bytes = activations;
      out.stage = st;
    }
  }
  return out;
}

}  // namespace stratasim::search
