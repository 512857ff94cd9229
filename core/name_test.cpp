#include "core/name.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

namespace stratasim {
namespace {

TEST(Name, HoldsItsText) {
  EXPECT_EQ(Name("it0/adam").str(), "it0/adam");
  EXPECT_TRUE(Name().empty());
  EXPECT_TRUE(Name("").empty());
  EXPECT_EQ(Name().str(), "");
  EXPECT_EQ(Name::Join("it0/mb3/", "layer2/qkv/fwd").str(), "it0/mb3/layer2/qkv/fwd");
  EXPECT_EQ(Name::Join("", "x").str(), "x");
  EXPECT_EQ(sizeof(Name), 8u);
}

TEST(Name, EqualWhenTheTextsAreHoweverSplit) {
  EXPECT_EQ(Name::Join("a/", "b"), Name("a/b"));
  EXPECT_EQ(Name::Join("a", "/b"), Name::Join("a/", "b"));
  EXPECT_NE(Name("a"), Name("b"));
  EXPECT_TRUE(Name("dp") == "dp");
  EXPECT_TRUE(Name("dp") == std::string("dp"));
}

TEST(Name, MeetsStringsInMessages) {
  const Name n = Name::Join("it1/", "send");
  EXPECT_EQ("task '" + n + "'", "task 'it1/send'");
  EXPECT_EQ(std::string("[") + n + "]", "[it1/send]");
  std::ostringstream os;
  os << n;
  EXPECT_EQ(os.str(), "it1/send");
}

TEST(Name, InterningRepeatsNoString) {
  // The same parts give the same Name bit for bit.
  const Name a = Name::Join("it0/mb1/", "layer0/fwd");
  const Name b = Name::Join(std::string("it0/mb1/"), std::string("layer0/fwd"));
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(Name)), 0);
}

}  // namespace
}  // namespace stratasim
