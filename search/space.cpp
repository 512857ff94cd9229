// The plan space of a search (search/space.h): enumeration, pruning and the closed-form memory
// estimate. The estimate replays, per stage, the memory events the strategies' lowerings add
// (strategies/layer_tasks.cpp AddForward/AddBackward/AddModelStates), in the order of the
// stage's schedule (PipelineSchedule), without building a task graph.
#include "search/space.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "models/memory.h"
#include "models/workload.h"
#include "strategies/gradient_buckets.h"
#include "strategies/parallel_layout.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/stage_workload.h"

namespace stratasim::search {
namespace {

// The data degree of (t, p) on `gpus` GPUs, 0 when t x p does not divide them.
int DataDegree(int gpus, int t, int p) {
  const long long tp = static_cast<long long>(t) * p;
  return gpus % tp == 0 ? static_cast<int>(gpus / tp) : 0;
}

// The micro-batches per replica, 0 when global_batch / (micro_batch x data) is not an integer.
int MicroBatches(int global_batch, int micro_batch, int data) {
  if (data <= 0) return 0;
  const long long per = static_cast<long long>(micro_batch) * data;
  return global_batch % per == 0 ? static_cast<int>(global_batch / per) : 0;
}

bool ZeroExists(Zero z, int t, int p) {
  const bool sharded_dp = t * p == 1;
  switch (z) {
    case Zero::kNone:
      return true;
    case Zero::kDistributedOptimizer:
      return !sharded_dp;
    case Zero::kZero1:
    case Zero::kZero2:
    case Zero::kZero3:
      return sharded_dp;
  }
  return false;
}

// The rank order with the dimensions of size 1 removed: two orders equal here place every
// rank alike.
std::string EffectiveOrder(const std::string& order, int t, int p, int d) {
  std::string out;
  for (char c : order) {
    const int size = c == 't' ? t : c == 'p' ? p : d;
    if (size > 1) out += c;
  }
  return out;
}

bool TensorKind(const std::string& kind) {
  return kind == "gpt" || kind == "bert" || kind == "llama";
}

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
  Prepared& Get(const Scenario& s, int t, bool sp, int micro_batch, Recompute r) {
    const WorkloadKey key{Fingerprint(s), t, sp, micro_batch, static_cast<int>(r)};
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() > 4096) map_.clear();  // a long-lived process searching many scenarios
    auto it = map_.find(key);
    if (it != map_.end()) return *it->second;
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
    auto prepared = std::make_unique<Prepared>();
    prepared->w = PipelineStageWorkload(with, o, choice);
    LayerSums& sums = prepared->sums;
    const std::vector<LayerCost>& layers = prepared->w.layers;
    sums.act_prefix.assign(layers.size() + 1, 0);
    for (size_t i = 0; i < layers.size(); ++i) {
      sums.params.push_back(layers[i].params);
      sums.act_prefix[i + 1] = sums.act_prefix[i] + layers[i].activation_bytes;
      sums.bwd_top.push_back(sums.act_prefix[i + 1] + layers[i].recomputed_bytes);
    }
    Prepared& out = *prepared;
    map_.emplace(key, std::move(prepared));
    return out;
  }

  // The chunk boundaries the 3d planner's default partition (`even`) gives for (p, v).
  const std::vector<int>& Bounds(Prepared& prep, int p, int v) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prep.bounds.find({p, v});
    if (it != prep.bounds.end()) return it->second;
    std::vector<int> b = v > 1 ? EvenInterleavedPartition(prep.w, p, v) : EvenPartition(prep.w, p);
    return prep.bounds.emplace(std::make_pair(p, v), std::move(b)).first->second;
  }

 private:
  std::mutex mu_;
  std::map<WorkloadKey, std::unique_ptr<Prepared>> map_;
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

// Schedules are shared by every candidate of the same (schedule, p, m, v).
const std::vector<PipelineOp>& Schedule(const std::string& schedule, int p, int stage, int m,
                                        int v) {
  static std::mutex mu;
  static auto* cache =
      new std::map<std::tuple<std::string, int, int, int, int>, std::vector<PipelineOp>>();
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() > 65536) cache->clear();
  const auto key = std::make_tuple(schedule, p, stage, m, v);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  return cache->emplace(key, PipelineSchedule(schedule, p, stage, m, v)).first->second;
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

double SmallestGpuMemory(const Scenario& s) {
  double smallest = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
    smallest = std::min(smallest, s.cluster.GpuOfGroup(static_cast<int>(g)).memory_bytes);
  }
  return smallest;
}

// Whether every tensor group of `c` lies inside one server.
bool TensorGroupsInServers(const Scenario& s, const Candidate& c) {
  // Fast path: with t fastest, the groups are runs of t consecutive ranks starting at multiples
  // of t; every server starts at a multiple of its group's GPUs per server, so when t divides
  // each of those, no run crosses a server boundary.
  bool divides_all = true, fits_one = false;
  for (const ServerGroup& g : s.cluster.groups) {
    divides_all = divides_all && g.gpus_per_server % c.tensor == 0;
    fits_one = fits_one || g.gpus_per_server >= c.tensor;
  }
  if (!fits_one) return false;
  if (c.rank_order.front() == 't' && divides_all) return true;
  const ParallelLayout layout{c.tensor, c.pipeline, c.data, c.rank_order};
  for (int r = 0; r < c.data; ++r) {
    for (int st = 0; st < c.pipeline; ++st) {
      const std::vector<int> group = layout.TensorGroup(r, st);
      const int server = s.cluster.Locate(group.front()).server;
      for (int rank : group) {
        if (s.cluster.Locate(rank).server != server) return false;
      }
    }
  }
  return true;
}

}  // namespace

std::vector<Candidate> Enumerate(const Scenario& s, const SearchSpec& spec) {
  const int gpus = s.cluster.NumGpus();
  std::vector<Candidate> out;
  for (int t : spec.tensor) {
    for (int p : spec.pipeline) {
      const int d = DataDegree(gpus, t, p);
      std::vector<Zero> zeros;
      for (Zero z : spec.zero) {
        if (ZeroExists(z, t, p)) zeros.push_back(z);
      }
      const int above_one = (t > 1) + (p > 1) + (d > 1);
      const std::vector<std::string> orders =
          above_one >= 2 ? spec.rank_order : std::vector<std::string>{"tpd"};
      const std::vector<std::string> schedules =
          p > 1 ? spec.schedule : std::vector<std::string>{""};
      const std::vector<bool> sps = t > 1 ? spec.sequence_parallel : std::vector<bool>{false};
      for (int mb : spec.micro_batch) {
        for (const std::string& schedule : schedules) {
          const std::vector<int> vs =
              schedule == "interleaved" ? spec.virtual_stages : std::vector<int>{1};
          for (int v : vs) {
            for (Recompute r : spec.recompute) {
              for (bool sp : sps) {
                for (Zero z : zeros) {
                  for (const std::string& order : orders) {
                    Candidate c;
                    c.data = d;
                    c.tensor = t;
                    c.pipeline = p;
                    c.micro_batch = mb;
                    c.micro_batches = MicroBatches(s.training.global_batch, mb, d);
                    c.schedule = schedule;
                    c.virtual_stages = v;
                    c.recompute = r;
                    c.sequence_parallel = sp;
                    c.zero = z;
                    c.rank_order = order;
                    out.push_back(std::move(c));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

std::string_view Label(PruneReason r) {
  switch (r) {
    case PruneReason::kGpus:
      return "indivisible GPUs";
    case PruneReason::kBatch:
      return "indivisible batch";
    case PruneReason::kHeads:
      return "indivisible heads";
    case PruneReason::kLayers:
      return "too few layers";
    case PruneReason::kInterleave:
      return "interleave";
    case PruneReason::kTensorSpan:
      return "tensor group spans servers";
    case PruneReason::kDuplicate:
      return "duplicate";
    case PruneReason::kMemory:
      return "out of memory";
  }
  return "";
}

MemoryEstimate EstimateMemory(const Scenario& s, const Candidate& c) {
  Prepared& prep = Cache().Get(s, c.tensor, c.sequence_parallel, c.micro_batch, c.recompute);
  if (c.tensor * c.pipeline == 1) return DataParallelMemory(s, c, prep);
  const int p = c.pipeline, v = std::max(1, c.virtual_stages);
  const std::vector<int>& bounds = Cache().Bounds(prep, p, v);
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
    const double activations = StageActivationPeak(Schedule(schedule, p, st, m, v), chunks);
    if (states + activations > out.peak_bytes) {
      out.peak_bytes = states + activations;
      out.states_bytes = states;
      out.activations_bytes = activations;
      out.stage = st;
    }
  }
  return out;
}

std::optional<PruneReason> Prune(const Scenario& s, const SearchSpec& spec, const Candidate& c) {
  const int gpus = s.cluster.NumGpus();
  if (c.data <= 0 || DataDegree(gpus, c.tensor, c.pipeline) != c.data) return PruneReason::kGpus;
  if (c.micro_batches <= 0 ||
      MicroBatches(s.training.global_batch, c.micro_batch, c.data) != c.micro_batches) {
    return PruneReason::kBatch;
  }
  const ModelSpec& model = s.model;
  if (c.tensor > 1 && (!TensorKind(model.kind) || model.heads % c.tensor != 0 ||
                       (model.kv_heads > 0 && model.kv_heads % c.tensor != 0))) {
    return PruneReason::kHeads;
  }
  const long long chunks = static_cast<long long>(c.pipeline) * std::max(1, c.virtual_stages);
  if (c.pipeline > 1 && model.layers < chunks) return PruneReason::kLayers;
  if (c.schedule == "interleaved" && c.micro_batches % c.pipeline != 0) {
    return PruneReason::kInterleave;
  }
  if (c.tensor > 1 && !TensorGroupsInServers(s, c)) return PruneReason::kTensorSpan;
  // The same plan as another of the space: the distributed optimizer over one replica shards
  // nothing; a rank order equal to an earlier one of the list once the dimensions of size 1 are
  // dropped numbers every rank alike.
  if (c.zero == Zero::kDistributedOptimizer && c.data == 1 &&
      std::find(spec.zero.begin(), spec.zero.end(), Zero::kNone) != spec.zero.end()) {
    return PruneReason::kDuplicate;
  }
  const auto listed = std::find(spec.rank_order.begin(), spec.rank_order.end(), c.rank_order);
  const std::string mine = EffectiveOrder(c.rank_order, c.tensor, c.pipeline, c.data);
  for (auto order = spec.rank_order.begin(); order < listed; ++order) {
    if (EffectiveOrder(*order, c.tensor, c.pipeline, c.data) == mine) {
      return PruneReason::kDuplicate;
    }
  }
  if (EstimateMemory(s, c).peak_bytes > spec.memory_fraction * SmallestGpuMemory(s)) {
    return PruneReason::kMemory;
  }
  return std::nullopt;
}

}  // namespace stratasim::search
