#include "strategies/moe/routing_trace.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim {
namespace {

const char* kGood =
    "# a recorded routing\n"
    "stratasim-moe-routing 1\n"
    "ranks 2\n"
    "experts 2\n"
    "layers 1\n"
    "iterations 2\n"
    "0 0 0  3 1   # rank 0\n"
    "0 0 1  2 2\n"
    "\n"
    "1 0 1  0 4\n"
    "1 0 0  4 0\n";

TEST(RoutingTraceTest, ParsesRowsInAnyOrder) {
  const Routing r = ParseRoutingTrace(kGood, "t.txt");
  EXPECT_EQ(r.iterations(), 2);
  EXPECT_EQ(r.layers(), 1);
  EXPECT_EQ(r.ranks(), 2);
  EXPECT_EQ(r.experts(), 2);
  EXPECT_EQ(r.at(0, 0, 0, 0), 3);
  EXPECT_EQ(r.at(0, 0, 1, 1), 2);
  EXPECT_EQ(r.at(1, 0, 0, 0), 4);
  EXPECT_EQ(r.at(1, 0, 1, 1), 4);
}

TEST(RoutingTraceTest, RoundTripsThroughText) {
  RoutingGeneratorConfig c;
  c.iterations = 3;
  c.layers = 2;
  c.ranks = 4;
  c.experts = 4;
  c.tokens_per_rank = 64;
  c.top_k = 2;
  const Routing r = GenerateRouting(c);
  EXPECT_TRUE(ParseRoutingTrace(RoutingTraceText(r), "x") == r);
}

void ExpectError(const std::string& text, const std::string& message) {
  try {
    ParseRoutingTrace(text, "t.txt");
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

const std::string kHead = "stratasim-moe-routing 1\nranks 2\nexperts 2\nlayers 1\niterations 1\n";

TEST(RoutingTraceTest, BadInput) {
  ExpectError("", "t.txt: magic: empty file: expected 'stratasim-moe-routing 1'");
  ExpectError("routing 1\n",
              "t.txt:1:1: magic = \"routing\": the first record must be 'stratasim-moe-routing 1'");
  ExpectError("stratasim-moe-routing 2\n",
              "t.txt:1:1: version = \"2\": unsupported format version (this reader knows "
              "version 1)");
  ExpectError("stratasim-moe-routing 1\nranks 2\nranks 3\n", "t.txt:3:1: ranks: given twice");
  ExpectError("stratasim-moe-routing 1\nranks 0\n",
              "t.txt:2:7: ranks = \"0\": must be in [1, 1048576]");
  ExpectError("stratasim-moe-routing 1\nranks two\n",
              "t.txt:2:7: ranks = \"two\": must be an integer");
  ExpectError("stratasim-moe-routing 1\nranks 2\nexperts 2\nlayers 1\n0 0 0 1 1\n",
              "t.txt:5:1: iterations: missing: the header must give ranks, experts, layers and "
              "iterations before the rows");
  ExpectError(kHead + "0 0 0 1\n",
              "t.txt:6:1: row: a row is 'iteration layer rank' and 2 counts (one per expert); "
              "this one has 4 fields");
  ExpectError(kHead + "0 0 2 1 1\n", "t.txt:6:5: rank = \"2\": must be in [0, 1]");
  ExpectError(kHead + "0 0 0 1 -1\n",
              "t.txt:6:9: iteration 0 layer 0 rank 0 expert 1 = \"-1\": must be in [0, "
              "1099511627776]");
  ExpectError(kHead + "0 0 0 1 1.5\n",
              "t.txt:6:9: iteration 0 layer 0 rank 0 expert 1 = \"1.5\": must be an integer");
  ExpectError(kHead + "0 0 0 1 1\n0 0 0 1 1\n",
              "t.txt:7:1: iteration 0 layer 0 rank 0: row given twice");
  ExpectError(kHead + "0 0 0 1 1\n",
              "t.txt:6: iteration 0 layer 0 rank 1: row missing: every (iteration, layer, "
              "rank) must have one row");
  ExpectError(kHead + "0 0 0 1 1\nexperts 3\n",
              "t.txt:7:1: experts: header records must come before any row");
  ExpectError(kHead, "t.txt:5: rows: the trace has no rows");
}

TEST(RoutingTraceTest, MissingFile) {
  try {
    ReadRoutingTrace("/nonexistent/trace.txt", SourceLocation{"s.yaml", 9, 5});
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:9:5: trace = \"/nonexistent/trace.txt\": cannot open the routing trace "
              "file");
  }
}

}  // namespace
}  // namespace stratasim
