// TriRace's part of the pipeline lowering (strategies/pipeline/trirace.h): the three classes'
// streams and priorities, deferred steps, the sparse exchange of the embedding rows and the
// topology-aware choice of a class's stream. PipelineLowering calls these only when
// PipelineShape::classes.enabled.
#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <utility>

#include "core/units.h"
#include "models/token_distribution.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/pipeline/trirace_links.h"

namespace stratasim {
namespace {

std::string Str(long long n) { return std::to_string(n); }

}  // namespace

void PipelineLowering::OpenClassStreams(TaskGraph& g, Streams& st) {
  st.sparse = g.Stream("sparse");
  // Where a class shares no link with a member's point-to-point traffic there is nothing to
  // hold it for: its stream ranks with the point-to-point ones, so no gate holds it.
  st.dp_free = g.Stream("dp_free");
  st.sparse_free = g.Stream("sparse_free");
  for (int s : {st.fwd_send, st.fwd_recv, st.bwd_send, st.bwd_recv, st.dp_free, st.sparse_free}) {
    g.SetStreamPriority(s, CommClasses::kPointToPointPriority);
  }
  g.SetStreamPriority(st.sparse, CommClasses::kSparsePriority);
  g.SetStreamPriority(st.dp, CommClasses::kDensePriority);
}

std::vector<PipelineLowering::Item> PipelineLowering::DeferSteps(std::vector<Item> items) const {
  // PipeDream-2BW's update W(k+1) = W(k) - lr * grad(batch k) (Narayanan et al. 2021, ICML,
  // §3.1: a delay of one version) is first read by batch k + 2's micro-batches: batch k + 1's
  // already run on W(k). So the step of batch k may wait until the stage's first forward of
  // batch k + 2, and batch k's all-reduce spreads over batch k + 1 (m >= stages, which
  // PlanTriRace checks, puts that forward after batch k's last backward).
  std::vector<Item> out;
  std::deque<Item> pending;
  for (const Item& it : items) {
    if (it.kind == Item::kStep) {
      pending.push_back(it);
      continue;
    }
    if (it.kind == Item::kForward) {
      while (!pending.empty() && it.iteration >= pending.front().iteration + 2) {
        out.push_back(pending.front());
        pending.pop_front();
      }
    }
    out.push_back(it);
  }
  out.insert(out.end(), pending.begin(), pending.end());
  return out;
}

int PipelineLowering::CommLabel(int iteration) const {
  if (!o_.classes.enabled || !o_.classes.defer_dense) return iteration;
  const int last = tr_.warmup_iterations + tr_.measured_iterations - 1;
  return std::min(iteration + 1, last);
}

int PipelineLowering::ClassStream(bool sparse, const std::vector<int>& ranks, int st) const {
  const int gated = sparse ? streams_.sparse : streams_.dp;
  if (!o_.classes.topology_aware) return gated;
  for (int r = 0; r < d_; ++r) {
    const int rank = LaneRank(r, st, 0);
    std::vector<std::pair<int, int>> p2p;
    for (int other : {st - 1, st + 1}) {
      if (other < 0 || other >= p_) continue;
      const int peer = LaneRank(r, other, 0);
      p2p.emplace_back(rank, peer);
      p2p.emplace_back(peer, rank);
    }
    const auto mine = sparse ? AllToAllTransfers(ranks, rank) : RingTransfers(ranks, rank);
    const std::string shared =
        SharedLink(LinksOfTransfers(s_.cluster, mine), LinksOfTransfers(s_.cluster, p2p));
    if (!shared.empty()) return gated;
  }
  return sparse ? streams_.sparse_free : streams_.dp_free;
}

void PipelineLowering::SparseExchange(int st, int j, int iteration,
                                      const std::vector<std::vector<TaskId>>& ready_by_replica) {
  const std::optional<SparseEmbedding>& table = w_.sparse_embedding;
  if (!table || table->layer < bounds_[j] || table->layer >= bounds_[j + 1]) return;
  // Each replica's batch: m micro-batches of micro_batch sequences of tokens_per_sample ids.
  const long long draws =
      static_cast<long long>(m_) * tr_.micro_batch * static_cast<long long>(w_.tokens_per_sample);
  const TokenDistribution tokens = TokenDistribution::Of(s_.model);
  const double row_bytes = table->row_params * grad_bytes_ + o_.classes.index_bytes;
  Collective c;
  c.kind = CollectiveKind::kAllToAllV;
  c.dtype = o_.optimizer.GradDType(tr_.precision);
  std::vector<long long> rows(d_);
  for (int q = 0; q < d_; ++q) {
    c.ranks.push_back(LaneRank(q, st, 0));
    rows[q] = tokens.DistinctIds(draws, BatchSeed(tr_.seed, q, iteration));
    sparse_rows_[{iteration, q}] = rows[q];
  }
  // A sparse all-gather: every replica sends its rows and their indices to every other one.
  c.matrix.assign(static_cast<size_t>(d_) * d_, 0);
  for (int from = 0; from < d_; ++from) {
    double sent = 0;
    for (int to = 0; to < d_; ++to) {
      if (from == to) continue;
      c.matrix[from * d_ + to] = static_cast<double>(rows[from]) * row_bytes;
      sent += c.matrix[from * d_ + to];
    }
    c.bytes = std::max(c.bytes, sent);
  }
  const int stream = ClassStream(true, c.ranks, st);
  const DType dtype = c.dtype;
  Task member;
  member.phase = Phase::kCommunication;
  member.category = "sparse";
  member.stream = stream;
  member.iteration = CommLabel(iteration);
  member.name = "it" + Str(iteration) + "/sparse_embedding_exchange";
  const std::vector<int> ranks = c.ranks;
  const std::vector<TaskId> ids = g_.AddCollective(std::move(c), member);
  long long all_rows = 0;
  for (long long n : rows) all_rows += n;
  for (int q = 0; q < d_; ++q) {
    const TaskId ready = ready_by_replica[q][(table->layer - bounds_[j]) * lane_gpus_];
    if (ready >= 0) g_.AddDep(ids[q], ready);
    // The received rows are added into the table's gradient (a scatter-add: read the rows and
    // the gradient rows they hit, write those back), on the class's stream as NCCL's reduction
    // kernels run on theirs.
    Task add;
    add.kind = TaskKind::kCompute;
    add.op = OpKind::kElementwise;
    add.phase = Phase::kOptimizer;
    add.rank = ranks[q];
    add.stream = stream;
    add.iteration = CommLabel(iteration);
    add.dtype = dtype;
    add.name = "it" + Str(iteration) + "/sparse_embedding_accumulate";
    add.bytes = 3.0 * static_cast<double>(all_rows - rows[q]) * table->row_params * grad_bytes_;
    add.deps = {ids[q]};
    dp_members_[ranks[q]][iteration].push_back(g_.Add(std::move(add)));
  }
}

void PipelineLowering::AddClassNotes() {
  std::string streams;
  auto describe = [&](const char* what, bool sparse) {
    std::string gated, free;
    for (int st = 0; st < p_; ++st) {
      if (sparse && !(w_.sparse_embedding && w_.sparse_embedding->layer < bounds_[1] && st == 0)) {
        continue;
      }
      std::vector<int> ranks;
      for (int q = 0; q < d_; ++q) ranks.push_back(LaneRank(q, st, 0));
      const int s = ClassStream(sparse, ranks, st);
      std::string& into = (s == streams_.dp || s == streams_.sparse) ? gated : free;
      into += (into.empty() ? "" : ",") + Str(st);
    }
    return std::string(what) + " held behind point-to-point on stages [" + gated +
           "], free on stages [" + free + "]";
  };
  plan_.notes.push_back("TriRace classes: point-to-point priority " +
                        Str(CommClasses::kPointToPointPriority) + ", sparse " +
                        Str(CommClasses::kSparsePriority) + ", dense " +
                        Str(CommClasses::kDensePriority) + "; " + describe("dense", false) +
                        (o_.classes.sparse ? "; " + describe("sparse", true) : ""));
  if (o_.classes.defer_dense) {
    plan_.notes.push_back(
        "dense all-reduce of batch k deferred over batch k+1: each stage's step waits until its "
        "first forward of batch k+2 (one extra gradient buffer per stage)");
  }
  if (o_.classes.sparse && !sparse_rows_.empty()) {
    long long min_rows = -1, max_rows = 0;
    for (const auto& [key, n] : sparse_rows_) {
      min_rows = min_rows < 0 ? n : std::min(min_rows, n);
      max_rows = std::max(max_rows, n);
    }
    const double row_bytes = w_.sparse_embedding->row_params * grad_bytes_ + o_.classes.index_bytes;
    plan_.notes.push_back(
        "sparse embedding: " + Str(min_rows) + "-" + Str(max_rows) + " distinct token rows of " +
        Str(static_cast<long long>(w_.sparse_embedding->rows)) + " per replica per batch (" +
        FormatBytes(min_rows * row_bytes) + "-" + FormatBytes(max_rows * row_bytes) +
        " sent to each other replica) instead of all-reducing " +
        FormatBytes(w_.sparse_embedding->rows * w_.sparse_embedding->row_params * grad_bytes_));
  }
}

}  // namespace stratasim
