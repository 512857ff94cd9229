// What `stratasim sweep` writes (docs/sweep.md, "Outputs"): a point's journal line, and
// sweep.json and sweep.csv made from the journal's lines once every point is done. Nothing
// here holds a wall-clock value, so the outputs of a resumed sweep, or of one run with another
// -j, over shards or over MPI ranks, are byte-identical to those of one uninterrupted run.
#ifndef STRATASIM_CLI_SWEEP_RESULTS_H_
#define STRATASIM_CLI_SWEEP_RESULTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/sweep_grid.h"
#include "report/results.h"

namespace stratasim {

// The journal's first line: the sweep's fingerprint, points and key paths.
std::string SweepHeaderLine(const SweepGrid& grid);

// A point's line: its index, the grid's values at it, and per strategy its name, kind, ok or
// error, iteration time, samples/s, MFU, peak memory (the largest of the ranks) and exposed
// communication (in all and by category, as fractions of the iteration).
std::string SweepPointLine(const SweepGrid& grid, std::uint64_t point,
                           const std::vector<StrategyResult>& strategies);
// A point that could not run at all (the scenario's rules refuse its combination of values,
// or its process died): the error instead of strategies.
std::string SweepPointErrorLine(const SweepGrid& grid, std::uint64_t point,
                                const std::string& error);
// The point index of a point's line.
std::uint64_t SweepLinePoint(const std::string& line);
// Whether a point's line records a failure (of the point or of a strategy).
bool SweepLineFailed(const std::string& line);

// sweep.json: the header's facts and every point's line, by point index.
std::string SweepResultsJson(const SweepGrid& grid,
                             const std::map<std::uint64_t, std::string>& lines,
                             const std::string& tool_version);
// sweep.csv: one row per point and strategy (a point that failed whole: one row with its
// error), by point index; a column per grid key and per communication category seen.
std::string SweepResultsCsv(const SweepGrid& grid,
                            const std::map<std::uint64_t, std::string>& lines);

}  // namespace stratasim

#endif  // STRATASIM_CLI_SWEEP_RESULTS_H_
