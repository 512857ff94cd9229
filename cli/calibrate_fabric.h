// `stratasim calibrate --fabric`: the fabric sweep (validate/fabric_sweep.h) over the run's
// processes, its fit (validate/fabric_fit.h), and the calibration file's `fabric:` entries
// (core/calibration.h), merged into the --out file when it exists.
//
// Two ways to run it:
//   mpirun -np N stratasim calibrate --fabric --backend host|cuda
//       (or srun) one process per rank, over the MPI process group (cli/mpi_process_group.h);
//       measures intra- and inter-server links as the processes' placement allows;
//   stratasim calibrate --fabric --backend host [--ranks N]
//       one process whose backend runs N ranks (host: threads over shared memory): intra only.
#ifndef STRATASIM_CLI_CALIBRATE_FABRIC_H_
#define STRATASIM_CLI_CALIBRATE_FABRIC_H_

#include <string>
#include <vector>

#include "core/dtype.h"

namespace stratasim {

struct FabricCalibrateOptions {
  std::string backend = "host";
  std::string out;  // default stratasim-calibration-<backend>.yaml
  int ranks = 0;    // one process: ranks its backend runs (0: the backend's all)
  DType dtype = DType::kFP32;
  double min_bytes = 8;
  double max_bytes = 0;  // 0: 8 GiB on cuda (nccl-tests -e 8G), 64 MiB on host, 1 MiB quick
  bool quick = false;
  // Protocols to sweep: "simple" on host (its only transport); on cuda each sets NCCL_PROTO
  // for the sweep (NCCL reads it when a communicator is created).
  std::vector<std::string> protocols = {"simple"};
  // Seconds a process waits for a peer before the run fails naming it (validate's
  // --comm-timeout).
  double comm_timeout_s = 300;
};

// Runs the sweep, fits it and (rank 0) writes the file. Exit status as CalibrateCommand's.
int CalibrateFabric(const FabricCalibrateOptions& options);

}  // namespace stratasim

#endif  // STRATASIM_CLI_CALIBRATE_FABRIC_H_
