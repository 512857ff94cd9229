#include "strategies/gnn/gnn_training.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/units.h"
#include "models/graph_source.h"
#include "models/graphsage.h"
#include "models/memory.h"
#include "strategies/batching.h"
#include "strategies/gnn/batch_cache.h"
#include "strategies/gnn/feature_source.h"
#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

// Bytes per vertex id on the GPU (int64, as kernels/batch_reuse.h takes them), per kept-batch
// row index (int32) and per miss position (int32).
constexpr double kIdBytes = 8, kSlotBytes = 4;
// CUB's radix sort of 64-bit keys with 32-bit values: 8 passes of 8 bits, each reading and
// writing keys and values (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back", NVIDIA 2016; Adinets and Merrill 2022, Onesweep).
constexpr double kSortPasses = 8;

enum class Mode { kNoCache, kStaticCache, kReuse };

struct GnnSettings {
  Mode mode = Mode::kNoCache;
  int levels = 0;           // kReuse
  std::int64_t cached = 0;  // kStaticCache: vertices in the cache
};

void RequireGraphSage(const Scenario& s, const OptionReader& opt) {
  if (s.model.kind != "graphsage") {
    throw opt.Fail("",
                   "needs a sampled GNN (model kind graphsage), not model kind " + s.model.kind);
  }
}

std::int64_t GraphVertices(const Scenario& s) {
  const std::shared_ptr<const GraphSource> g = GraphOf(s.model, s.training.seed);
  return g ? g->vertices() : static_cast<std::int64_t>(s.model.graph_vertices);
}

// A compute task costed by its bytes (memory bound) on `at`.
Task Kernel(const TaskPlace& at, const std::string& name, double flops, double bytes) {
  KernelCost cost;
  cost.flops = flops;
  cost.bytes = bytes;
  Task t = KernelTask(at, name, OpKind::kElementwise, DType::kFP32, cost, Phase::kOther);
  t.category = "feature_load";
  return t;
}

TaskId Copy(TaskGraph& g, const TaskPlace& at, int stream, const std::string& name,
            CopyDirection dir, double bytes, std::vector<TaskId> deps) {
  Task t;
  t.kind = TaskKind::kCopy;
  t.copy = dir;
  t.rank = at.rank;
  t.stream = stream;
  t.iteration = at.iteration;
  t.phase = Phase::kOther;
  t.category = "feature_load";
  t.name = Name::Join(at.prefix, name);
  t.bytes = bytes;
  for (TaskId d : deps) {
    if (d >= 0) t.deps.push_back(d);
  }
  return g.Add(std::move(t));
}

// One binary search per query over `searched` sorted ids (kernels/batch_reuse.h): read the id,
// ceil(log2(searched + 1)) probes, write the row; then the prefix sum of the miss flags (read
// and write one int each) and the compaction pass (read flag and offset, write a position).
Task DetectionKernel(const TaskPlace& at, const std::string& name, double queries,
                     double searched) {
  const double probes = std::ceil(std::log2(searched + 1));
  const double bytes = queries * (kIdBytes + probes * kIdBytes + kSlotBytes) +
                       queries * 2 * kSlotBytes + queries * 3 * kSlotBytes;
  return Kernel(at, name, queries * probes, bytes);
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

Plan LowerGnn(const Scenario& s, const GnnSettings& o, const OptionReader& opt) {
  const TrainingSpec& tr = s.training;
  const ModelSpec& model = s.model;
  const int gpus = s.cluster.NumGpus();
  const int mbs = MicroBatchesPerReplica(
      tr, gpus, "GNN data parallelism over " + std::to_string(gpus) + " GPUs", opt);
  const DType act = StorageDType(tr.precision);
  const double row_bytes = model.feature_dim * 4.0;  // FP32 features on the host
  const double params = GraphSageParameterCount(model);

  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan.tokens_per_sample = 1;
  plan.fold = "full: every GPU samples its own mini-batches";
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  const int h2d = g.Stream("h2d");
  const int comm = g.Stream("comm");

  std::shared_ptr<const std::vector<std::int64_t>> cached;
  if (o.mode == Mode::kStaticCache) {
    const std::shared_ptr<const GraphSource> graph = GraphOf(model, tr.seed);
    std::vector<std::int64_t> ids;
    if (graph) {
      ids = graph->HighestDegree(o.cached);
    } else {
      // The uniform graph's vertices all have the same degree: any o.cached of them.
      ids.resize(static_cast<size_t>(o.cached));
      for (std::int64_t i = 0; i < o.cached; ++i) ids[static_cast<size_t>(i)] = i;
    }
    cached = std::make_shared<const std::vector<std::int64_t>>(std::move(ids));
  }
  const std::int64_t vertices = GraphVertices(s);
  FeatureSource source = FeatureSource::NoCache();
  if (o.mode == Mode::kStaticCache) source = FeatureSource::StaticCache(cached, vertices);
  if (o.mode == Mode::kReuse) source = FeatureSource::BatchReuse(o.levels, vertices);
  std::vector<FeatureSource> sources(gpus, source);
  // Batch reuse: per rank the device bytes of the batches kept (rows and sorted index), oldest
  // first, freed when they leave the window.
  std::vector<std::deque<double>> kept_bytes(gpus);
  GnnFigures fig;
  if (o.mode == Mode::kStaticCache) fig.cache_bytes = static_cast<double>(o.cached) * row_bytes;
  double measured_batches = 0;

  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  for (int it = 0; it < iterations; ++it) {
    const bool measured = it >= tr.warmup_iterations;
    std::vector<TaskId> backward_end(gpus, -1);
    for (int r = 0; r < gpus; ++r) {
      TaskPlace at{r, compute, it, ""};
      if (it == 0) {
        AddModelStates(g, at, params, tr.precision);
        if (o.mode == Mode::kStaticCache) {
          AddMemory(g, at, "feature_cache", "feature_cache", fig.cache_bytes);
        }
      }
      TaskId last = -1;
      for (int mb = 0; mb < mbs; ++mb) {
        at.prefix = "it" + std::to_string(it) + "/mb" + std::to_string(mb) + "/";
        const int index = (it * mbs + mb) * gpus + r;
        const std::shared_ptr<const GraphBatch> sampled =
            CachedGraphBatch(model, tr.micro_batch, tr.seed, index);
        const GraphBatch& batch = *sampled;
        const std::vector<std::int64_t> kept_before = sources[r].KeptVertices();
        const FeatureLookup f = sources[r].Next(batch.ids);
        const double n = static_cast<double>(f.vertices);
        const double hits = static_cast<double>(f.hits);
        const double misses = static_cast<double>(f.misses);
        if (measured) {
          fig.vertices_per_iteration += n;
          fig.hits_per_iteration += hits;
          fig.h2d_bytes_per_iteration += misses * row_bytes;
        }
        const double own_bytes = n * row_bytes + (o.mode == Mode::kReuse ? n * 3 * kSlotBytes : 0);
        const TaskId alloc =
            AddMemory(g, at, "batch_features",
                      o.mode == Mode::kReuse ? "feature_reuse" : "input_features", own_bytes);
        TaskId feature_ready = alloc;  // what the first forward kernel waits for
        TaskId gather_after = -1;      // what the gather of the hits waits for
        if (o.mode == Mode::kStaticCache && hits > 0) {
          gather_after = Copy(g, at, h2d, "cache_slots", CopyDirection::kHostToDevice,
                              hits * kSlotBytes, {alloc});
        }
        TaskId positions = -1;
        if (o.mode == Mode::kReuse) {
          const TaskId ids =
              Copy(g, at, h2d, "ids", CopyDirection::kHostToDevice, n * kIdBytes, {alloc});
          TaskId detect = ids;
          for (size_t k = 0; k < f.searched.size(); ++k) {
            Task t = DetectionKernel(at, "find_reuse/level" + std::to_string(k + 1),
                                     static_cast<double>(f.queries[k]),
                                     static_cast<double>(f.searched[k]));
            t.deps.push_back(ids);
            detect = g.Add(std::move(t));
          }
          if (!f.searched.empty()) {
            gather_after = detect;
            positions = Copy(g, at, h2d, "miss_positions", CopyDirection::kDeviceToHost,
                             misses * kSlotBytes, {detect});
          }
          double held = 0;
          for (std::int64_t k : kept_before) held += static_cast<double>(k) * (row_bytes + 12);
          fig.cache_bytes = std::max(fig.cache_bytes, held);
        }
        if (misses > 0) {
          feature_ready = Copy(g, at, h2d, "features", CopyDirection::kHostToDevice,
                               misses * row_bytes, {alloc, positions});
        }
        if (hits > 0) {
          // Read each hit's row and slot, write the row into this batch's buffer.
          Task gather = Kernel(at, "gather_hits", 0, hits * (2 * row_bytes + kSlotBytes));
          if (gather_after >= 0) gather.deps.push_back(gather_after);
          const TaskId gathered = g.Add(std::move(gather));
          if (misses == 0) feature_ready = gathered;
        }
        if (o.mode == Mode::kReuse) {
          // Sort this batch's ids with their rows: the search structure of the next batches.
          Task sort = Kernel(at, "sort_ids", 0, n * (kIdBytes + kSlotBytes) * 2 * kSortPasses);
          sort.deps.push_back(feature_ready);
          g.Add(std::move(sort));
          kept_bytes[r].push_back(own_bytes);
          if (static_cast<int>(kept_bytes[r].size()) > o.levels) {
            AddMemory(g, at, "drop_kept_batch", "feature_reuse", -kept_bytes[r].front());
            kept_bytes[r].pop_front();
          }
        }
        const Workload w = GraphSageWorkload(model, batch, act);
        TaskId after = feature_ready;
        for (const LayerCost& layer : w.layers) after = AddForward(g, layer, act, at, after);
        for (int i = static_cast<int>(w.layers.size()) - 1; i >= 0; --i) {
          after = AddBackward(g, w.layers[i], act, at, after);
        }
        last = after;
        if (o.mode != Mode::kReuse) AddMemory(g, at, "free_features", "input_features", -own_bytes);
        if (measured) measured_batches += 1;
      }
      backward_end[r] = last;
    }
    const std::vector<TaskId> reduced = AddGroupCollectives(
        g, {[&] {
          std::vector<int> all(gpus);
          for (int r = 0; r < gpus; ++r) all[r] = r;
          return all;
        }()},
        CollectiveKind::kAllReduce, params * TrainingBytesPerParam(tr.precision), act, comm, it,
        Name("it" + std::to_string(it) + "/allreduce"), backward_end);
    for (int r = 0; r < gpus; ++r) {
      Task step = AdamStepTask(params, tr.precision);
      step.rank = r;
      step.stream = compute;
      step.iteration = it;
      step.name = "it" + std::to_string(it) + "/adam";
      step.deps = {reduced[r]};
      g.Add(std::move(step));
    }
  }

  const double m = std::max(1, tr.measured_iterations);
  fig.vertices_per_iteration /= m;
  fig.hits_per_iteration /= m;
  fig.h2d_bytes_per_iteration /= m;
  plan.gnn = fig;
  plan.notes.push_back(std::to_string(mbs) + " micro-batch(es) of " +
                       std::to_string(tr.micro_batch) + " seed vertices per GPU per iteration");
  char line[160];
  std::snprintf(line, sizeof line, "%.0f input vertices per batch (mean of %.0f measured)",
                measured_batches > 0 ? fig.vertices_per_iteration * m / measured_batches : 0,
                measured_batches);
  plan.notes.push_back(line);
  plan.notes.push_back(
      "feature rows copied host-to-device: " + FormatBytes(fig.h2d_bytes_per_iteration) +
      " per iteration, hit rate " + Percent(fig.HitRate()) + ", cache/kept batches " +
      FormatBytes(fig.cache_bytes) + " per GPU");
  return plan;
}

}  // namespace

const OptionSpecs& GnnNoCacheOptions() {
  static const OptionSpecs options = {};
  return options;
}

const OptionSpecs& GnnStaticCacheOptions() {
  static const OptionSpecs options = {
      Number("cache_fraction", 0, 1,
             "fraction of the graph's vertices whose features every GPU caches, highest degree "
             "first (PaGraph fills the GPU memory left after training)")
          .Default("0.1"),
      FreeText("cache_size",
               "the cache as bytes of feature rows (\"200MB\") instead of cache_fraction; none: "
               "cache_fraction sizes it")
          .Default("none"),
  };
  return options;
}

const OptionSpecs& BrGraphOptions() {
  static const OptionSpecs options = {
      Integer("levels", 1, 2,
              "1: reuse batch t-1's features kept on the GPU; 2: also a second buffer for t-2, "
              "searched for level 1's misses")
          .Default("1"),
  };
  return options;
}

Plan PlanGnnNoCache(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, GnnNoCacheOptions());
  opt.Finish();
  RequireGraphSage(s, opt);
  return LowerGnn(s, GnnSettings{}, opt);
}

Plan PlanGnnStaticCache(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, GnnStaticCacheOptions());
  const double fraction = opt.Double("cache_fraction");
  const std::string size = opt.Text("cache_size");
  opt.Finish();
  RequireGraphSage(s, opt);
  GnnSettings o;
  o.mode = Mode::kStaticCache;
  const std::int64_t vertices = GraphVertices(s);
  const double row_bytes = s.model.feature_dim * 4.0;
  if (size != "none") {
    if (opt.Given("cache_fraction")) {
      throw opt.Fail("cache_size", "give cache_fraction or cache_size, not both");
    }
    double bytes = 0;
    try {
      bytes = ParseBytes(size);
    } catch (const UnitError& e) {
      throw opt.Fail("cache_size", e.what());
    }
    if (!(bytes > 0)) throw opt.Fail("cache_size", "must be greater than 0 bytes, or none");
    if (bytes > static_cast<double>(vertices) * row_bytes) {
      throw opt.Fail("cache_size",
                     "more than the whole feature table (" + std::to_string(vertices) +
                         " vertices x " + FormatBytes(row_bytes) + " = " +
                         FormatBytes(static_cast<double>(vertices) * row_bytes) + ")");
    }
    o.cached = static_cast<std::int64_t>(bytes / row_bytes);
  } else {
    o.cached = static_cast<std::int64_t>(std::floor(fraction * static_cast<double>(vertices)));
  }
  return LowerGnn(s, o, opt);
}

Plan PlanBrGraph(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, BrGraphOptions());
  GnnSettings o;
  o.mode = Mode::kReuse;
  o.levels = opt.Int("levels");
  opt.Finish();
  RequireGraphSage(s, opt);
  return LowerGnn(s, o, opt);
}

}  // namespace stratasim
