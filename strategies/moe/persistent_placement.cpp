#include "strategies/moe/persistent_placement.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "models/memory.h"

namespace stratasim {

std::vector<ExpertCopy> CopiesOf(const std::vector<Replica>& replicas) {
  std::vector<ExpertCopy> copies;
  for (const Replica& r : replicas) {
    for (int h : r.holders) copies.emplace_back(r.expert, h);
  }
  std::sort(copies.begin(), copies.end());
  return copies;
}

std::vector<Replica> AddedCopies(const std::vector<Replica>& before,
                                 const std::vector<Replica>& now) {
  const std::vector<ExpertCopy> had = CopiesOf(before);
  std::vector<Replica> added;
  for (const Replica& r : now) {
    Replica a{r.expert, r.owner, {}};
    for (int h : r.holders) {
      if (!std::binary_search(had.begin(), had.end(), ExpertCopy{r.expert, h})) {
        a.holders.push_back(h);
      }
    }
    if (!a.holders.empty()) added.push_back(std::move(a));
  }
  return added;
}

int PlacementChanges(const std::vector<Replica>& before, const std::vector<Replica>& now) {
  const std::vector<ExpertCopy> a = CopiesOf(before), b = CopiesOf(now);
  std::vector<ExpertCopy> diff;
  std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(diff));
  return static_cast<int>(diff.size());
}

CopyStateBytes ExpertCopyStateBytes(double expert_params, DType dtype) {
  // The holder computes its own gradients; it receives the weights the forward reads (in the
  // training dtype, as the non-persistent broadcast sends them) and Adam's FP32 state.
  CopyStateBytes b;
  b.params = expert_params * BytesPerElement(dtype);
  b.optimizer = AdamStateBytes(expert_params, dtype).optimizer;
  return b;
}

namespace {

double TransferFormSeconds(const std::vector<Replica>& replicas, int ranks, const MoeCostModel& m,
                           double bytes) {
  LayerDecision d;
  d.replicas = replicas;
  MoeCostModel with = m;
  with.expert_bytes = bytes;
  return ReplicaTransferSeconds(d, ranks, with);
}

// The copies of `a` that `b` also has.
std::vector<Replica> CommonCopies(const std::vector<Replica>& a, const std::vector<Replica>& b) {
  const std::vector<ExpertCopy> in_b = CopiesOf(b);
  std::vector<Replica> common;
  for (const Replica& r : a) {
    Replica c{r.expert, r.owner, {}};
    for (int h : r.holders) {
      if (std::binary_search(in_b.begin(), in_b.end(), ExpertCopy{r.expert, h})) {
        c.holders.push_back(h);
      }
    }
    if (!c.holders.empty()) common.push_back(std::move(c));
  }
  return common;
}

}  // namespace

PersistentTransfers PersistentTransferSeconds(const std::vector<Replica>& placement,
                                              const std::vector<Replica>& held, int ranks,
                                              const MoeCostModel& m, const CopyStateBytes& state) {
  const std::vector<Replica> added = AddedCopies(held, placement);
  PersistentTransfers t;
  t.trans_s = TransferFormSeconds(added, ranks, m, state.params);
  t.agg_s = 2 * TransferFormSeconds(placement, ranks, m, m.expert_bytes) +
            TransferFormSeconds(added, ranks, m, state.optimizer);
  return t;
}

KeepOrReplanChoice KeepOrReplan(const TokenMatrix& predicted, int experts_per_rank, bool spread,
                                const std::vector<Replica>& previous, std::vector<Replica> fresh,
                                const LayerSecondsFn& seconds, const MoeCostModel& m,
                                const CopyStateBytes& state, double* regret_s) {
  const int ranks = static_cast<int>(predicted.size());
  // T' of `placement` when `held` is what the holders have.
  const auto modelled = [&](const std::vector<Replica>& placement,
                            const std::vector<Replica>& held) {
    const PersistentTransfers t = PersistentTransferSeconds(placement, held, ranks, m, state);
    return seconds(ReplicatedPlacement(predicted, experts_per_rank, placement, spread), t.trans_s,
                   t.agg_s);
  };
  KeepOrReplanChoice c;
  c.kept_s = modelled(previous, previous);
  c.fresh_s = modelled(fresh, fresh);
  // Moving the new copies' parameters and optimizer state, in full: the first iteration of a
  // new placement sends them while every layer's new copies share the placement stream.
  c.replan_s = TransferFormSeconds(AddedCopies(previous, fresh), ranks, m, state.Total());
  const std::vector<Replica> common = CommonCopies(previous, fresh);
  c.partial_s = modelled(common, previous);
  // Staying sends nothing: the previous placement, or only its copies the fresh plan also has
  // when dropping the others is faster (a dropped copy moves nothing).
  c.partial = c.partial_s < c.kept_s;
  const double stay_s = c.partial ? c.partial_s : c.kept_s;
  const double regret = *regret_s + std::max(0.0, stay_s - c.fresh_s);
  if (regret <= c.replan_s) {
    c.kept = !c.partial;
    c.replicas = c.partial ? common : previous;
    *regret_s = regret;
  } else {
    c.partial = false;
    c.replicas = std::move(fresh);
    *regret_s = 0;
  }
  return c;
}

void FillPlacementFigures(const std::vector<std::vector<LayerDecision>>& decisions, int warmup,
                          bool persistent, MoeFigures* f) {
  double changes = 0, kept = 0, candidates = 0;
  const int iterations = static_cast<int>(decisions.size());
  for (int t = std::max(warmup, 0); t < iterations; ++t) {
    for (size_t l = 0; l < decisions[t].size(); ++l) {
      static const std::vector<Replica> kNone;
      const std::vector<Replica>& before = t > 0 ? decisions[t - 1][l].replicas : kNone;
      const std::vector<Replica>& now = decisions[t][l].replicas;
      const int n = PlacementChanges(before, now);
      changes += n;
      if (!before.empty()) {
        candidates += 1;
        if (persistent && n == 0) kept += 1;
      }
    }
  }
  const int measured = iterations - std::max(warmup, 0);
  f->placement_changes = measured > 0 ? changes / measured : 0;
  f->placement_kept_fraction = candidates > 0 ? kept / candidates : 0;
}

std::string PersistentPlacementNote(const MoeFigures& f) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "persistent placements: %.1f copies created or dropped per iteration, %.0f%% of "
                "(iteration, layer) placements kept, %.4g MB per iteration moved less than "
                "re-sending every copy",
                f.placement_changes, 100 * f.placement_kept_fraction, f.transfer_bytes_saved / 1e6);
  return buf;
}

}  // namespace stratasim
