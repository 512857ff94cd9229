// `stratasim calibrate`: micro-benchmarks on a validate backend, fitted into the calibration
// file that `stratasim run --calibration` reads (issue 6).
#ifndef STRATASIM_CLI_CALIBRATE_COMMAND_H_
#define STRATASIM_CLI_CALIBRATE_COMMAND_H_

#include <string>
#include <vector>

namespace stratasim {

// stratasim calibrate [--backend host|cuda] [--out FILE] [--ranks N] [--dtype fp32]
//                     [--min-bytes 1K] [--max-bytes 16M] [--quick]
//                     [--fabric [--protocols simple,ll,ll128]]
// Runs the backend's micro-benchmarks, fits the cost model (validate/calibration_fit.h) and
// writes the calibration YAML. With --fabric, measures the links instead
// (cli/calibrate_fabric.h), under mpirun over one process per rank. Exit status: 0 written; 2 bad
// input; 3 backend unavailable, a benchmark failed, or the file could not be written.
int CalibrateCommand(const std::vector<std::string>& args);

}  // namespace stratasim

#endif  // STRATASIM_CLI_CALIBRATE_COMMAND_H_
