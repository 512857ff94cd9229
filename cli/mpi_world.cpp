#include "cli/mpi_world.h"

#include <cstdlib>

#include "core/error.h"

#ifdef STRATASIM_HAVE_MPI
#include "cli/mpi_api.h"
#endif

namespace stratasim::mpi {

bool LaunchedByMpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

bool LaunchedByMpiLauncher() {
  if (LaunchedByMpirun()) return true;
  const bool in_step = std::getenv("SLURM_STEP_ID") != nullptr;
  return in_step && (std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr);
}

#ifdef STRATASIM_HAVE_MPI

namespace {

constexpr int kTagLine = 1;
constexpr int kTagDone = 2;

}  // namespace

bool Available() { return true; }

World::World() {
  const Api& mpi = Mpi();
  int initialised = 0;
  mpi.initialized(&initialised);
  if (!initialised) mpi.init(nullptr, nullptr);
  mpi.comm_rank(MPI_COMM_WORLD, &rank_);
  mpi.comm_size(MPI_COMM_WORLD, &size_);
}

World::~World() {
  if (finalize_) Mpi().finalize();
}

void World::Broadcast(std::string* text) const {
  unsigned long long n = text->size();
  Mpi().bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text->resize(n);
  if (n > 0) Mpi().bcast(text->data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}

void World::SendLine(const std::string& line) const {
  Mpi().send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, kTagLine, MPI_COMM_WORLD);
}

void World::SendDone() const { Mpi().send(nullptr, 0, MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD); }

std::optional<std::string> World::Poll(bool* done) const {
  int flag = 0;
  MPI_Status status;
  Mpi().iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int count = 0;
  Mpi().get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<size_t>(count), '\0');
  Mpi().recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  *done = status.MPI_TAG == kTagDone;
  return text;
}

void World::Abort(int code) const {
  Mpi().abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

#else  // !STRATASIM_HAVE_MPI

namespace {
[[noreturn]] void Unavailable() {
  throw Error(
      "this stratasim was built without MPI (CMake found no MPI): install OpenMPI "
      "(Debian: openmpi-bin libopenmpi-dev) and build again, or run the sweep without mpirun "
      "(-j N on one machine, --shard I/N across machines)");
}
}  // namespace

bool Available() { return false; }
World::World() { Unavailable(); }
World::~World() = default;
void World::Broadcast(std::string*) const { Unavailable(); }
void World::SendLine(const std::string&) const { Unavailable(); }
void World::SendDone() const { Unavailable(); }
std::optional<std::string> World::Poll(bool*) const { Unavailable(); }
void World::Abort(int code) const { std::_Exit(code); }

#endif

}  // namespace stratasim::mpi
