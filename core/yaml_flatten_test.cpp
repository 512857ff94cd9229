#include "core/yaml_flatten.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace stratasim {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(FlattenYaml, KeyPathsInDocumentOrder) {
  const Pairs got = FlattenYaml(
      "name: x\ncluster:\n  servers:\n    - count: 2\n      gpu: A100\n  links: {}\n"
      "tags: []\nnote:\n",
      "s.yaml");
  const Pairs want = {{"name", "x"},
                      {"cluster.servers[0].count", "2"},
                      {"cluster.servers[0].gpu", "A100"},
                      {"cluster.links", "{}"},
                      {"tags", "[]"},
                      {"note", "~"}};
  EXPECT_EQ(got, want);
}

TEST(FlattenYaml, SyntaxErrorIsLocated) {
  try {
    FlattenYaml("a: [1, 2\n", "bad.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("YAML syntax error"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stratasim
