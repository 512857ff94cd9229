#include "cli/sweep_command.h"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "cli/child_pool.h"
#include "cli/command_line.h"
#include "cli/exit_status.h"
#include "cli/mpi_world.h"
#include "cli/phase.h"
#include "cli/run_scenario.h"
#include "cli/sweep_journal.h"
#include "cli/sweep_results.h"
#include "core/cleanup.h"
#include "core/limits.h"
#include "core/sweep_grid.h"
#include "report/atomic_file.h"
#include "sim/executor.h"
#include "sim/trace_wire.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

struct SweepOptions {
  std::string scenario;
  std::string grid;
  std::string out;
  int jobs = 1;
  int shard = 0;
  int shards = 1;  // 1: no --shard
};

SweepOptions ParseOptions(const std::vector<std::string>& args, bool* help) {
  po::options_description opts("stratasim sweep options");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>()->required(),
                                                 "scenario YAML file")(
      "grid,g", po::value<std::string>()->required(),
      "grid YAML file: key paths into the scenario, each with a list of values (docs/sweep.md)")(
      "out,o", po::value<std::string>(),
      "output folder: the journal, sweep.json, sweep.csv (default "
      "stratasim-out/<scenario file name>-sweep)")(
      "jobs,j", po::value<int>()->default_value(1),
      "points simulated at once, each in its own process; the outputs do not depend on it")(
      "shard", po::value<std::string>(),
      "I/N: run only the points whose index % N == I, into sweep.shard-I-of-N.jsonl (a Slurm "
      "job array's task I of N); a sweep without --shard then writes the outputs");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  if (WantsHelp(args)) {
    std::cout << opts;
    *help = true;
    return {};
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  SweepOptions o;
  o.scenario = vm["scenario"].as<std::string>();
  o.grid = vm["grid"].as<std::string>();
  if (vm.count("out")) {
    o.out = vm["out"].as<std::string>();
    if (o.out.empty()) throw UsageError("--out must not be empty (give a folder, e.g. --out .)");
  } else {
    o.out = "stratasim-out/" + std::filesystem::path(o.scenario).stem().string() + "-sweep";
  }
  o.jobs = CheckedJobs(vm["jobs"].as<int>());
  if (vm.count("shard")) {
    const std::string s = vm["shard"].as<std::string>();
    int i = -1, n = 0;
    char tail = 0;
    if (std::sscanf(s.c_str(), "%d/%d%c", &i, &n, &tail) != 2 || n < 1 || i < 0 || i >= n ||
        n > static_cast<int>(limits::kMaxSweepPoints)) {
      throw UsageError("--shard " + s + ": must be I/N with 0 <= I < N (e.g. 0/4 .. 3/4)");
    }
    o.shard = i;
    o.shards = n;
  }
  return o;
}

// One point in a child process: its scenario, every strategy simulated (no traces), its line.
std::string RunPoint(const SweepGrid& grid, std::uint64_t point) {
  const Scenario s = grid.LoadPoint(point);
  RunOptions options;
  options.jobs = 1;  // the sweep's processes are the points
  const std::vector<StrategyRun> runs = RunStrategies(s, {}, options);
  std::vector<StrategyResult> results;
  for (const StrategyRun& r : runs) results.push_back(r.result);
  return SweepPointLine(grid, point, results);
}

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  } else {
    std::snprintf(buf, sizeof buf, "%.0fh%02.0fm", std::floor(s / 3600),
                  std::floor(std::fmod(s, 3600) / 60));
  }
  return buf;
}

// Progress on the terminal only: wall-clock figures never reach a file.
class Progress {
 public:
  Progress(std::uint64_t total, std::uint64_t done)
      : total_(total), done_(done), start_(std::chrono::steady_clock::now()) {}
  void Point(std::uint64_t point, const std::vector<std::string>& values, bool failed,
             const std::vector<SweepAxis>& axes) {
    ++done_;
    ++this_run_;
    const double elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = elapsed_s > 0 ? this_run_ / elapsed_s : 0;
    std::string what;
    for (size_t k = 0; k < values.size(); ++k) {
      what += (k ? " " : "") + axes[k].path + "=" + values[k];
    }
    char line[160];
    std::snprintf(line, sizeof line, "sweep: %llu/%llu points, %.2f points/s, ETA %s: ",
                  static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_),
                  rate, rate > 0 ? FormatDuration((total_ - done_) / rate).c_str() : "?");
    std::cerr << line << "point " << point << " (" << what << ") " << (failed ? "FAILED" : "ok")
              << "\n";
  }

 private:
  std::uint64_t total_;
  std::uint64_t done_;
  std::uint64_t this_run_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// Tests only: the process kills itself (SIGKILL, no clean-up) once it has appended this many
// points, as a sweep killed by the user or the batch system would be.
int KillAfterForTests() {
  const char* v = std::getenv("STRATASIM_SWEEP_TEST_KILL_AFTER");
  return v ? std::atoi(v) : 0;
}

int Sweep(const SweepOptions& o, const std::string& tool_version, mpi::World* world) {
  const int rank = world ? world->rank() : 0;
  const int ranks = world ? world->size() : 1;
  SetPhase("reading the grid", o.grid);
  const SweepGrid grid = SweepGrid::Load(o.grid, o.scenario);
  const std::uint64_t n = grid.num_points();
  try {
    if (!grid.LoadPoint(0).jobs.empty()) {
      throw UsageError(o.scenario +
                       " lists jobs (a shared-cluster scenario): sweep runs a scenario's "
                       "strategies; sweep each job's own scenario instead");
    }
  } catch (const ConfigError&) {
    // That point's own error: it is recorded when the point runs.
  }
  // Rank 0 (or the only process) holds the journal: it reads what is done and tells the others.
  std::map<std::uint64_t, std::string> done;
  std::unique_ptr<SweepJournal> journal;
  std::string shared;  // rank 0 -> all: "E<error>" or the done points' indices
  if (rank == 0) {
    try {
      CreateDirectories(o.out);
      cleanup::RemoveStaleTempFiles(o.out);
      done = ReadJournals(o.out, grid.fingerprint(), n);
      journal = std::make_unique<SweepJournal>(JournalPath(o.out, o.shard, o.shards),
                                               SweepHeaderLine(grid));
      shared = "D";
      for (const auto& [p, line] : done) shared += std::to_string(p) + ",";
    } catch (const Error& e) {
      shared = std::string("E") + e.what();
      if (world) world->Broadcast(&shared);
      throw;
    }
  }
  if (world) {
    world->Broadcast(&shared);
    if (shared[0] == 'E') return kExitFailed;  // rank 0 says why
    if (rank != 0) {
      for (size_t at = 1; at < shared.size();) {
        const size_t comma = shared.find(',', at);
        done.emplace(std::stoull(shared.substr(at, comma - at)), "");
        at = comma + 1;
      }
    }
  }
  // This process's points: those of its shard or rank not done yet.
  const int share = world ? rank : o.shard;
  const int shares = world ? ranks : o.shards;
  std::vector<std::uint64_t> todo;
  std::uint64_t mine = 0;
  for (std::uint64_t p = 0; p < n; ++p) {
    if (p % static_cast<std::uint64_t>(shares) != static_cast<std::uint64_t>(share)) continue;
    ++mine;
    if (!done.count(p)) todo.push_back(p);
  }
  // Rank 0 of an MPI run counts every rank's points; a shard its own.
  const std::uint64_t total = world ? n : mine;
  const std::uint64_t already = world ? done.size() : mine - todo.size();
  if (rank == 0) {
    std::cerr << "sweep: " << n << " points (" << grid.axes().size() << " keys), " << done.size()
              << " done in " << o.out << ", " << (total - already) << " to run"
              << (world ? " over " + std::to_string(ranks) + " MPI ranks"
                  : o.shards > 1
                      ? " in shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards)
                      : std::string())
              << " (-j " << o.jobs << ")\n";
  }
  Progress progress(total, already);
  const int kill_after = KillAfterForTests();
  int appended = 0;
  auto record = [&](std::uint64_t point, const std::string& line) {
    if (rank != 0) {
      world->SendLine(line);
      return;
    }
    journal->Append(line);
    done[point] = line;
    progress.Point(point, grid.Values(point), SweepLineFailed(line), grid.axes());
    if (kill_after > 0 && ++appended == kill_after) raise(SIGKILL);
  };
  int ranks_done = 0;
  auto receive = [&]() {
    bool finished = false;
    while (std::optional<std::string> line = world->Poll(&finished)) {
      if (finished) {
        ++ranks_done;
        continue;
      }
      const std::uint64_t point = SweepLinePoint(*line);
      record(point, *line);
    }
  };
  ChildPoolTasks tasks;
  tasks.start = [&](size_t i) -> std::optional<sim::SimulationProcess> {
    const std::uint64_t point = todo[i];
    return sim::StartChild([&grid, point](const sim::WireWrite& write) {
      sim::WireOut out(write);
      out.Str(RunPoint(grid, point));
    });
  };
  tasks.finish = [&](size_t i, sim::SimulationProcess& process) {
    std::string line;
    sim::FinishChild(process, [&](const sim::WireRead& read) {
      sim::WireIn in(read);
      line = in.Str("the point's results");
    });
    record(todo[i], line);
  };
  tasks.fail = [&](size_t i, const std::string& error) {
    record(todo[i], SweepPointErrorLine(grid, todo[i], error));
  };
  if (world && rank == 0 && ranks > 1) {
    tasks.idle = receive;
    tasks.idle_ms = 50;
  }
  SetPhase("running the sweep's points");
  RunChildPool(todo.size(), o.jobs, tasks);
  if (world && rank != 0) {
    world->SendDone();
    return 0;
  }
  while (world && ranks_done < ranks - 1) {
    receive();
    if (ranks_done < ranks - 1) usleep(20000);  // not MPI_Probe: OpenMPI's spins a core
  }
  if (o.shards > 1) {
    std::cout << "sweep: shard " << o.shard << "/" << o.shards << " done (" << mine
              << " points) in " << journal->path()
              << "; once every shard is done, `stratasim sweep` without --shard over " << o.out
              << " writes sweep.json and sweep.csv\n";
    for (std::uint64_t p = o.shard; p < n; p += static_cast<std::uint64_t>(o.shards)) {
      auto it = done.find(p);
      if (it != done.end() && SweepLineFailed(it->second)) return 1;
    }
    return 0;
  }
  if (done.size() < n) {
    throw Error("the sweep ended with " + std::to_string(n - done.size()) + " of " +
                std::to_string(n) + " points missing from the journals in " + o.out);
  }
  SetPhase("writing the sweep's outputs");
  WriteFileAtomically(o.out + "/sweep.json", SweepResultsJson(grid, done, tool_version));
  WriteFileAtomically(o.out + "/sweep.csv", SweepResultsCsv(grid, done));
  int failed = 0;
  for (const auto& [p, line] : done) failed += SweepLineFailed(line) ? 1 : 0;
  std::cout << "sweep: " << n << " points, " << failed << " with a failure; outputs: " << o.out
            << "/sweep.json, sweep.csv (journal: " << journal->path() << ")\n";
  return failed > 0 ? 1 : 0;
}

}  // namespace

int SweepCommand(const std::vector<std::string>& args, const std::string& tool_version) {
  bool help = false;
  const SweepOptions o = ParseOptions(args, &help);
  if (help) return 0;
  if (!mpi::LaunchedByMpirun()) return Sweep(o, tool_version, nullptr);
  if (!mpi::Available()) {
    throw UsageError(
        "started by mpirun (OMPI_COMM_WORLD_SIZE is set), but this stratasim was built without "
        "MPI: install OpenMPI (Debian: openmpi-bin libopenmpi-dev) and build again, or run the "
        "sweep without mpirun (-j N, or --shard I/N across machines)");
  }
  if (o.shards > 1) {
    throw UsageError("--shard and mpirun both share the points out: use one of them");
  }
  mpi::World world;
  try {
    return Sweep(o, tool_version, &world);
  } catch (...) {
    // Another rank may be waiting for this one: say why, then end them all.
    const int code = ReportCurrentException("sweep", std::cerr);
    std::cerr.flush();
    if (world.size() > 1) world.Abort(code);
    return code;
  }
}

}  // namespace stratasim
