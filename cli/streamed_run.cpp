#include "cli/streamed_run.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "cli/run_scenario.h"
#include "core/error.h"
#include "core/metrics.h"
#include "report/chrome_trace.h"
#include "report/gzip_stream.h"
#include "report/moe_summary.h"
#include "sim/trace_wire.h"
#include "strategies/iteration_feed.h"

namespace stratasim {
namespace {

// The executor's view of a feed. The graph's address changes once, when the planner returns
// its plan; it is read again after each More, so that each task lookup costs no lock.
class FeedSource : public sim::TaskSource {
 public:
  explicit FeedSource(IterationFeed& feed) : feed_(feed) {
    feed_.Through(-1);  // up to the planner's first task: the graph exists
    graph_ = feed_.graph();
    if (graph_ == nullptr) throw Error("the planner made no task graph");
  }
  const TaskGraph& graph() const override { return *graph_; }
  bool More(int iteration) override {
    const bool more = feed_.Through(iteration);
    graph_ = feed_.graph();
    return more;
  }
  bool retires() const override { return true; }
  void Retire(TaskId below) override { graph_->Retire(below); }

 private:
  IterationFeed& feed_;
  TaskGraph* graph_ = nullptr;
};

bool WriteFd(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// --- the reply: a StrategyResult's figures, field by field ---

void PutDoubles(sim::WireOut& out, const std::vector<double>& v) {
  out.Pod(static_cast<std::uint64_t>(v.size()));
  out.Bytes(v.data(), v.size() * sizeof(double));
}
std::vector<double> GetDoubles(sim::WireIn& in, const char* what) {
  std::vector<double> v(in.Count(what));
  in.Need(v.data(), v.size() * sizeof(double), what);
  return v;
}
void PutMap(sim::WireOut& out, const std::map<std::string, double>& m) {
  out.Pod(static_cast<std::uint64_t>(m.size()));
  for (const auto& [key, value] : m) {
    out.Str(key);
    out.Pod(value);
  }
}
std::map<std::string, double> GetMap(sim::WireIn& in, const char* what) {
  std::map<std::string, double> m;
  for (std::uint64_t i = 0, n = in.Count(what); i < n; ++i) {
    std::string key = in.Str(what);
    m[key] = in.Pod<double>(what);
  }
  return m;
}

void PutResult(sim::WireOut& out, const StrategyResult& r) {
  const Metrics& m = r.metrics;
  for (double v :
       {m.iteration_time_s, m.samples_per_s, m.tokens_per_s, m.model_flops_per_iteration,
        m.tflops_per_gpu, m.mfu, m.hfu, m.exposed_comm_fraction, m.idle_fraction, m.startup_s}) {
    out.Pod(v);
  }
  PutDoubles(out, m.stage_compute_s);
  PutDoubles(out, m.stage_bubble_fraction);
  PutMap(out, m.exposed_comm_by_category);
  PutDoubles(out, m.peak_memory_bytes);
  out.Pod(static_cast<std::uint64_t>(m.peak_memory_breakdown.size()));
  for (const auto& at_peak : m.peak_memory_breakdown) PutMap(out, at_peak);
  PutDoubles(out, m.memory_capacity_bytes);
  out.Pod(static_cast<std::uint64_t>(m.oom_ranks.size()));
  for (int rank : m.oom_ranks) out.Pod(rank);
  out.Pod(static_cast<std::uint64_t>(r.notes.size()));
  for (const std::string& note : r.notes) out.Str(note);
  PutDoubles(out, r.peak_memory_per_stage_bytes);
  out.Str(r.fold);
  for (long long v : {r.tasks, r.activities, r.instants, r.fused_tasks}) out.Pod(v);
  out.Pod(static_cast<char>(r.moe ? 1 : 0));
  if (r.moe) {
    const MoeSummary& s = *r.moe;
    out.Pod(s.top_k);
    PutDoubles(out, s.iteration_s);
    for (double v : {s.mean_s, s.p50_s, s.p95_s, s.min_s, s.max_s, s.tokens_per_s,
                     s.load_std_before, s.load_std_after, s.load_balance_ratio, s.exposed_a2a_s,
                     s.placement_s, s.placement_exposed_s, s.peak_memory_bytes, s.dropped_tokens,
                     s.replicas, s.transfer_bytes}) {
      out.Pod(v);
    }
    out.Pod(static_cast<std::uint64_t>(s.gpu_tokens_per_iteration.size()));
    for (const std::vector<double>& row : s.gpu_tokens_per_iteration) PutDoubles(out, row);
    for (double v : {s.placement_changes, s.placement_kept_fraction, s.transfer_bytes_saved}) {
      out.Pod(v);
    }
    out.Pod(s.expert_parallel);
    out.Pod(s.expert_data_parallel);
  }
  out.Pod(static_cast<char>(r.gnn ? 1 : 0));
  if (r.gnn) {
    const GnnFigures& g = *r.gnn;
    for (double v : {g.vertices_per_iteration, g.hits_per_iteration, g.h2d_bytes_per_iteration,
                     g.cache_bytes}) {
      out.Pod(v);
    }
  }
}

StrategyResult GetResult(sim::WireIn& in) {
  const char* what = "the strategy's result";
  StrategyResult r;
  Metrics& m = r.metrics;
  for (double* v : {&m.iteration_time_s, &m.samples_per_s, &m.tokens_per_s,
                    &m.model_flops_per_iteration, &m.tflops_per_gpu, &m.mfu, &m.hfu,
                    &m.exposed_comm_fraction, &m.idle_fraction, &m.startup_s}) {
    *v = in.Pod<double>(what);
  }
  m.stage_compute_s = GetDoubles(in, what);
  m.stage_bubble_fraction = GetDoubles(in, what);
  m.exposed_comm_by_category = GetMap(in, what);
  m.peak_memory_bytes = GetDoubles(in, what);
  for (std::uint64_t i = 0, n = in.Count(what); i < n; ++i) {
    m.peak_memory_breakdown.push_back(GetMap(in, what));
  }
  m.memory_capacity_bytes = GetDoubles(in, what);
  for (std::uint64_t i = 0, n = in.Count(what); i < n; ++i)
    m.oom_ranks.push_back(in.Pod<int>(what));
  for (std::uint64_t i = 0, n = in.Count(what); i < n; ++i) r.notes.push_back(in.Str(what));
  r.peak_memory_per_stage_bytes = GetDoubles(in, what);
  r.fold = in.Str(what);
  for (long long* v : {&r.tasks, &r.activities, &r.instants, &r.fused_tasks}) {
    *v = in.Pod<long long>(what);
  }
  if (in.Pod<char>(what)) {
    MoeSummary s;
    s.top_k = in.Pod<int>(what);
    s.iteration_s = GetDoubles(in, what);
    for (double* v : {&s.mean_s, &s.p50_s, &s.p95_s, &s.min_s, &s.max_s, &s.tokens_per_s,
                      &s.load_std_before, &s.load_std_after, &s.load_balance_ratio,
                      &s.exposed_a2a_s, &s.placement_s, &s.placement_exposed_s,
                      &s.peak_memory_bytes, &s.dropped_tokens, &s.replicas, &s.transfer_bytes}) {
      *v = in.Pod<double>(what);
    }
    s.gpu_tokens_per_iteration.resize(in.Count(what));
    for (std::vector<double>& row : s.gpu_tokens_per_iteration) row = GetDoubles(in, what);
    for (double* v : {&s.placement_changes, &s.placement_kept_fraction, &s.transfer_bytes_saved}) {
      *v = in.Pod<double>(what);
    }
    s.expert_parallel = in.Pod<int>(what);
    s.expert_data_parallel = in.Pod<int>(what);
    r.moe = s;
  }
  if (in.Pod<char>(what)) {
    GnnFigures g;
    for (double* v : {&g.vertices_per_iteration, &g.hits_per_iteration, &g.h2d_bytes_per_iteration,
                      &g.cache_bytes}) {
      *v = in.Pod<double>(what);
    }
    r.gnn = g;
  }
  return r;
}

// What the child does: plan, simulate and measure at once; the trace goes to `trace_fd`.
// The run's link usage goes to `links`.
StrategyResult RunStreamed(const Scenario& s, const StrategySpec& spec, double samples,
                           double tokens, const std::vector<int>& rank_stage, int trace_fd,
                           const ChromeTraceFileOptions& trace_options, LinkUsage* links) {
  IterationFeed feed(s, spec);
  FeedSource source(feed);
  const int n = source.graph().num_ranks();
  // Planners set the fold before their first task (it is known here).
  MetricsInput in = MetricsInputFor(s, spec, n, samples, tokens);
  in.rank_stage = rank_stage;
  TraceMeter meter(n, std::move(in), kMoeTrackedCategories, source.graph().fold());
  std::optional<ChromeTraceWriter> writer;
  int write_errno = 0;
  const auto write_fd = [trace_fd, &write_errno](const std::string& text) {
    if (WriteFd(trace_fd, text)) return true;
    write_errno = errno;
    return false;
  };
  // --trace-format json.gz: the writer's pieces go through zlib on their way to the file.
  std::optional<GzipWriter> gzip;
  if (trace_fd >= 0) {
    if (trace_options.gzip) {
      gzip.emplace(write_fd);
      writer.emplace([&gzip](const std::string& text) { return gzip->Write(text); }, n,
                     trace_options.gpus);
    } else {
      writer.emplace(write_fd, n, trace_options.gpus);
    }
  }
  sim::RetireSink sink;
  sink.task = [&](const Task& t, const TraceRecord& r, const std::string&) {
    meter.Add(t, r);
    if (writer) {
      writer->Add(
          t, r,
          t.kind == TaskKind::kCollective ? &source.graph().collective(t.collective) : nullptr);
    }
  };
  sink.seal = [&](double safe_s) { meter.Seal(safe_s); };
  // The strategy's cluster: `stragglers: off` drops the stragglers (ScenarioFor).
  const ExecutionTrace trace =
      sim::SimulateStreaming(source, ScenarioFor(s, spec).cluster, s.simulation, sink);
  const Plan& plan = feed.plan();
  if (plan.rank_stage != rank_stage) throw Error("the plan's pipeline stages changed as it ran");
  const Measured measured = meter.Finish(plan.graph.fold());
  StrategyResult r;
  r.metrics = measured.metrics;
  r.notes = plan.notes;
  r.fold = plan.fold;
  r.tasks = plan.graph.next_id();
  r.activities = trace.activities;
  r.instants = trace.instants;
  r.fused_tasks = trace.fused_tasks;
  *links = trace.link_usage;
  if (plan.moe) r.moe = SummarizeMoe(measured, n, s.training.measured_iterations, *plan.moe);
  r.gnn = plan.gnn;
  r.peak_memory_per_stage_bytes = PeakMemoryPerStage(plan.rank_stage, r.metrics.peak_memory_bytes);
  if (writer &&
      !(writer->Finish(plan.graph.streams(), trace.executor, trace.makespan_s, &trace.link_usage) &&
        (!gzip || gzip->Finish()))) {
    throw Error(std::string("cannot write the Chrome trace: ") + std::strerror(write_errno));
  }
  return r;
}

}  // namespace

sim::SimulationProcess StartStreamedRun(const Scenario& s, const StrategySpec& spec,
                                        double samples_per_iteration, double tokens_per_sample,
                                        const std::vector<int>& rank_stage, AtomicFile* trace,
                                        const ChromeTraceFileOptions& trace_options) {
  const int trace_fd = trace ? trace->fd() : -1;
  return sim::StartChild([&](const sim::WireWrite& write) {
    LinkUsage links;
    const StrategyResult r = RunStreamed(s, spec, samples_per_iteration, tokens_per_sample,
                                         rank_stage, trace_fd, trace_options, &links);
    // The reply is made whole before it is sent: an error midway sends the error alone.
    std::string reply;
    const sim::WireWrite append = [&reply](const void* p, size_t n) {
      reply.append(static_cast<const char*>(p), n);
      return true;
    };
    sim::WireOut out(append);
    PutResult(out, r);
    sim::PutLinkUsage(out, links);
    write(reply.data(), reply.size());
  });
}

StrategyResult FinishStreamedRun(sim::SimulationProcess& p, LinkUsage* links) {
  StrategyResult r;
  sim::FinishChild(p, [&](const sim::WireRead& read) {
    sim::WireIn in(read);
    r = GetResult(in);
    LinkUsage usage = sim::GetLinkUsage(in);
    if (links) *links = std::move(usage);
  });
  return r;
}

}  // namespace stratasim
