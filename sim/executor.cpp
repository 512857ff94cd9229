#include "sim/executor.h"

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

#include "core/compute_model.h"
#include "core/error.h"
#include "core/graph_index.h"
#include "core/limits.h"
#include "sim/collectives/group_view.h"
#include "sim/collectives/lowering.h"
#include "sim/latency_groups.h"
#include "sim/link_probe.h"
#include "sim/maestro_list.h"
#include "sim/platform.h"
#include "sim/stream_gate.h"
#include "sim/trace_wire.h"

namespace sg4 = simgrid::s4u;

namespace stratasim::sim {
namespace {

// Run-time state of one collective, created when its first member joins.
struct CollectiveState {
  CollectiveChoice choice;
  double analytic_s = -1;  // kAnalytic fidelity: the predicted time, run as one timer
  FlowProgram program;
  std::vector<int> deps_left;  // per flow
  // Per flow, the flows depending on it, each as 2 x index + 1 if it follows the flow on its
  // connection (Flow::follows): FlowDone tells the two kinds apart without reading the
  // successor's Flow, a cache miss per edge on the millions of flows of a large ring.
  std::vector<std::vector<int>> successors;
  std::vector<std::vector<int>> member_flows;  // flows touching each member
  std::vector<int> flows_left;                 // per member
  std::vector<char> joined;                    // per member
  std::vector<char> started;                   // per flow
  // Per flow, when its last dependency so far is met: a dependency's delivery, or the end of
  // the transfer of the flow it follows (Flow::follows). Per member, when its last flow so far
  // delivered. Kept as times, not timers: a flow or member waits with a timer only if it is
  // ready once its last dependency is known and that time is still ahead.
  std::vector<double> ready_at;
  std::vector<double> member_end_s;
  // Per flow, fixed time before and after its transfer; both empty when every flow just pays
  // its delay before (step fidelity: no per-flow doubles for the millions of flows of a ring).
  std::vector<double> before_s;
  std::vector<double> after_s;
  LatencyGroups groups;  // stream rings: when their flows complete (sim/latency_groups.h)
  int members_joined = 0;
  int members_done = 0;
};

// What a running SimGrid activity or pending timer stands for. A collective's flow runs in two
// stages: its protocol delay (a timer) and its transfer (a Comm); its data arrives a route
// latency later, which its successors and members account for without a timer of their own.
enum class What {
  kTask,
  kFusedChain,
  kCopyStart,
  kTransferStart,
  kTransfer,
  kFlowDelay,
  kFlowComm,
  kFlowGroupDone,
  kMemberDone,
  kAnalyticCollective,
  kRankStart
};

struct Running {
  sg4::ActivityPtr activity;
  What what = What::kTask;
  int a = 0;      // task id, or collective index
  int b = 0;      // flow index
  int comm = -1;  // a Comm's slot in the LinkProbe
};

// Per-task state of the tasks not yet retired, indexed by task id: a vector whose front is
// dropped in amortised O(1) (only once half of it is dead), as a deque's indexing is slower
// on the executor's hot path.
// Finished tasks retire in batches of at least this many (and a quarter of what is held):
// each batch costs a pass over the tasks held and a seal of the metrics over every rank, so a
// batch per task would make a run quadratic. A bookkeeping choice, not a model parameter.
constexpr TaskId kMinRetireBatch = 4096;

template <typename T>
class Window {
 public:
  T& operator[](long long id) { return v_[static_cast<size_t>(id - base_)]; }
  const T& operator[](long long id) const { return v_[static_cast<size_t>(id - base_)]; }
  long long end() const { return base_ + static_cast<long long>(v_.size()); }
  void GrowTo(long long end, const T& value) { v_.resize(static_cast<size_t>(end - base_), value); }
  void DropBelow(long long id) {
    dead_ = id - base_;
    if (dead_ * 2 < static_cast<long long>(v_.size()) && id < end()) return;
    v_.erase(v_.begin(), v_.begin() + dead_);
    base_ = id;
    dead_ = 0;
  }

 private:
  std::vector<T> v_;
  long long base_ = 0;
  long long dead_ = 0;
};

class Executor {
 public:
  Executor(TaskSource& source, const ClusterSpec& cluster, const SimulationSpec& spec,
           const Platform& platform, const RetireSink& sink)
      : source_(source),
        cluster_(cluster),
        spec_(spec),
        platform_(platform),
        sink_(sink),
        gate_(source.graph().num_ranks()) {
    const TaskGraph& g = source.graph();
    num_ranks_ = g.num_ranks();
    gated_ = g.has_stream_priorities();
    // Fusion (SimulationSpec::fuse) is exact only where a rank's kernels never share its GPU
    // host: all of its compute tasks on one stream, which runs them one at a time.
    fusible_rank_.assign(num_ranks_, spec.fuse ? 1 : 0);
    compute_stream_.assign(num_ranks_, -1);
    succ_begin_.GrowTo(1, 0);
  }

  // Runs the graph; returns the trace without its records, which the sink received one by
  // one as tasks retired.
  ExecutionTrace Run() {
    ArmRankStarts();
    Ingest(1);
    // A folded rank runs as its representative (strategies/fold.h), which a straggler breaks:
    // planners refuse to fold then, and a folded graph from elsewhere is refused here.
    if (!cluster_.stragglers.empty() && !G().fold().empty()) {
      throw Error(
          "a folded task graph cannot run with stragglers; plan it with simulation.fold off");
    }
    Drain();
    for (;;) {
      sg4::Engine::get_instance()->run();
      graveyard_.clear();
      // Every known task ran and no stream asked for more (a planner whose next iteration
      // has no task after any of this one's): take the rest in.
      if (complete_) break;
      Ingest(requested_ + 1);
      Drain();
      MaybeRetire();
    }
    CheckAllRan();
    if (sink_.task) {
      Retire(ingested_end_, true);
    } else {
      for (TaskId id = 0; id < ingested_end_; ++id) {
        makespan_s_ = std::max(makespan_s_, times_[id].end_s);
      }
    }
    ExecutionTrace trace;
    trace.executor = "simgrid";
    trace.num_ranks = num_ranks_;
    trace.streams = source_.graph().streams();
    trace.activities = activities_;
    trace.instants = instants_;
    trace.fused_tasks = fused_tasks_;
    trace.makespan_s = makespan_s_;
    trace.link_usage = probe_.Finish(makespan_s_);
    return trace;
  }

  // Without a sink nothing retires, and the whole trace is read here after Run.
  TraceRecord Record(TaskId id) const {
    const Task& t = G().task(id);
    const Times& r = times_[id];
    return TraceRecord{id, t.rank, t.stream, r.start_s, r.end_s, r.peers_joined_s};
  }
  const std::string& Algorithm(int collective) const { return chosen_[collective]; }

  void OnCompletion(const sg4::Activity& activity) {
    graveyard_.clear();  // activities of earlier callbacks; never free one inside its own
    auto it = running_.find(&activity);
    if (it == running_.end()) return;
    CountInstant();
    Running r = std::move(it->second);
    running_.erase(it);
    if (r.comm >= 0) probe_.Done(r.comm, Now());
    probe_.Tick(Now());
    Fire(r.what, r.a, r.b);
    graveyard_.push_back(std::move(r.activity));
    Drain();
    MaybeRetire();
  }

 private:
  // The end of an activity or timer standing for `what`.
  void Fire(What what, int a, int b) {
    switch (what) {
      case What::kTask:
        done_queue_.push_back(a);
        break;
      case What::kFusedChain:
        FinishFused(a);
        break;
      case What::kCopyStart:
        StartCopy(a);
        break;
      case What::kTransferStart: {
        const Task& send = G().task(a);
        LaunchComm(EndHost(send), EndHost(G().task(index_.Peer(send))), send.bytes, What::kTransfer,
                   a, 0);
        break;
      }
      case What::kTransfer:
        done_queue_.push_back(a);
        done_queue_.push_back(index_.Peer(G().task(a)));
        break;
      case What::kFlowDelay:
        StartFlowComm(a, b);
        break;
      case What::kFlowComm:
        FlowCommDone(a, b);
        break;
      case What::kFlowGroupDone:
        FlowDone(a, b, Now(), Now());
        break;
      case What::kMemberDone:
        MemberDone(a, b);
        ReleaseIfDone(a);
        break;
      case What::kRankStart:
        ReleaseRank(a);
        break;
      case What::kAnalyticCollective: {
        const Collective& c = G().collective(a);
        for (int m = 0; m < static_cast<int>(c.members.size()); ++m) MemberDone(a, m);
        ReleaseIfDone(a);
        break;
      }
    }
  }

  const TaskGraph& G() const { return source_.graph(); }

  // --- taking tasks in, and retiring them ---

  // The distinct predecessors of `t`: its dependencies and the task before it on its (rank,
  // stream), which it then becomes. One edge per predecessor: a dependency on the previous
  // task of the same stream is the stream edge too, and a duplicate edge would hide from
  // fusion that the task has a single successor.
  void Predecessors(const Task& t, std::vector<TaskId>* preds) {
    std::vector<TaskId>& last = last_on_stream_[static_cast<size_t>(t.rank)];
    if (last.size() < G().streams().size()) last.resize(G().streams().size(), -1);
    TaskId& prev = last[static_cast<size_t>(t.stream)];
    preds->assign(t.deps.begin(), t.deps.end());
    if (prev >= 0) preds->push_back(prev);
    std::sort(preds->begin(), preds->end());
    preds->erase(std::unique(preds->begin(), preds->end()), preds->end());
    prev = t.id;
  }

  // Asks the source for the iterations up to `iteration` and takes in what it added. Each
  // task waits for its predecessors (Predecessors), like a kernel on a CUDA stream. A
  // predecessor already finished (or retired) is no edge at all; one taken in earlier and
  // still running is a late edge, kept in a map beside the successor lists of each batch
  // taken in (CSR: 4 bytes an edge).
  void Ingest(int iteration) {
    if (!complete_) complete_ = !source_.More(iteration);
    requested_ = std::max(requested_, iteration);
    const TaskGraph& g = G();
    gated_ = gated_ || g.has_stream_priorities();
    const TaskId lo = ingested_end_, hi = g.next_id();
    if (hi == lo) return;
    if (last_on_stream_.empty()) {
      last_on_stream_.assign(static_cast<size_t>(num_ranks_), {});
    }
    pending_.GrowTo(hi, 0);
    times_.GrowTo(hi, Times{});
    done_.GrowTo(hi, 0);
    claimed_.GrowTo(hi, 0);
    // Two passes over the batch, as a stored edge list would cost 8 bytes an edge at once
    // (hundreds of MB for the 1 T-parameter plan): the first counts each task's successors in
    // the batch, the second places them. Both see the same predecessors: the stream order is
    // replayed from where the batch began.
    std::vector<std::uint32_t> count(static_cast<size_t>(hi - lo) + 1, 0);
    std::vector<TaskId> preds;
    const std::vector<std::vector<TaskId>> last_before = last_on_stream_;
    for (TaskId id = lo; id < hi; ++id) {
      const Task& t = g.task(id);
      Predecessors(t, &preds);
      for (TaskId d : preds) {
        if (d < retired_ || done_[d]) continue;
        if (claimed_[d]) RefuseLateEdge(t, d);
        ++pending_[id];
        if (d >= lo) {
          ++count[static_cast<size_t>(d - lo) + 1];
        } else {
          late_succ_[d].push_back(id);
        }
      }
      if (t.mirror >= 0 && t.mirror >= retired_ && claimed_[t.mirror]) RefuseLateEdge(t, t.mirror);
      if (t.mirror >= 0 && t.mirror >= retired_ && times_[t.mirror].start_s < 0) {
        mirrors_[t.mirror].push_back(id);  // waits for its counterpart's start (Task::mirror)
        ++pending_[id];
      }
      if (lo > 0 && pending_[id] == 0) CheckNotLate(t, preds);
      if (t.kind == TaskKind::kCompute) {
        int& cs = compute_stream_[static_cast<size_t>(t.rank)];
        if (cs >= 0 && cs != t.stream) fusible_rank_[static_cast<size_t>(t.rank)] = 0;
        cs = t.stream;
      }
      index_.Add(t);
    }
    // The batch's successor lists, after those of earlier batches.
    const std::uint64_t first = succ_begin_[lo];
    for (size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
    succ_begin_.GrowTo(hi + 1, 0);
    for (TaskId id = lo; id <= hi; ++id) {
      succ_begin_[id] = first + count[static_cast<size_t>(id - lo)];
    }
    succ_.GrowTo(static_cast<long long>(first + count.back()), -1);
    const std::vector<std::vector<TaskId>> last_after = std::move(last_on_stream_);
    last_on_stream_ = last_before;
    for (TaskId id = lo; id < hi; ++id) {
      Predecessors(g.task(id), &preds);
      for (TaskId d : preds) {
        if (d >= lo)
          succ_[static_cast<long long>(first + count[static_cast<size_t>(d - lo)]++)] = id;
      }
    }
    last_on_stream_ = last_after;
    collectives_.GrowTo(g.next_collective(), CollectiveState{});
    chosen_.GrowTo(g.next_collective(), std::string());
    ingested_end_ = hi;
    for (TaskId id = lo; id < hi; ++id) {
      if (pending_[id] == 0) ready_.push_back(id);
    }
  }

  // A task taken in with nothing left to wait for starts now. Simulated whole, it would have
  // started when its last predecessor ended (or its mirror's counterpart started): if that was
  // earlier, or is unknown because the predecessor retired, taking it in now changed the
  // simulation. No planner's graph does this (tests/streamed_run_test.cpp); one that did
  // must be simulated whole.
  void CheckNotLate(const Task& t, const std::vector<TaskId>& preds) const {
    double ready = preds.empty() && t.mirror < 0 ? 0.0 : -1.0;
    bool unknown = false;
    for (TaskId d : preds) {
      if (d < retired_) {
        unknown = true;
      } else {
        ready = std::max(ready, times_[d].end_s);
      }
    }
    if (t.mirror >= 0) {
      if (t.mirror < retired_) {
        unknown = true;
      } else {
        ready = std::max(ready, times_[t.mirror].start_s);
      }
    }
    if (!unknown && ready >= Now()) return;
    char when[64];
    std::snprintf(when, sizeof when, unknown ? "before %.9g s" : "at %.9g s",
                  unknown ? Now() : ready);
    throw Error("simulating while planning: task " + std::to_string(t.id) + " '" + t.name +
                "' (iteration " + std::to_string(t.iteration) + ") could start " + when +
                ", before its iteration was planned; " + kSimulateWhole);
  }

  // A task taken in that waits for a task already running inside a fused chain (claimed by
  // StartCompute) would be released at the chain's end, not at that task's: a dependency two
  // iterations ahead, which no planner makes. Refused rather than simulated differently.
  [[noreturn]] void RefuseLateEdge(const Task& t, TaskId on) const {
    throw Error("simulating while planning: task " + std::to_string(t.id) + " '" + t.name +
                "' (iteration " + std::to_string(t.iteration) + ") waits for task " +
                std::to_string(on) + ", which already runs fused with others; " + kSimulateWhole);
  }

  // Before task `t` starts: the next iteration is taken in once a task of this one starts,
  // so that a task's successors in the next iteration are known when it runs (fusion needs
  // them).
  void TakeInBefore(const Task& t) {
    if (complete_) return;
    if (t.iteration + 1 > requested_) Ingest(t.iteration + 1);
    // A stream used every other iteration gets the one after next; no further, as that would
    // take in the whole plan for a stream used once. Ingest checks that no task came late.
    const bool dry =
        last_on_stream_[static_cast<size_t>(t.rank)][static_cast<size_t>(t.stream)] == t.id;
    if (!complete_ && dry && requested_ < t.iteration + 2) Ingest(t.iteration + 2);
  }

  // How many successors of `id` are in its batch's lists.
  std::size_t SuccCount(TaskId id) const {
    return static_cast<std::size_t>(succ_begin_[id + 1] - succ_begin_[id]);
  }
  // The single successor of `id`, or -1 when it has none or several.
  TaskId SingleSuccessor(TaskId id) const {
    auto late = late_succ_.find(id);
    const std::size_t n = SuccCount(id) + (late == late_succ_.end() ? 0 : late->second.size());
    if (n != 1) return -1;
    return SuccCount(id) == 1 ? succ_[static_cast<long long>(succ_begin_[id])] : late->second[0];
  }
  void ReleaseSuccessors(TaskId id) {
    for (std::uint64_t e = succ_begin_[id]; e < succ_begin_[id + 1]; ++e) {
      const TaskId s = succ_[static_cast<long long>(e)];
      if (--pending_[s] == 0) ready_.push_back(s);
    }
    if (late_succ_.empty()) return;
    auto late = late_succ_.find(id);
    if (late == late_succ_.end()) return;
    for (TaskId s : late->second) {
      if (--pending_[s] == 0) ready_.push_back(s);
    }
    late_succ_.erase(late);
  }

  // Hands the finished tasks at the front to the sink once enough have gathered (or all, at
  // the end), and drops their state.
  void MaybeRetire() {
    if (!sink_.task) return;  // nothing retires: the caller reads Record() at the end
    while (retire_cursor_ < ingested_end_ && done_[retire_cursor_]) ++retire_cursor_;
    const TaskId live = ingested_end_ - retired_;
    if (retire_cursor_ - retired_ >= std::max<TaskId>(kMinRetireBatch, live / 4)) {
      Retire(retire_cursor_, false);
    }
  }

  void Retire(TaskId below, bool last) {
    const TaskGraph& g = G();
    for (TaskId id = retired_; id < below; ++id) {
      const Task& t = g.task(id);
      const Times& r = times_[id];
      makespan_s_ = std::max(makespan_s_, r.end_s);
      const std::string& algorithm =
          t.kind == TaskKind::kCollective ? chosen_[t.collective] : kNoAlgorithm;
      sink_.task(t, TraceRecord{id, t.rank, t.stream, r.start_s, r.end_s, r.peers_joined_s},
                 algorithm);
    }
    // Nothing handed over later started before `safe`: the tasks still held that started,
    // and the others, which start now or later. After the last there is nothing to seal.
    if (sink_.seal && !last) {
      double safe = Now();
      for (TaskId id = below; id < ingested_end_; ++id) {
        if (times_[id].start_s >= 0) safe = std::min(safe, times_[id].start_s);
      }
      sink_.seal(safe);
    }
    retired_ = below;
    pending_.DropBelow(below);
    times_.DropBelow(below);
    done_.DropBelow(below);
    claimed_.DropBelow(below);
    index_.Retire(below);
    succ_.DropBelow(static_cast<long long>(succ_begin_[below]));
    succ_begin_.DropBelow(below);
    if (!source_.retires()) return;  // a whole graph keeps its tasks: its caller holds them
    source_.Retire(below);
    const int first_collective = G().next_collective() - static_cast<int>(G().collectives().size());
    collectives_.DropBelow(first_collective);
    chosen_.DropBelow(first_collective);
  }

  double Now() const { return sg4::Engine::get_clock(); }

  // Starts ready tasks and finishes completed ones until nothing more happens at this instant.
  // With stream priorities, the communication tasks that became ready (or were released by
  // the gate) wait until everything else of this pass is done, and then pass the gate
  // together, highest priority first (PassGate).
  void Drain() {
    for (;;) {
      while (!ready_.empty() || !done_queue_.empty()) {
        if (!done_queue_.empty()) {
          TaskId t = done_queue_.front();
          done_queue_.pop_front();
          Finish(t);
        } else {
          TaskId t = ready_.front();
          ready_.pop_front();
          if (HeldUntilRankStart(t)) continue;
          if (gated_ && Gated(G().task(t))) {
            // Taken in as when it is ready, gate or not: what a streamed run takes in, and
            // when, stays that of a run without priorities.
            TakeInBefore(G().task(t));
            arrivals_.push_back(t);
          } else {
            Start(t);
          }
        }
      }
      if (arrivals_.empty()) return;
      PassGate();
    }
  }

  // --- rank start times (TaskGraph::SetRankStart: a job's arrival, docs/multi-job.md) ---
  //
  // A rank with a start time holds every task of its own that becomes ready before then, and
  // a SimGrid timer at that time releases them; a task ready later starts as usual.
  void ArmRankStarts() {
    const std::vector<double>& starts = G().rank_starts();
    for (int r = 0; r < static_cast<int>(starts.size()); ++r) {
      if (starts[static_cast<size_t>(r)] <= 0) continue;
      if (rank_held_.empty()) rank_held_.resize(static_cast<size_t>(num_ranks_));
      rank_held_[static_cast<size_t>(r)].waiting = true;
      At(starts[static_cast<size_t>(r)], What::kRankStart, r, 0);
    }
  }
  bool HeldUntilRankStart(TaskId id) {
    if (rank_held_.empty()) return false;
    RankHold& h = rank_held_[static_cast<size_t>(G().task(id).rank)];
    if (!h.waiting) return false;
    h.tasks.push_back(id);
    return true;
  }
  void ReleaseRank(int rank) {
    RankHold& h = rank_held_[static_cast<size_t>(rank)];
    h.waiting = false;
    for (TaskId id : h.tasks) ready_.push_back(id);
    h.tasks.clear();
  }

  // --- stream priorities (TaskGraph::SetStreamPriority, sim/stream_gate.h) ---
  //
  // A communication task is a Send, a Recv or a collective member that is not a mirror. It
  // does not start while a communication task of a higher-priority stream is in flight on its
  // rank. In flight: a transfer's two ends from the moment both started (the rendezvous)
  // until it ends; a collective's members from the moment the last member joined until each
  // member's own end (a member with no flow left then is not counted). Copies are not gated:
  // they run on the copy engines, whose order CUDA stream priorities do not set. Mirrors are
  // not gated either: a mirror starts with its counterpart (Task::mirror), which the gate
  // already held, so a folded rank follows its representative as it did.
  //
  // No deadlock: a held task waits only for tasks in flight, and a task in flight waits for
  // no task at all. Once every end or member of a transfer or collective has started, what
  // is left of it is flows, timers and route latencies that SimGrid completes by itself; so
  // no task in flight can be waiting, directly or through others, for a task the gate holds.
  // A task that started but is not yet in flight (its peer has not started) holds nothing,
  // which is why "started" is not enough: a high-priority send waiting for a receive that
  // depends on a low-priority transfer of the same rank would otherwise hold that transfer
  // forever. Each task in flight ends after a finite time, so every held task starts.
  //
  // No preemption: a lower-priority task already started keeps going and shares the links
  // with the higher one, as a running NCCL kernel keeps its SMs.
  bool Gated(const Task& t) const {
    return t.mirror < 0 && (t.kind == TaskKind::kSend || t.kind == TaskKind::kRecv ||
                            t.kind == TaskKind::kCollective);
  }
  int Priority(const Task& t) const { return G().stream_priority(t.stream); }

  // Starts the arrivals that no task in flight on their rank holds, highest priority first,
  // then lowest id; holds the others. A task started here may take off at once (the second
  // end of a transfer), and then holds the lower ones after it.
  void PassGate() {
    std::vector<TaskId> batch;
    batch.swap(arrivals_);
    std::vector<std::pair<int, TaskId>> order;
    order.reserve(batch.size());
    for (TaskId id : batch) order.push_back({-Priority(G().task(id)), id});
    std::sort(order.begin(), order.end());
    for (const auto& [neg_priority, id] : order) {
      const int rank = G().task(id).rank;
      if (gate_.Holds(rank, -neg_priority)) {
        gate_.Hold(rank, -neg_priority, id);
      } else {
        Start(id);
      }
    }
  }

  void TakeOff(TaskId id) {
    const Task& t = G().task(id);
    if (Gated(t)) gate_.TakeOff(t.rank, Priority(t), id);
  }

  void Start(TaskId id) {
    TakeInBefore(G().task(id));  // first: taking tasks in moves the per-task state
    const Task& t = G().task(id);
    Times& rec = times_[id];
    rec.start_s = rec.peers_joined_s = Now();
    if (!mirrors_.empty()) {
      auto it = mirrors_.find(id);
      if (it != mirrors_.end()) {
        for (TaskId m : it->second) {
          if (--pending_[m] == 0) ready_.push_back(m);
        }
        mirrors_.erase(it);
      }
    }
    switch (t.kind) {
      case TaskKind::kMemory:
        done_queue_.push_back(id);
        break;
      case TaskKind::kCompute:
        StartCompute(id);
        break;
      case TaskKind::kCopy: {
        // The route latency first (see Platform::link_latency_s), then the Comm.
        const double latency =
            RouteLatencySeconds(platform_, platform_.host_cpus[t.rank], platform_.gpus[t.rank]);
        if (latency > 0) {
          After(latency, What::kCopyStart, id, 0);
        } else {
          StartCopy(id);
        }
        break;
      }
      case TaskKind::kSend:
      case TaskKind::kRecv: {
        // A transfer waits for both its Send and its Recv to be ready (rendezvous): the
        // second to start moves it.
        const TaskId peer = index_.Peer(t);
        if (peer < 0 || times_[peer].start_s < 0) break;
        const TaskId send_id = t.kind == TaskKind::kSend ? id : peer;
        const TaskId recv_id = t.kind == TaskKind::kSend ? peer : id;
        const Task& send = G().task(send_id);
        times_[send_id].peers_joined_s = times_[recv_id].peers_joined_s = Now();
        if (gated_) {
          TakeOff(send_id);
          TakeOff(recv_id);
        }
        const Task& recv = G().task(recv_id);
        const double latency = send.on_host || recv.on_host
                                   ? RouteLatencySeconds(platform_, EndHost(send), EndHost(recv))
                                   : RouteLatency(send.rank, send.peer);
        if (latency > 0) {
          After(latency, What::kTransferStart, send_id, 0);
        } else {
          Fire(What::kTransferStart, send_id, 0);
        }
        break;
      }
      case TaskKind::kCollective:
        Join(t);
        break;
    }
  }

  // Starts compute task `id` as one Exec, fused with the chain of compute and memory tasks after
  // it that nothing else observes (SimulationSpec::fuse): each next task's only predecessor
  // still pending is the one before, which has no other successor. No other task can start or
  // see anything during the chain, and the rank's one compute stream keeps every other Exec
  // off its host, so the Exec runs at a constant rate and the parts' times follow exactly from
  // their durations (FinishFused).
  [[gnu::noinline]] void StartCompute(TaskId id) {
    const Task& t = G().task(id);
    if (t.on_host) {
      StartHostCompute(id);
      return;
    }
    double seconds = ComputeSeconds(t);
    if (fusible_rank_[t.rank]) {
      fused_parts_.clear();
      fused_parts_.push_back({id, seconds});
      for (TaskId cur = id;;) {
        const TaskId next = SingleSuccessor(cur);
        if (next < 0) break;
        const Task& n = G().task(next);
        // A task of the newest iteration taken in may still get successors from the next:
        // the chain stops before it (Ingest refuses an edge to a claimed task).
        if (pending_[next] != 1 || n.rank != t.rank || mirrors_.count(next) > 0 ||
            (n.kind != TaskKind::kCompute && n.kind != TaskKind::kMemory) || n.on_host ||
            (!complete_ && n.iteration >= requested_)) {
          break;
        }
        const double part = n.kind == TaskKind::kMemory ? 0.0 : ComputeSeconds(n);
        pending_[next] = 0;  // claimed: it runs inside this Exec, never from ready_
        claimed_[next] = 1;
        fused_parts_.push_back({next, part});
        seconds += part;
        cur = next;
      }
      if (fused_parts_.size() > 1) {
        int chain;
        if (free_chains_.empty()) {
          chain = static_cast<int>(fused_chains_.size());
          fused_chains_.emplace_back();
        } else {
          chain = free_chains_.back();
          free_chains_.pop_back();
        }
        fused_chains_[chain] = FusedChain{Now(), seconds, fused_parts_};
        fused_tasks_ += static_cast<long long>(fused_parts_.size()) - 1;
        if (seconds <= 0) {
          FinishFused(chain);
        } else {
          LaunchExec(t.rank, seconds, What::kFusedChain, chain);
        }
        return;
      }
    }
    if (seconds <= 0) {
      done_queue_.push_back(id);
      return;
    }
    LaunchExec(t.rank, seconds, What::kTask, id);
  }

  // A compute task's modelled duration, times its rank's straggler factor for the task's
  // iteration (core/stragglers.h): the Exec is that much longer, so the slowdown passes in
  // simulated time and reaches whatever waits for the task.
  double ComputeSeconds(const Task& t) const {
    const double seconds = std::max(0.0, ComputeTaskSeconds(t, cluster_.GpuOfRank(t.rank), spec_));
    if (cluster_.stragglers.empty()) return seconds;
    return seconds *
           cluster_.stragglers.SlowdownFactor(t.rank, t.iteration, StragglerLevel::kCompute);
  }

  // A kernel of a host CPU socket (Task::on_host): memory-bound, its bytes at the socket's
  // memory bandwidth (kHostMemoryBps); Execs on one socket share it, as SimGrid shares a host.
  void StartHostCompute(TaskId id) {
    const Task& t = G().task(id);
    const double seconds = t.bytes / kHostMemoryBps;
    if (seconds <= 0) {
      done_queue_.push_back(id);
      return;
    }
    sg4::Host* cpu = platform_.host_cpus[t.rank];
    sg4::ExecPtr e = sg4::Exec::init();
    e->set_flops_amount(seconds * cpu->get_speed());
    e->set_host(cpu);
    Launch(e, What::kTask, id, 0);
  }

  // Where a transfer's end runs: its rank's GPU, or its host CPU socket (Task::on_host).
  sg4::Host* EndHost(const Task& t) const {
    return t.on_host ? platform_.host_cpus[t.rank] : platform_.gpus[t.rank];
  }

  void LaunchExec(int rank, double seconds, What what, int x) {
    sg4::ExecPtr e = sg4::Exec::init();
    e->set_flops_amount(seconds * platform_.gpu_speed[rank]);
    e->set_host(platform_.gpus[rank]);
    Launch(e, what, x, 0);
  }

  // A fused chain's Exec ended: each part gets its share of the elapsed time in order (the
  // elapsed time equals the durations' sum up to rounding; scaling keeps the last end exact),
  // then the last part finishes as a task does, releasing the chain's successors.
  [[gnu::noinline]] void FinishFused(int chain) {
    FusedChain c = std::move(fused_chains_[chain]);
    fused_chains_[chain] = FusedChain{};
    free_chains_.push_back(chain);
    const double elapsed = Now() - c.start_s;
    double sum = 0;
    for (size_t i = 0; i < c.parts.size(); ++i) {
      Times& rec = times_[c.parts[i].first];
      rec.start_s = rec.peers_joined_s =
          c.seconds > 0 ? c.start_s + elapsed * (sum / c.seconds) : c.start_s;
      sum += c.parts[i].second;
      if (i + 1 < c.parts.size()) {
        rec.end_s = c.seconds > 0 ? c.start_s + elapsed * (sum / c.seconds) : c.start_s;
        done_[c.parts[i].first] = 1;
        ++finished_;
      }
    }
    done_queue_.push_back(c.parts.back().first);
  }

  void StartCopy(TaskId id) {
    const Task& t = G().task(id);
    sg4::Host* cpu = platform_.host_cpus[t.rank];
    sg4::Host* gpu = platform_.gpus[t.rank];
    const bool h2d = t.copy == CopyDirection::kHostToDevice;
    LaunchComm(h2d ? cpu : gpu, h2d ? gpu : cpu, t.bytes, What::kTask, id, 0);
  }

  void Finish(TaskId id) {
    times_[id].end_s = Now();
    done_[id] = 1;
    ++finished_;
    ReleaseSuccessors(id);
    if (gated_) gate_.Landed(id, &arrivals_);
  }

  // A transfer of `bytes` from `src` to `dst`, whose bytes the probe records on its route.
  void LaunchComm(sg4::Host* src, sg4::Host* dst, double bytes, What what, int x, int y) {
    sg4::CommPtr c = sg4::Comm::sendto_init(src, dst);
    c->set_payload_size(bytes);
    Running& r = Launch(c, what, x, y);
    r.comm = probe_.Started(*c, src, dst, bytes);
  }

  Running& Launch(const sg4::ActivityPtr& a, What what, int x, int y) {
    ++activities_;
    TakeOffMaestroList(*a);  // just created: see sim/maestro_list.h
    a->start();
    Running& r = running_[a.get()];
    r = Running{a, what, x, y};
    return r;
  }

  // Fires `what` after `seconds` of simulated time. Fixed delays (protocol latencies, the route
  // latencies a stream flow stands for, analytic collectives) are SimGrid kernel timers, not
  // activities: a timer is an entry in the engine's timer heap, O(log n), whereas an Exec is a
  // CPU-model action, a max-min variable, a completion signal, and in SimGrid 3.32 an entry in
  // the maestro's std::list of activities that every completion scans (std::list::remove), which
  // made the cost of each completion grow with the number of activities in flight. Counted with
  // the activities, as both are simulation events.
  void After(double seconds, What what, int x, int y) { At(Now() + seconds, what, x, y); }
  void At(double when, What what, int x, int y) {
    ++activities_;
    simgrid::kernel::timer::Timer::set(when, [this, what, x, y] {
      graveyard_.clear();
      CountInstant();
      probe_.Tick(Now());
      Fire(what, x, y);
      Drain();
      MaybeRetire();
    });
  }

  void CountInstant() {
    if (Now() == last_instant_s_) return;
    last_instant_s_ = Now();
    ++instants_;
  }

  // --- collectives ---

  const GroupView& ViewOf(const std::vector<int>& ranks) {
    auto it = views_.find(ranks);
    if (it == views_.end()) it = views_.emplace(ranks, MakeGroupView(cluster_, ranks)).first;
    return it->second;
  }

  void Join(const Task& t) {
    const Collective& c = G().collective(t.collective);
    CollectiveState& s = collectives_[t.collective];
    if (s.joined.empty()) Lower(t.collective);
    const int member = GraphIndex::Member(c, t);
    s.joined[member] = 1;
    if (++s.members_joined == static_cast<int>(c.ranks.size())) {
      for (TaskId m : c.members) times_[m].peers_joined_s = Now();
      if (gated_) {
        for (size_t i = 0; i < c.members.size(); ++i) {
          if (s.analytic_s >= 0 || s.flows_left[i] > 0) TakeOff(c.members[i]);
        }
      }
      if (s.analytic_s >= 0) {
        After(s.analytic_s, What::kAnalyticCollective, t.collective, 0);
        return;
      }
    }
    if (s.analytic_s >= 0) return;
    if (s.flows_left[member] == 0) MemberDone(t.collective, member);
    for (int f : s.member_flows[member]) TryStartFlow(t.collective, f);
    ReleaseIfDone(t.collective);
  }

  void Lower(int ci) {
    const Collective& c = G().collective(ci);
    CollectiveState& s = collectives_[ci];
    const int n = static_cast<int>(c.ranks.size());
    s.joined.assign(n, 0);
    // A collective the calibration file measured (nccl-tests style, alone on the cluster)
    // takes its measured time once all members joined, at every fidelity: measured beats
    // modelled, at the price of not contending with other traffic.
    if (spec_.calibration && n > 1) {
      const CollectiveCalibration* measured =
          spec_.calibration->FindCollective(c.kind, n, cluster_.GpuOfRank(c.ranks[0]).name);
      if (measured) {
        s.choice = CollectiveChoice{"calibrated", "measured", 1};
        s.analytic_s = measured->Seconds(c.bytes);
        return;
      }
    }
    const GroupView& view = ViewOf(c.ranks);
    s.choice = ChooseCollective(c, view, spec_.collectives);
    if (spec_.fidelity == Fidelity::kAnalytic) {
      s.analytic_s = n > 1 ? PredictCollectiveSeconds(c, view, s.choice) : 0;
      return;
    }
    s.program = LowerCollective(c, view, s.choice, spec_.fidelity);
    const size_t nf = s.program.flows.size();
    s.deps_left.assign(nf, 0);
    s.successors.assign(nf, {});
    s.member_flows.assign(n, {});
    s.flows_left.assign(n, 0);
    s.started.assign(nf, 0);
    s.ready_at.assign(nf, 0);
    s.member_end_s.assign(n, 0);
    SetFixedTimes(c, &s);
    for (size_t f = 0; f < nf; ++f) {
      const Flow& flow = s.program.flows[f];
      s.deps_left[f] = static_cast<int>(flow.deps.size());
      for (int d : flow.deps) {
        s.successors[d].push_back(2 * static_cast<int>(f) + (d == flow.follows ? 1 : 0));
      }
      s.member_flows[flow.src].push_back(static_cast<int>(f));
      s.member_flows[flow.dst].push_back(static_cast<int>(f));
      ++s.flows_left[flow.src];
      ++s.flows_left[flow.dst];
    }
  }

  // The fixed times of each flow besides its route latency: before the transfer its protocol
  // delay, after it (with the route latency) its extra route latencies, those of the further
  // steps a stream flow stands for. A flow of a latency group (a stream ring's edge) pays its
  // first step's delay and route latency before, and completes with its group
  // (sim/latency_groups.h).
  void SetFixedTimes(const Collective& c, CollectiveState* s) {
    const std::vector<Flow>& flows = s->program.flows;
    const bool plain = std::all_of(flows.begin(), flows.end(), [](const Flow& f) {
      return f.extra_route_latencies <= 0 && f.latency_group < 0;
    });
    if (plain) return;
    s->before_s.resize(flows.size());
    for (size_t f = 0; f < flows.size(); ++f) s->before_s[f] = flows[f].delay_s;
    s->after_s.assign(flows.size(), 0);
    for (size_t f = 0; f < flows.size(); ++f) {
      const Flow& flow = flows[f];
      if (flow.extra_route_latencies <= 0 && flow.latency_group < 0) continue;
      const double latency = RouteLatency(c.ranks[flow.src], c.ranks[flow.dst]);
      if (flow.latency_group < 0) {
        s->after_s[f] = flow.extra_route_latencies * latency;
        continue;
      }
      const int steps = 1 + std::max(0, flow.extra_route_latencies);
      s->groups.Add(flow.latency_group, static_cast<int>(f), flow.delay_s + steps * latency);
      s->before_s[f] = flow.delay_s / steps + latency;
    }
  }

  // Starts flow `f` once its dependencies are met and both its members joined: its protocol
  // delay, then its transfer.
  void TryStartFlow(int ci, int f) {
    CollectiveState& s = collectives_[ci];
    const Flow& flow = s.program.flows[f];
    if (s.started[f] || s.deps_left[f] > 0 || !s.joined[flow.src] || !s.joined[flow.dst]) return;
    s.started[f] = 1;
    const double ready = std::max(Now(), s.ready_at[f]);
    if (s.groups.Has(f)) s.groups.Started(f, ready);
    const double at = ready + (s.before_s.empty() ? flow.delay_s : s.before_s[f]);
    if (at > Now()) {
      At(at, What::kFlowDelay, ci, f);
    } else {
      StartFlowComm(ci, f);
    }
  }

  void StartFlowComm(int ci, int f) {
    CollectiveState& s = collectives_[ci];
    const Flow& flow = s.program.flows[f];
    if (s.groups.Has(f)) s.groups.TransferStarted(f, Now());
    const Collective& c = G().collective(ci);
    LaunchComm(platform_.gpus[c.ranks[flow.src]], platform_.gpus[c.ranks[flow.dst]], flow.bytes,
               What::kFlowComm, ci, f);
  }

  // The transfer of flow `f` has ended. Its data arrives a route latency later (see
  // Platform::link_latency_s), plus the extra latencies of a stream flow.
  void FlowCommDone(int ci, int f) {
    CollectiveState& s = collectives_[ci];
    if (s.groups.Has(f)) {
      const auto done = s.groups.TransferDone(f, Now());
      if (!done) return;  // its group completes when every transfer of it has ended
      for (int g : done->flows) {
        if (done->at_s > Now()) {
          At(done->at_s, What::kFlowGroupDone, ci, g);
        } else {
          FlowDone(ci, g, Now(), Now());
        }
      }
      return;
    }
    const Flow& flow = s.program.flows[f];
    const Collective& c = G().collective(ci);
    const double after =
        RouteLatency(c.ranks[flow.src], c.ranks[flow.dst]) + (s.after_s.empty() ? 0 : s.after_s[f]);
    FlowDone(ci, f, Now(), Now() + after);
  }

  double RouteLatency(int src, int dst) {
    const long long key = static_cast<long long>(src) * platform_.gpus.size() + dst;
    auto it = route_latency_.find(key);
    if (it != route_latency_.end()) return it->second;
    const double latency = RouteLatencySeconds(platform_, platform_.gpus[src], platform_.gpus[dst]);
    route_latency_[key] = latency;
    return latency;
  }

  // Flow `f` left its sender at `sent_s` and reaches its receiver at `delivered_s` (>= now):
  // a successor that follows it on its connection may start from `sent_s`, the others from
  // `delivered_s`; its members are done with it at `delivered_s`.
  void FlowDone(int ci, int f, double sent_s, double delivered_s) {
    CollectiveState& s = collectives_[ci];
    const Flow& flow = s.program.flows[f];
    for (int edge : s.successors[f]) {
      const int next = edge >> 1;
      const double met = (edge & 1) ? sent_s : delivered_s;
      s.ready_at[next] = std::max(s.ready_at[next], met);
      --s.deps_left[next];
      TryStartFlow(ci, next);
    }
    for (int m : {flow.src, flow.dst}) {
      s.member_end_s[m] = std::max(s.member_end_s[m], delivered_s);
      if (--s.flows_left[m] == 0 && s.joined[m]) {
        if (s.member_end_s[m] > Now()) {
          At(s.member_end_s[m], What::kMemberDone, ci, m);
        } else {
          MemberDone(ci, m);
        }
      }
    }
    ReleaseIfDone(ci);
  }

  void MemberDone(int ci, int member) {
    ++collectives_[ci].members_done;
    done_queue_.push_back(G().collective(ci).members[member]);
  }

  // Frees a finished collective's flow program (large collectives have many flows), keeping
  // the choice for the trace.
  void ReleaseIfDone(int ci) {
    CollectiveState& s = collectives_[ci];
    if (s.members_done == static_cast<int>(s.joined.size())) {
      chosen_[ci] = s.choice.algorithm + "/" + s.choice.protocol + "/" +
                    std::to_string(s.choice.channels) + "ch";
      s = CollectiveState{};
    }
  }

  void CheckAllRan() const {
    // A duration past any training run (a rate of 1e-300) leaves the clock where adding a
    // task's microseconds changes nothing: that is an overflow, not a cycle.
    const double now = Now();
    if (!std::isfinite(now) || now > limits::kMaxSimulatedSeconds) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "simulated time overflowed: the clock reached %.3g s, past %.0e s", now,
                    limits::kMaxSimulatedSeconds);
      throw Error(std::string(buf) +
                  " (a rate or efficiency far too small, or a duration far too large: "
                  "docs/limits.md)");
    }
    if (complete_ && finished_ == static_cast<size_t>(ingested_end_)) return;
    std::string example;
    size_t missing = 0;
    for (TaskId id = retired_; id < ingested_end_; ++id) {
      const Task& t = G().task(id);
      if (done_[t.id]) continue;
      if (++missing <= 3) {
        example += (example.empty() ? "" : "; ") + std::string("task ") + std::to_string(t.id) +
                   " '" + t.name + "' (" + std::string(ToString(t.kind)) + ") on rank " +
                   std::to_string(t.rank) +
                   (times_[t.id].start_s < 0 ? ", never ready" : ", started, never finished");
      }
    }
    throw Error(
        std::to_string(missing) + " of " + std::to_string(ingested_end_) +
        " tasks never ran (a dependency cycle or an unmatched transfer/collective): " + example +
        (gate_.held() > 0 ? "; " + std::to_string(gate_.held()) + " held by stream priorities"
                          : std::string()));
  }

  static inline const std::string kNoAlgorithm;
  TaskSource& source_;
  const ClusterSpec& cluster_;
  const SimulationSpec& spec_;
  const Platform& platform_;
  const RetireSink& sink_;
  int num_ranks_ = 0;
  // A fused run of compute tasks (StartCompute): when it started, its total duration, and
  // each part's task and duration.
  struct FusedChain {
    double start_s = 0;
    double seconds = 0;
    std::vector<std::pair<TaskId, double>> parts;
  };
  std::vector<char> fusible_rank_;
  std::vector<int> compute_stream_;                  // per rank: the stream of its last kernel
  std::vector<std::vector<TaskId>> last_on_stream_;  // per rank and stream: the last task known
  std::unordered_map<TaskId, std::vector<TaskId>> mirrors_;    // a task -> the mirrors it starts
  std::unordered_map<TaskId, std::vector<TaskId>> late_succ_;  // see Ingest
  std::vector<FusedChain> fused_chains_;
  std::vector<int> free_chains_;                        // slots of fused_chains_ to reuse
  std::vector<std::pair<TaskId, double>> fused_parts_;  // scratch
  long long fused_tasks_ = 0;                           // tasks that ran inside another's Exec
  Window<int> pending_;
  Window<std::uint64_t> succ_begin_;  // per task: its first successor's place in succ_
  Window<TaskId> succ_;               // indexed by edge: the successor lists, batch after batch
  // When each task ran: the trace's records without the fields the graph already has.
  struct Times {
    double start_s = -1;
    double end_s = -1;
    double peers_joined_s = -1;
  };
  Window<Times> times_;
  Window<char> done_;
  Window<char> claimed_;  // runs inside a fused chain (StartCompute)
  size_t finished_ = 0;
  TaskId ingested_end_ = 0;   // tasks [0, ingested_end_) are taken in
  TaskId retired_ = 0;        // tasks [0, retired_) went to the sink
  TaskId retire_cursor_ = 0;  // tasks [retired_, retire_cursor_) finished and wait to retire
  int requested_ = -1;        // the source was asked for the iterations up to this one
  bool complete_ = false;     // the source has no more tasks
  double makespan_s_ = 0;
  std::deque<TaskId> ready_, done_queue_;
  Window<CollectiveState> collectives_;  // by collective index
  GraphIndex index_;                     // transfers' ends by tag, held while live
  std::unordered_map<const sg4::Activity*, Running> running_;
  std::map<std::vector<int>, GroupView> views_;
  std::unordered_map<long long, double> route_latency_;  // by src rank * GPUs + dst rank
  Window<std::string> chosen_;                           // per collective: "algorithm/protocol/Nch"
  // Stream priorities: whether some stream has one (else none of this runs), the gate, and the
  // communication tasks ready or released in this pass (Drain).
  bool gated_ = false;
  StreamGate gate_;
  std::vector<TaskId> arrivals_;
  // Per rank (empty when no rank starts late): whether it waits for its start time, and the
  // tasks that became ready meanwhile.
  struct RankHold {
    bool waiting = false;
    std::vector<TaskId> tasks;
  };
  std::vector<RankHold> rank_held_;
  long long activities_ = 0;
  long long instants_ = 0;
  double last_instant_s_ = -1;
  std::vector<sg4::ActivityPtr> graveyard_;
  LinkProbe probe_;  // bytes per link over time (ExecutionTrace::link_usage)
};

Executor* g_current = nullptr;  // SimGrid's completion signal is global; one run per process

void ConfigureEngine() {
  // CM02 is plain latency + size/bandwidth with max-min sharing; the default LV08 multiplies
  // latency by 13.01 and bandwidth by 0.97 (fitted to TCP over Ethernet), wrong for NVLink
  // and InfiniBand. Cross-traffic would take 5% of each link for ACKs; the TCP window bound
  // gamma/(2*latency) would cap fast low-latency links. See shared/notes/simgrid-3.32.md.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e18");
}

// A whole graph: every task at once, none retired (its caller holds the graph).
class WholeGraph : public TaskSource {
 public:
  explicit WholeGraph(const TaskGraph& g) : g_(g) {}
  const TaskGraph& graph() const override { return g_; }
  bool More(int) override { return false; }
  bool retires() const override { return false; }
  void Retire(TaskId) override {}

 private:
  const TaskGraph& g_;
};

// Runs one simulation of `source`'s tasks, handing each to `sink` as it retires (none
// retire without sink.task), then the trace without its records and the executor to `done`.
template <typename Done>
void RunSimulation(TaskSource& source, const ClusterSpec& cluster, const SimulationSpec& spec,
                   const RetireSink& sink, Done done) {
  static bool used = false;
  if (used) throw Error("SimulateInProcess: SimGrid allows one simulation per process");
  used = true;
  const TaskGraph& g = source.graph();
  if (!source.retires()) g.Validate();
  if (g.num_ranks() > cluster.NumGpus()) {
    throw Error("the plan needs " + std::to_string(g.num_ranks()) + " GPUs, the cluster has " +
                std::to_string(cluster.NumGpus()));
  }
  xbt_log_control_set("root.thres:critical");
  int argc = 1;
  char arg0[] = "stratasim";
  char* argv[] = {arg0, nullptr};
  sg4::Engine engine(&argc, argv);
  ConfigureEngine();
  Platform platform = BuildPlatform(cluster);
  Executor executor(source, cluster, spec, platform, sink);
  g_current = &executor;
  struct Unset {
    ~Unset() { g_current = nullptr; }
  } unset;  // also when Run throws from a SimGrid callback
  sg4::Activity::on_completion_cb([](const sg4::Activity& a) {
    if (g_current) g_current->OnCompletion(a);
  });
  ExecutionTrace trace = executor.Run();
  done(trace, executor);
}

// A whole graph's trace: the executor keeps every task's times (24 bytes a task) until the
// records are made from them.
ExecutionTrace WholeTrace(const TaskGraph& g, const ClusterSpec& cluster,
                          const SimulationSpec& spec,
                          const std::function<void(ExecutionTrace&, const Executor&)>& done) {
  WholeGraph source(g);
  ExecutionTrace out;
  RunSimulation(source, cluster, spec, RetireSink{},
                [&](ExecutionTrace& trace, const Executor& executor) {
                  trace.collective_algorithms.resize(g.collectives().size());
                  for (size_t c = 0; c < g.collectives().size(); ++c) {
                    trace.collective_algorithms[c] = executor.Algorithm(static_cast<int>(c));
                  }
                  done(trace, executor);
                  out = std::move(trace);
                });
  return out;
}

}  // namespace

ExecutionTrace SimulateInProcess(const TaskGraph& g, const ClusterSpec& cluster,
                                 const SimulationSpec& spec) {
  return WholeTrace(g, cluster, spec, [&](ExecutionTrace& trace, const Executor& executor) {
    trace.records.reserve(g.tasks().size());
    for (size_t i = 0; i < g.tasks().size(); ++i) {
      trace.records.push_back(executor.Record(static_cast<TaskId>(i)));
    }
  });
}

bool SimulateInProcessToWire(const TaskGraph& g, const ClusterSpec& cluster,
                             const SimulationSpec& spec, const WireWrite& write) {
  bool ok = false;
  WholeTrace(g, cluster, spec, [&](ExecutionTrace& trace, const Executor& executor) {
    ok = WriteTraceWire(
        trace, g.tasks().size(), [&](size_t i) { return executor.Record(static_cast<TaskId>(i)); },
        write);
  });
  return ok;
}

ExecutionTrace SimulateStreaming(TaskSource& source, const ClusterSpec& cluster,
                                 const SimulationSpec& spec, const RetireSink& sink) {
  ExecutionTrace out;
  RunSimulation(source, cluster, spec, sink,
                [&](ExecutionTrace& trace, const Executor&) { out = std::move(trace); });
  return out;
}

}  // namespace stratasim::sim
