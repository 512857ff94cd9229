#include "strategies/pipeline/pipeline.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/units.h"
#include "models/memory.h"
#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

// One entry of a lane's (replica's stage's) work list: a forward, a backward, or the optimizer
// step that ends batch `iteration`.
struct Item {
  enum Kind { kForward, kBackward, kStep } kind = kForward;
  int micro_batch = 0;  // index within the emitted sequence (spans batches for 2BW)
  int chunk = 0;
  int iteration = 0;
};

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

// Stage boundaries from explicit counts over the repeated blocks (see pipeline.h).
std::vector<int> CountedPartition(const Workload& w, const std::vector<int>& counts, int parts,
                                  OptionReader& opt) {
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

std::string ScheduleString(const std::vector<PipelineOp>& ops) {
  std::string out;
  for (const PipelineOp& op : ops) {
    if (!out.empty()) out += ' ';
    out += (op.forward ? "F" : "B") + std::to_string(op.micro_batch);
    if (op.chunk > 0) out += "c" + std::to_string(op.chunk);
  }
  return out;
}

Plan PlanPipeline(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec);
  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  const int p = opt.Int("stages", 0, 2, 1 << 20);
  if (p < 2) throw opt.Fail("stages", "is required: the number of pipeline stages (>= 2)");
  if (gpus % p != 0) {
    throw opt.Fail("stages", "stages (" + std::to_string(p) + ") must divide the GPU count (" +
                                 std::to_string(gpus) + ")");
  }
  const int d = gpus / p;
  const std::string schedule =
      opt.Choice("schedule", "gpipe", {"gpipe", "1f1b", "interleaved", "pipedream_2bw"});
  int v = 1;
  if (schedule == "interleaved") {
    v = opt.Int("virtual_stages", 2, 2, 1 << 20);
  } else if (spec.options.count("virtual_stages") > 0) {
    throw opt.Fail("virtual_stages", "only applies to schedule interleaved");
  }
  int m = opt.Int("micro_batches", 0, 1, 1 << 24);
  if (m == 0) {
    const long per = static_cast<long>(tr.micro_batch) * d;
    if (tr.global_batch % per != 0) {
      throw opt.Fail("micro_batches",
                     "default micro_batches = global_batch / (micro_batch x data-parallel "
                     "degree) = " +
                         std::to_string(tr.global_batch) + " / (" + std::to_string(tr.micro_batch) +
                         " x " + std::to_string(d) + ") is not an integer");
    }
    m = static_cast<int>(tr.global_batch / per);
  }
  if (schedule == "interleaved" && m % p != 0) {
    throw opt.Fail("micro_batches", "interleaved needs micro_batches (" + std::to_string(m) +
                                        ") to be a multiple of stages (" + std::to_string(p) +
                                        "), as Megatron-LM does");
  }
  std::string partition = "even";
  if (auto it = spec.options.find("partition"); it != spec.options.end()) {
    partition = it->second.text;
  }
  opt.Choice("partition", "even", {partition});  // any text; checked below
  opt.Finish();

  const Workload w = BuildWorkload(s.model, tr.micro_batch, tr.precision, tr.seed);
  const int chunks = p * v;
  std::vector<int> bounds;
  if (partition == "even") {
    if (chunks > static_cast<int>(w.layers.size())) {
      throw opt.Fail("stages", "the model has " + std::to_string(w.layers.size()) +
                                   " layers, fewer than stages x virtual_stages (" +
                                   std::to_string(chunks) + ")");
    }
    bounds = EvenPartition(w, chunks);
  } else {
    bounds = CountedPartition(w, ParseCounts(partition, opt), chunks, opt);
  }

  // Per global chunk: parameters and the bytes crossing into it.
  std::vector<double> chunk_params(chunks, 0), into_bytes(chunks, 0);
  const double fallback_bytes =
      tr.micro_batch * w.tokens_per_sample * s.model.hidden * BytesPerElement(tr.precision);
  for (int j = 0; j < chunks; ++j) {
    for (int i = bounds[j]; i < bounds[j + 1]; ++i) chunk_params[j] += w.layers[i].params;
    const double in = w.layers[bounds[j]].input_bytes;
    into_bytes[j] = in > 0 ? in : fallback_bytes;
  }
  std::vector<double> stage_params(p, 0);
  for (int j = 0; j < chunks; ++j) stage_params[j % p] += chunk_params[j];

  Plan plan{TaskGraph(gpus), static_cast<double>(m) * tr.micro_batch * d, w.tokens_per_sample, {}};
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  const int fwd_send = g.Stream("p2p_fwd_send");
  const int fwd_recv = g.Stream("p2p_fwd_recv");
  const int bwd_send = g.Stream("p2p_bwd_send");
  const int bwd_recv = g.Stream("p2p_bwd_recv");
  const int dp = g.Stream("dp");
  auto rank_of = [p](int replica, int stage) { return replica * p + stage; };

  const bool two_bw = schedule == "pipedream_2bw";
  for (int r = 0; r < d; ++r) {
    for (int st = 0; st < p; ++st) {
      TaskPlace at{rank_of(r, st), compute, 0, ""};
      AddModelStates(g, at, stage_params[st], tr.precision);
      if (two_bw) {
        // The second weight version PipeDream-2BW keeps for in-flight micro-batches.
        AddMemory(g, at, "weights_stashed", "weights",
                  AdamStateBytes(stage_params[st], tr.precision).weights);
      }
    }
  }

  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  // Work lists: one emission round per iteration with a flush; one round for all with 2BW.
  const int rounds = two_bw ? 1 : iterations;
  for (int round = 0; round < rounds; ++round) {
    const int seq = two_bw ? m * iterations : m;  // micro-batches in this round
    std::vector<std::vector<Item>> lanes(static_cast<size_t>(d) * p);
    for (int st = 0; st < p; ++st) {
      std::vector<Item> items;
      for (const PipelineOp& op : PipelineSchedule(schedule, p, st, seq, v)) {
        const int iteration = two_bw ? op.micro_batch / m : round;
        items.push_back(
            {op.forward ? Item::kForward : Item::kBackward, op.micro_batch, op.chunk, iteration});
        if (two_bw && !op.forward && op.micro_batch % m == m - 1) {
          items.push_back({Item::kStep, 0, 0, iteration});
        }
      }
      if (!two_bw) items.push_back({Item::kStep, 0, 0, round});
      for (int r = 0; r < d; ++r) lanes[r * p + st] = items;
    }
    std::vector<size_t> next(lanes.size(), 0);
    std::vector<TaskId> lane_last(lanes.size(), -1);
    const size_t slots = static_cast<size_t>(d) * seq * chunks;
    std::vector<TaskId> act_in(slots, -1), grad_in(slots, -1);
    auto slot = [&](int r, int mb, int j) {
      return (static_cast<size_t>(r) * seq + mb) * chunks + j;
    };

    auto ready = [&](int lane) {
      const Item& it = lanes[lane][next[lane]];
      const int r = lane / p, st = lane % p, j = it.chunk * p + st;
      if (it.kind == Item::kForward) return j == 0 || act_in[slot(r, it.micro_batch, j)] >= 0;
      if (it.kind == Item::kBackward) {
        return j == chunks - 1 || grad_in[slot(r, it.micro_batch, j)] >= 0;
      }
      for (int q = 0; q < d; ++q) {  // the step waits for every replica of the stage
        const int other = q * p + st;
        if (next[other] >= lanes[other].size()) return false;
        const Item& o = lanes[other][next[other]];
        if (o.kind != Item::kStep || o.iteration != it.iteration) return false;
      }
      return true;
    };

    auto emit = [&](int lane) {
      const Item& it = lanes[lane][next[lane]];
      const int r = lane / p, st = lane % p, j = it.chunk * p + st;
      const std::string prefix = "it" + std::to_string(it.iteration) + "/mb" +
                                 std::to_string(it.micro_batch) + "/" +
                                 (v > 1 ? "c" + std::to_string(it.chunk) + "/" : "");
      TaskPlace at{rank_of(r, st), compute, it.iteration, prefix};
      Task send, recv;
      send.iteration = recv.iteration = it.iteration;
      send.phase = recv.phase = Phase::kCommunication;
      send.category = recv.category = "pp";
      if (it.kind == Item::kForward) {
        TaskId last = j == 0 ? -1 : act_in[slot(r, it.micro_batch, j)];
        for (int i = bounds[j]; i < bounds[j + 1]; ++i) {
          last = AddForward(g, w.layers[i], tr.precision, at, last);
        }
        if (j + 1 < chunks) {
          const int dst = rank_of(r, (j + 1) % p);
          send.stream = fwd_send;
          recv.stream = fwd_recv;
          send.rank = at.rank;
          recv.rank = dst;
          send.name = prefix + "send_activation";
          recv.name = prefix + "recv_activation";
          send.deps = {last};
          act_in[slot(r, it.micro_batch, j + 1)] =
              g.AddTransfer(at.rank, dst, into_bytes[j + 1], send, recv).second;
        }
        ++next[lane];
      } else if (it.kind == Item::kBackward) {
        TaskId last = j == chunks - 1 ? -1 : grad_in[slot(r, it.micro_batch, j)];
        for (int i = bounds[j + 1] - 1; i >= bounds[j]; --i) {
          last = AddBackward(g, w.layers[i], tr.precision, at, last);
        }
        lane_last[lane] = last;
        if (j > 0) {
          const int dst = rank_of(r, (j - 1) % p);
          send.stream = bwd_send;
          recv.stream = bwd_recv;
          send.rank = at.rank;
          recv.rank = dst;
          send.name = prefix + "send_gradient";
          recv.name = prefix + "recv_gradient";
          send.deps = {last};
          grad_in[slot(r, it.micro_batch, j - 1)] =
              g.AddTransfer(at.rank, dst, into_bytes[j], send, recv).second;
        }
        ++next[lane];
      } else {
        // Flush reached on every replica of this stage: gradient all-reduce, then Adam.
        std::vector<TaskId> members(d, -1);
        if (d > 1) {
          Collective c;
          c.kind = CollectiveKind::kAllReduce;
          for (int q = 0; q < d; ++q) c.ranks.push_back(rank_of(q, st));
          c.bytes = stage_params[st] * TrainingBytesPerParam(tr.precision);
          c.dtype = tr.precision;
          Task member;
          member.stream = dp;
          member.iteration = it.iteration;
          member.phase = Phase::kCommunication;
          member.category = "dp";
          member.name =
              "it" + std::to_string(it.iteration) + "/allreduce/stage" + std::to_string(st);
          members = g.AddCollective(c, member);
          for (int q = 0; q < d; ++q) {
            if (lane_last[q * p + st] >= 0) g.AddDep(members[q], lane_last[q * p + st]);
          }
        }
        const int iteration = it.iteration;
        for (int q = 0; q < d; ++q) {
          const int other = q * p + st;
          Task step = AdamStepTask(stage_params[st], tr.precision);
          step.rank = rank_of(q, st);
          step.stream = compute;
          step.iteration = iteration;
          step.name = "it" + std::to_string(iteration) + "/adam";
          if (members[q] >= 0) step.deps.push_back(members[q]);
          if (lane_last[other] >= 0) step.deps.push_back(lane_last[other]);
          lane_last[other] = g.Add(std::move(step));
          ++next[other];
        }
      }
    };

    bool done = false;
    while (!done) {
      done = true;
      bool progress = false;
      for (int lane = 0; lane < static_cast<int>(lanes.size()); ++lane) {
        while (next[lane] < lanes[lane].size() && ready(lane)) {
          emit(lane);
          progress = true;
        }
        if (next[lane] < lanes[lane].size()) done = false;
      }
      if (!done && !progress) throw Error("pipeline schedule " + schedule + " deadlocked");
    }
  }

  std::string split;
  for (int j = 0; j < chunks; ++j) {
    split += (j ? "," : "") + std::to_string(bounds[j + 1] - bounds[j]);
  }
  plan.notes.push_back(std::to_string(p) + " stages x " + std::to_string(d) +
                       " data-parallel replica(s), schedule " + schedule +
                       (v > 1 ? " with " + std::to_string(v) + " virtual stages" : "") + ", " +
                       std::to_string(m) + " micro-batch(es) of " + std::to_string(tr.micro_batch));
  plan.notes.push_back("workload layers per " + std::string(v > 1 ? "chunk" : "stage") + ": " +
                       split + "; " + FormatBytes(into_bytes[chunks - 1]) +
                       " sent per boundary per micro-batch");
  char bubble[120];
  std::snprintf(bubble, sizeof bubble, "ideal bubble (p-1)/(v m + p-1) = %.3g",
                (p - 1.0) / (static_cast<double>(v) * m + p - 1));
  if (!two_bw) plan.notes.push_back(bubble);
  return plan;
}

}  // namespace stratasim
