// Stragglers (issue #23): GPUs or servers that run slower than their peers, by a fixed factor,
// by a factor drawn per iteration from the scenario seed, or by a per-iteration trace. Filled by
// the scenario loader (`cluster.stragglers`, docs/scenario-format.md) and read by the simulator:
// sim/executor.cpp multiplies a compute task's duration by its rank's compute factor for the
// task's iteration, sim/platform.cpp divides a NIC's bandwidth by its link factor.
//
// Why stragglers matter: under bulk-synchronous data parallelism every iteration ends with an
// all-reduce that waits for the slowest replica, so one GPU slowed by k stretches everyone's
// iteration by (k - 1) x its compute time on the critical path; stale-synchronous and
// decentralised schemes (SSP, DC-S3GD) hide part of that wait.
#ifndef STRATASIM_CORE_STRAGGLERS_H_
#define STRATASIM_CORE_STRAGGLERS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace stratasim {

// What a straggler slows: kCompute its GPUs' kernels; kLink the NIC links (both directions)
// its GPUs reach the network through; kServer both, for every GPU and NIC of its servers.
enum class StragglerLevel { kCompute, kLink, kServer };
std::string_view ToString(StragglerLevel level);

// How the factor is chosen (every factor is >= 1: a straggler is never faster than nominal).
enum class StragglerDraw {
  kFixed,      // `factor` in every iteration
  kUniform,    // uniform in [min, max], drawn per iteration and rank
  kLognormal,  // median x exp(sigma x N(0, 1)), at least 1, per iteration and rank
  kTrace,      // `trace[iteration]`; 1 in an iteration the trace does not list
};

struct StragglerSpec {
  std::vector<int> ranks;    // every GPU selected (a `servers:` selection expanded to its GPUs)
  std::vector<int> servers;  // as written, when selected by server; empty otherwise
  StragglerLevel level = StragglerLevel::kCompute;
  StragglerDraw draw = StragglerDraw::kFixed;
  double factor = 1;             // kFixed
  double min = 1, max = 1;       // kUniform
  double median = 1, sigma = 0;  // kLognormal
  std::map<int, double> trace;   // kTrace: iteration -> factor
  std::string trace_file;        // kTrace: as resolved (relative to the scenario file)
  SourceLocation where;          // of the entry, for messages
  std::string key_path;          // "cluster.stragglers[0]"
};

struct Stragglers {
  std::vector<StragglerSpec> entries;
  // Random draws are keyed by (seed, entry, rank, iteration): the same run draws the same
  // factors whatever order the simulator asks in. The loader sets it to training.seed.
  std::uint64_t seed = 0;

  bool empty() const { return entries.empty(); }
  // The factor by which `rank`'s work at `level` is slowed in `iteration`: for kCompute the
  // product over the entries of level compute or server that select the rank, for kLink over
  // those of level link or server (kServer is asked as either). 1 when none applies.
  double SlowdownFactor(int rank, int iteration, StragglerLevel level) const;
  // Whether some entry selecting a GPU at link level (or server level) varies per iteration;
  // the platform applies link factors once, when it is built.
  bool HasPerIterationLinkFactor() const;
  // One line per entry for plan notes: "straggler: GPUs 3 compute x2" (no wall-clock values).
  std::vector<std::string> Describe() const;
};

// The factor drawn by one entry for one rank and iteration (1 for a kTrace entry's unlisted
// iteration). Exposed for tests.
double DrawFactor(const StragglerSpec& s, std::uint64_t seed, int entry, int rank, int iteration);

// Parses a straggler trace: CSV lines "iteration,factor" (an optional header
// "iteration,factor", blank lines and lines starting with '#' are skipped); iterations are
// integers in [0, 10^6), each listed once; factors finite and >= 1. A bad line is a
// ConfigError at `file_label`:line:column naming the rule.
std::map<int, double> ParseStragglerTrace(const std::string& text, const std::string& file_label);

}  // namespace stratasim

#endif  // STRATASIM_CORE_STRAGGLERS_H_
