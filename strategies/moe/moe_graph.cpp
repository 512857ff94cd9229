#include "strategies/moe/moe_graph.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/error.h"
#include "core/units.h"
#include "models/memory.h"
#include "strategies/layer_tasks.h"

namespace stratasim {
namespace {

bool IsGemmClass(const OpCost& op) {
  return op.kind == OpKind::kGemm || op.kind == OpKind::kAttention;
}

// The kernels of `ops` for one pass as two fused costs: matrix products and memory-bound kernels.
struct Fused {
  KernelCost gemm;
  KernelCost mem;
};

Fused Fuse(const std::vector<OpCost>& ops, bool backward) {
  Fused f;
  double largest = -1;
  for (const OpCost& op : ops) {
    KernelCost c = op.forward;
    if (backward) {
      c = op.backward_input;
      c.flops += op.backward_weight.flops;
      c.bytes += op.backward_weight.bytes;
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
      : st_(st), dec_(d), sc_(sc), n_(st.ranks), g_(st.ranks) {
    if (st.max_tasks > 0) g_.SetTaskLimit(st.max_tasks);
    compute_ = g_.Stream("compute");
    a2a_ = g_.Stream("a2a");
    placement_ = sc.transfers == TransferSchedule::kAfterDispatch ? a2a_ : g_.Stream("placement");
    dp_ = g_.Stream("dp");
    for (int r = 0; r < n_; ++r) all_.push_back(r);
    groups_ =
        sc.pairwise_group_size > 0 ? (n_ + sc.pairwise_group_size - 1) / sc.pairwise_group_size : 1;
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
    k.dtype = st_.dtype;
    k.flops = c.flops;
    k.bytes = c.bytes;
    k.gemm = c.gemm;
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
    KernelCost gemm;
    gemm.flops = factor * 2 * (2 * tokens * h * f);
    gemm.bytes = factor * e * (2 * tokens * h + 2 * tokens * f + 2 * w * h * f);
    gemm.gemm = GemmShape{tokens / w, f, h, w};
    KernelCost mem;
    mem.bytes = factor * e * (2 * tokens * f + 4 * tokens * h);
    const Phase ph = backward ? Phase::kBackward : Phase::kForward;
    const std::string pass = backward ? "/bwd" : "/fwd";
    TaskId last = Kernel(r, ph, name + "/ffn" + pass, OpKind::kGemm, gemm, deps);
    return Kernel(r, ph, name + "/act" + pass, OpKind::kElementwise, mem, {last});
  }

  // An all-to-all of `tokens` ([src * n + dst]) restricted to pairs where `keep(src, dst)`,
  // transposed when `transpose`; member r depends on deps[r].
  std::vector<TaskId> AllToAll(const LayerDecision& d, bool transpose, int step,
                               const std::string& name, Phase ph, const std::vector<TaskId>& deps) {
    Collective c;
    c.ranks = all_;
    c.dtype = st_.dtype;
    c.algorithm = sc_.a2a_algorithm;
    if (d.padded_capacity > 0) {
      // DeepSpeed's dispatch buffer: every rank sends E blocks of C token slots.
      c.kind = CollectiveKind::kAllToAll;
      c.bytes = static_cast<double>(st_.experts) * d.padded_capacity * st_.bytes_per_token;
    } else {
      c.kind = CollectiveKind::kAllToAllV;
      c.matrix.assign(static_cast<size_t>(n_) * n_, 0);
      for (int s = 0; s < n_; ++s) {
        for (int t = 0; t < n_; ++t) {
          if (step >= 0 && Group(t) != (Group(s) + step) % groups_) continue;
          const double tokens = d.a2a_tokens[static_cast<size_t>(s) * n_ + t];
          const size_t at =
              transpose ? static_cast<size_t>(t) * n_ + s : static_cast<size_t>(s) * n_ + t;
          c.matrix[at] = tokens * st_.bytes_per_token;
        }
      }
      for (int s = 0; s < n_; ++s) {
        double row = 0;
        for (int t = 0; t < n_; ++t) row += c.matrix[static_cast<size_t>(s) * n_ + t];
        c.bytes = std::max(c.bytes, row);
      }
    }
    Task member = Base(0, a2a_, ph, name);
    member.category = "a2a";
    std::vector<TaskId> ids = g_.AddCollective(c, member);
    for (int r = 0; r < n_; ++r) {
      if (deps[r] >= 0) g_.AddDep(ids[r], deps[r]);
    }
    return ids;
  }

  int Group(int rank) const {
    return sc_.pairwise_group_size > 0 ? rank / sc_.pairwise_group_size : 0;
  }

  // Tokens rank r receives in pairwise step `step` (all of them when step < 0).
  double Received(const LayerDecision& d, int r, int step) const {
    double sum = 0;
    for (int s = 0; s < n_; ++s) {
      if (step >= 0 && Group(r) != (Group(s) + step) % groups_) continue;
      sum += d.a2a_tokens[static_cast<size_t>(s) * n_ + r];
    }
    return sum;
  }

  // Broadcasts of layer l's replicas (split in `parts`); deps[r] for the member on rank r.
  // Appends each holder's member ids to arrived[holder].
  void Transfers(const LayerDecision& d, int l, int parts, int part,
                 const std::vector<TaskId>& deps, std::vector<std::vector<TaskId>>& arrived) {
    const double e = BytesPerElement(st_.dtype);
    for (const Replica& rep : d.replicas) {
      Collective c;
      c.kind = CollectiveKind::kBroadcast;
      c.ranks = {rep.owner};
      c.ranks.insert(c.ranks.end(), rep.holders.begin(), rep.holders.end());
      c.root = rep.owner;
      c.bytes = st_.expert_params * e / parts;
      c.dtype = st_.dtype;
      Task member =
          Base(0, placement_, Phase::kCommunication,
               "layer" + std::to_string(l) + "/trans/expert" + std::to_string(rep.expert) +
                   (parts > 1 ? "/part" + std::to_string(part) : ""));
      member.category = "placement";
      std::vector<TaskId> ids = g_.AddCollective(c, member);
      for (size_t i = 0; i < c.ranks.size(); ++i) {
        const int r = c.ranks[i];
        if (deps[r] >= 0) g_.AddDep(ids[i], deps[r]);
        if (prev_adam_[rep.owner] >= 0) g_.AddDep(ids[i], prev_adam_[rep.owner]);
        if (i > 0) arrived[r].push_back(ids[i]);
      }
      if (it_ >= st_.warmup) transfer_bytes_ += c.bytes * rep.holders.size();
    }
  }

  void Iteration(int t) {
    it_ = t;
    const double e = BytesPerElement(st_.dtype);
    const int L = st_.layers;
    const Workload& w = st_.workload;
    std::vector<TaskId> last(n_, -1);
    for (int r = 0; r < n_; ++r) {
      if (t == 0) {
        TaskPlace at{r, compute_, t, "it0/"};
        AddModelStates(g_, at, st_.non_expert_params + st_.experts_per_rank * st_.expert_params,
                       st_.dtype);
      }
      TaskPlace at{r, compute_, t, "it" + std::to_string(t) + "/"};
      last[r] = AddForward(g_, w.layers.front(), st_.dtype, at, prev_adam_[r]);
    }
    // arrived[l][r]: broadcast members rank r's expert compute of layer l waits for.
    std::vector<std::vector<std::vector<TaskId>>> arrived(L, std::vector<std::vector<TaskId>>(n_));
    auto early = [&](int l, int parts, int part, const std::vector<TaskId>& deps) {
      if (l < L) Transfers(dec_[t][l], l, parts, part, deps, arrived[l]);
    };
    if (sc_.transfers == TransferSchedule::kPreviousLayer) early(0, 1, 0, last);
    if (sc_.transfers == TransferSchedule::kSplitPreviousBlock) {
      early(0, 2, 0, last);
      early(0, 2, 1, last);
    }
    std::vector<std::vector<TaskId>> expert_fwd_end(L, std::vector<TaskId>(n_));
    for (int l = 0; l < L; ++l) {
      const LayerDecision& d = dec_[t][l];
      const std::string ln = "layer" + std::to_string(l);
      const MoeLayerParts& parts = st_.parts[l];
      if (sc_.transfers == TransferSchedule::kPreviousLayer) early(l + 1, 1, 0, last);
      for (int r = 0; r < n_; ++r) last[r] = Dense(r, parts.pre, false, ln + "/pre", last[r]);
      if (sc_.transfers == TransferSchedule::kBeforeDispatch) {
        Transfers(d, l, 1, 0, last, arrived[l]);
        for (int r = 0; r < n_; ++r) {
          for (TaskId a : arrived[l][r]) last[r] = std::max(last[r], a);
        }
      }
      std::vector<TaskId> after(n_);
      if (groups_ > 1) {
        // FasterMoE: S_0..S_{n-1}; C_j after S_j; shadow broadcasts; shadow compute; R_j.
        std::vector<std::vector<TaskId>> sends;
        for (int j = 0; j < groups_; ++j) {
          sends.push_back(AllToAll(d, false, j, ln + "/dispatch/step" + std::to_string(j),
                                   Phase::kCommunication, last));
        }
        if (sc_.transfers == TransferSchedule::kAfterDispatch) {
          Transfers(d, l, 1, 0, std::vector<TaskId>(n_, -1), arrived[l]);
        }
        std::vector<std::vector<TaskId>> done(groups_, std::vector<TaskId>(n_));
        for (int r = 0; r < n_; ++r) {
          for (int j = 0; j < groups_; ++j) {
            done[j][r] = Experts(r, Received(d, r, j), st_.experts_per_rank, false,
                                 ln + "/experts/step" + std::to_string(j), {sends[j][r]});
          }
          std::vector<TaskId> deps = arrived[l][r];
          deps.push_back(done[groups_ - 1][r]);
          after[r] = Experts(r, d.replica_tokens[r], d.weight_sets[r] - st_.experts_per_rank, false,
                             ln + "/experts/shadow", deps);
        }
        std::vector<TaskId> combine_last(n_);
        for (int j = 0; j < groups_; ++j) {
          std::vector<TaskId> ids = AllToAll(d, true, j, ln + "/combine/step" + std::to_string(j),
                                             Phase::kCommunication, done[j]);
          combine_last = ids;
        }
        for (int r = 0; r < n_; ++r) last[r] = std::max(after[r], combine_last[r]);
      } else {
        std::vector<TaskId> ids =
            AllToAll(d, false, -1, ln + "/dispatch", Phase::kCommunication, last);
        if (sc_.transfers == TransferSchedule::kSplitPreviousBlock) early(l + 1, 2, 0, ids);
        if (sc_.transfers == TransferSchedule::kAfterDispatch) {
          Transfers(d, l, 1, 0, std::vector<TaskId>(n_, -1), arrived[l]);
        }
        for (int r = 0; r < n_; ++r) {
          std::vector<TaskId> deps = arrived[l][r];
          deps.push_back(ids[r]);
          const double tokens = d.padded_capacity > 0
                                    ? d.padded_capacity * n_ * st_.experts_per_rank
                                    : Received(d, r, -1) + d.replica_tokens[r];
          after[r] = Experts(r, tokens, d.weight_sets[r], false, ln + "/experts", deps);
        }
        std::vector<TaskId> back =
            AllToAll(d, true, -1, ln + "/combine", Phase::kCommunication, after);
        if (sc_.transfers == TransferSchedule::kSplitPreviousBlock) early(l + 1, 2, 1, back);
        last = back;
      }
      for (int r = 0; r < n_; ++r) {
        expert_fwd_end[l][r] = after[r];
        last[r] = Dense(r, parts.post, false, ln + "/post", last[r]);
        const double tokens = d.ComputedTokens()[r];
        const double saved =
            parts.activation_bytes + tokens * (st_.hidden + 2 * st_.ffn_hidden) * e;
        // Replica weights and their gradients live from the layer's forward to its reduce.
        const double copies = (d.weight_sets[r] - st_.experts_per_rank) * 2 * st_.expert_params * e;
        TaskPlace at{r, compute_, t, "it" + std::to_string(t) + "/"};
        AddMemory(g_, at, ln + "/activations", "activations", saved);
        if (copies > 0) AddMemory(g_, at, ln + "/replicas", "replicas", copies);
        saved_[l].resize(n_);
        saved_[l][r] = saved;
        copies_[l].resize(n_);
        copies_[l][r] = copies;
      }
    }
    for (int r = 0; r < n_; ++r) {
      TaskPlace at{r, compute_, t, "it" + std::to_string(t) + "/"};
      last[r] = AddForward(g_, w.layers.back(), st_.dtype, at, last[r]);
      last[r] = AddBackward(g_, w.layers.back(), st_.dtype, at, last[r]);
    }

    // Backward, last layer first.
    std::vector<std::vector<TaskId>> ready(n_);  // what Adam on rank r waits for
    for (int l = L - 1; l >= 0; --l) {
      const LayerDecision& d = dec_[t][l];
      const std::string ln = "layer" + std::to_string(l);
      const MoeLayerParts& parts = st_.parts[l];
      for (int r = 0; r < n_; ++r) last[r] = Dense(r, parts.post, true, ln + "/post", last[r]);
      std::vector<TaskId> expert_end(n_);
      if (groups_ > 1) {
        std::vector<std::vector<TaskId>> sends;
        for (int j = 0; j < groups_; ++j) {
          sends.push_back(AllToAll(d, false, j, ln + "/combine_grad/step" + std::to_string(j),
                                   Phase::kCommunication, last));
        }
        std::vector<std::vector<TaskId>> done(groups_, std::vector<TaskId>(n_));
        for (int r = 0; r < n_; ++r) {
          // The shadowed experts' backward first, so that their gradient reduce overlaps the
          // owners' backward (FasterMoE's backward order).
          expert_end[r] = Experts(r, d.replica_tokens[r], d.weight_sets[r] - st_.experts_per_rank,
                                  true, ln + "/experts/shadow", {last[r]});
        }
        Aggregate(d, l, expert_end, ready);
        for (int r = 0; r < n_; ++r) {
          for (int j = 0; j < groups_; ++j) {
            done[j][r] = Experts(r, Received(d, r, j), st_.experts_per_rank, true,
                                 ln + "/experts/step" + std::to_string(j), {sends[j][r]});
          }
        }
        std::vector<TaskId> ids;
        for (int j = 0; j < groups_; ++j) {
          ids = AllToAll(d, true, j, ln + "/dispatch_grad/step" + std::to_string(j),
                         Phase::kCommunication, done[j]);
        }
        last = ids;
      } else {
        std::vector<TaskId> ids =
            AllToAll(d, false, -1, ln + "/combine_grad", Phase::kCommunication, last);
        for (int r = 0; r < n_; ++r) {
          const double tokens = d.padded_capacity > 0
                                    ? d.padded_capacity * n_ * st_.experts_per_rank
                                    : Received(d, r, -1) + d.replica_tokens[r];
          expert_end[r] = Experts(r, tokens, d.weight_sets[r], true, ln + "/experts", {ids[r]});
        }
        Aggregate(d, l, expert_end, ready);
        if (!sc_.overlap_aggregation) {
          // The next kernels wait for the reduces (they were issued on the compute stream).
          for (int r = 0; r < n_; ++r) expert_end[r] = std::max(expert_end[r], agg_last_[r]);
        }
        last = AllToAll(d, true, -1, ln + "/dispatch_grad", Phase::kCommunication, expert_end);
      }
      for (int r = 0; r < n_; ++r) {
        last[r] = Dense(r, parts.pre, true, ln + "/pre", last[r]);
        TaskPlace at{r, compute_, t, "it" + std::to_string(t) + "/"};
        AddMemory(g_, at, ln + "/activations", "activations", -saved_[l][r]);
        if (copies_[l][r] > 0) AddMemory(g_, at, ln + "/replicas", "replicas", -copies_[l][r]);
      }
      AllReduce(parts.non_expert_params, ln + "/allreduce", last, ready);
    }
    for (int r = 0; r < n_; ++r) {
      TaskPlace at{r, compute_, t, "it" + std::to_string(t) + "/"};
      last[r] = AddBackward(g_, w.layers.front(), st_.dtype, at, last[r]);
    }
    AllReduce(w.layers.front().params + w.layers.back().params, "embedding/allreduce", last, ready);
    for (int r = 0; r < n_; ++r) {
      Task step =
          AdamStepTask(st_.non_expert_params + st_.experts_per_rank * st_.expert_params, st_.dtype);
      step.rank = r;
      step.stream = compute_;
      step.iteration = t;
      step.name = "it" + std::to_string(t) + "/adam";
      step.deps = ready[r];
      step.deps.push_back(last[r]);
      prev_adam_[r] = g_.Add(std::move(step));
    }
  }

  void AllReduce(double params, const std::string& name, const std::vector<TaskId>& deps,
                 std::vector<std::vector<TaskId>>& ready) {
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
      ready[r].push_back(ids[r]);
    }
  }

  // Reduces the replicas' gradients of layer l to their owners ("Agg"); frees the copies.
  void Aggregate(const LayerDecision& d, int l, const std::vector<TaskId>& expert_end,
                 std::vector<std::vector<TaskId>>& ready) {
    agg_last_.assign(n_, -1);
    const double e = BytesPerElement(st_.dtype);
    const int stream = sc_.overlap_aggregation ? placement_ : compute_;
    for (const Replica& rep : d.replicas) {
      Collective c;
      c.kind = CollectiveKind::kReduce;
      c.ranks = {rep.owner};
      c.ranks.insert(c.ranks.end(), rep.holders.begin(), rep.holders.end());
      c.root = rep.owner;
      c.bytes = st_.expert_params * e;
      c.dtype = st_.dtype;
      Task member = Base(0, stream, Phase::kCommunication,
                         "layer" + std::to_string(l) + "/agg/expert" + std::to_string(rep.expert));
      member.category = "placement";
      std::vector<TaskId> ids = g_.AddCollective(c, member);
      for (size_t i = 0; i < c.ranks.size(); ++i) {
        const int r = c.ranks[i];
        if (expert_end[r] >= 0) g_.AddDep(ids[i], expert_end[r]);
        ready[r].push_back(ids[i]);
        agg_last_[r] = std::max(agg_last_[r], ids[i]);
      }
      if (it_ >= st_.warmup) transfer_bytes_ += c.bytes * rep.holders.size();
    }
  }

 public:
  double transfer_bytes_ = 0;

 private:
  const MoeSetup& st_;
  const std::vector<std::vector<LayerDecision>>& dec_;
  const MoeSchedule& sc_;
  int n_;
  TaskGraph g_;
  int compute_ = 0, a2a_ = 0, placement_ = 0, dp_ = 0;
  int groups_ = 1;
  int it_ = 0;
  std::vector<int> all_;
  std::vector<TaskId> prev_adam_;
  std::vector<TaskId> agg_last_;
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
  if (schedule.pairwise_group_size > 0 && st.ranks % schedule.pairwise_group_size != 0) {
    throw Error("MoE plan: pairwise group size " + std::to_string(schedule.pairwise_group_size) +
                " does not divide the " + std::to_string(st.ranks) + " ranks");
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
  plan.figures["moe.load_std_before"] = cells > 0 ? before / cells : 0;
  plan.figures["moe.load_std_after"] = cells > 0 ? after / cells : 0;
  plan.figures["moe.dropped_tokens"] = dropped / measured;
  plan.figures["moe.replicas"] = replicas / measured;
  plan.figures["moe.top_k"] = st.top_k;
  plan.figures["moe.tokens_per_iteration"] = st.tokens_per_rank * st.ranks;
  plan.figures["moe.transfer_bytes"] = b.transfer_bytes_ / measured;
  plan.notes.push_back(st.routing_note);
  plan.notes.push_back(std::to_string(st.experts) + " experts over " + std::to_string(st.ranks) +
                       " GPUs" + ", " +
                       Fmt("%.4g M parameters per expert, ", st.expert_params / 1e6) +
                       Fmt("%.0f tokens per GPU per layer", st.tokens_per_rank));
  plan.notes.push_back(Fmt("per-GPU load std (tokens): %.1f routed, %.1f computed",
                           cells > 0 ? before / cells : 0, cells > 0 ? after / cells : 0));
  return plan;
}

}  // namespace stratasim
