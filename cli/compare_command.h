// `stratasim compare A B [--threshold PCT] [--metric NAME]... [--json FILE]`: two runs'
// results side by side (report/compare.h, docs/compare.md). A and B are results folders or
// results.json files.
//
// Exit status: 0 no figure moved past the threshold in its bad direction; kExitRegressed (1)
// some did (or a strategy that ran in A fails in B); 2 a bad command line or an input that is
// not a results.json (the message names the file); 3 the --json file could not be written.
#ifndef STRATASIM_CLI_COMPARE_COMMAND_H_
#define STRATASIM_CLI_COMPARE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace stratasim {

constexpr int kExitRegressed = 1;

// Prints the comparison on `out` and returns the exit status; throws UsageError and
// ConfigError for bad input.
int CompareCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace stratasim

#endif  // STRATASIM_CLI_COMPARE_COMMAND_H_
