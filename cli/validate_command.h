// `stratasim validate`: run each strategy of a scenario for real, simulate it, compare (issue 6).
// Wires validate/ (backends, comparison), strategies/, sim/ and report/.
#ifndef STRATASIM_CLI_VALIDATE_COMMAND_H_
#define STRATASIM_CLI_VALIDATE_COMMAND_H_

#include <string>
#include <vector>

namespace stratasim {

// stratasim validate SCENARIO [--backend host|cuda] [--out DIR] [--warmup N] [--iterations N]
//                    [--ranks N] [--strategy NAME]... [--calibration FILE]
//                    [--memory-per-rank BYTES]
// Per strategy: plan it on the backend's hardware, run it for real, simulate it on the
// backend's cluster spec, and compare. Writes, atomically, into DIR: validation.json,
// validation.txt (the table it prints), <strategy>.measured.trace.json and
// <strategy>.simulated.trace.json (Chrome/Perfetto), <strategy>.measured.json (the raw trace,
// kept even when the run failed part-way) and, for the host backend, host-cluster.yaml. With a
// calibration, each plan is also simulated with the default cost model
// (<strategy>.simulated-defaults.trace.json) and the table shows both against the same run.
// Returns the exit status: 0 every strategy compared; 1 one failed (the others are written);
// 2 bad input; 3 backend unavailable or an output could not be written.
int ValidateCommand(const std::vector<std::string>& args);

}  // namespace stratasim

#endif  // STRATASIM_CLI_VALIDATE_COMMAND_H_
