// The analytic estimate of a candidate plan (analytic.h): the simulator's own costs, composed in
// closed form instead of simulated with contention.
//
// Where each term comes from:
//   kernels        core/compute_model.h ComputeTaskSeconds of each op's kernels, built as the
//                  lowering builds them (strategies/layer_tasks.h KernelTask) from the workload
//                  kind 3d plans (strategies/pipeline/stage_workload.h PipelineStageWorkload),
//                  recomputation included: what TensorLayerEmitter (strategies/tensor/tp_layer.h)
//                  and DDP's AddForward/AddBackward emit.
//   tp             Megatron's f/g collectives where TensorLayerEmitter emits them (an all-reduce
//                  after each row-parallel GEMM forward and each column-parallel input gradient;
//                  a reduce-scatter and an all-gather instead with sequence parallelism), on the
//                  compute stream, each priced by the executor's tuner (sim/collectives/
//                  lowering.h ChooseCollective + PredictCollectiveSeconds, or the calibration's
//                  measured time, as sim/executor.cpp Lower does) for the stage's tensor group.
//   partition      strategies/pipeline/pipeline.h EvenPartition / EvenInterleavedPartition, as
//                  kind 3d's default partition "even".
//   pp             the boundary tensor (the next chunk's first layer's input_bytes, 1/t of it
//                  with Megatron's scatter/gather, then all-gathered by the receiving group on
//                  its compute stream: pipeline_lowering.cpp Transfer/Receive) as one latency plus
//                  bytes over the link between the two stages' GPUs (sim/collectives/group_view.h
//                  MakeGroupView: the server's GPU-to-GPU hop or the NIC path).
//   dp             each chunk's gradient buckets (strategies/gradient_buckets.h, 25 MiB as kind
//                  3d's and DDP's default bucket_size) all-reduced (reduce-scattered with a
//                  distributed optimizer or ZeRO) over the stage's gradient group
//                  (strategies/parallel_layout.h GradientGroup) one after another on the "dp"
//                  stream, each launched once the last micro-batch's backward has produced it.
//   optimizer      strategies/layer_tasks.h AdamStepTask over the stage's parameters (sharded
//                  over d with a distributed optimizer or ZeRO), timed by the compute model.
//
// Not modelled (the simulation's job): contention of any two transfers on a link, stragglers,
// the per-replica GPU kinds of a heterogeneous cluster (each stage is costed on the kind of
// replica 0's GPUs), options the search does not vary (context parallelism, tp_comm_overlap,
// dp_overlap false, explicit partitions).
#include "search/analytic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "core/compute_model.h"
#include "core/error.h"
#include "models/memory.h"
#include "sim/collectives/group_view.h"
#include "sim/collectives/lowering.h"
#include "strategies/distributed_optimizer.h"
#include "strategies/gradient_buckets.h"
#include "strategies/layer_tasks.h"
#include "strategies/parallel_layout.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/stage_workload.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim::search {
namespace {

// The tensor-parallel collective kinds, indexing per-layer counts.
enum TpKind { kTpAllGather = 0, kTpAllReduce = 1, kTpReduceScatter = 2, kTpKinds = 3 };
using TpCounts = std::array<double, kTpKinds>;

// Default gradient bucket cap of kinds 3d, ddp, zero1 and zero2 (their option bucket_size,
// PyTorch's bucket_cap_mb = 25): the candidates never set it.
constexpr double kBucketCapBytes = 25.0 * 1024 * 1024;

// The FLOPs core/metrics.cpp counts for MFU from one compute task (ModelFlops there): a fused
// attention kernel counts the full s x s products, 4 b s^2 h forward and 8 b s^2 h backward
// (Narayanan et al. 2021, §5.1), whatever its causal mask skips.
double ModelFlopsOf(const Task& t) {
  if (t.op != OpKind::kFusedAttention || !t.gemm.known()) return t.flops;
  const double products = 2 * t.gemm.batch * t.gemm.m * t.gemm.n * t.gemm.k;
  return (t.phase == Phase::kBackward ? 4 : 2) * products;
}

// Per layer, per micro-batch, on one GPU: kernel seconds and the tensor-parallel collectives,
// as prefix sums over the layers (entry i: layers [0, i)) so that a chunk's sum is O(1).
struct Profile {
  Workload w;
  std::vector<double> fwd_s, bwd_s;  // kernels; the backward includes the recomputation
  std::vector<TpCounts> fwd_tp, bwd_tp;
  std::vector<double> model_flops;  // forward + backward model FLOPs (metrics' count)
  std::vector<double> params;
  double tp_bytes = 0;  // one tensor-parallel collective: b s h elements (TensorLayerEmitter)
};

void AddCounts(TpCounts& into, const TpCounts& more) {
  for (int k = 0; k < kTpKinds; ++k) into[k] += more[k];
}

// Builds the profile of workload `w` on `gpu` (sequence parallelism `sp`, tensor degree `t`).
void FillProfile(Profile& p, const Scenario& s, const GpuSpec& gpu, int t, bool sp) {
  const DType dtype = StorageDType(s.training.precision);
  const size_t n = p.w.layers.size();
  p.fwd_s.assign(n + 1, 0);
  p.bwd_s.assign(n + 1, 0);
  p.fwd_tp.assign(n + 1, TpCounts{});
  p.bwd_tp.assign(n + 1, TpCounts{});
  p.model_flops.assign(n + 1, 0);
  p.params.assign(n + 1, 0);
  auto kernel = [&](const OpCost& op, const KernelCost& cost, Phase phase, double* flops) {
    if (cost.empty()) return 0.0;
    const Task task = KernelTask(TaskPlace{}, op.name, op.kind, dtype, cost, phase);
    if (flops) *flops += ModelFlopsOf(task);
    return ComputeTaskSeconds(task, gpu, s.simulation);
  };
  const bool tp = t > 1;
  for (size_t i = 0; i < n; ++i) {
    const LayerCost& L = p.w.layers[i];
    double fwd = 0, bwd = 0, flops = 0;
    TpCounts ftp{}, btp{};
    // TensorLayerEmitter::OpForward: [all-gather (sp, column-parallel)] kernel [all-reduce or
    // reduce-scatter (row-parallel)]; Recompute re-runs the recomputed ops' OpForward before
    // the backward (Phase::kRecompute: no model FLOPs).
    auto op_forward = [&](const OpCost& op, TpCounts& counts, bool count_flops, Phase phase) {
      if (tp && sp && IsColumnParallel(op)) counts[kTpAllGather] += 1;
      const double s_ = kernel(op, op.forward, phase, count_flops ? &flops : nullptr);
      if (tp && IsRowParallel(op)) counts[sp ? kTpReduceScatter : kTpAllReduce] += 1;
      return s_;
    };
    for (const OpCost& op : L.ops) {
      if (op.forward.empty()) continue;
      fwd += op_forward(op, ftp, true, Phase::kForward);
      if (op.recomputed) bwd += op_forward(op, btp, false, Phase::kRecompute);
    }
    // BackwardOps/BackwardInput in reverse op order: [all-gather (sp, row-parallel)] input
    // gradient [all-reduce or reduce-scatter (column-parallel)], then the weight gradient.
    for (const OpCost& op : L.ops) {
      if (tp && sp && IsRowParallel(op)) btp[kTpAllGather] += 1;
      bwd += kernel(op, op.backward_input, Phase::kBackward, &flops);
      if (tp && IsColumnParallel(op)) btp[sp ? kTpReduceScatter : kTpAllReduce] += 1;
      bwd += kernel(op, op.backward_weight, Phase::kBackward, &flops);
    }
    p.fwd_s[i + 1] = p.fwd_s[i] + fwd;
    p.bwd_s[i + 1] = p.bwd_s[i] + bwd;
    p.fwd_tp[i + 1] = p.fwd_tp[i];
    AddCounts(p.fwd_tp[i + 1], ftp);
    p.bwd_tp[i + 1] = p.bwd_tp[i];
    AddCounts(p.bwd_tp[i + 1], btp);
    p.model_flops[i + 1] = p.model_flops[i] + flops;
    p.params[i + 1] = p.params[i] + L.params;
  }
  p.tp_bytes = static_cast<double>(s.training.micro_batch) * s.model.sequence * s.model.hidden *
               BytesPerElement(dtype);
}

// A chunk partition of a profile and each chunk's gradient buckets (layer indices global).
struct Partition {
  std::vector<int> bounds;
  std::vector<std::vector<GradientBucket>> buckets;
};

// One stage chunk's figures for a candidate, per micro-batch.
struct Chunk {
  double fwd_s = 0, bwd_s = 0;  // everything on the compute stream
  double fwd_kernel_s = 0, bwd_kernel_s = 0;
  double tp_s = 0;                            // tensor-parallel collectives (forward + backward)
  double gather_fwd_s = 0, gather_bwd_s = 0;  // scatter/gather's all-gather of the boundary
  double send_s = 0;                          // the boundary transfer into the next chunk
};

}  // namespace

struct Estimator::Impl {
  explicit Impl(const Scenario& scenario) : s(scenario) {}

  const Scenario& s;

  using ProfileKey = std::tuple<int, bool, int, Recompute, std::string>;
  std::map<ProfileKey, Profile> profiles;
  std::map<std::tuple<ProfileKey, int, int>, Partition> partitions;
  // Group shapes (ShapeOf), numbered; collective and transfer seconds by (kind, bytes, dtype,
  // group shape number).
  std::map<std::vector<int>, int> shapes;
  std::map<std::tuple<int, double, int, int>, double> collectives;

  // The members of a collective and the number of their shape.
  struct Group {
    int shape = -1;
    std::vector<int> ranks;
  };
  Group GroupOf(std::vector<int> ranks) {
    Group g;
    g.shape = shapes.emplace(ShapeOf(ranks), static_cast<int>(shapes.size())).first->second;
    g.ranks = std::move(ranks);
    return g;
  }

  const Profile& ProfileOf(const Candidate& c, const GpuSpec& gpu) {
    const ProfileKey key{c.tensor, c.sequence_parallel, c.micro_batch, c.recompute, gpu.name};
    auto it = profiles.find(key);
    if (it != profiles.end()) return it->second;
    // The scenario the candidate's strategy entry runs in (core/scenario.h ScenarioFor with
    // ToStrategySpec's own micro_batch and recompute).
    Scenario mine = s;
    mine.model.recompute = c.recompute;
    mine.training.micro_batch = c.micro_batch;
    PipelineShape shape;
    shape.p = c.pipeline;
    shape.t = c.tensor;
    shape.sp = c.sequence_parallel;
    Profile p;
    p.w = PipelineStageWorkload(mine, shape);
    FillProfile(p, mine, gpu, c.tensor, c.sequence_parallel);
    return profiles.emplace(key, std::move(p)).first->second;
  }

  const Partition& PartitionOf(const Candidate& c, const Profile& prof, const GpuSpec& gpu,
                               double grad_bytes) {
    const ProfileKey pk{c.tensor, c.sequence_parallel, c.micro_batch, c.recompute, gpu.name};
    const int v = c.schedule == "interleaved" ? c.virtual_stages : 1;
    const auto key = std::make_tuple(pk, c.pipeline, v);
    auto it = partitions.find(key);
    if (it != partitions.end()) return it->second;
    Partition part;
    const int n = static_cast<int>(prof.w.layers.size());
    if (c.pipeline * v == 1) {
      part.bounds = {0, n};
    } else {
      part.bounds = v > 1 ? EvenInterleavedPartition(prof.w, c.pipeline, v)
                          : EvenPartition(prof.w, c.pipeline);
    }
    for (size_t j = 0; j + 1 < part.bounds.size(); ++j) {
      const std::vector<LayerCost> layers(prof.w.layers.begin() + part.bounds[j],
                                          prof.w.layers.begin() + part.bounds[j + 1]);
      std::vector<GradientBucket> b = MakeGradientBuckets(layers, grad_bytes, kBucketCapBytes);
      for (GradientBucket& x : b) x.ready_after_layer += part.bounds[j];
      part.buckets.push_back(std::move(b));
    }
    return partitions.emplace(key, std::move(part)).first->second;
  }

  // The tuner's view of a group, once per shape (the executor's ViewOf keeps one per group).
  std::map<int, sim::GroupView> views;
  const sim::GroupView& ViewOf(const Group& g) {
    auto it = views.find(g.shape);
    if (it == views.end())
      it = views.emplace(g.shape, sim::MakeGroupView(s.cluster, g.ranks)).first;
    return it->second;
  }

  // Where `ranks` sit, relative to the first: per member its server group, GPU index and
  // server offset. Groups of one shape get one GroupView from MakeGroupView on a cluster whose
  // servers of a group are alike, so the tuner's answer is shared.
  std::vector<int> ShapeOf(const std::vector<int>& ranks) const {
    std::vector<int> shape;
    shape.reserve(ranks.size() * 3);
    const int first = s.cluster.Locate(ranks.front()).server;
    for (int r : ranks) {
      const GpuLocation at = s.cluster.Locate(r);
      shape.push_back(at.group);
      shape.push_back(at.local);
      shape.push_back(at.server - first);
    }
    return shape;
  }

  // Seconds of collective `kind` of `bytes` over `ranks`, alone on the cluster, as the
  // executor takes it (sim/executor.cpp Lower): the calibration's measured time when it has
  // one for the kind, size and GPU kind, else the tuner's choice and its alpha-beta time.
  double CollectiveSeconds(CollectiveKind kind, double bytes, DType dtype, const Group& group) {
    const std::vector<int>& ranks = group.ranks;
    if (ranks.size() < 2 || bytes <= 0) return 0;
    const auto key =
        std::make_tuple(static_cast<int>(kind), bytes, static_cast<int>(dtype), group.shape);
    auto it = collectives.find(key);
    if (it != collectives.end()) return it->second;
    Collective c;
    c.kind = kind;
    c.ranks = ranks;
    c.bytes = bytes;
    c.dtype = dtype;
    double seconds = -1;
    if (s.simulation.calibration) {
      const CollectiveCalibration* measured = s.simulation.calibration->FindCollective(
          kind, static_cast<int>(ranks.size()), s.cluster.GpuOfRank(ranks[0]).name);
      if (measured) seconds = measured->Seconds(bytes);
    }
    if (seconds < 0) {
      const sim::GroupView& view = ViewOf(group);
      const sim::CollectiveChoice choice = sim::ChooseCollective(c, view, s.simulation.collectives);
      seconds = sim::PredictCollectiveSeconds(c, view, choice);
    }
    collectives.emplace(key, seconds);
    return seconds;
  }

  // A point-to-point transfer of `bytes` from `from` to `to`: the route's latency, then the
  // bytes over its narrowest link, alone (the executor's Transfer: a latency timer, then a
  // SimGrid communication), with the tuner's view of the hop (group_view.h).
  double TransferSeconds(int from, int to, double bytes) {
    if (from == to || bytes <= 0) return 0;
    const Group pair = GroupOf({from, to});
    // Kind -1: not a collective.
    const auto key = std::make_tuple(-1, bytes, 0, pair.shape);
    auto it = collectives.find(key);
    if (it != collectives.end()) return it->second;
    const sim::GroupView& view = ViewOf(pair);
    const double seconds = view.num_servers <= 1 ? view.intra_latency_s + bytes / view.intra_Bps
                                                 : view.inter_latency_s + bytes / view.inter_Bps;
    collectives.emplace(key, seconds);
    return seconds;
  }

  double AdamSeconds(double params, const GpuSpec& gpu) {
    if (params <= 0) return 0;
    return ComputeTaskSeconds(AdamStepTask(params, s.training.precision), gpu, s.simulation);
  }

  double PeakSum() const {
    // MFU's denominator (cli/run_scenario.cpp MetricsInputFor): the dense peak of the training
    // precision's storage type, summed over every GPU.
    const DType peak = StorageDType(s.training.precision);
    double sum = 0;
    for (int gi = 0; gi < static_cast<int>(s.cluster.groups.size()); ++gi) {
      const GpuSpec& gpu = s.cluster.GpuOfGroup(gi);
      const ServerGroup& g = s.cluster.groups[gi];
      sum += (gpu.Supports(peak) ? gpu.Peak(peak) : 0.0) * g.count * g.gpus_per_server;
    }
    return sum;
  }

  Estimate Pipelined(const Candidate& c);
  Estimate DataParallel(const Candidate& c);
};

namespace {

// Per-stage sequential stream: jobs (ready time, seconds) run in ready order, one at a time.
// Returns when the last ends (`free_at` if none).
double RunStream(std::vector<std::pair<double, double>> jobs, double free_at) {
  std::sort(jobs.begin(), jobs.end());
  for (const auto& [ready, seconds] : jobs) free_at = std::max(free_at, ready) + seconds;
  return free_at;
}

}  // namespace

// Kind 3d: the pipeline of p stages (p x v chunks) of tensor groups, d replicas.
Estimate Estimator::Impl::Pipelined(const Candidate& c) {
  const int p = c.pipeline, t = c.tensor, d = c.data, m = c.micro_batches;
  const int v = c.schedule == "interleaved" ? c.virtual_stages : 1;
  const int chunks = p * v;
  const ParallelLayout layout{t, p, d, c.rank_order};
  const DType precision = s.training.precision;
  const DType storage = StorageDType(precision);
  const bool shard = c.zero == Zero::kDistributedOptimizer && d > 1;
  DataParallelOptimizer optimizer;
  optimizer.distributed = c.zero == Zero::kDistributedOptimizer;
  const double grad_bytes = optimizer.GradBytes(precision);

  // Each stage on the GPU kind of its replica-0 GPUs.
  std::vector<const GpuSpec*> gpu(p);
  std::vector<const Profile*> prof(p);
  for (int st = 0; st < p; ++st) {
    gpu[st] = &s.cluster.GpuOfRank(layout.Rank(0, st, 0));
    prof[st] = &ProfileOf(c, *gpu[st]);
  }
  const Partition& part = PartitionOf(c, *prof[0], *gpu[0], grad_bytes);
  const std::vector<int>& bounds = part.bounds;
  const Workload& w0 = prof[0]->w;

  // Megatron's scatter/gather (pipeline_lowering.cpp gather_): t > 1 without sequence
  // parallelism sends 1/t of the boundary and all-gathers it at the receiver.
  const bool gather = t > 1 && !c.sequence_parallel;
  const double send_fraction = gather ? 1.0 / t : 1.0;
  const double fallback_bytes = static_cast<double>(c.micro_batch) * w0.tokens_per_sample *
                                s.model.hidden * BytesPerElement(storage);
  auto into_bytes = [&](int j) {
    const double in = w0.layers[bounds[j]].input_bytes;
    return in > 0 ? in : fallback_bytes;
  };

  // Per stage: one tensor-parallel collective of each kind over its replica-0 tensor group.
  const std::array<CollectiveKind, kTpKinds> tp_kinds = {
      CollectiveKind::kAllGather, CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter};
  std::vector<TpCounts> tp_one(p, TpCounts{});
  if (t > 1) {
    for (int st = 0; st < p; ++st) {
      const Group group = GroupOf(layout.TensorGroup(0, st));
      for (int q = 0; q < kTpKinds; ++q) {
        tp_one[st][q] = CollectiveSeconds(tp_kinds[q], prof[st]->tp_bytes, storage, group);
      }
    }
  }
  // Seconds of the tensor-parallel collectives `counts` (prefix sums) count over [a, b).
  auto tp_seconds = [&](int st, const std::vector<TpCounts>& counts, int a, int b) {
    double sec = 0;
    for (int q = 0; q < kTpKinds; ++q) sec += (counts[b][q] - counts[a][q]) * tp_one[st][q];
    return sec;
  };

  std::vector<Chunk> ch(chunks);
  for (int j = 0; j < chunks; ++j) {
    const int st = j % p;
    const Profile& P = *prof[st];
    const Group group = gather ? GroupOf(layout.TensorGroup(0, st)) : Group{};
    const double tp_f = tp_seconds(st, P.fwd_tp, bounds[j], bounds[j + 1]);
    const double tp_b = tp_seconds(st, P.bwd_tp, bounds[j], bounds[j + 1]);
    Chunk& x = ch[j];
    x.fwd_kernel_s = P.fwd_s[bounds[j + 1]] - P.fwd_s[bounds[j]];
    x.bwd_kernel_s = P.bwd_s[bounds[j + 1]] - P.bwd_s[bounds[j]];
    x.tp_s = tp_f + tp_b;
    if (gather && j > 0) {
      x.gather_fwd_s = CollectiveSeconds(CollectiveKind::kAllGather, into_bytes(j), storage, group);
    }
    if (gather && j + 1 < chunks) {
      x.gather_bwd_s =
          CollectiveSeconds(CollectiveKind::kAllGather, into_bytes(j + 1), storage, group);
    }
    x.fwd_s = x.fwd_kernel_s + tp_f + x.gather_fwd_s;
    x.bwd_s = x.bwd_kernel_s + tp_b + x.gather_bwd_s;
    if (j + 1 < chunks) {
      x.send_s = TransferSeconds(layout.Rank(0, st, 0), layout.Rank(0, (j + 1) % p, 0),
                                 into_bytes(j + 1) * send_fraction);
    }
  }

  // Per stage: forward and backward per micro-batch (all its chunks).
  std::vector<double> F(p, 0), B(p, 0), kernel(p, 0), tp(p, 0), gathers(p, 0);
  for (int j = 0; j < chunks; ++j) {
    const int st = j % p;
    F[st] += ch[j].fwd_s;
    B[st] += ch[j].bwd_s;
    kernel[st] += ch[j].fwd_kernel_s + ch[j].bwd_kernel_s;
    tp[st] += ch[j].tp_s;
    gathers[st] += ch[j].gather_fwd_s + ch[j].gather_bwd_s;
  }
  std::vector<double> C(p);
  for (int st = 0; st < p; ++st) C[st] = F[st] + B[st];
  const int k = static_cast<int>(std::max_element(C.begin(), C.end()) - C.begin());
  double sum_C = 0, sum_F = 0, sum_B = 0, sum_x = 0;
  for (int st = 0; st < p; ++st) sum_C += C[st], sum_F += F[st], sum_B += B[st];
  // The boundaries the first micro-batch's forward (and the last one's backward) crosses
  // between stages: chunks 0..p-1 (stage s to s + 1).
  for (int b = 0; b + 1 < p; ++b) sum_x += ch[b].send_s;

  // The forward-backward span of one iteration, closed forms per schedule.
  double span = 0, p2p = 0;  // p2p: the transfers on the critical path
  if (p == 1) {
    span = m * C[0];
  } else if (c.schedule == "gpipe") {
    // All forwards, then all backwards (Huang et al. 2019): the first micro-batch fills the
    // stages, the slowest stage paces the other m - 1, in each direction; no transfer waits in
    // between (each stage sends and goes on).
    const double max_F = *std::max_element(F.begin(), F.end());
    const double max_B = *std::max_element(B.begin(), B.end());
    p2p = 2 * sum_x;
    span = sum_F + (m - 1) * max_F + sum_B + (m - 1) * max_B + p2p;
  } else if (v == 1) {
    // 1F1B (PipeDream-Flush): one micro-batch's forward and backward through every stage,
    // plus m - 1 cycles of the slowest stage (uniform stages: (m + p - 1)(F + B), the bubble
    // (p - 1) / (m + p - 1); Narayanan et al. 2021, SC, §2.2.1). In the steady state stage s
    // runs B(i - 1) then F(i + p - s - 1), which stage s + 1 needs next after its own
    // F + B: that loop crosses the boundary twice, so a cycle lasts at least
    // C_s + 2 x_s (C = F + B, x the boundary transfer). Stage 0 has m - p such cycles (the
    // others run their forwards ahead in the warm-up), so the loop binds m - p cycles.
    double loop = C[k];
    for (int b = 0; b + 1 < p; ++b) loop = std::max(loop, C[b] + 2 * ch[b].send_s);
    const int looped = std::max(0, m - p);
    p2p = 2 * sum_x + looped * (loop - C[k]);
    span = sum_C + (m - 1) * C[k] + p2p;
  } else {
    // Megatron-LM's interleaved 1F1B (schedules.py, forward_backward_pipelining_with_
    // interleaving): its warm-up runs (v - 1) p forwards beyond 1F1B's, so the slowest stage k,
    // once started, never waits for a later stage's backward as in 1F1B; what it waits for is
    // the first micro-batch's chunk 0 reaching it and, at the end, the last micro-batch's chunk-0
    // backward draining to stage 0: the other stages' first chunk, forward and backward (equal
    // chunks: (p - 1) C / v, the bubble (p - 1) / (v m + p - 1); Narayanan et al. 2021, SC,
    // §2.2.2). The steady state has slack for the transfers; the chunk-0 boundaries of the
    // first and last micro-batch are on the path.
    p2p = 2 * sum_x;
    double fill_drain = 0;
    for (int j = 0; j < p; ++j) fill_drain += j == k ? 0 : ch[j].fwd_s + ch[j].bwd_s;
    span = m * C[k] + fill_drain + p2p;
  }

  // The data-parallel gradient reduction and the step, per stage (pipeline_lowering.cpp
  // GradientsFinal/ReduceChunk/EmitStep). The last micro-batch's backward drains through the
  // chunks pv - 1 .. 0; chunk 0's ends the span, so chunk j's ends at
  // end[j] = end[j - 1] - B(j - 1) - x(j - 1).
  std::vector<double> end(chunks, span);
  for (int j = 1; j < chunks; ++j) end[j] = end[j - 1] - ch[j - 1].bwd_s - ch[j - 1].send_s;
  double finish = 0, step_max = 0, gather_params_max = 0;
  for (int st = 0; st < p; ++st) {
    const Profile& P = *prof[st];
    const Group group = GroupOf(layout.GradientGroup(st, 0));
    std::vector<std::pair<double, double>> jobs;
    double stage_params = 0;
    for (int j = st; j < chunks; j += p) {
      stage_params += P.params[bounds[j + 1]] - P.params[bounds[j]];
      if (d < 2) continue;
      auto backward_from = [&](int layer) {  // layers [layer, chunk end) backward
        return P.bwd_s[bounds[j + 1]] - P.bwd_s[layer] +
               tp_seconds(st, P.bwd_tp, layer, bounds[j + 1]);
      };
      const double start = end[j] - ch[j].bwd_s + ch[j].gather_bwd_s;
      for (const GradientBucket& bucket : part.buckets[j]) {
        const double seconds =
            CollectiveSeconds(shard ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                              bucket.params * grad_bytes, optimizer.GradDType(precision), group);
        jobs.push_back({start + backward_from(bucket.ready_after_layer), seconds});
      }
    }
    const double reduced = RunStream(std::move(jobs), 0);
    const double step_s = AdamSeconds(stage_params / (shard ? d : 1), *gpu[st]);
    double stage_end = std::max(end[st], reduced) + step_s;
    step_max = std::max(step_max, step_s);
    if (shard) {
      // The distributed optimizer's parameter all-gathers, bucket by bucket after the step
      // (GatherParameters): they belong to this iteration, so they end it.
      double gathers_s = 0;
      for (int j = st; j < chunks; j += p) {
        for (const GradientBucket& bucket : part.buckets[j]) {
          gathers_s +=
              CollectiveSeconds(CollectiveKind::kAllGather,
                                bucket.params * TrainingBytesPerParam(precision), storage, group);
        }
      }
      stage_end += gathers_s;
      gather_params_max = std::max(gather_params_max, gathers_s);
    }
    finish = std::max(finish, stage_end);
  }

  Estimate e;
  e.iteration_s = finish;
  e.compute_s = m * kernel[k];
  e.exposed_comm_s["tp"] = m * tp[k];
  e.exposed_comm_s["pp"] = m * gathers[k] + p2p;
  e.bubble_s = span - m * C[k] - p2p;
  e.optimizer_s = step_max;
  e.exposed_comm_s["dp"] = std::max(0.0, finish - span - step_max);
  double flops = 0;  // per micro-batch, one GPU of each stage
  for (int st = 0; st < p; ++st) {
    for (int j = st; j < chunks; j += p) {
      flops += prof[st]->model_flops[bounds[j + 1]] - prof[st]->model_flops[bounds[j]];
    }
  }
  e.model_flops = flops * t * d * m;
  return e;
}

// Kinds ddp, zero1, zero2, zero3 (t = p = 1): every GPU a replica running m micro-batches.
Estimate Estimator::Impl::DataParallel(const Candidate& c) {
  const int n = s.cluster.NumGpus(), m = c.micro_batches;
  const GpuSpec& gpu = s.cluster.GpuOfRank(0);
  const Profile& P = ProfileOf(c, gpu);
  const DType precision = s.training.precision;
  const DType act = StorageDType(precision);
  const double e_bytes = TrainingBytesPerParam(precision);
  const int layers = static_cast<int>(P.w.layers.size());
  std::vector<int> ranks(n);
  for (int r = 0; r < n; ++r) ranks[r] = r;
  const Group all = GroupOf(std::move(ranks));
  const double F = P.fwd_s[layers], B = P.bwd_s[layers], C = F + B;
  const double params = P.params[layers];
  auto layer_f = [&](int i) { return P.fwd_s[i + 1] - P.fwd_s[i]; };
  auto layer_b = [&](int i) { return P.bwd_s[i + 1] - P.bwd_s[i]; };

  Estimate est;
  est.compute_s = m * (P.fwd_s[layers] + P.bwd_s[layers]);
  est.model_flops = P.model_flops[layers] * m * n;
  const double span = m * C;
  double finish = span, step_s = 0;

  if (c.zero == Zero::kZero3) {
    // FSDP units of one layer each (zero3's unit "layer"), with one-unit prefetch
    // (strategies/sharded/fsdp_units.cpp): per micro-batch every unit's forward, then every
    // unit's backward in reverse; pass q's weights all-gathered on the gather stream once pass
    // q - 2 has ended, its compute after pass q - 1 and the gather; each backward's gradients
    // reduce-scattered on their own stream after it. Adam on 1/n after the last micro-batch's.
    std::vector<double> pass_end;
    double gather_free = 0, rs_free = 0, compute_end = 0;
    for (int mb = 0; mb < m; ++mb) {
      for (int dir = 0; dir < 2; ++dir) {
        for (int q = 0; q < layers; ++q) {
          const int i = dir == 0 ? q : layers - 1 - q;
          const double bytes = P.w.layers[i].params * e_bytes;
          double ready = compute_end;
          if (bytes > 0) {
            const size_t np = pass_end.size();
            const double issue = np >= 2 ? pass_end[np - 2] : 0;
            gather_free = std::max(gather_free, issue) +
                          CollectiveSeconds(CollectiveKind::kAllGather, bytes, act, all);
            ready = std::max(ready, gather_free);
          }
          compute_end = ready + (dir == 0 ? layer_f(i) : layer_b(i));
          pass_end.push_back(compute_end);
          if (dir == 1 && bytes > 0) {
            rs_free = std::max(rs_free, compute_end) +
                      CollectiveSeconds(CollectiveKind::kReduceScatter, bytes, act, all);
          }
        }
      }
    }
    step_s = AdamSeconds(params / n, gpu);
    finish = std::max(compute_end, rs_free) + step_s;
    est.iteration_s = finish;
    est.optimizer_s = step_s;
    est.exposed_comm_s["dp"] = finish - span - step_s;
    return est;
  }

  // DDP, ZeRO-1 and ZeRO-2: buckets over the whole model (strategies/data/ddp.cpp,
  // strategies/sharded/zero.cpp), each ready during a micro-batch's backward.
  const std::vector<GradientBucket> buckets =
      MakeGradientBuckets(P.w.layers, e_bytes, kBucketCapBytes);
  const CollectiveKind reduce =
      c.zero == Zero::kNone ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  std::vector<std::pair<double, double>> jobs;
  const int first_mb = c.zero == Zero::kZero2 ? 0 : m - 1;  // ZeRO-2 every micro-batch
  for (int mb = first_mb; mb < m; ++mb) {
    const double backward_start = mb * C + F;
    for (const GradientBucket& b : buckets) {
      double done = 0;  // backward of layers [ready_after_layer, end)
      for (int i = layers - 1; i >= b.ready_after_layer; --i) done += layer_b(i);
      jobs.push_back(
          {backward_start + done, CollectiveSeconds(reduce, b.params * e_bytes, act, all)});
    }
  }
  const double reduced = n > 1 ? RunStream(std::move(jobs), 0) : 0;
  step_s = AdamSeconds(c.zero == Zero::kNone ? params : params / n, gpu);
  finish = std::max(span, reduced) + step_s;
  if (c.zero != Zero::kNone) {
    // The updated 16-bit weights all-gathered bucket by bucket after the step; the iteration's
    // tasks, so they end it.
    for (const GradientBucket& b : buckets) {
      finish += CollectiveSeconds(CollectiveKind::kAllGather, b.params * e_bytes, act, all);
    }
  }
  est.iteration_s = finish;
  est.optimizer_s = step_s;
  est.exposed_comm_s["dp"] = finish - span - step_s;
  return est;
}

Estimator::Estimator(const Scenario& s) : impl_(std::make_unique<Impl>(s)) {}
Estimator::~Estimator() = default;

Estimate Estimator::operator()(const Candidate& c) {
  if (c.micro_batches < 1) {
    throw Error("candidate " + CandidateName(c) +
                ": global_batch / (micro_batch x data) is not an integer");
  }
  const long gpus = static_cast<long>(c.tensor) * c.pipeline * c.data;
  if (gpus != impl_->s.cluster.NumGpus()) {
    throw Error("candidate " + CandidateName(c) +
                ": tensor x pipeline x data = " + std::to_string(gpus) + ", not the GPU count (" +
                std::to_string(impl_->s.cluster.NumGpus()) + ")");
  }
  Estimate e = c.tensor * c.pipeline > 1 ? impl_->Pipelined(c) : impl_->DataParallel(c);
  e.exposed_comm_s.emplace("tp", 0.0);
  e.exposed_comm_s.emplace("pp", 0.0);
  e.exposed_comm_s.emplace("dp", 0.0);
  const double peak = impl_->PeakSum();
  e.mfu = peak > 0 && e.iteration_s > 0 ? e.model_flops / e.iteration_s / peak : 0;
  return e;
}

Estimate EstimateIteration(const Scenario& s, const Candidate& c) { return Estimator(s)(c); }

}  // namespace stratasim::search
