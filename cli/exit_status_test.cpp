#include "cli/exit_status.h"

#include <gtest/gtest.h>

#include <new>
#include <sstream>
#include <stdexcept>

#include "cli/phase.h"
#include "core/units.h"

namespace stratasim {
namespace {

// Throws `e` and returns what ReportCurrentException makes of it.
template <typename E>
std::pair<int, std::string> Report(const E& e) {
  std::ostringstream err;
  try {
    throw e;
  } catch (...) {
    const int status = ReportCurrentException("run", err);
    return {status, err.str()};
  }
}

TEST(ExitStatus, EveryErrorDerivesFromTheOneBase) {
  static_assert(std::is_base_of_v<Error, ConfigError>);
  static_assert(std::is_base_of_v<Error, UnitError>);
  static_assert(std::is_base_of_v<Error, UsageError>);
}

TEST(ExitStatus, BadInputIsTwo) {
  const auto config = Report(ConfigError({"s.yaml", 3, 5}, "model.layers", "-1", "must be >= 1"));
  EXPECT_EQ(config.first, kExitBadInput);
  EXPECT_EQ(config.second, "stratasim: error: s.yaml:3:5: model.layers = \"-1\": must be >= 1\n");
  const auto usage = Report(UsageError("-j 0: must be at least 1"));
  EXPECT_EQ(usage.first, kExitBadInput);
  EXPECT_EQ(usage.second, "stratasim run: -j 0: must be at least 1\n");
}

TEST(ExitStatus, AFailedRunIsThree) {
  const auto r = Report(Error("strategy 'x': no route from gpu 0 to gpu 9"));
  EXPECT_EQ(r.first, kExitFailed);
  EXPECT_EQ(r.second, "stratasim: error: strategy 'x': no route from gpu 0 to gpu 9\n");
}

TEST(ExitStatus, OutOfMemoryNamesThePhase) {
  SetPhase("planning strategy", "tp8");
  const auto r = Report(std::bad_alloc());
  EXPECT_EQ(r.first, kExitFailed);
  EXPECT_NE(r.second.find("out of memory while planning strategy 'tp8' (docs/limits.md"),
            std::string::npos)
      << r.second;
}

TEST(ExitStatus, AForeignExceptionIsThreeNotTerminate) {
  SetPhase("writing the report");
  const auto r = Report(std::out_of_range("map::at"));
  EXPECT_EQ(r.first, kExitFailed);
  EXPECT_EQ(r.second, "stratasim: error: unexpected exception while writing the report: map::at\n");
  const auto any = Report(42);
  EXPECT_EQ(any.first, kExitFailed);
  EXPECT_EQ(any.second,
            "stratasim: error: unexpected exception of unknown type while writing the report\n");
}

}  // namespace
}  // namespace stratasim
