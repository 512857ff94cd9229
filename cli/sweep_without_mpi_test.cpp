// A stratasim built without MPI (cli/mpi_world.cpp compiled without STRATASIM_HAVE_MPI, as
// when CMake finds none), started by mpirun, refuses the sweep with the reason; without mpirun
// it sweeps as usual. This binary links its own copies of sweep_command.cpp and mpi_world.cpp,
// built without MPI, ahead of stratasim_cli_lib's.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "cli/exit_status.h"
#include "cli/mpi_world.h"
#include "cli/sweep_command.h"

namespace stratasim {
namespace {

const std::string kDir = std::string(STRATASIM_SOURCE_DIR) + "/tests/sweep/";

TEST(SweepWithoutMpi, UnderMpirunIsRefusedWithTheReason) {
  ASSERT_FALSE(mpi::Available());
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  try {
    SweepCommand({kDir + "tiny.yaml", "--grid", kDir + "tiny.grid.yaml", "--out", "unused"}, "t");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "started by mpirun (OMPI_COMM_WORLD_SIZE is set), but this stratasim was built "
              "without MPI: install OpenMPI (Debian: openmpi-bin libopenmpi-dev) and build "
              "again, or run the sweep without mpirun (-j N, or --shard I/N across machines)");
  }
  unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_THROW(mpi::World(), Error);
}

}  // namespace
}  // namespace stratasim
