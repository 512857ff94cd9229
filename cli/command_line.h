// The command line of every subcommand: Boost.Program_options parsing with its errors as
// UsageError (exit 2), and the --help test done before parsing, so that `--help` works without
// the required arguments.
#ifndef STRATASIM_CLI_COMMAND_LINE_H_
#define STRATASIM_CLI_COMMAND_LINE_H_

#include <algorithm>
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "cli/exit_status.h"
#include "core/limits.h"

namespace stratasim {

inline bool WantsHelp(const std::vector<std::string>& args) {
  return std::find(args.begin(), args.end(), "--help") != args.end() ||
         std::find(args.begin(), args.end(), "-h") != args.end();
}

inline boost::program_options::variables_map ParseCommandLine(
    const std::vector<std::string>& args, const boost::program_options::options_description& opts,
    const boost::program_options::positional_options_description& pos) {
  namespace po = boost::program_options;
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

// --jobs: simulation processes at once; each holds its own executor state, so more than
// limits::kMaxJobs only multiply memory.
inline int CheckedJobs(int jobs) {
  if (jobs < 1 || jobs > limits::kMaxJobs) {
    throw UsageError("--jobs " + std::to_string(jobs) + ": must be in [1, " +
                     std::to_string(limits::kMaxJobs) + "]");
  }
  return jobs;
}

}  // namespace stratasim

#endif  // STRATASIM_CLI_COMMAND_LINE_H_
