// Pipeline schedules (the order of a stage's forwards and backwards) and stage partitions.
#include <algorithm>
#include <cmath>
#include <limits>

#include "strategies/pipeline/pipeline.h"

namespace stratasim {
namespace {

std::vector<PipelineOp> OneFOneB(int stages, int stage, int micro_batches) {
  std::vector<PipelineOp> ops;
  const int warmup = std::min(stages - stage - 1, micro_batches);
  for (int i = 0; i < warmup; ++i) ops.push_back({true, i, 0});
  for (int i = 0; i < micro_batches - warmup; ++i) {
    ops.push_back({true, warmup + i, 0});
    ops.push_back({false, i, 0});
  }
  for (int i = micro_batches - warmup; i < micro_batches; ++i) ops.push_back({false, i, 0});
  return ops;
}

// Megatron-LM, schedules.py, forward_backward_pipelining_with_interleaving: the k-th forward
// (backward) of a stage runs model chunk (k mod p v) / p (reversed for backward) on micro-batch
// (k / p v) p + k mod p; the warm-up runs (p - s - 1) 2 + (v - 1) p forwards (all of them when
// m == p).
PipelineOp InterleavedOp(int k, bool forward, int stages, int virtual_stages) {
  const int in_group = k % (stages * virtual_stages);
  int chunk = in_group / stages;
  if (!forward) chunk = virtual_stages - 1 - chunk;
  return {forward, (k / (stages * virtual_stages)) * stages + k % stages, chunk};
}

std::vector<PipelineOp> Interleaved(int stages, int stage, int micro_batches, int v) {
  const int total = micro_batches * v;
  int warmup = micro_batches == stages ? total : (stages - stage - 1) * 2 + (v - 1) * stages;
  warmup = std::min(warmup, total);
  std::vector<PipelineOp> ops;
  for (int k = 0; k < warmup; ++k) ops.push_back(InterleavedOp(k, true, stages, v));
  for (int k = 0; k < total - warmup; ++k) {
    ops.push_back(InterleavedOp(warmup + k, true, stages, v));
    ops.push_back(InterleavedOp(k, false, stages, v));
  }
  for (int k = total - warmup; k < total; ++k) ops.push_back(InterleavedOp(k, false, stages, v));
  return ops;
}

std::vector<int> ParseCounts(const std::string& text, OptionReader& opt) {
  std::vector<int> counts;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(at, comma - at);
    size_t used = 0;
    int n = -1;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // Allow spaces around the numbers.
    while (used < item.size() && item[used] == ' ') ++used;
    if (used != item.size() || n < 1) {
      throw opt.Fail("partition",
                     "must be \"even\" or comma-separated layer counts >= 1, like \"6,6,6,6\"");
    }
    counts.push_back(n);
    at = comma + 1;
  }
  return counts;
}

}  // namespace

std::vector<PipelineOp> PipelineSchedule(const std::string& schedule, int stages, int stage,
                                         int micro_batches, int virtual_stages) {
  if (schedule == "gpipe") {
    // GPipe (Huang et al. 2019, Fig. 2c): all forwards, then backwards last micro-batch first.
    std::vector<PipelineOp> ops;
    for (int i = 0; i < micro_batches; ++i) ops.push_back({true, i, 0});
    for (int i = micro_batches - 1; i >= 0; --i) ops.push_back({false, i, 0});
    return ops;
  }
  if (schedule == "interleaved") return Interleaved(stages, stage, micro_batches, virtual_stages);
  if (IsMerakSchedule(schedule)) return MerakSchedule(schedule, stages, stage, micro_batches);
  return OneFOneB(stages, stage, micro_batches);  // 1f1b, pipedream_2bw
}

std::vector<int> EvenPartition(const Workload& w, int parts) {
  const int n = static_cast<int>(w.layers.size());
  if (parts > n) {
    throw Error("cannot split " + std::to_string(n) + " layers into " + std::to_string(parts) +
                " pipeline stages (chunks)");
  }
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + w.layers[i].ForwardFlops();
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][j]: the smallest largest part when layers [0, j) form k parts; cut[k][j] the start
  // of the k-th part. Ties prefer later cuts, which keeps the embedding with the first blocks.
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> cut(parts + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= parts; ++k) {
    for (int j = k; j <= n; ++j) {
      for (int i = k - 1; i < j; ++i) {
        const double v = std::max(best[k - 1][i], prefix[j] - prefix[i]);
        if (v <= best[k][j] * (1 + 1e-12)) best[k][j] = v, cut[k][j] = i;
      }
    }
  }
  std::vector<int> bounds(parts + 1, n);
  for (int k = parts; k >= 1; --k) bounds[k - 1] = cut[k][bounds[k]];
  return bounds;
}

namespace {

// What an interleaved split is judged by: the largest stage (the sum of its chunks), then the
// largest chunk, then the spread of the stages (sum of squares).
struct StageCost {
  double max_stage = 0, max_chunk = 0, squares = 0;
  bool operator<(const StageCost& o) const {
    const double eps = 1e-12 * (max_stage + o.max_stage);
    if (std::abs(max_stage - o.max_stage) > eps) return max_stage < o.max_stage;
    if (std::abs(max_chunk - o.max_chunk) > eps) return max_chunk < o.max_chunk;
    return squares < o.squares - eps * eps;
  }
};

StageCost CostOf(const std::vector<int>& bounds, const std::vector<double>& prefix, int stages) {
  std::vector<double> stage(stages, 0);
  StageCost c;
  for (size_t j = 0; j + 1 < bounds.size(); ++j) {
    const double chunk = prefix[bounds[j + 1]] - prefix[bounds[j]];
    stage[j % stages] += chunk;
    c.max_chunk = std::max(c.max_chunk, chunk);
  }
  for (double x : stage) c.max_stage = std::max(c.max_stage, x), c.squares += x * x;
  return c;
}

}  // namespace

std::vector<int> EvenInterleavedPartition(const Workload& w, int stages, int virtual_stages) {
  const int parts = stages * virtual_stages;
  const int n = static_cast<int>(w.layers.size());
  if (parts > n) {
    throw Error("cannot split " + std::to_string(n) + " layers into " + std::to_string(parts) +
                " pipeline stages (chunks)");
  }
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + w.layers[i].ForwardFlops();
  // Start from cuts at equal shares of the FLOPs (each chunk non-empty), then move one boundary
  // by one layer at a time while that lowers the cost: chunk c sits on stage c mod p, so the
  // balance that matters is the stages' sums, which a chunk-wise min-max split ignores (a light
  // last chunk holding only the head leaves its stage idle while the others wait).
  std::vector<int> bounds(parts + 1, n);
  bounds[0] = 0;
  for (int k = 1; k < parts; ++k) {
    const double target = prefix[n] * k / parts;
    int at =
        static_cast<int>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
    if (at > 0 && target - prefix[at - 1] < prefix[at] - target) --at;
    bounds[k] = std::clamp(at, bounds[k - 1] + 1, n - (parts - k));
  }
  StageCost best = CostOf(bounds, prefix, stages);
  for (bool improved = true; improved;) {
    improved = false;
    for (int k = 1; k < parts; ++k) {
      for (int step : {-1, 1}) {
        const int moved = bounds[k] + step;
        if (moved <= bounds[k - 1] || moved >= bounds[k + 1]) continue;
        std::vector<int> trial = bounds;
        trial[k] = moved;
        const StageCost c = CostOf(trial, prefix, stages);
        if (c < best) best = c, bounds = trial, improved = true;
      }
    }
  }
  return bounds;
}

std::string ScheduleString(const std::vector<PipelineOp>& ops) {
  std::string out;
  for (const PipelineOp& op : ops) {
    if (!out.empty()) out += ' ';
    out += (op.recompute ? "R" : op.forward ? "F" : "B") + std::to_string(op.micro_batch);
    if (op.chunk > 0) out += "c" + std::to_string(op.chunk);
    if (op.checkpoint) out += '*';
  }
  return out;
}

std::pair<int, int> RepeatedBlocks(const Workload& w) {
  const int layers = static_cast<int>(w.layers.size());
  int first = -1, last = -1;
  for (int i = 0; i < layers; ++i) {
    if (!w.layers[i].recomputable) continue;
    if (first < 0) first = i;
    last = i;
  }
  bool contiguous = first >= 0;
  for (int i = first; contiguous && i <= last; ++i) contiguous = w.layers[i].recomputable;
  if (!contiguous) first = 0, last = layers - 1;
  return {first, last};
}

// Stage boundaries from explicit counts over the repeated blocks (see pipeline.h).
std::vector<int> PartitionFromCounts(const Workload& w, const std::string& text, int parts,
                                     OptionReader& opt) {
  const std::vector<int> counts = ParseCounts(text, opt);
  const int layers = static_cast<int>(w.layers.size());
  const auto [first, last] = RepeatedBlocks(w);
  const int blocks = last - first + 1;
  if (static_cast<int>(counts.size()) != parts) {
    throw opt.Fail("partition", "gives " + std::to_string(counts.size()) +
                                    " layer counts but the pipeline has " + std::to_string(parts) +
                                    " stages (chunks)");
  }
  int sum = 0;
  for (int c : counts) sum += c;
  if (sum != blocks) {
    throw opt.Fail("partition", "layer counts sum to " + std::to_string(sum) +
                                    " but the model has " + std::to_string(blocks) + " layers");
  }
  std::vector<int> bounds{0};
  int at = first;
  for (int i = 0; i + 1 < parts; ++i) bounds.push_back(at += counts[i]);
  bounds.push_back(layers);
  return bounds;
}

}  // namespace stratasim
