// The documented bounds on what stratasim reads (docs/limits.md lists them all). Each is far
// beyond any real cluster or model, and each keeps a value from sizing memory or simulated time
// past what a run can hold: a value outside them is refused where it is read, with the bound in
// the message.
#ifndef STRATASIM_CORE_LIMITS_H_
#define STRATASIM_CORE_LIMITS_H_

#include <cstddef>

namespace stratasim::limits {

// Input files, read whole: a scenario or calibration file is a few KB; a task graph written by
// `run --write-graphs` takes about 150 bytes a task, so 1 GiB is ~7 M tasks.
constexpr size_t kScenarioFileBytes = 4u << 20;
constexpr size_t kCalibrationFileBytes = 4u << 20;
constexpr size_t kGraphFileBytes = size_t{1} << 30;

// Names that become file names (scenario and strategy names): [A-Za-z0-9_-][A-Za-z0-9._-]*,
// at most this long, so an output path never leaves its folder or exceeds NAME_MAX.
constexpr size_t kNameLength = 128;

// GPUs of a cluster or ranks of a task graph: 2^20, 10x the largest clusters built (~100,000
// GPUs), so that every per-GPU count stays an int.
constexpr int kMaxGpus = 1 << 20;

// Iterations, warm-up and measured each: a million is beyond any simulated run (each is a whole
// training step), and their sum stays an int.
constexpr int kMaxIterations = 1000000;

// Link figures. The slowest real link is a 10 Mb/s Ethernet (1.25 MB/s), the fastest an
// NVLink 5 port (900 GB/s per direction); the bounds leave three orders of magnitude either side.
constexpr double kMinBandwidthBps = 1e3;   // 1 kB/s
constexpr double kMaxBandwidthBps = 1e15;  // 1 PB/s
constexpr double kMaxLatencySeconds = 1;   // real links: 0.1 to 10 us
constexpr double kMaxOversubscription = 1000;

// GPU figures for custom kinds: FLOP/s, memory bytes.
constexpr double kMinPeakFlops = 1e9;     // 1 GFLOP/s
constexpr double kMaxPeakFlops = 1e18;    // 1 EFLOP/s
constexpr double kMinMemoryBytes = 1e6;   // 1 MB
constexpr double kMaxMemoryBytes = 1e15;  // 1 PB

// Efficiencies (compute, memory, link): fractions of a peak, at least 1%; below that a
// simulated time is a typing error, and at 1e-300 it overflows.
constexpr double kMinEfficiency = 0.01;
// Measured ones (calibration files) may be lower: a tiny kernel on a CPU host reaches a small
// fraction of peak. 1e-4 still keeps every time finite.
constexpr double kMinMeasuredEfficiency = 1e-4;

// Simulated time: more than this (about 31.7 years) is an overflow, not a training step.
constexpr double kMaxSimulatedSeconds = 1e9;

// Plans of a `stratasim search` space (docs/search.md): the product of its lists' sizes. Each
// candidate is enumerated, checked and its memory estimated (a few microseconds each), so 10
// million stay within a minute and ~1 GB of Candidate structs; the real spaces of a cluster
// and model are a few thousand.
constexpr long long kMaxSearchCandidates = 10000000;

// Chakra execution traces (chakra/import.h, docs/chakra.md): one rank's file is read whole, like a
// task graph file; all ranks' nodes together (times the iterations a one-iteration trace is
// repeated for) become tasks of about 150 bytes each, so 10 million is a graph of about 1.5 GB,
// several times the largest plan a scenario makes.
constexpr size_t kChakraFileBytes = size_t{1} << 30;
constexpr long long kChakraNodes = 10000000;

// One control-plane message between the processes of a multi-process validate or calibrate
// (cli/mpi_process_group.h): the largest is a process's trace gathered on rank 0, about 100
// bytes of JSON a task, so 1 GiB is a rank of some 10 million tasks, well past any plan. A
// larger length announced by a peer is a mismatched or corrupted process, refused before
// anything is allocated.
constexpr size_t kControlMessageBytes = size_t{1} << 30;

// Any echoed value is cut to this many bytes in a message.
constexpr size_t kEchoBytes = 80;

// `stratasim sweep` (docs/sweep.md). Points of a grid: each is a simulation of the whole
// scenario and a line of ~0.5 to 1 KB a strategy in the journal; 100,000 points is a journal of
// about 100 MB and, at a second a point, more than a day on one core: a larger product is a
// typing error (a list pasted twice) rather than a plan.
constexpr unsigned long long kMaxSweepPoints = 100000;
// A grid file is a few lines of key paths and lists.
constexpr size_t kSweepGridFileBytes = 1u << 20;
// Simulation processes at once (-j): each holds its own executor state, so more than this only
// multiplies memory.
constexpr int kMaxJobs = 256;

}  // namespace stratasim::limits

#endif  // STRATASIM_CORE_LIMITS_H_
