#include "strategies/moe/moe_graph.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/error.h"
#include "core/units.h"
#include "models/fp8.h"
#include "models/memory.h"
#include "strategies/layer_tasks.h"
#include "strategies/moe/ep_groups.h"
#include "strategies/moe/persistent_placement.h"

namespace stratasim {
namespace {

bool IsGemmClass(const OpCost& op) {
  return op.kind == OpKind::kGemm || op.kind == OpKind::kAttention;
}

// A fused attention kernel stays its own task: its cost (and the model FLOPs metrics count for
// it) follows from its shape, causal mask and phase, which a fused group would lose.
KernelCost Pass(const OpCost& op, bool backward) {
  KernelCost c = backward ? op.backward_input : op.forward;
  if (backward) {
    c.flops += op.backward_weight.flops;
    c.bytes += op.backward_weight.bytes;
  }
  return c;
}

// The kernels of `ops` for one pass, fused attention aside, as fused costs: matrix products, FP8
// matrix products (FP8 training, models/fp8.h) and memory-bound kernels.
struct Fused {
  KernelCost gemm;
  KernelCost fp8;
  KernelCost mem;
};

Fused Fuse(const std::vector<OpCost>& ops, bool backward) {
  Fused f;
  f.fp8.dtype = DType::kFP8;
  double largest = -1, largest_fp8 = -1;
  for (const OpCost& op : ops) {
    if (op.kind == OpKind::kFusedAttention) continue;  // its own task (Pass)
    const KernelCost c = Pass(op, backward);
    if (IsFp8Gemm(op)) {
      f.fp8.flops += c.flops;
      f.fp8.bytes += c.bytes;
      if (c.flops > largest_fp8) {
        largest_fp8 = c.flops;
        f.fp8.gemm = c.gemm;
      }
      continue;
    }
    KernelCost& into = IsGemmClass(op) ? f.gemm : f.mem;
    into.flops += c.flops;
    into.bytes += c.bytes;
    if (IsGemmClass(op) && c.flops > largest) {
      largest = c.flops;
      into.gemm = c.gemm;
    }
  }
  return f;
}

std::string Fmt(const char* f, double a, double b = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

class Builder {
 public:
  Builder(const MoeSetup& st, const std::vector<std::vector<LayerDecision>>& d,
          const MoeSchedule& sc)
      : st_(st),
        dec_(d),
        sc_(sc),
        n_(st.ranks),
        ep_(st.expert_parallel > 0 ? st.expert_parallel : st.ranks),
        g_(st.ranks) {
    if (st.max_tasks > 0) g_.SetTaskLimit(st.max_tasks);
    compute_ = g_.Stream("compute");
    a2a_ = g_.Stream("a2a");
    placement_ = sc.transfers == TransferSchedule::kAfterDispatch ? a2a_ : g_.Stream("placement");
    dp_ = g_.Stream("dp");
    for (int r = 0; r < n_; ++r) all_.push_back(r);
    // Pairwise steps run inside each expert-parallel group.
    groups_ = sc.pairwise_group_size > 0
                  ? (ep_ + sc.pairwise_group_size - 1) / sc.pairwise_group_size
                  : 1;
  }

  TaskGraph Build() {
    prev_adam_.assign(n_, -1);
    for (int t = 0; t < st_.iterations; ++t) Iteration(t);
    return std::move(g_);
  }

 private:
  Task Base(int rank, int stream, Phase ph, const std::string& name) const {
    Task k;
    k.rank = rank;
    k.stream = stream;
    k.iteration = it_;
    k.phase = ph;
    k.name = "it" + std::to_string(it_) + "/" + name;
    return k;
  }

  TaskId Kernel(int rank, Phase ph, const std::string& name, OpKind op, const KernelCost& c,
                const std::vector<TaskId>& deps) {
    Task k = Base(rank, compute_, ph, name);
    k.kind = TaskKind::kCompute;
    k.op = op;
    k.dtype = c.dtype.value_or(st_.dtype);  // FP8 GEMMs carry their own
    k.flops = c.flops;
    k.bytes = c.bytes;
    k.gemm = c.gemm;
    k.causal = c.causal;
    for (TaskId d : deps) {
      if (d >= 0) k.deps.push_back(d);
    }
    return g_.Add(std::move(k));
  }

  TaskId Memory(int rank, int stream, const std::string& name, const std::string& category,
                double delta, TaskId dep) {
    Task k = Base(rank, stream, Phase::kOther, name);
    k.kind = TaskKind::kMemory;
    k.category = category;
    k.memory_delta_bytes = delta;
    if (dep >= 0) k.deps.push_back(dep);
    return g_.Add(std::move(k));
  }

  // Fused non-expert kernels of `ops` on rank r; returns the last id (or `after`).
  TaskId Dense(int r, const std::vector<OpCost>& ops, bool backward, const std::string& name,
               TaskId after) {
    const Fused f = Fuse(ops, backward);
    const Phase ph = backward ? Phase::kBackward : Phase::kForward;
    const std::string pass = backward ? "/bwd" : "/fwd";
    TaskId last = after;
    for (const OpCost& op : ops) {
      if (op.kind != OpKind::kFusedAttention) continue;
      last = Kernel(r, ph, name + "/" + op.name + pass, op.kind, Pass(op, backward), {last});
    }
    if (!f.fp8.empty()) {
      last = Kernel(r, ph, name + "/gemm_fp8" + pass, OpKind::kGemm, f.fp8, {last});
    }
    if (!f.gemm.empty()) last = Kernel(r, ph, name + "/gemm" + pass, OpKind::kGemm, f.gemm, {last});
    if (!f.mem.empty()) {
      last = Kernel(r, ph, name + "/elementwise" + pass, OpKind::kElementwise, f.mem, {last});
    }
    return last;
  }

  // The expert FFN over `tokens` tokens with `sets` weight sets on rank r: a grouped GEMM (both
  // projections) and the activation plus (un)permutation traffic.
  TaskId Experts(int r, double tokens, int sets, bool backward, const std::string& name,
                 const std::vector<TaskId>& deps) {
    if (tokens <= 0) {
      // Nothing to compute; still order after the inputs so that later tasks wait for them.
      TaskId last = -1;
      for (TaskId d : deps) last = std::max(last, d);
      return last;
    }
    const double h = st_.hidden, f = st_.ffn_hidden, e = BytesPerElement(st_.dtype);
    const double w = std::max(sets, 1);
    const double factor = backward ? 2 : 1;  // input and weight gradients of both products
    const double mats = st_.swiglu ? 3 : 2;  // h x f matrices per expert
    KernelCost gemm;
    gemm.flops = factor * 2 * (mats * tokens * h * f);
    KernelCost mem;
    if (!st_.swiglu && !st_.fp8) {
      gemm.bytes = factor * e * (2 * tokens * h + 2 * tokens * f + 2 * w * h * f);
      gemm.gemm = GemmShape{tokens / w, f, h, w};
      mem.bytes = factor * e * (2 * tokens * f + 4 * tokens * h);
    } else {
      // The first projection is u wide (the gate and up of SwiGLU: 2f); GEMM inputs are 1 byte
      // in FP8 training, outputs stay in the storage format.
      const double u = st_.swiglu ? 2 * f : f;
      const double in = st_.fp8 ? BytesPerElement(DType::kFP8) : e;
      gemm.bytes = factor * (in * (tokens * h + w * h * u + tokens * f + w * f * h) +
                             e * (tokens * u + tokens * h));
      gemm.gemm = GemmShape{tokens / w, u, h, w};
      // The activation reads its u-wide input and writes f; permutations move 4 t h.
      mem.bytes = factor * e * (tokens * (u + f) + 4 * tokens * h);
      if (st_.fp8) {
        // Cast-transposes (models/fp8.h): X and W of both projections forward, dY of both
        // backward, each read in BF16 and written twice in FP8.
        gemm.dtype = DType::kFP8;
        const double cast = BytesPerElement(DType::kBF16) + 2 * BytesPerElement(DType::kFP8);
        mem.bytes +=
            cast * (backward ? tokens * (u + h) : tokens * h + w * h * u + tokens * f + w * f * h);
      }
    }
    const Phase ph = backward ? Phase::kBackward : Phase::kForward;
    const std::string pass = backward ? "/bwd" : "/fwd";
    TaskId last = Kernel(r, ph, name + "/ffn" + pass, OpKind::kGemm, gemm, deps);
    return Kernel(r, ph, name + "/act" + pass, OpKind::kElementwise, mem, {last});
  }

  // One all-to-all per expert-parallel group, among its members only (ep_groups.h): the
  // group's block of `tokens` ([src * n + dst]), restricted to pairwise step `step` (all pairs
  // when step < 0), transposed when `transpose`; member r depends on deps[r]. Ids per rank.
  std::vector<TaskId> AllToAll(const LayerDecision& d, bool transpose, int step,
                               const std::string& name, Phase ph, const std::vector<TaskId>& deps) {
    std::vector<TaskId> ids(n_, -1);
    for (int grp = 0; grp < n_ / ep_; ++grp) {
      const int base = grp * ep_;
      Collective c;
      c.ranks = ExpertParallelGroup(grp, ep_);
      c.dtype = st_.dtype;
      c.algorithm = sc_.a2a_algorithm;
      if (d.padded_capacity > 0) {
        // DeepSpeed's dispatch buffer: every rank sends E blocks of C token slots.
        c.kind = CollectiveKind::kAllToAll;
        c.bytes = static_cast<double>(st_.experts) * d.padded_capacity * st_.bytes_per_token;
      } else {
        c.kind = CollectiveKind::kAllToAllV;
        c.matrix.assign(static_cast<size_t>(ep_) * ep_, 0);
        for (int s = 0; s < ep_; ++s) {
          for (int t = 0; t < ep_; ++t) {
            if (step >= 0 && Group(t) != (Group(s) + step) % groups_) continue;
            const double tokens = d.a2a_tokens[static_cast<size_t>(base + s) * n_ + base + t];
            const size_t at =
                transpose ? static_cast<size_t>(t) * ep_ + s : static_cast<size_t>(s) * ep_ + t;
            c.matrix[at] = tokens * st_.bytes_per_token;
          }
        }
        for (int s = 0; s < ep_; ++s) {
          double row = 0;
          for (int t = 0; t < ep_; ++t) row += c.matrix[static_cast<size_t>(s) * ep_ + t];
          c.bytes = std::max(c.bytes, row);
        }
      }
      Task member = Base(0, a2a_, ph, n_ > ep_ ? name + "/ep" + std::to_string(grp) : name);
      member.category = "a2a";
      const std::vector<TaskId> group_ids = g_.AddCollective(c, member);
      for (int i = 0; i < ep_; ++i) {
        ids[base + i] = group_ids[i];
        if (deps[base + i] >= 0) g_.AddDep(group_ids[i], deps[base + i]);
      }
    }
    return ids;
  }

  // The pairwise group of a rank's position in its expert-parallel group.
  int Group(int rank) const {
    return sc_.pairwise_group_size > 0 ? (rank % ep_) / sc_.pairwise_group_size : 0;
  }

  // Tokens rank r receives in pairwise step `step` (all of them when step < 0).
  double Received(const LayerDecision& d, int r, int step) const {
    double sum = 0;
    const int base = r / ep_ * ep_;  // only its expert-parallel group sends to r
    for (int s = base; s < base + ep_; ++s) {
      if (step >= 0 && Group(r) != (Group(s) + step) % groups_) continue;
      sum += d.a2a_tokens[static_cast<size_t>(s) * n_ + r];
    }
    return sum;
  }

  // Points of a layer's forward at which a transfer schedule may issue replica broadcasts.
  enum class TransferPoint { kLayerStart, kBeforeDispatch, kAfterDispatch, kAfterCombine };

  // Issues the broadcasts that the schedule (MoeSchedule::transfers) starts at `point` of layer
  // l's forward; l == -1: the iteration's start, after the embedding. deps[r]: what the member
  // on rank r follows.
  void TransfersAt(TransferPoint point, int l, const std::vector<TaskId>& deps) {
    switch (sc_.transfers) {
      case TransferSchedule::kBeforeDispatch:
        if (point == TransferPoint::kBeforeDispatch) Transfers(l, 1, 0, deps);
        break;
      case TransferSchedule::kAfterDispatch:
        // On the all-to-all stream, which orders them after the dispatch.
        if (point == TransferPoint::kAfterDispatch) {
          Transfers(l, 1, 0, std::vector<TaskId>(n_, -1));
        }
        break;
      case TransferSchedule::kPreviousLayer:
        if (point == TransferPoint::kLayerStart) Transfers(l + 1, 1, 0, deps);
        break;
      case TransferSchedule::kSplitPreviousBlock:
        if (point == TransferPoint::kLayerStart && l < 0) {
          Transfers(0, 2, 0, deps);
          Transfers(0, 2, 1, deps);
        }
        if (point == TransferPoint::kAfterDispatch) Transfers(l + 1, 2, 0, deps);
        if (point == TransferPoint::kAfterCombine) Transfers(l + 1, 2, 1, deps);
        break;
    }
  }

  // Broadcasts of layer l's replicas (split in `parts`), if l is a layer; deps[r] for the member
  // on rank r. Appends each holder's member ids to arrived_[l][holder].
  void Transfers(int l, int parts, int part, const std::vector<TaskId>& deps) {
    if (l >= st_.layers) return;
    const LayerDecision& d = dec_[it_][l];
    const double e = BytesPerElement(st_.dtype);
    for (const Replica& rep : d.replicas) {
      // A kept persistent copy already holds this iteration's parameters.
      const std::vector<int> to = NewHolders(l, rep);
      if (to.empty()) continue;
      Collective c;
      c.kind = CollectiveKind::kBroadcast;
      c.ranks = {rep.owner};
      c.ranks.insert(c.ranks.end(), to.begin(), to.end());
      c.root = rep.owner;
      c.bytes = st_.expert_params * e / parts;
      c.dtype = st_.dtype;
      Task member = Base(0, placement_, Phase::kCommunication,
                         LayerName(l) + "/trans/expert" + std::to_string(rep.expert) +
                             (parts > 1 ? "/part" + std::to_string(part) : ""));
      member.category = "placement";
      std::vector<TaskId> ids = g_.AddCollective(c, member);
      for (size_t i = 0; i < c.ranks.size(); ++i) {
        const int r = c.ranks[i];
        if (deps[r] >= 0) g_.AddDep(ids[i], deps[r]);
        if (prev_adam_[rep.owner] >= 0) g_.AddDep(ids[i], prev_adam_[rep.owner]);
        if (i > 0) arrived_[l][r].push_back(ids[i]);
      }
      if (it_ >= st_.warmup) transfer_bytes_ += c.bytes * to.size();
    }
  }

  // The holders of `rep` that did not hold its expert in the previous iteration's decision
  // for layer l (all of them unless persistent).
  std::vector<int> NewHolders(int l, const Replica& rep) const {
    if (!sc_.persistent || it_ == 0) return rep.holders;
    const std::vector<ExpertCopy> had = CopiesOf(dec_[it_ - 1][l].replicas);
    std::vector<int> to;
    for (int h : rep.holders) {
      if (!std::binary_search(had.begin(), had.end(), ExpertCopy{rep.expert, h})) to.push_back(h);
    }
    return to;
  }

  // Persistent placements: at the iteration's start (after the previous step on the compute
  // stream), each holder frees the state of the copies it no longer holds and allocates that
  // of its new ones (weights, gradients, Adam state: models/memory.h); persistent_params_[r]
  // counts the parameters of the copies rank r holds, which its Adam step updates.
  void PersistentCopies() {
    persistent_params_.assign(n_, 0);
    if (!sc_.persistent) return;
    const double state = AdamStateBytes(st_.expert_params, st_.dtype).Total();
    std::vector<double> freed(n_, 0), created(n_, 0);
    for (int l = 0; l < st_.layers; ++l) {
      const std::vector<ExpertCopy> now = CopiesOf(dec_[it_][l].replicas);
      const std::vector<ExpertCopy> before =
          it_ > 0 ? CopiesOf(dec_[it_ - 1][l].replicas) : std::vector<ExpertCopy>{};
      for (const ExpertCopy& c : now) {
        persistent_params_[c.second] += st_.expert_params;
        if (!std::binary_search(before.begin(), before.end(), c)) created[c.second] += state;
      }
      for (const ExpertCopy& c : before) {
        if (!std::binary_search(now.begin(), now.end(), c)) freed[c.second] += state;
      }
    }
    for (int r = 0; r < n_; ++r) {
      if (freed[r] > 0) AddMemory(g_, At(r), "replicas/dropped", "replicas", -freed[r]);
      if (created[r] > 0) AddMemory(g_, At(r), "replicas/created", "replicas", created[r]);
    }
  }

  void Iteration(int t) {
    it_ = t;
    arrived_.assign(st_.layers, std::vector<std::vector<TaskId>>(n_));
    adam_deps_.assign(n_, {});
    PersistentCopies();
    std::vector<TaskId> last = Embedding();
    TransfersAt(TransferPoint::kLayerStart, -1, last);
    for (int l = 0; l < st_.layers; ++l) ForwardLayer(l, last);
    Head(last);
    for (int l = st_.layers - 1; l >= 0; --l) BackwardLayer(l, last);
    Step(last);
  }

  static std::string LayerName(int l) { return "layer" + std::to_string(l); }

  TaskPlace At(int r) const {
    return TaskPlace{r, compute_, it_, "it" + std::to_string(it_) + "/"};
  }

  // Model states (first iteration only) and the embedding's forward; returns each rank's last.
  std::vector<TaskId> Embedding() {
    std::vector<TaskId> last(n_, -1);
    for (int r = 0; r < n_; ++r) {
      if (it_ == 0) {
        AddModelStates(g_, At(r), st_.non_expert_params + st_.experts_per_rank * st_.expert_params,
                       st_.dtype);
      }
      last[r] = AddForward(g_, st_.workload.layers.front(), st_.dtype, At(r), prev_adam_[r]);
    }
    return last;
  }

  // The head's forward and backward.
  void Head(std::vector<TaskId>& last) {
    for (int r = 0; r < n_; ++r) {
      last[r] = AddForward(g_, st_.workload.layers.back(), st_.dtype, At(r), last[r]);
      last[r] = AddBackward(g_, st_.workload.layers.back(), st_.dtype, At(r), last[r]);
    }
  }

  // The embedding's backward, the all-reduce of its and the head's gradients, and Adam.
  void Step(std::vector<TaskId>& last) {
    const Workload& w = st_.workload;
    for (int r = 0; r < n_; ++r) {
      last[r] = AddBackward(g_, w.layers.front(), st_.dtype, At(r), last[r]);
    }
    AllReduce(w.layers.front().params + w.layers.back().params, "embedding/allreduce", last);
    for (int r = 0; r < n_; ++r) {
      // With persistent placements the rank also steps the copies it holds.
      Task step = AdamStepTask(
          st_.non_expert_params + st_.experts_per_rank * st_.expert_params + persistent_params_[r],
          st_.dtype);
      step.rank = r;
      step.stream = compute_;
      step.iteration = it_;
      step.name = "it" + std::to_string(it_) + "/adam";
      step.deps = adam_deps_[r];
      step.deps.push_back(last[r]);
      prev_adam_[r] = g_.Add(std::move(step));
    }
  }

  // Layer l's forward: pre, dispatch, experts, combine, post; allocates what it saves.
  void ForwardLayer(int l, std::vector<TaskId>& last) {
    const LayerDecision& d = dec_[it_][l];
    const std::string ln = LayerName(l);
    const MoeLayerParts& parts = st_.parts[l];
    const double e = BytesPerElement(st_.dtype);
    TransfersAt(TransferPoint::kLayerStart, l, last);
    for (int r = 0; r < n_; ++r) last[r] = Dense(r, parts.pre, false, ln + "/pre", last[r]);
    TransfersAt(TransferPoint::kBeforeDispatch, l, last);
    if (sc_.transfers == TransferSchedule::kBeforeDispatch) {
      // Nothing hides the broadcasts: the dispatch waits for them.
      for (int r = 0; r < n_; ++r) {
        for (TaskId a : arrived_[l][r]) last[r] = std::max(last[r], a);
      }
    }
    if (groups_ > 1) {
      PairwiseExpertsForward(d, l, last);
    } else {
      ExpertsForward(d, l, last);
    }
    for (int r = 0; r < n_; ++r) {
      last[r] = Dense(r, parts.post, false, ln + "/post", last[r]);
      const double tokens = d.ComputedTokens()[r];
      // The experts keep their GEMM inputs (FP8 copies in FP8 training) and the activation's
      // input (u wide: 2f for SwiGLU).
      const double in = st_.fp8 ? BytesPerElement(DType::kFP8) : e;
      const double saved =
          !st_.swiglu && !st_.fp8
              ? parts.activation_bytes + tokens * (st_.hidden + 2 * st_.ffn_hidden) * e
              : parts.activation_bytes + tokens * (in * (st_.hidden + st_.ffn_hidden) +
                                                   e * (st_.swiglu ? 2 : 1) * st_.ffn_hidden);
      // Replica weights and their gradients live from the layer's forward to its reduce
      // (persistent copies: from creation to drop, PersistentCopies).
      const double copies =
          sc_.persistent ? 0
                         : (d.weight_sets[r] - st_.experts_per_rank) * 2 * st_.expert_params * e;
      AddMemory(g_, At(r), ln + "/activations", "activations", saved);
      if (copies > 0) AddMemory(g_, At(r), ln + "/replicas", "replicas", copies);
      saved_[l].resize(n_);
      saved_[l][r] = saved;
      copies_[l].resize(n_);
      copies_[l][r] = copies;
    }
  }

  // Layer l's backward, last[] entering at its post: post, combine's gradient, experts,
  // replicas' gradient reduces, dispatch's gradient, pre; frees what the forward saved and
  // all-reduces the non-expert gradients.
  void BackwardLayer(int l, std::vector<TaskId>& last) {
    const LayerDecision& d = dec_[it_][l];
    const std::string ln = LayerName(l);
    const MoeLayerParts& parts = st_.parts[l];
    for (int r = 0; r < n_; ++r) last[r] = Dense(r, parts.post, true, ln + "/post", last[r]);
    if (groups_ > 1) {
      PairwiseExpertsBackward(d, l, last);
    } else {
      ExpertsBackward(d, l, last);
    }
    for (int r = 0; r < n_; ++r) {
      last[r] = Dense(r, parts.pre, true, ln + "/pre", last[r]);
      AddMemory(g_, At(r), ln + "/activations", "activations", -saved_[l][r]);
      if (copies_[l][r] > 0) AddMemory(g_, At(r), ln + "/replicas", "replicas", -copies_[l][r]);
    }
    AllReduce(parts.non_expert_params, ln + "/allreduce", last);
    ExpertAllReduce(ln + "/expert_allreduce", last);
  }

  // Tokens rank r's experts compute in one all-to-all: DeepSpeed's padded slots, or what
  // arrives plus the tokens of the replicas it holds.
  double ExpertTokens(const LayerDecision& d, int r) const {
    return d.padded_capacity > 0 ? d.padded_capacity * ep_ * st_.experts_per_rank
                                 : Received(d, r, -1) + d.replica_tokens[r];
  }

  // One dispatch all-to-all, the experts, one combine all-to-all.
  void ExpertsForward(const LayerDecision& d, int l, std::vector<TaskId>& last) {
    const std::string ln = LayerName(l);
    const std::vector<TaskId> ids =
        AllToAll(d, false, -1, ln + "/dispatch", Phase::kCommunication, last);
    TransfersAt(TransferPoint::kAfterDispatch, l, ids);
    std::vector<TaskId> after(n_);
    for (int r = 0; r < n_; ++r) {
      std::vector<TaskId> deps = arrived_[l][r];
      deps.push_back(ids[r]);
      after[r] = Experts(r, ExpertTokens(d, r), d.weight_sets[r], false, ln + "/experts", deps);
    }
    last = AllToAll(d, true, -1, ln + "/combine", Phase::kCommunication, after);
    TransfersAt(TransferPoint::kAfterCombine, l, last);
  }

  // FasterMoE: S_0..S_{n-1}; C_j after S_j; shadow broadcasts; shadow compute; R_j.
  void PairwiseExpertsForward(const LayerDecision& d, int l, std::vector<TaskId>& last) {
    const std::string ln = LayerName(l);
    const std::vector<std::vector<TaskId>> sends = PairwiseSteps(d, false, ln + "/dispatch", last);
    TransfersAt(TransferPoint::kAfterDispatch, l, sends.back());
    std::vector<std::vector<TaskId>> done(groups_, std::vector<TaskId>(n_));
    std::vector<TaskId> shadow(n_);
    for (int r = 0; r < n_; ++r) {
      StepExperts(d, r, false, ln, sends, done);
      std::vector<TaskId> deps = arrived_[l][r];
      deps.push_back(done[groups_ - 1][r]);
      shadow[r] = Experts(r, d.replica_tokens[r], d.weight_sets[r] - st_.experts_per_rank, false,
                          ln + "/experts/shadow", deps);
    }
    std::vector<TaskId> combined;
    for (int j = 0; j < groups_; ++j) {
      combined = AllToAll(d, true, j, ln + "/combine/step" + std::to_string(j),
                          Phase::kCommunication, done[j]);
    }
    TransfersAt(TransferPoint::kAfterCombine, l, combined);
    for (int r = 0; r < n_; ++r) last[r] = std::max(shadow[r], combined[r]);
  }

  void ExpertsBackward(const LayerDecision& d, int l, std::vector<TaskId>& last) {
    const std::string ln = LayerName(l);
    const std::vector<TaskId> ids =
        AllToAll(d, false, -1, ln + "/combine_grad", Phase::kCommunication, last);
    std::vector<TaskId> expert_end(n_);
    for (int r = 0; r < n_; ++r) {
      expert_end[r] =
          Experts(r, ExpertTokens(d, r), d.weight_sets[r], true, ln + "/experts", {ids[r]});
    }
    Aggregate(d, l, expert_end);
    if (!sc_.overlap_aggregation) {
      // The next kernels wait for the reduces (they were issued on the compute stream).
      for (int r = 0; r < n_; ++r) expert_end[r] = std::max(expert_end[r], agg_last_[r]);
    }
    last = AllToAll(d, true, -1, ln + "/dispatch_grad", Phase::kCommunication, expert_end);
  }

  void PairwiseExpertsBackward(const LayerDecision& d, int l, std::vector<TaskId>& last) {
    const std::string ln = LayerName(l);
    const std::vector<std::vector<TaskId>> sends =
        PairwiseSteps(d, false, ln + "/combine_grad", last);
    // The shadowed experts' backward first, so that their gradient reduce overlaps the owners'
    // backward (FasterMoE's backward order).
    std::vector<TaskId> shadow(n_);
    for (int r = 0; r < n_; ++r) {
      shadow[r] = Experts(r, d.replica_tokens[r], d.weight_sets[r] - st_.experts_per_rank, true,
                          ln + "/experts/shadow", {last[r]});
    }
    Aggregate(d, l, shadow);
    std::vector<std::vector<TaskId>> done(groups_, std::vector<TaskId>(n_));
    for (int r = 0; r < n_; ++r) StepExperts(d, r, true, ln, sends, done);
    for (int j = 0; j < groups_; ++j) {
      last = AllToAll(d, true, j, ln + "/dispatch_grad/step" + std::to_string(j),
                      Phase::kCommunication, done[j]);
    }
  }

  // The pairwise steps of an all-to-all, every member after deps[rank]; ids per step.
  std::vector<std::vector<TaskId>> PairwiseSteps(const LayerDecision& d, bool transpose,
                                                 const std::string& name,
                                                 const std::vector<TaskId>& deps) {
    std::vector<std::vector<TaskId>> steps;
    for (int j = 0; j < groups_; ++j) {
      steps.push_back(AllToAll(d, transpose, j, name + "/step" + std::to_string(j),
                               Phase::kCommunication, deps));
    }
    return steps;
  }

  // Rank r's own experts over each pairwise step's tokens, step j after sends[j][r].
  void StepExperts(const LayerDecision& d, int r, bool backward, const std::string& ln,
                   const std::vector<std::vector<TaskId>>& sends,
                   std::vector<std::vector<TaskId>>& done) {
    for (int j = 0; j < groups_; ++j) {
      done[j][r] = Experts(r, Received(d, r, j), st_.experts_per_rank, backward,
                           ln + "/experts/step" + std::to_string(j), {sends[j][r]});
    }
  }

  void AllReduce(double params, const std::string& name, const std::vector<TaskId>& deps) {
    if (params <= 0) return;
    Collective c;
    c.kind = CollectiveKind::kAllReduce;
    c.ranks = all_;
    c.bytes = params * BytesPerElement(st_.dtype);
    c.dtype = st_.dtype;
    c.algorithm = sc_.dp_algorithm;
    Task member = Base(0, dp_, Phase::kCommunication, name);
    member.category = "dp";
    std::vector<TaskId> ids = g_.AddCollective(c, member);
    for (int r = 0; r < n_; ++r) {
      g_.AddDep(ids[r], deps[r]);
      adam_deps_[r].push_back(ids[r]);
    }
  }

  // DeepSpeed-MoE's expert-data parallelism: the gradients of the rank's own experts are
  // all-reduced over its expert-data-parallel group ({i, i+ep, ...}, ep_groups.h), on the
  // data-parallel stream like the non-expert all-reduce, once the layer's backward (and the
  // reduces of replica gradients to the owner) are done. None with one group.
  void ExpertAllReduce(const std::string& name, const std::vector<TaskId>& deps) {
    if (n_ == ep_) return;
    for (int i = 0; i < ep_; ++i) {
      Collective c;
      c.kind = CollectiveKind::kAllReduce;
      c.ranks = ExpertDataParallelGroup(i, ep_, n_);
      c.bytes = st_.experts_per_rank * st_.expert_params * BytesPerElement(st_.dtype);
      c.dtype = st_.dtype;
      c.algorithm = sc_.dp_algorithm;
      Task member = Base(0, dp_, Phase::kCommunication, name + "/edp" + std::to_string(i));
      member.category = "dp";
      const std::vector<TaskId> ids = g_.AddCollective(c, member);
      for (size_t k = 0; k < c.ranks.size(); ++k) {
        const int r = c.ranks[k];
        g_.AddDep(ids[k], deps[r]);
        if (r < static_cast<int>(agg_last_.size()) && agg_last_[r] >= 0) {
          g_.AddDep(ids[k], agg_last_[r]);
        }
        adam_deps_[r].push_back(ids[k]);
      }
    }
  }

  // Reduces the replicas' gradients of layer l to their owners ("Agg"); frees the copies.
  // Persistent: sends new copies their optimizer state, then all-reduces the gradients among
  // the owner and the holders, each of which applies the Adam step.
  void Aggregate(const LayerDecision& d, int l, const std::vector<TaskId>& expert_end) {
    agg_last_.assign(n_, -1);
    const double e = BytesPerElement(st_.dtype);
    const int stream = sc_.overlap_aggregation ? placement_ : compute_;
    for (const Replica& rep : d.replicas) {
      const std::string name = LayerName(l) + "/agg/expert" + std::to_string(rep.expert);
      const double grad_bytes = st_.expert_params * e;
      if (it_ >= st_.warmup) baseline_bytes_ += 2 * grad_bytes * rep.holders.size();
      if (sc_.persistent) {
        const std::vector<int> to = NewHolders(l, rep);
        if (!to.empty()) {
          Collective c;
          c.kind = CollectiveKind::kBroadcast;
          c.ranks = {rep.owner};
          c.ranks.insert(c.ranks.end(), to.begin(), to.end());
          c.root = rep.owner;
          c.bytes = ExpertCopyStateBytes(st_.expert_params, st_.dtype).optimizer;
          c.dtype = DType::kFP32;
          Task member = Base(0, stream, Phase::kCommunication,
                             LayerName(l) + "/state/expert" + std::to_string(rep.expert));
          member.category = "placement";
          std::vector<TaskId> ids = g_.AddCollective(c, member);
          for (size_t i = 0; i < c.ranks.size(); ++i) {
            const int r = c.ranks[i];
            if (expert_end[r] >= 0) g_.AddDep(ids[i], expert_end[r]);
            adam_deps_[r].push_back(ids[i]);
          }
          if (it_ >= st_.warmup) transfer_bytes_ += c.bytes * to.size();
        }
      }
      Collective c;
      c.kind = sc_.persistent ? CollectiveKind::kAllReduce : CollectiveKind::kReduce;
      c.ranks = {rep.owner};
      c.ranks.insert(c.ranks.end(), rep.holders.begin(), rep.holders.end());
      c.root = rep.owner;  // the reduce's; an all-reduce has none
      c.bytes = grad_bytes;
      c.dtype = st_.dtype;
      Task member = Base(0, stream, Phase::kCommunication, name);
      member.category = "placement";
      std::vector<TaskId> ids = g_.AddCollective(c, member);
      for (size_t i = 0; i < c.ranks.size(); ++i) {
        const int r = c.ranks[i];
        if (expert_end[r] >= 0) g_.AddDep(ids[i], expert_end[r]);
        adam_deps_[r].push_back(ids[i]);
        agg_last_[r] = std::max(agg_last_[r], ids[i]);
      }
      // Each holder's gradient reaches the owner; an all-reduce also brings the sum back.
      if (it_ >= st_.warmup) {
        transfer_bytes_ += (sc_.persistent ? 2 : 1) * c.bytes * rep.holders.size();
      }
    }
  }

 public:
  double transfer_bytes_ = 0;
  // What re-sending every copy would move for the same replicas: each holder's parameters
  // broadcast and its gradient reduced.
  double baseline_bytes_ = 0;

 private:
  const MoeSetup& st_;
  const std::vector<std::vector<LayerDecision>>& dec_;
  const MoeSchedule& sc_;
  int n_;
  int ep_;  // GPUs per expert-parallel group
  TaskGraph g_;
  int compute_ = 0, a2a_ = 0, placement_ = 0, dp_ = 0;
  int groups_ = 1;
  int it_ = 0;
  std::vector<int> all_;
  std::vector<TaskId> prev_adam_;
  std::vector<TaskId> agg_last_;
  std::vector<double> persistent_params_;
  // This iteration's: per layer and rank, the broadcasts the layer's expert compute on that
  // rank waits for; per rank, what Adam waits for.
  std::vector<std::vector<std::vector<TaskId>>> arrived_;
  std::vector<std::vector<TaskId>> adam_deps_;
  std::map<int, std::vector<double>> saved_, copies_;
};

}  // namespace

Plan BuildMoePlan(const MoeSetup& st, const std::vector<std::vector<LayerDecision>>& decisions,
                  const MoeSchedule& schedule) {
  if (static_cast<int>(decisions.size()) != st.iterations) {
    throw Error("MoE plan: decisions for " + std::to_string(decisions.size()) +
                " iterations, expected " + std::to_string(st.iterations));
  }
  for (const auto& per_layer : decisions) {
    if (static_cast<int>(per_layer.size()) != st.layers) {
      throw Error("MoE plan: decisions for " + std::to_string(per_layer.size()) +
                  " layers, expected " + std::to_string(st.layers));
    }
  }
  if (st.expert_parallel > 0 && st.ranks % st.expert_parallel != 0) {
    throw Error("MoE plan: expert-parallel groups of " + std::to_string(st.expert_parallel) +
                " do not divide the " + std::to_string(st.ranks) + " ranks");
  }
  const int ep = st.expert_parallel > 0 ? st.expert_parallel : st.ranks;
  if (schedule.pairwise_group_size > 0 && ep % schedule.pairwise_group_size != 0) {
    throw Error("MoE plan: pairwise group size " + std::to_string(schedule.pairwise_group_size) +
                " does not divide the expert-parallel group's " + std::to_string(ep) + " ranks");
  }
  Builder b(st, decisions, schedule);
  Plan plan;
  plan.graph = b.Build();
  plan.samples_per_iteration = st.tokens_per_rank * st.ranks / st.workload.tokens_per_sample;
  plan.tokens_per_sample = st.workload.tokens_per_sample;

  // Figures over the measured iterations.
  double before = 0, after = 0, dropped = 0, replicas = 0, cells = 0;
  for (int t = st.warmup; t < st.iterations; ++t) {
    for (const LayerDecision& d : decisions[t]) {
      before += StdDev(d.load_before);
      after += StdDev(d.load_after);
      dropped += d.dropped_tokens;
      replicas += d.ReplicatedExperts();
      cells += 1;
    }
  }
  const double measured = st.iterations - st.warmup;
  MoeFigures& f = plan.moe.emplace();
  if (st.ranks <= kMaxMoeLoadSeriesGpus) {
    for (int t = st.warmup; t < st.iterations; ++t) {
      std::vector<double> load(static_cast<size_t>(st.ranks), 0);
      for (const LayerDecision& d : decisions[t]) {
        for (size_t r = 0; r < load.size() && r < d.load_after.size(); ++r) {
          load[r] += d.load_after[r] / static_cast<double>(decisions[t].size());
        }
      }
      f.gpu_tokens_per_iteration.push_back(std::move(load));
    }
  }
  f.top_k = st.top_k;
  f.tokens_per_iteration = st.tokens_per_rank * st.ranks;
  f.load_std_before = cells > 0 ? before / cells : 0;
  f.load_std_after = cells > 0 ? after / cells : 0;
  f.dropped_tokens = dropped / measured;
  f.replicas = replicas / measured;
  f.transfer_bytes = b.transfer_bytes_ / measured;
  f.transfer_bytes_saved = (b.baseline_bytes_ - b.transfer_bytes_) / measured;
  FillPlacementFigures(decisions, st.warmup, schedule.persistent, &f);
  f.expert_parallel = ep;
  f.expert_data_parallel = st.ranks / ep;
  plan.notes.push_back(st.routing_note);
  plan.notes.push_back(std::to_string(st.experts) + " experts over " + std::to_string(st.ranks) +
                       " GPUs, expert-parallel " + std::to_string(ep) + ", expert-data-parallel " +
                       std::to_string(st.ranks / ep) + ", " +
                       Fmt("%.4g M parameters per expert, ", st.expert_params / 1e6) +
                       Fmt("%.0f tokens per GPU per layer", st.tokens_per_rank));
  plan.notes.push_back(Fmt("per-GPU load std (tokens): %.1f routed, %.1f computed",
                           f.load_std_before, f.load_std_after));
  if (schedule.persistent) plan.notes.push_back(PersistentPlacementNote(f));
  return plan;
}

}  // namespace stratasim
