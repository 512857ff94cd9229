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

#include "core/error.h"
#include "core/limits.h"
#include "sim/collectives/group_view.h"
#include "sim/collectives/lowering.h"
#include "sim/compute_model.h"
#include "sim/latency_groups.h"
#include "sim/maestro_list.h"
#include "sim/platform.h"
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

// A point-to-point transfer waits for both its Send and its Recv to be ready (rendezvous).
struct TransferState {
  TaskId send = -1;
  TaskId recv = -1;
  bool send_ready = false;
  bool recv_ready = false;
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
  kAnalyticCollective
};

struct Running {
  sg4::ActivityPtr activity;
  What what = What::kTask;
  int a = 0;  // task id, or collective index
  int b = 0;  // flow index
};

class Executor {
 public:
  Executor(const TaskGraph& g, const ClusterSpec& cluster, const SimulationSpec& spec,
           const Platform& platform)
      : g_(g), cluster_(cluster), spec_(spec), platform_(platform) {
    const size_t n = g.tasks().size();
    pending_.assign(n, 0);
    times_.assign(n, Times{});
    done_.assign(n, 0);
    // Successor lists in one flat array (CSR): two passes over the edges, the first counting
    // each task's successors, the second placing them; 4 bytes an edge and 4 a task instead
    // of a vector per task.
    std::vector<std::uint32_t> cursor(n + 1, 0);
    ForEachPredecessor([&](TaskId from, TaskId to) {
      ++cursor[from + 1];
      ++pending_[to];
    });
    for (size_t i = 0; i < n; ++i) {
      if (cursor[i + 1] > 0xffffffffu - cursor[i]) throw Error("too many dependency edges");
      cursor[i + 1] += cursor[i];
    }
    succ_begin_ = cursor;
    succ_.resize(cursor[n]);
    cursor.pop_back();  // now the next free slot of each task's successors
    ForEachPredecessor([&](TaskId from, TaskId to) { succ_[cursor[from]++] = to; });
    for (const Task& t : g.tasks()) {
      if (t.mirror >= 0) {  // waits for its counterpart's start (Task::mirror)
        mirrors_[t.mirror].push_back(t.id);
        ++pending_[t.id];
      }
    }
    // Fusion (SimulationSpec::fuse) is exact only where a rank's kernels never share its GPU
    // host: all of its compute tasks on one stream, which runs them one at a time.
    fusible_rank_.assign(g.num_ranks(), spec.fuse ? 1 : 0);
    std::vector<int> compute_stream(g.num_ranks(), -1);
    for (const Task& t : g.tasks()) {
      if (t.kind != TaskKind::kCompute) continue;
      int& s = compute_stream[t.rank];
      if (s >= 0 && s != t.stream) fusible_rank_[t.rank] = 0;
      s = t.stream;
    }
    collectives_.resize(g.collectives().size());
    chosen_.resize(g.collectives().size());
    for (const Task& t : g.tasks()) {
      if (t.kind == TaskKind::kSend) transfers_[t.tag].send = t.id;
      if (t.kind == TaskKind::kRecv) transfers_[t.tag].recv = t.id;
    }
  }

  // Runs the graph; returns the trace without its records, which Record() gives one by one
  // (the caller builds them or streams them: sim/trace_wire.h).
  ExecutionTrace Run() {
    for (const Task& t : g_.tasks()) {
      if (pending_[t.id] == 0) ready_.push_back(t.id);
    }
    Drain();
    sg4::Engine::get_instance()->run();
    graveyard_.clear();
    CheckAllRan();
    ExecutionTrace trace;
    trace.executor = "simgrid";
    trace.num_ranks = g_.num_ranks();
    trace.streams = g_.streams();
    trace.collective_algorithms = std::move(chosen_);
    trace.activities = activities_;
    trace.instants = instants_;
    trace.fused_tasks = fused_tasks_;
    for (const Times& r : times_) trace.makespan_s = std::max(trace.makespan_s, r.end_s);
    return trace;
  }

  TraceRecord Record(TaskId id) const {
    const Task& t = g_.task(id);
    const Times& r = times_[id];
    return TraceRecord{id, t.rank, t.stream, r.start_s, r.end_s, r.peers_joined_s};
  }

  void OnCompletion(const sg4::Activity& activity) {
    graveyard_.clear();  // activities of earlier callbacks; never free one inside its own
    auto it = running_.find(&activity);
    if (it == running_.end()) return;
    CountInstant();
    Running r = std::move(it->second);
    running_.erase(it);
    Fire(r.what, r.a, r.b);
    graveyard_.push_back(std::move(r.activity));
    Drain();
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
        const Task& send = g_.task(a);
        Launch(Transfer(platform_.gpus[send.rank], platform_.gpus[send.peer], send.bytes),
               What::kTransfer, a, 0);
        break;
      }
      case What::kTransfer: {
        const TransferState& s = transfers_.at(g_.task(a).tag);
        done_queue_.push_back(s.send);
        done_queue_.push_back(s.recv);
        break;
      }
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
      case What::kAnalyticCollective: {
        const Collective& c = g_.collectives()[a];
        for (int m = 0; m < static_cast<int>(c.members.size()); ++m) MemberDone(a, m);
        ReleaseIfDone(a);
        break;
      }
    }
  }

  // Calls edge(from, to) once per predecessor of every task, in graph order. Stream order:
  // each task follows the previous task of its (rank, stream). One edge per predecessor: a
  // dependency on the previous task of the same stream (the planners' usual "after the last
  // kernel") is the stream edge too, and a duplicate edge would hide from fusion that the task
  // has a single successor.
  template <typename Edge>
  void ForEachPredecessor(Edge edge) const {
    std::vector<std::vector<TaskId>> last(g_.num_ranks(),
                                          std::vector<TaskId>(g_.streams().size(), -1));
    std::vector<TaskId> preds;
    for (const Task& t : g_.tasks()) {
      TaskId& prev = last[t.rank][t.stream];
      preds.assign(t.deps.begin(), t.deps.end());
      if (prev >= 0) preds.push_back(prev);
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      for (TaskId d : preds) edge(d, t.id);
      prev = t.id;
    }
  }

  // The tasks that depend on `id` (its successors), as [first, last).
  const TaskId* SuccBegin(TaskId id) const { return succ_.data() + succ_begin_[id]; }
  const TaskId* SuccEnd(TaskId id) const { return succ_.data() + succ_begin_[id + 1]; }

  double Now() const { return sg4::Engine::get_clock(); }

  // Starts ready tasks and finishes completed ones until nothing more happens at this instant.
  void Drain() {
    while (!ready_.empty() || !done_queue_.empty()) {
      if (!done_queue_.empty()) {
        TaskId t = done_queue_.front();
        done_queue_.pop_front();
        Finish(t);
      } else {
        TaskId t = ready_.front();
        ready_.pop_front();
        Start(t);
      }
    }
  }

  void Start(TaskId id) {
    const Task& t = g_.task(id);
    Times& rec = times_[id];
    rec.start_s = rec.peers_joined_s = Now();
    if (!mirrors_.empty()) {
      auto it = mirrors_.find(id);
      if (it != mirrors_.end()) {
        for (TaskId m : it->second) {
          if (--pending_[m] == 0) ready_.push_back(m);
        }
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
        TransferState& s = transfers_.at(t.tag);
        (t.kind == TaskKind::kSend ? s.send_ready : s.recv_ready) = true;
        if (s.send_ready && s.recv_ready) {
          const Task& send = g_.task(s.send);
          times_[s.send].peers_joined_s = times_[s.recv].peers_joined_s = Now();
          const double latency = RouteLatency(send.rank, send.peer);
          if (latency > 0) {
            After(latency, What::kTransferStart, s.send, 0);
          } else {
            Fire(What::kTransferStart, s.send, 0);
          }
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
    const Task& t = g_.task(id);
    double seconds = std::max(0.0, ComputeTaskSeconds(t, cluster_.GpuOfRank(t.rank), spec_));
    if (fusible_rank_[t.rank]) {
      fused_parts_.clear();
      fused_parts_.push_back({id, seconds});
      for (TaskId cur = id;;) {
        if (SuccEnd(cur) - SuccBegin(cur) != 1) break;
        const TaskId next = *SuccBegin(cur);
        const Task& n = g_.task(next);
        if (pending_[next] != 1 || n.rank != t.rank || mirrors_.count(next) > 0 ||
            (n.kind != TaskKind::kCompute && n.kind != TaskKind::kMemory)) {
          break;
        }
        const double part =
            n.kind == TaskKind::kMemory
                ? 0.0
                : std::max(0.0, ComputeTaskSeconds(n, cluster_.GpuOfRank(n.rank), spec_));
        pending_[next] = 0;  // claimed: it runs inside this Exec, never from ready_
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
    const Task& t = g_.task(id);
    sg4::Host* cpu = platform_.host_cpus[t.rank];
    sg4::Host* gpu = platform_.gpus[t.rank];
    const bool h2d = t.copy == CopyDirection::kHostToDevice;
    Launch(Transfer(h2d ? cpu : gpu, h2d ? gpu : cpu, t.bytes), What::kTask, id, 0);
  }

  void Finish(TaskId id) {
    times_[id].end_s = Now();
    done_[id] = 1;
    ++finished_;
    for (const TaskId* s = SuccBegin(id); s != SuccEnd(id); ++s) {
      if (--pending_[*s] == 0) ready_.push_back(*s);
    }
  }

  static sg4::CommPtr Transfer(sg4::Host* src, sg4::Host* dst, double bytes) {
    sg4::CommPtr c = sg4::Comm::sendto_init(src, dst);
    c->set_payload_size(bytes);
    return c;
  }

  void Launch(const sg4::ActivityPtr& a, What what, int x, int y) {
    ++activities_;
    TakeOffMaestroList(*a);  // just created: see sim/maestro_list.h
    a->start();
    running_[a.get()] = Running{a, what, x, y};
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
      Fire(what, x, y);
      Drain();
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
    const Collective& c = g_.collectives()[t.collective];
    CollectiveState& s = collectives_[t.collective];
    if (s.joined.empty()) Lower(t.collective);
    const int member =
        static_cast<int>(std::find(c.members.begin(), c.members.end(), t.id) - c.members.begin());
    s.joined[member] = 1;
    if (++s.members_joined == static_cast<int>(c.ranks.size())) {
      for (TaskId m : c.members) times_[m].peers_joined_s = Now();
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
    const Collective& c = g_.collectives()[ci];
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
    const Collective& c = g_.collectives()[ci];
    Launch(
        Transfer(platform_.gpus[c.ranks[flow.src]], platform_.gpus[c.ranks[flow.dst]], flow.bytes),
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
    const Collective& c = g_.collectives()[ci];
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
    done_queue_.push_back(g_.collectives()[ci].members[member]);
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
    if (finished_ == g_.tasks().size()) return;
    std::string example;
    size_t missing = 0;
    for (const Task& t : g_.tasks()) {
      if (done_[t.id]) continue;
      if (++missing <= 3) {
        example += (example.empty() ? "" : "; ") + std::string("task ") + std::to_string(t.id) +
                   " '" + t.name + "' (" + std::string(ToString(t.kind)) + ") on rank " +
                   std::to_string(t.rank) +
                   (times_[t.id].start_s < 0 ? ", never ready" : ", started, never finished");
      }
    }
    throw Error(
        std::to_string(missing) + " of " + std::to_string(g_.tasks().size()) +
        " tasks never ran (a dependency cycle or an unmatched transfer/collective): " + example);
  }

  const TaskGraph& g_;
  const ClusterSpec& cluster_;
  const SimulationSpec& spec_;
  const Platform& platform_;
  // A fused run of compute tasks (StartCompute): when it started, its total duration, and
  // each part's task and duration.
  struct FusedChain {
    double start_s = 0;
    double seconds = 0;
    std::vector<std::pair<TaskId, double>> parts;
  };
  std::vector<char> fusible_rank_;
  std::unordered_map<TaskId, std::vector<TaskId>> mirrors_;  // a task -> the mirrors it starts
  std::vector<FusedChain> fused_chains_;
  std::vector<int> free_chains_;                        // slots of fused_chains_ to reuse
  std::vector<std::pair<TaskId, double>> fused_parts_;  // scratch
  long long fused_tasks_ = 0;                           // tasks that ran inside another's Exec
  std::vector<int> pending_;
  std::vector<std::uint32_t> succ_begin_;  // CSR offsets into succ_, one per task and one more
  std::vector<TaskId> succ_;
  // When each task ran: the trace's records without the fields the graph already has (24
  // bytes a task instead of 40; Record() joins them).
  struct Times {
    double start_s = -1;
    double end_s = -1;
    double peers_joined_s = -1;
  };
  std::vector<Times> times_;
  std::vector<char> done_;
  size_t finished_ = 0;
  std::deque<TaskId> ready_, done_queue_;
  std::vector<CollectiveState> collectives_;
  std::unordered_map<int, TransferState> transfers_;
  std::unordered_map<const sg4::Activity*, Running> running_;
  std::map<std::vector<int>, GroupView> views_;
  std::unordered_map<long long, double> route_latency_;  // by src rank * GPUs + dst rank
  std::vector<std::string> chosen_;                      // per collective: "algorithm/protocol/Nch"
  long long activities_ = 0;
  long long instants_ = 0;
  double last_instant_s_ = -1;
  std::vector<sg4::ActivityPtr> graveyard_;
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

// Runs one simulation and hands its trace, without records, and the executor to `done`.
template <typename Done>
void RunSimulation(const TaskGraph& g, const ClusterSpec& cluster, const SimulationSpec& spec,
                   Done done) {
  static bool used = false;
  if (used) throw Error("SimulateInProcess: SimGrid allows one simulation per process");
  used = true;
  g.Validate();
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
  Executor executor(g, cluster, spec, platform);
  g_current = &executor;
  sg4::Activity::on_completion_cb([](const sg4::Activity& a) {
    if (g_current) g_current->OnCompletion(a);
  });
  const ExecutionTrace trace = executor.Run();
  g_current = nullptr;
  done(trace, executor);
}

}  // namespace

ExecutionTrace SimulateInProcess(const TaskGraph& g, const ClusterSpec& cluster,
                                 const SimulationSpec& spec) {
  ExecutionTrace out;
  RunSimulation(g, cluster, spec, [&](const ExecutionTrace& trace, const Executor& executor) {
    out = trace;
    out.records.reserve(g.tasks().size());
    for (size_t i = 0; i < g.tasks().size(); ++i) {
      out.records.push_back(executor.Record(static_cast<TaskId>(i)));
    }
  });
  return out;
}

bool SimulateInProcessToWire(const TaskGraph& g, const ClusterSpec& cluster,
                             const SimulationSpec& spec, const WireWrite& write) {
  bool ok = false;
  RunSimulation(g, cluster, spec, [&](const ExecutionTrace& trace, const Executor& executor) {
    ok = WriteTraceWire(
        trace, g.tasks().size(), [&](size_t i) { return executor.Record(static_cast<TaskId>(i)); },
        write);
  });
  return ok;
}

}  // namespace stratasim::sim
