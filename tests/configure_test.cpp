// The configure step's own bad-input paths: fetching SimGrid 3.32's private headers
// (cmake/SimGridPrivateHeaders.cmake) from a URL that fails, or from a local tarball that is
// missing or is not Debian's. Each runs the module in CMake's script mode.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_runner.h"

namespace stratasim {
namespace {

namespace fs = std::filesystem;
using testing::RunCommand;
using testing::TempDir;

// CMake wraps a message's lines at spaces and indents them: one space for each run of blanks.
std::string Squeezed(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n' || c == '\t';
    if (!blank || (!out.empty() && out.back() != ' ')) out += blank ? ' ' : c;
  }
  return out;
}

// Calls stratasim_simgrid_private_headers(tarball url dest ...) from a script in `dir`; the
// output squeezed.
testing::CliResult Fetch(const fs::path& dir, const std::string& tarball, const std::string& url) {
  const fs::path script = dir / "fetch.cmake";
  std::ofstream(script) << "include(\"" STRATASIM_SOURCE_DIR
                           "/cmake/SimGridPrivateHeaders.cmake\")\n"
                        << "stratasim_simgrid_private_headers(\"" << tarball << "\" \"" << url
                        << "\" \"" << (dir / "out").string()
                        << "\" src/kernel/actor/ActorImpl.hpp)\n";
  testing::CliResult r = RunCommand(std::string(STRATASIM_CMAKE) + " -P " + script.string());
  r.output = Squeezed(r.output);
  return r;
}

TEST(Configure, AFailedDownloadSaysWhatToDoInstead) {
  const fs::path dir = TempDir("configure", "download");
  const std::string url = "file://" + (dir / "absent" / "simgrid_3.32.orig.tar.xz").string();
  const testing::CliResult r = Fetch(dir, "", url);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("stratasim: could not download " + url + " ("), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("-DSTRATASIM_SIMGRID_SOURCE_TARBALL=FILE"), std::string::npos);
  EXPECT_NE(r.output.find("-DSTRATASIM_SIMGRID_LIST_TRIM=OFF"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "out" / "simgrid_3.32.orig.tar.xz"));  // no partial file left
  fs::remove_all(dir);
}

TEST(Configure, ATarballThatIsNotDebiansIsRefusedByItsHash) {
  const fs::path dir = TempDir("configure", "hash");
  const fs::path tarball = dir / "simgrid_3.32.orig.tar.xz";
  std::ofstream(tarball) << "x";
  const testing::CliResult r = Fetch(dir, tarball.string(), "unused");
  EXPECT_NE(r.status, 0);
  // sha256("x")
  EXPECT_NE(r.output.find("stratasim: " + tarball.string() +
                          " has SHA-256 "
                          "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881, not "
                          "Debian's simgrid_3.32.orig.tar.xz "
                          "(4b413d8e9d9b29b8e086b2f3edaec5b1149d7eb52b2e134f1ed13d30891ece7b)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "simgrid-3.32"));  // nothing extracted
  fs::remove_all(dir);
}

TEST(Configure, AMissingTarballIsNamed) {
  const fs::path dir = TempDir("configure", "missing");
  const std::string tarball = (dir / "nowhere.tar.xz").string();
  const testing::CliResult r = Fetch(dir, tarball, "unused");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(
      r.output.find("stratasim: STRATASIM_SIMGRID_SOURCE_TARBALL: " + tarball + " does not exist"),
      std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stratasim
