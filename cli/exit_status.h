// How the program ends when something is thrown (docs/architecture.md "Errors"): every error
// derives from stratasim::Error, and whatever else escapes (a library's std::exception, or
// anything at all) still ends with a message and a status, never std::terminate.
//   2  bad input: a scenario or option that breaks a rule (ConfigError, UsageError)
//   3  a run that cannot be carried out, out of memory, or an unexpected exception
// Commands add their own below 2: `run` 1 when a strategy failed, `compare` 1 when a figure
// regressed past its threshold (cli/compare_command.h).
#ifndef STRATASIM_CLI_EXIT_STATUS_H_
#define STRATASIM_CLI_EXIT_STATUS_H_

#include <ostream>
#include <string>

#include "core/error.h"

namespace stratasim {

// A command line that breaks a rule; printed after the command's name.
class UsageError : public Error {
 public:
  using Error::Error;
};

constexpr int kExitBadInput = 2;
constexpr int kExitFailed = 3;

// Prints the exception being handled as `command`'s failure on `err` and returns the exit
// status. Call it only inside a catch block.
int ReportCurrentException(const std::string& command, std::ostream& err);

}  // namespace stratasim

#endif  // STRATASIM_CLI_EXIT_STATUS_H_
