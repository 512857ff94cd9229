// `stratasim sweep SCENARIO --grid FILE [--out DIR] [-j N] [--shard I/N]` (docs/sweep.md): one
// simulation of the whole scenario per point of a grid, in a pool of processes, each finished
// point appended to a journal that a resumed sweep skips; sweep.json and sweep.csv once every
// point is done. Under mpirun the ranks share the points and rank 0 gathers them.
#ifndef STRATASIM_CLI_SWEEP_COMMAND_H_
#define STRATASIM_CLI_SWEEP_COMMAND_H_

#include <string>
#include <vector>

namespace stratasim {

// Returns the exit status: 0 every point and strategy ran; 1 some failed (their errors are in
// the outputs); throws on bad input (ConfigError, UsageError) and on outputs that cannot be
// written (stratasim::Error).
int SweepCommand(const std::vector<std::string>& args, const std::string& tool_version);

}  // namespace stratasim

#endif  // STRATASIM_CLI_SWEEP_COMMAND_H_
