// Which launcher started this process (cli/mpi_world.h): mpirun, srun with a PMI plugin, or
// none (a plain run, also inside a Slurm batch allocation).
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/mpi_world.h"

namespace stratasim::mpi {
namespace {

constexpr const char* kVars[] = {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_ID", "PMIX_RANK", "PMI_RANK",
                                 "SLURM_JOB_ID"};

class Launcher : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) unsetenv(v);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(Launcher, APlainRunIsNotLaunched) {
  EXPECT_FALSE(LaunchedByMpiLauncher());
  EXPECT_FALSE(LaunchedByMpirun());
}

TEST_F(Launcher, MpirunIsRecognised) {
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  EXPECT_TRUE(LaunchedByMpirun());
  EXPECT_TRUE(LaunchedByMpiLauncher());
}

TEST_F(Launcher, SrunWithPmixOrPmi2IsRecognised) {
  setenv("SLURM_STEP_ID", "0", 1);
  setenv("PMIX_RANK", "1", 1);
  EXPECT_TRUE(LaunchedByMpiLauncher());
  EXPECT_FALSE(LaunchedByMpirun());
  unsetenv("PMIX_RANK");
  setenv("PMI_RANK", "1", 1);
  EXPECT_TRUE(LaunchedByMpiLauncher());
}

TEST_F(Launcher, ABatchScriptWithoutAPmiRankStaysOneProcess) {
  setenv("SLURM_JOB_ID", "42", 1);
  setenv("SLURM_STEP_ID", "0", 1);
  EXPECT_FALSE(LaunchedByMpiLauncher());
  unsetenv("SLURM_STEP_ID");
  setenv("PMIX_RANK", "0", 1);  // a PMIx rank outside a Slurm step: not srun's
  EXPECT_FALSE(LaunchedByMpiLauncher());
}

}  // namespace
}  // namespace stratasim::mpi
