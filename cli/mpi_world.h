// MPI for `mpirun -np N stratasim sweep` (docs/sweep.md, "MPI"): the few calls the sweep makes,
// behind a header without MPI's, so that stratasim builds without MPI (the calls then refuse
// with the reason). MPI is initialised only in a process mpirun started: a plain `stratasim`
// never initialises it (which, under OpenMPI, would spawn its runtime's helper threads and look
// for a launcher).
#ifndef STRATASIM_CLI_MPI_WORLD_H_
#define STRATASIM_CLI_MPI_WORLD_H_

#include <optional>
#include <string>

namespace stratasim::mpi {

// Whether this program was built with MPI (CMake found it).
bool Available();
// Whether mpirun started this process: OpenMPI sets OMPI_COMM_WORLD_SIZE in each rank's
// environment.
bool LaunchedByMpirun();
// Whether an MPI launcher started this process: mpirun (above), or Slurm's `srun --mpi=pmix`
// (or --mpi=pmi2), which give each task its rank through PMIx (PMIX_RANK) or PMI-2 (PMI_RANK)
// inside a job step (SLURM_STEP_ID). A plain `stratasim` in a batch script has the SLURM_*
// variables of its allocation but no PMI rank, and stays a single process.
bool LaunchedByMpiLauncher();

// MPI_COMM_WORLD, initialised on construction and finalised on destruction. Throws
// stratasim::Error when built without MPI.
class World {
 public:
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // `text` from rank 0 to every rank (each rank's `text` is replaced by rank 0's).
  void Broadcast(std::string* text) const;
  // To rank 0: a point's journal line; then, once, that this rank has run all its points.
  void SendLine(const std::string& line) const;
  void SendDone() const;
  // Rank 0: a message from another rank if one has arrived (without waiting): its line, or
  // "" with *done set for a rank's last message.
  std::optional<std::string> Poll(bool* done) const;
  // Ends every rank (after an error on one: the others may be waiting for it). `code` is the
  // exit status mpirun reports.
  [[noreturn]] void Abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool finalize_ = true;
};

}  // namespace stratasim::mpi

#endif  // STRATASIM_CLI_MPI_WORLD_H_
