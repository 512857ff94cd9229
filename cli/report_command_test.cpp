// `stratasim report`'s command line: --gpus parsing and the usage errors (exit 2).
#include "cli/report_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "cli/exit_status.h"

namespace stratasim {
namespace {

std::string UsageErrorOf(const std::vector<std::string>& args) {
  try {
    ReportCommand(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no usage error";
}

TEST(ReportCommandTest, GpuList) {
  EXPECT_EQ(ParseGpuList("0,1,8"), (std::vector<int>{0, 1, 8}));
  EXPECT_EQ(ParseGpuList("7"), (std::vector<int>{7}));
}

TEST(ReportCommandTest, BadGpuListsAreUsageErrorsNamingTheItem) {
  EXPECT_THROW(ParseGpuList(""), UsageError);
  for (const auto& [list, message] : std::vector<std::pair<std::string, std::string>>{
           {"0,,1", "--gpus 0,,1: \"\" is not a GPU rank"},
           {"0,-1", "--gpus 0,-1: \"-1\" is not a GPU rank"},
           {"a", "--gpus a: \"a\" is not a GPU rank"},
           {"1,", "--gpus 1,: \"\" is not a GPU rank"},
           {"12345678901", "\"12345678901\" is not a GPU rank"},
           {"2,2", "--gpus 2,2: GPU 2 is named twice"}}) {
    try {
      ParseGpuList(list);
      ADD_FAILURE() << list << ": no error";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(ReportCommandTest, UsageErrors) {
  EXPECT_NE(UsageErrorOf({}).find("dir"), std::string::npos);
  EXPECT_NE(UsageErrorOf({"/nonexistent-stratasim"}).find("/nonexistent-stratasim: not a folder"),
            std::string::npos);
  EXPECT_NE(UsageErrorOf({".", "--out", ""}).find("--out must not be empty"), std::string::npos);
  EXPECT_NE(UsageErrorOf({".", "--gpus", "x"}).find("--gpus x"), std::string::npos);
  EXPECT_NE(UsageErrorOf({".", "--colour"}).find("colour"), std::string::npos);
}

TEST(ReportCommandTest, WritesTheReportOfAValidateFolder) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "stratasim-report-cmd-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  std::ofstream(tmpl + "/validation.json")
      << R"({"format": "stratasim-validation", "version": 1, "strategies": []})";
  EXPECT_EQ(ReportCommand({tmpl, "--out", tmpl + "/r.html"}), 0);
  EXPECT_TRUE(std::filesystem::file_size(tmpl + "/r.html") > 100000);  // Chart.js inlined
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace stratasim
