#include "cli/trace_options.h"

#include <gtest/gtest.h>

#include "cli/exit_status.h"

namespace stratasim {
namespace {

std::string ErrorOf(const std::string& list, int gpus) {
  try {
    ParseTraceGpus(list, gpus);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TraceGpus, RangesAndNumbersAscendingWithoutRepeats) {
  EXPECT_EQ(ParseTraceGpus("0-3,64", 128), (std::vector<int>{0, 1, 2, 3, 64}));
  EXPECT_EQ(ParseTraceGpus("5,1-2,2", 8), (std::vector<int>{1, 2, 5}));
  EXPECT_EQ(ParseTraceGpus("7", 8), (std::vector<int>{7}));
}

TEST(TraceGpus, BadListsAreNamed) {
  EXPECT_EQ(ErrorOf("0-7,64", 16),
            "--trace-gpus 0-7,64: GPU 64 is not in the cluster (the cluster has 16 GPUs, 0-15)");
  EXPECT_EQ(ErrorOf("0,x", 16),
            "--trace-gpus 0,x: \"x\" is not a GPU number or a range FIRST-LAST (e.g. 0-7,64)");
  EXPECT_EQ(ErrorOf("0,,1", 16),
            "--trace-gpus 0,,1: \"\" is not a GPU number or a range FIRST-LAST (e.g. 0-7,64)");
  EXPECT_EQ(ErrorOf("-1", 16),
            "--trace-gpus -1: \"-1\" is not a GPU number or a range FIRST-LAST (e.g. 0-7,64)");
  EXPECT_EQ(ErrorOf("7-3", 16), "--trace-gpus 7-3: \"7-3\" ends before it starts");
  EXPECT_EQ(ErrorOf("99999999999", 16),
            "--trace-gpus 99999999999: \"99999999999\" is not a GPU number or a range "
            "FIRST-LAST (e.g. 0-7,64)");
  EXPECT_EQ(ErrorOf("", 16), "--trace-gpus must not be empty (e.g. 0-7,64)");
}

TEST(TraceFormat, JsonOrGzip) {
  EXPECT_FALSE(ParseTraceGzip("json"));
  EXPECT_TRUE(ParseTraceGzip("json.gz"));
  try {
    ParseTraceGzip("proto");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--trace-format proto: must be json or json.gz");
  }
}

}  // namespace
}  // namespace stratasim
