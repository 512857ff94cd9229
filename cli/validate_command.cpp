#include "cli/validate_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "cli/exit_status.h"
#include "cli/mpi_process_group.h"
#include "cli/mpi_world.h"
#include "cli/validate_fit.h"
#include "cli/validate_interrupt.h"
#include "cli/validate_mpi.h"
#include "core/calibration.h"
#include "core/collective_names.h"
#include "core/error.h"
#include "core/scenario.h"
#include "core/units.h"
#include "report/atomic_file.h"
#include "report/chrome_trace.h"
#include "sim/executor.h"
#include "strategies/plan.h"
#include "validate/backend.h"
#include "validate/comparison.h"
#include "validate/fit.h"
#include "validate/host/host_backend.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

using validate::Backend;
using validate::BackendError;

struct ValidateOptions {
  std::string scenario;
  std::string backend = "host";
  std::string out;
  std::optional<int> warmup;
  std::optional<int> iterations;
  int ranks = 0;
  double memory_per_rank = 0;
  std::vector<std::string> only;
  std::string calibration;
  // Multi-process runs: how long a process waits for another (validate/process_group.h).
  double comm_timeout_s = 300;
  std::optional<validate::FitPolicy> fit;  // --fit: shrink plans to the ranks (validate/fit.h)
};

// The cluster the plans run on: the backend's hardware, with as many ranks as the scenario
// has GPUs (strategies size their groups from it).
ClusterSpec ValidationCluster(const Backend& b, int gpus) {
  ClusterSpec c = b.Describe();
  if (c.groups.size() != 1 || c.groups[0].count != 1) {
    throw Error("backend " + b.Name() + " describes more than one server; validate runs on one");
  }
  c.groups[0].gpus_per_server = gpus;
  return c;
}

// The simulation runs each collective kind with the algorithm the backend ran, where the
// backend says ("ring/simple/1ch": algorithm/protocol/channels, as the simulator names its own
// choices); the host does, while NCCL's choice is not observable, so cuda leaves them empty and
// the simulator's tuner chooses. Protocol and channels are one setting for all kinds: they are
// followed when every collective reports the same.
// The plan's copy to simulate: each collective's algorithm hint (a DDP `algorithm: tree`, say)
// replaced by what the backend ran, or by "auto" where that is not observable (NCCL chooses
// its own, which the simulator's tuner models). Simulating the hint would compare a tree with
// the ring the host ran.
TaskGraph LikeTheBackend(const TaskGraph& g, const ExecutionTrace& t) {
  TaskGraph copy = g;
  for (int i = 0; i < static_cast<int>(g.collectives().size()); ++i) {
    const CollectiveKind kind = g.collective(i).kind;
    std::string ran = static_cast<size_t>(i) < t.collective_algorithms.size()
                          ? t.collective_algorithms[static_cast<size_t>(i)]
                          : "";
    ran = ran.substr(0, ran.find('/'));
    copy.SetAlgorithm(i, IsCollectiveAlgorithm(kind, ran) ? ran : "auto");
  }
  return copy;
}

void FollowBackendAlgorithms(const TaskGraph& g, const ExecutionTrace& t, SimulationSpec* sim) {
  std::set<std::string> protocols, channels;
  for (std::size_t i = 0; i < g.collectives().size() && i < t.collective_algorithms.size(); ++i) {
    const CollectiveKind kind = g.collectives()[i].kind;
    std::vector<std::string> parts;
    std::stringstream in(t.collective_algorithms[i]);
    for (std::string p; std::getline(in, p, '/');) parts.push_back(p);
    if (parts.empty()) continue;
    if (IsCollectiveAlgorithm(kind, parts[0])) sim->collectives.algorithm[kind] = parts[0];
    protocols.insert(parts.size() > 1 ? parts[1] : "");
    channels.insert(parts.size() > 2 ? parts[2] : "");
  }
  const auto& known = CollectiveProtocols();
  if (protocols.size() == 1 &&
      std::find(known.begin(), known.end(), *protocols.begin()) != known.end()) {
    sim->collectives.protocol = *protocols.begin();
  }
  if (channels.size() == 1) {
    const std::string c = *channels.begin();
    if (c.size() > 2 && c.compare(c.size() - 2, 2, "ch") == 0) {
      const int n = std::atoi(c.substr(0, c.size() - 2).c_str());
      if (n >= 1 && n <= 64) sim->collectives.channels = n;
    }
  }
}

std::string Hardware(const Backend& b) {
  const ClusterSpec c = b.Describe();
  const GpuSpec& gpu = c.gpu_kinds.at(0);
  if (auto* host = dynamic_cast<const validate::HostBackend*>(&b)) {
    return host->machine().cpu_model + ", " + std::to_string(host->machine().hardware_threads) +
           " threads";
  }
  return std::to_string(c.NumGpus()) + " x " + gpu.name;
}

void WriteReport(const std::string& dir, const validate::ValidationReport& report) {
  const std::string table = validate::FormatValidationTable(report);
  WriteFileAtomically(dir + "/validation.txt", table);
  WriteFileAtomically(dir + "/validation.json", validate::ValidationToJson(report));
}

int Validate(const ValidateOptions& o) {
  // Under mpirun or srun, one process per rank (docs/validate.md, "On a cluster"). The
  // signals are blocked before MPI starts its threads (cli/validate_interrupt.h).
  std::unique_ptr<ReportOnInterrupt> interrupt;
  std::unique_ptr<mpi::MpiProcessGroup> group;
  if (mpi::LaunchedByMpiLauncher()) {
    interrupt = std::make_unique<ReportOnInterrupt>();
    try {
      group = std::make_unique<mpi::MpiProcessGroup>(o.comm_timeout_s);
    } catch (const Error& e) {
      std::cerr << "stratasim validate: " << e.what() << "\n";
      return 3;
    }
  }
  const bool root = !group || group->rank() == 0;
  Scenario s = LoadScenarioFile(o.scenario);
  if (!s.jobs.empty()) {
    throw UsageError(o.scenario +
                     " lists jobs, not strategies: validate runs strategies (a shared-cluster "
                     "scenario is simulated only, docs/multi-job.md)");
  }
  if (o.warmup) s.training.warmup_iterations = *o.warmup;
  if (o.iterations) s.training.measured_iterations = *o.iterations;
  std::unique_ptr<Backend> backend;
  int gpus = s.cluster.NumGpus();
  // --fit under mpirun/srun: plans shrink to the processes (one rank each).
  if (group && o.fit) gpus = std::min(gpus, group->size());
  try {
    // A process of a multi-process run runs one rank; the host backend is still made for all
    // of them, as its Describe() then sizes the cluster the plan is simulated on.
    backend = validate::MakeBackend(o.backend, group && o.backend == "host" ? gpus : o.ranks);
  } catch (const BackendError& e) {
    std::cerr << "stratasim validate: " << e.what() << "\n";
    return 3;
  }
  if (!group && gpus > backend->NumRanks() && !o.fit) {
    std::cerr << "stratasim validate: " << s.file << ": the scenario's cluster has " << gpus
              << " GPUs but backend " << backend->Name() << " offers " << backend->NumRanks()
              << " ranks" << (o.backend == "host" ? " (threads; --ranks N sets more)" : "")
              << ": nothing was run (--fit validates a copy of each plan shrunk to the ranks)\n";
    return 1;
  }
  if (!group && o.fit) gpus = std::min(gpus, backend->NumRanks());
  // Under mpirun over several servers, the plans are made and simulated on as many servers
  // as the processes span (ClusterOfProcesses); the servers are known before planning.
  std::vector<std::string> hosts;
  std::string cluster_note;
  if (group) hosts = group->AllGather(group->host());
  auto run_cluster = [&](int n) {
    if (group && static_cast<int>(hosts.size()) == n) {
      return ClusterOfProcesses(backend->Describe(), hosts, s.cluster, &cluster_note);
    }
    return ValidationCluster(*backend, n);
  };
  Scenario sv = s;
  sv.cluster = run_cluster(gpus);
  // Real hardware runs every rank's work: the plan compared with it is the unfolded one
  // (docs/scale.md), so that both executors run the very same graph.
  sv.simulation.fold = false;
  if (!o.calibration.empty()) sv.simulation.calibration = LoadCalibrationFile(o.calibration);

  // Plan every chosen strategy first, so that a bad option fails before anything runs.
  for (const std::string& name : o.only) {
    if (std::none_of(s.strategies.begin(), s.strategies.end(),
                     [&](const StrategySpec& x) { return x.name == name; })) {
      throw ConfigError(SourceLocation{s.file, 0, 0}, "--strategy", name,
                        "no strategy of this name in the scenario");
    }
  }
  struct Planned {
    const StrategySpec* spec;
    std::optional<Plan> plan;
    std::string error;
    std::optional<validate::Fit> fit;  // --fit: the shrunk copy planned instead
    ClusterSpec cluster;               // what the plan was planned (and is simulated) on
  };
  std::vector<Planned> planned;
  for (const StrategySpec& spec : sv.strategies) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), spec.name) == o.only.end()) {
      continue;
    }
    Planned p{&spec, std::nullopt, "", std::nullopt, sv.cluster};
    try {
      // ---- --fit (validate/fit.h, cli/validate_fit.h): a copy shrunk to the backend's ranks.
      const FitPlanned fitted = o.fit ? FitForValidation(s, sv, spec, gpus, *o.fit, run_cluster)
                                      : FitPlanned{sv, spec, std::nullopt, ""};
      p.fit = fitted.fit;
      p.cluster = fitted.scenario.cluster;
      p.error = fitted.refused;
      // ---- end --fit
      if (p.error.empty()) p.plan = PlanStrategy(fitted.scenario, fitted.spec);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      p.error = std::string("cannot be planned: ") + e.what();
    }
    // The backends run every task on its rank's device (validate/backend.h); a task placed on
    // a host CPU socket (Task::on_host) would run there instead and be compared with a
    // simulation that ran it on the CPU, so such a plan is refused rather than mismeasured.
    if (p.plan) {
      const auto& tasks = p.plan->graph.tasks();
      const long long on_host =
          std::count_if(tasks.begin(), tasks.end(), [](const Task& t) { return t.on_host; });
      if (on_host > 0) {
        p.error = "cannot be validated: " + std::to_string(on_host) +
                  " of its tasks run on a host CPU socket (e.g. parameter-server shards with "
                  "server_device: cpu), which the validate backends do not place; use "
                  "server_device: gpu";
        p.plan.reset();
      }
    }
    planned.push_back(std::move(p));
  }
  if (group) {
    std::vector<PlannedGraph> graphs;
    for (const Planned& p : planned)
      graphs.push_back({p.spec->name, p.plan ? &p.plan->graph : nullptr});
    const Agreement agreement = CheckAgreement(*group, s.file, gpus, graphs);
    if (!agreement.error.empty()) {
      // One write, so that the processes' lines do not interleave in mpirun's output.
      std::cerr << ("stratasim validate: rank " + std::to_string(group->rank()) + ": " +
                    agreement.error + "\n")
                << std::flush;
      return 1;
    }
    hosts = agreement.hosts;
  }

  const std::string out =
      o.out.empty() ? "stratasim-out/" + s.name + "-validate-" + o.backend : o.out;
  if (root) CreateDirectories(out);
  auto* host_backend = dynamic_cast<const validate::HostBackend*>(backend.get());
  if (root && host_backend) {
    WriteFileAtomically(out + "/host-cluster.yaml",
                        validate::host::HostClusterYaml(host_backend->machine(), gpus));
  }
  validate::ValidationReport report;
  report.scenario = s.name;
  report.backend = backend->Name();
  report.hardware = Hardware(*backend);
  if (group) report.hardware += "; " + ProcessesLine(hosts);
  if (!cluster_note.empty()) report.hardware += "; " + cluster_note;
  // Every report write of a multi-process run goes through `interrupt`, so that a SIGTERM
  // writes a whole report (cli/validate_interrupt.h); other ranks write none.
  if (interrupt && root) {
    interrupt->SetWriter([&out](const validate::ValidationReport& r) { WriteReport(out, r); });
  }
  auto write_report = [&](const validate::ValidationReport& r) {
    if (interrupt) {
      if (root) interrupt->Write(r);
    } else {
      WriteReport(out, r);
    }
  };
  bool lost_process = false;  // a process died or hangs: nothing more can run
  report.calibration = o.calibration;
  report.ranks = gpus;  // with --fit: the most a shrunk plan may use
  report.warmup_iterations = sv.training.warmup_iterations;
  report.measured_iterations = sv.training.measured_iterations;
  validate::RunOptions run;
  run.warmup_iterations = sv.training.warmup_iterations;
  run.measured_iterations = sv.training.measured_iterations;
  run.seed = sv.training.seed;
  run.memory_limit_bytes_per_rank = o.memory_per_rank;
  bool all_ok = true;
  for (Planned& p : planned) {
    validate::StrategyValidation v;
    v.name = p.spec->name;
    v.kind = p.spec->kind;
    if (p.fit) ReportFit(s, sv, *p.spec, *p.fit, &v);  // --fit: what was shrunk, the full plan
    if (!p.plan || lost_process) {
      v.error = p.plan ? "not run: a process was lost during an earlier strategy" : p.error;
      all_ok = false;
      report.strategies.push_back(v);
      write_report(report);
      continue;
    }
    const TaskGraph& g = p.plan->graph;
    v.tasks_total = static_cast<int>(g.tasks().size());
    // A plan shrunk by --fit below the process count (t x p smaller than the processes, say)
    // cannot run one rank per process: every process skips it alike, before any message.
    if (group && g.num_ranks() != group->size()) {
      v.error = "not run: --fit shrank it to " + std::to_string(g.num_ranks()) + " ranks but " +
                std::to_string(group->size()) + " processes run; start " +
                std::to_string(g.num_ranks()) + " processes to validate it";
      all_ok = false;
      report.strategies.push_back(v);
      write_report(report);
      continue;
    }
    if (root) {
      std::cerr << "validate: " << v.name << ": running " << g.tasks().size() << " tasks on "
                << g.num_ranks() << " " << backend->Name() << " ranks"
                << (group ? ", one per process" : "") << "\n";
    }
    ExecutionTrace measured;
    if (group) {
      if (interrupt && root) interrupt->Running(report, v);
      GatheredRun gathered;
      try {
        gathered = RunAndGather(*backend, g, run, *group);
      } catch (const validate::ProcessGroupError& e) {
        // This process cannot reach the others: on rank 0 the report says so; another rank
        // has no report to write.
        std::cerr << "stratasim validate: " << e.what() << "\n";
        if (!root) return 1;
        gathered.error = e.what();
        gathered.lost_process = true;
      }
      if (!root) continue;
      measured = std::move(gathered.trace);
      v.measured = gathered.measured;
      v.error = gathered.error;
      lost_process = gathered.lost_process;
    } else {
      try {
        measured = backend->Run(g, run);
        v.measured = true;
      } catch (const BackendError& e) {
        measured = e.partial();
        v.error = std::string(validate::ToString(e.kind())) + ": " + e.what();
      }
    }
    for (const TraceRecord& r : measured.records) v.tasks_measured += r.end_s >= 0 ? 1 : 0;
    // The raw trace is kept whatever happened: a failed run's finished tasks are results.
    if (!measured.records.empty()) {
      WriteFileAtomically(out + "/" + v.name + ".measured.json", TraceToJson(measured));
    }
    if (v.measured) {
      WriteFileAtomically(out + "/" + v.name + ".measured.trace.json",
                          ChromeTraceJson(g, measured));
      SimulationSpec sim = sv.simulation;
      FollowBackendAlgorithms(g, measured, &sim);
      const TaskGraph like = LikeTheBackend(g, measured);
      try {
        // The calibration's link figures (`links:`, `fabric:`) go on a copy of the cluster:
        // the simulation with the defaults runs on the cluster as the backend described it.
        ClusterSpec calibrated = p.cluster;
        if (sim.calibration) ApplyLinkCalibration(&*sim.calibration, &calibrated);
        const ExecutionTrace simulated = sim::Simulate(like, calibrated, sim);
        WriteFileAtomically(out + "/" + v.name + ".simulated.trace.json",
                            ChromeTraceJson(like, simulated));
        std::optional<ExecutionTrace> with_defaults;
        if (sim.calibration) {
          SimulationSpec defaults = sim;
          defaults.calibration.reset();
          with_defaults = sim::Simulate(like, p.cluster, defaults);
          WriteFileAtomically(out + "/" + v.name + ".simulated-defaults.trace.json",
                              ChromeTraceJson(like, *with_defaults));
        }
        v.simulated = true;
        try {
          validate::CompareTraces(g, measured, simulated, with_defaults ? &*with_defaults : nullptr,
                                  sv.training.warmup_iterations, sv.training.measured_iterations,
                                  &v);
        } catch (const Error& e) {
          v.simulated = false;  // nothing to show side by side
          v.error = std::string("comparison failed: ") + e.what();
        }
      } catch (const Error& e) {
        v.simulated = false;
        v.error = std::string("simulation failed: ") + e.what();
      }
    } else {
      v.error += " (" + std::to_string(v.tasks_measured) + " of " + std::to_string(v.tasks_total) +
                 " tasks measured, kept in " + out + "/" + v.name + ".measured.json)";
    }
    all_ok = all_ok && v.measured && v.simulated;
    report.strategies.push_back(v);
    write_report(report);
  }
  if (!root) return 0;
  std::cout << validate::FormatValidationTable(report);
  std::cout << "outputs: " << out
            << "/validation.json, validation.txt, <strategy>.measured.trace.json, "
               "<strategy>.simulated.trace.json, <strategy>.measured.json\n";
  if (group && lost_process) {
    // The lost process's peers may be waiting for it (mpirun --enable-recovery keeps them
    // running): end the whole job.
    std::cout.flush();
    std::cerr << "stratasim validate: a process was lost; ending every process (MPI_Abort)\n";
    group->Abort(1);
  }
  return all_ok ? 0 : 1;
}

}  // namespace

int ValidateCommand(const std::vector<std::string>& args) {
  po::options_description opts("stratasim validate options");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>(),
                                                 "scenario YAML file")(
      "backend,b", po::value<std::string>()->default_value("host"),
      "host (CPU threads) or cuda (GPUs and NCCL)")(
      "out,o", po::value<std::string>(),
      "output folder (default stratasim-out/<scenario>-validate-<backend>)")(
      "warmup", po::value<int>(), "warm-up iterations (default: the scenario's)")(
      "iterations,n", po::value<int>(), "measured iterations (default: the scenario's)")(
      "ranks", po::value<int>()->default_value(0),
      "ranks the backend offers (host: threads; default: all hardware threads / GPUs)")(
      "strategy,s", po::value<std::vector<std::string>>()->composing(),
      "validate only this strategy (repeatable)")(
      "memory-per-rank", po::value<std::string>(),
      "fail a run whose memory events exceed this per rank (e.g. \"16GiB\"), as a device of "
      "that size would; default: the backend's")(
      "calibration", po::value<std::string>(),
      "calibration file for the simulation (written by `stratasim calibrate`)")(
      "comm-timeout", po::value<double>()->default_value(300),
      "under mpirun/srun: seconds a process waits for another before naming it as dead or "
      "hung")(
      "fit", po::value<std::string>()->implicit_value("dp"),
      "when the scenario has more GPUs than the ranks: validate a copy of each plan shrunk to "
      "them, dropping data-parallel replicas (--fit or --fit=dp) and then pipeline stages "
      "(--fit=dp,pp); the report says what was shrunk and shows the full plan's simulated time");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  ValidateOptions o;
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: stratasim validate SCENARIO [options]\n" << opts;
      return 0;
    }
    if (!vm.count("scenario")) throw po::error("the scenario file is required");
    o.scenario = vm["scenario"].as<std::string>();
    o.backend = vm["backend"].as<std::string>();
    if (vm.count("out")) o.out = vm["out"].as<std::string>();
    if (vm.count("warmup")) {
      o.warmup = vm["warmup"].as<int>();
      if (*o.warmup < 0) throw po::error("--warmup must be >= 0");
    }
    if (vm.count("iterations")) {
      o.iterations = vm["iterations"].as<int>();
      if (*o.iterations < 1) throw po::error("--iterations must be >= 1");
    }
    o.ranks = vm["ranks"].as<int>();
    if (o.ranks < 0) throw po::error("--ranks must be >= 0");
    if (vm.count("memory-per-rank")) {
      try {
        o.memory_per_rank = ParseBytes(vm["memory-per-rank"].as<std::string>());
      } catch (const UnitError& e) {
        throw po::error(std::string("--memory-per-rank: ") + e.what());
      }
      if (o.memory_per_rank <= 0) throw po::error("--memory-per-rank must be > 0");
    }
    if (vm.count("strategy")) o.only = vm["strategy"].as<std::vector<std::string>>();
    if (vm.count("calibration")) o.calibration = vm["calibration"].as<std::string>();
    o.comm_timeout_s = vm["comm-timeout"].as<double>();
    if (!(o.comm_timeout_s > 0)) throw po::error("--comm-timeout must be > 0 seconds");
    if (vm.count("fit")) {
      try {
        o.fit = validate::ParseFitPolicy(vm["fit"].as<std::string>());
      } catch (const Error& e) {
        throw po::error(e.what());
      }
    }
    if (o.backend != "host" && o.backend != "cuda") {
      throw po::error("--backend " + o.backend + ": must be host or cuda");
    }
  } catch (const po::error& e) {
    std::cerr << "stratasim validate: " << e.what() << "\n";
    return 2;
  }
  return Validate(o);
}

}  // namespace stratasim
