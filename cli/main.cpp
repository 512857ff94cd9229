// stratasim: which parallel-training strategy is fastest on this cluster, for this model.
//
//   stratasim run SCENARIO.yaml [--out DIR] [--strategy NAME]... [--write-graphs] [--no-traces]
//                 [--trace-gpus LIST] [--trace-format json|json.gz] [--calibration FILE] [-j N]
//   stratasim replay SCENARIO.yaml GRAPH.json [--out DIR]
//   stratasim collective SCENARIO.yaml [--op all_reduce] [-b 8] [-e 128M] [-f 2] [...]
//   stratasim validate SCENARIO.yaml [--backend host|cuda] [--out DIR] [...]
//   stratasim calibrate [--backend host|cuda] [--out FILE] [...]
//   stratasim compress-check SCENARIO.yaml [--methods LIST] [--trials N] [--npy FILE] [...]
//   stratasim sweep SCENARIO.yaml --grid GRID.yaml [--out DIR] [-j N] [--shard I/N]
//   stratasim compare A B [--threshold PCT] [--metric NAME]... [--json FILE]
//   stratasim version
//
// Exit status: 0 success; 1 a strategy could not be planned or simulated, or a compressor of
// compress-check could not run (the others' results are written); 2 bad input (scenario, options,
// command line, a run too large to fit); 3 an output could not be written, or memory ran out (the
// message names the phase); 128 + N killed by signal N (SIGINT, SIGTERM, SIGHUP), after removing
// temporaries and simulation children. compare: 1 when a figure regressed past --threshold
// (cli/compare_command.h).
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/calibrate_command.h"
#include "cli/chakra_export_command.h"
#include "cli/collective_sweep.h"
#include "cli/command_line.h"
#include "cli/compare_command.h"
#include "cli/compress_check_command.h"
#include "cli/exit_status.h"
#include "cli/phase.h"
#include "cli/report_command.h"
#include "cli/run_jobs.h"
#include "cli/run_scenario.h"
#include "cli/search_command.h"
#include "cli/strategies_command.h"
#include "cli/sweep_command.h"
#include "cli/trace_options.h"
#include "cli/validate_command.h"
#include "core/calibration.h"
#include "core/cleanup.h"
#include "core/collective_names.h"
#include "core/error.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "core/scenario.h"
#include "core/units.h"
#include "report/atomic_file.h"
#include "report/gnn_table.h"
#include "report/moe_table.h"
#include "report/pipeline_table.h"
#include "report/solver_table.h"
#include "report/table.h"
#include "sim/executor.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

constexpr const char* kVersion = STRATASIM_VERSION;

const char* kUsage =
    "usage: stratasim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO       simulate every strategy of a scenario and compare them\n"
    "  replay SCENARIO GRAPH\n"
    "                     simulate a task graph written by `run --write-graphs` on the\n"
    "                     scenario's cluster\n"
    "  collective SCENARIO\n"
    "                     the table nccl-tests prints (size, time, algbw, busbw), simulated\n"
    "                     on the scenario's cluster\n"
    "  validate SCENARIO  run each strategy for real (--backend host|cuda), simulate it on\n"
    "                     the same hardware, and compare measured and simulated times\n"
    "  calibrate          micro-benchmark a backend and write a calibration file for\n"
    "                     `run --calibration`\n"
    "  compress-check SCENARIO\n"
    "                     run each gradient compressor's CPU kernels on gradient-shaped\n"
    "                     tensors: error, bias, rows recovered, wire bytes, encode/decode time\n"
    "  search SCENARIO    enumerate the plans of the scenario's `search:` space, prune them\n"
    "                     by divisibility and memory, rank them analytically and simulate\n"
    "                     the best K with contention\n"
    "  sweep SCENARIO --grid GRID\n"
    "                     simulate the scenario at every point of a grid of its fields, in a\n"
    "                     pool of processes (or MPI ranks), resuming where a killed sweep stopped\n"
    "  compare A B        two results folders side by side: what changed in the scenario,\n"
    "                     how far each figure moved; exit status 1 past --threshold\n"
    "  chakra-export SCENARIO --strategy NAME --out DIR\n"
    "                     write a strategy's plan as Chakra execution traces, one file per\n"
    "                     rank (docs/chakra.md)\n"
    "  strategies [KIND]  list the strategy kinds, or one kind's options\n"
    "  report OUTDIR      write OUTDIR/report.html: one self-contained page of charts of a run's\n"
    "                     (or validate's) outputs\n"
    "  version            print the version\n"
    "\n"
    "`stratasim <command> --help` lists a command's options.\n";

// Each simulation process holds its own executor state: more processes than this only
// multiply memory.
constexpr int kMaxJobs = limits::kMaxJobs;

#ifdef STRATASIM_CUDA_SIBLING
// validate and calibrate run in the program beside this one that has the CUDA backend
// (cli/CMakeLists.txt); returns only if it cannot be started, and this program then runs the
// command itself with the backends it has.
void RunInCudaSibling(char** argv) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = '\0';
  std::string path(self);
  path = path.substr(0, path.find_last_of('/') + 1) + STRATASIM_CUDA_SIBLING;
  if (access(path.c_str(), X_OK) != 0) return;
  std::fflush(nullptr);
  argv[0] = path.data();
  execv(path.c_str(), argv);
}
#endif

int DefaultJobs() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores < 1 ? 1 : static_cast<int>(std::min<long>(cores, kMaxJobs));
}

std::string DefaultOutDir(const Scenario& s) { return "stratasim-out/" + s.name; }

// --out: a folder the user names. Empty would mean the current folder's root-relative
// outputs ("/results.json"): refused.
std::string OutDir(const po::variables_map& vm, const std::string& fallback) {
  if (!vm.count("out")) return fallback;
  const std::string out = vm["out"].as<std::string>();
  if (out.empty()) throw UsageError("--out must not be empty (give a folder, e.g. --out .)");
  return out;
}

int Finish(const std::string& out, const RunResults& results, bool traces = true,
           bool gzip = false) {
  std::cout << FormatComparisonTable(results);
  const std::string moe = FormatMoeTable(results);
  if (!moe.empty()) std::cout << "\n" << moe;
  const std::string pipeline = FormatPipelineTable(results);
  if (!pipeline.empty()) std::cout << "\n" << pipeline;
  const std::string gnn = FormatGnnTable(results);
  if (!gnn.empty()) std::cout << "\n" << gnn;
  const std::string solver = FormatSolverTable(results);
  if (!solver.empty()) std::cout << "\n" << solver;
  std::cout << "outputs: " << out << "/results.json, results.csv, links.json"
            << (traces ? (gzip ? ", <strategy>.trace.json.gz" : ", <strategy>.trace.json") : "")
            << "\n";
  for (const StrategyResult& r : results.strategies) {
    if (!r.ok) return 1;
  }
  return 0;
}

// A shared-cluster scenario (`jobs:`, docs/multi-job.md): every placement policy, shared and
// alone runs, one table and its results files.
int RunSharedCluster(const Scenario& s, const po::variables_map& vm, const std::string& out_flag,
                     int parallel) {
  if (vm.count("strategy")) {
    throw UsageError("--strategy: " + s.file + " lists jobs, not strategies");
  }
  const std::string out = out_flag.empty() ? DefaultOutDir(s) : out_flag;
  const JobsResults results = RunJobs(s, parallel, kVersion);
  SetPhase("writing the outputs");
  WriteJobsOutputs(out, results);
  std::cout << FormatJobsTable(results);
  std::cout << "outputs: " << out << "/results.json, results.csv\n";
  for (const PolicyOutcome& p : results.policies) {
    if (!p.ok) return 1;
    for (const JobOutcome& j : p.jobs) {
      if (!j.ok) return 1;
    }
  }
  return 0;
}

int Run(const std::vector<std::string>& args) {
  po::options_description opts("stratasim run options");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>()->required(),
                                                 "scenario YAML file")(
      "out,o", po::value<std::string>(), "output folder (default stratasim-out/<scenario name>)")(
      "strategy,s", po::value<std::vector<std::string>>()->composing(),
      "run only this strategy (repeatable)")(
      "write-graphs", po::bool_switch(), "also write each plan's task graph as <name>.graph.json")(
      "no-traces", po::bool_switch(), "do not write the Chrome traces (<name>.trace.json)")(
      "html", po::bool_switch(), "also write report.html, the charts of `stratasim report`")(
      "trace-gpus", po::value<std::string>(),
      "write only these GPUs' events in the traces, e.g. 0-7,64 (default: all)")(
      "trace-format", po::value<std::string>()->default_value("json"),
      "json, or json.gz: gzip'd <name>.trace.json.gz, which Perfetto opens")(
      "calibration", po::value<std::string>(),
      "calibration file (written by validate mode); overrides the scenario's")(
      "jobs,j", po::value<int>()->default_value(DefaultJobs()),
      "strategies simulated at once, each in its own process (default: the machine's cores); "
      "the outputs do not depend on it");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  if (WantsHelp(args)) {
    std::cout << opts;
    return 0;
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  const int jobs = CheckedJobs(vm["jobs"].as<int>());
  const std::string out_flag = OutDir(vm, "");
  SetPhase("reading the scenario");
  Scenario s = LoadScenarioFile(vm["scenario"].as<std::string>());
  if (vm.count("calibration")) {
    s.simulation.calibration = LoadCalibrationFile(vm["calibration"].as<std::string>());
    ApplyLinkCalibration(&*s.simulation.calibration, &s.cluster);
  }
  if (!s.jobs.empty() && vm["html"].as<bool>()) {
    throw UsageError("--html: " + s.file + " lists jobs; the HTML report shows strategies");
  }
  if (!s.jobs.empty()) return RunSharedCluster(s, vm, out_flag, jobs);
  const std::vector<std::string> only = vm.count("strategy")
                                            ? vm["strategy"].as<std::vector<std::string>>()
                                            : std::vector<std::string>{};
  const std::string out = out_flag.empty() ? DefaultOutDir(s) : out_flag;
  const bool traces = !vm["no-traces"].as<bool>();
  RunOptions options;
  options.jobs = jobs;
  options.whole = vm["write-graphs"].as<bool>();  // a graph file needs the whole graph
  options.trace_dir = traces ? out : "";
  if (vm.count("trace-gpus")) {
    options.trace.gpus = ParseTraceGpus(vm["trace-gpus"].as<std::string>(), s.cluster.NumGpus());
  }
  options.trace.gzip = ParseTraceGzip(vm["trace-format"].as<std::string>());
  std::vector<StrategyRun> runs = RunStrategies(s, only, options);
  SetPhase("writing the outputs");
  RunResults results = DescribeRun(s, kVersion);
  for (const StrategyRun& r : runs) results.strategies.push_back(r.result);
  SetMoeSpeedups(results.strategies);
  WriteOutputs(out, results, runs, vm["write-graphs"].as<bool>(), traces, options.trace);
  const int status = Finish(out, results, traces, options.trace.gzip);
  if (vm["html"].as<bool>()) WriteRunReport(out);
  return status;
}

int Replay(const std::vector<std::string>& args) {
  po::options_description opts("stratasim replay options");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>()->required(),
                                                 "scenario YAML file (for the cluster)")(
      "graph", po::value<std::string>()->required(), "task graph JSON file")(
      "out,o", po::value<std::string>(), "output folder (default stratasim-out/<scenario>-replay)");
  po::positional_options_description pos;
  pos.add("scenario", 1).add("graph", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::cout << opts;
    return 0;
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  const std::string out_flag = OutDir(vm, "");
  SetPhase("reading the scenario");
  const Scenario s = LoadScenarioFile(vm["scenario"].as<std::string>());
  const std::string path = vm["graph"].as<std::string>();
  SetPhase("reading the task graph", path);
  const std::string text = ReadInputFile(path, limits::kGraphFileBytes, "a task graph file");
  StrategyRun run;
  try {
    run.graph = TaskGraphFromJson(text);
  } catch (const Error& e) {
    // A syntax error says "at line L, column C" (nlohmann::json): make that the location.
    SourceLocation where{path, 0, 0};
    const std::string what = e.what();
    const size_t at = what.find(" at line ");
    if (at != std::string::npos) {
      std::sscanf(what.c_str() + at, " at line %d, column %d", &where.line, &where.column);
    }
    throw ConfigError(where, "", "", what);
  }
  // Bad input, not a failed simulation: the graph was written for another cluster.
  if (run.graph.num_ranks() != s.cluster.NumGpus()) {
    throw ConfigError(SourceLocation{path, 0, 0}, "num_ranks",
                      std::to_string(run.graph.num_ranks()),
                      "must equal the GPUs of the scenario's cluster (" +
                          std::to_string(s.cluster.NumGpus()) + " in " + s.file + ")");
  }
  StrategySpec spec;
  spec.name = "replay";
  spec.kind = "graph";
  SetPhase("simulating the task graph", path);
  run.trace = sim::Simulate(run.graph, s.cluster, s.simulation);
  // The graph does not say how many samples it trains; the scenario's batch is assumed.
  run.result = Evaluate(s, spec, run.graph, run.trace, s.training.global_batch, s.model.sequence);
  run.result.notes.push_back("replayed " + path + " (" + std::to_string(run.graph.tasks().size()) +
                             " tasks)");
  RunResults results = DescribeRun(s, kVersion);
  results.strategies.push_back(run.result);
  const std::string out = out_flag.empty() ? DefaultOutDir(s) + "-replay" : out_flag;
  SetPhase("writing the outputs");
  std::vector<StrategyRun> runs;
  runs.push_back(std::move(run));
  WriteOutputs(out, results, runs, false);
  return Finish(out, results);
}

int Collective(const std::vector<std::string>& args) {
  po::options_description opts("stratasim collective options (nccl-tests style)");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>()->required(),
                                                 "scenario YAML file (for the cluster)")(
      "op,c", po::value<std::string>()->default_value("all_reduce"),
      "collective: all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, "
      "gather, scatter; or sendrecv (nccl-tests' sendrecv_perf: rank r sends to r+1 and "
      "receives from r-1, all at once)")("minbytes,b", po::value<std::string>()->default_value("8"),
                                         "smallest size (K, M, G suffixes are powers of 1024)")(
      "maxbytes,e", po::value<std::string>()->default_value("128M"), "largest size")(
      "stepfactor,f", po::value<double>()->default_value(2), "size multiplication factor")(
      "gpus,g", po::value<int>()->default_value(0), "number of GPUs (default: all)")(
      "datatype,d", po::value<std::string>()->default_value("fp32"), "element type")(
      "root,r", po::value<int>()->default_value(0),
      "root rank (broadcast, reduce, ...; not sendrecv)")(
      "algorithm,a", po::value<std::string>(), "force an algorithm (default: auto; not sendrecv)")(
      "protocol,p", po::value<std::string>(), "force a protocol: ll, ll128, simple (not sendrecv)")(
      "channels", po::value<int>(), "force the number of channels (not sendrecv)")(
      "fidelity", po::value<std::string>(), "step, stream or analytic (default: the scenario's)")(
      "json", po::value<std::string>(), "also write the rows to this JSON file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  if (WantsHelp(args)) {
    std::cout << opts;
    return 0;
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  if (vm.count("json") && vm["json"].as<std::string>().empty()) {
    throw UsageError("--json must not be empty (give a file name)");
  }
  const std::string scenario_path = vm["scenario"].as<std::string>();
  SetPhase("reading the scenario");
  Scenario s = LoadScenarioFile(scenario_path);
  CollectiveSweep sweep;
  const std::string op = vm["op"].as<std::string>();
  bool found = false;
  if (op == "sendrecv") {
    sweep.op = SweepOp::kSendRecv;
    found = true;
    // Point-to-point transfers have no NCCL algorithm, protocol, channel count or root: say so
    // rather than ignore a setting the user believes applied.
    for (const char* name : {"algorithm", "protocol", "channels", "root"}) {
      if (vm.count(name) && !vm[name].defaulted()) {
        throw UsageError(std::string("--") + name +
                         " does not apply to --op sendrecv (point-to-point transfers, not a "
                         "collective)");
      }
    }
  }
  for (CollectiveKind k : kAllCollectiveKinds) {
    if (ToString(k) == op) {
      sweep.kind = k;
      found = true;
    }
  }
  if (!found) throw UsageError("--op " + op + ": not a collective");
  const auto dtype = ParseDType(vm["datatype"].as<std::string>());
  if (!dtype) throw UsageError("--datatype " + vm["datatype"].as<std::string>() + ": not a type");
  sweep.dtype = *dtype;
  try {
    sweep.min_bytes = ParseSweepSize(vm["minbytes"].as<std::string>());
    sweep.max_bytes = ParseSweepSize(vm["maxbytes"].as<std::string>());
  } catch (const UnitError& e) {
    throw UsageError(std::string("-b/-e: ") + e.what());
  }
  sweep.factor = vm["stepfactor"].as<double>();
  sweep.gpus = vm["gpus"].as<int>();
  if (sweep.gpus < 0 || sweep.gpus > s.cluster.NumGpus()) {
    throw UsageError("--gpus " + std::to_string(sweep.gpus) + ": must be in [1, " +
                     std::to_string(s.cluster.NumGpus()) +
                     "] (the cluster's GPUs), or 0 for all of them");
  }
  sweep.root = vm["root"].as<int>();
  if (vm.count("algorithm")) {
    const std::string a = vm["algorithm"].as<std::string>();
    if (!IsCollectiveAlgorithm(sweep.kind, a)) {
      std::string known;
      for (const std::string& k : CollectiveAlgorithms(sweep.kind)) known += " " + k;
      throw UsageError("--algorithm " + a + ": " + op + " has:" + known);
    }
    s.simulation.collectives.algorithm[sweep.kind] = a;
  }
  if (vm.count("protocol")) {
    const std::string p = vm["protocol"].as<std::string>();
    const auto& known = CollectiveProtocols();
    if (std::find(known.begin(), known.end(), p) == known.end()) {
      throw UsageError("--protocol " + p + ": must be one of ll, ll128, simple, auto");
    }
    s.simulation.collectives.protocol = p;
  }
  if (vm.count("channels")) {
    const int c = vm["channels"].as<int>();
    if (c < 1 || c > 64) throw UsageError("--channels must be in [1, 64]");
    s.simulation.collectives.channels = c;
  }
  if (vm.count("fidelity")) {
    const std::string f = vm["fidelity"].as<std::string>();
    if (f == "step") {
      s.simulation.fidelity = Fidelity::kStep;
    } else if (f == "stream") {
      s.simulation.fidelity = Fidelity::kStream;
    } else if (f == "analytic") {
      s.simulation.fidelity = Fidelity::kAnalytic;
    } else {
      throw UsageError("--fidelity " + f + ": must be step, stream or analytic");
    }
  }
  try {
    CheckCollectiveSweep(s, sweep);
  } catch (const Error& e) {
    throw UsageError(scenario_path + ": " + e.what());  // the options' fault
  }
  std::vector<SweepRow> rows;
  SetPhase("simulating the collective sweep");
  try {
    rows = RunCollectiveSweep(s, sweep);
  } catch (const Error& e) {
    throw Error(scenario_path + ": " + e.what());  // the sweep's sizes, or the simulation's
  }
  std::cout << FormatSweepTable(s, sweep, rows);
  if (vm.count("json"))
    WriteFileAtomically(vm["json"].as<std::string>(), SweepToJson(s, sweep, rows));
  return 0;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
#ifdef STRATASIM_CUDA_SIBLING
  if (command == "validate" || command == "calibrate") RunInCudaSibling(argv);
#endif
  cleanup::InstallSignalHandlers();
  try {
    if (command == "run") return Run(args);
    if (command == "replay") return Replay(args);
    if (command == "collective") return Collective(args);
    if (command == "validate") return ValidateCommand(args);
    if (command == "calibrate") return CalibrateCommand(args);
    if (command == "compress-check") return CompressCheckCommand(args);
    if (command == "strategies") return StrategiesCommand(args, std::cout);
    if (command == "search") return SearchCommand(args, kVersion, DefaultJobs());
    if (command == "sweep") return SweepCommand(args, kVersion);
    if (command == "report") return ReportCommand(args);
    if (command == "compare") return CompareCommand(args, std::cout);
    if (command == "chakra-export") return ChakraExportCommand(args, std::cout);
    if (command == "version" || command == "--version") {
      std::cout << "stratasim " << kVersion << "\n";
      return 0;
    }
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "stratasim: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (...) {
    return ReportCurrentException(command, std::cerr);
  }
}

}  // namespace
}  // namespace stratasim

int main(int argc, char** argv) { return stratasim::Main(argc, argv); }
