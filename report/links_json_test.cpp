#include "report/links_json.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

LinkUsage Sample() {
  LinkUsage u;
  u.edges_s = {0, 0.5, 1.25};
  LinkSeries l;
  l.name = "s0nic0_up";
  l.label = "server 0 NIC 0 → fabric";
  l.bandwidth_Bps = 25e9;
  l.bytes_per_interval = {1e9, 0.1};
  l.bytes = 1e9 + 0.1;
  u.links.push_back(l);
  u.links_used = 3;
  u.bytes_total = 2.5e9;
  return u;
}

TEST(LinksJson, RoundTripsEveryStrategyInOrderAndFailedOnesAsNull) {
  const std::string text = LinksToJson({{"ddp", Sample()}, {"broken \"one\"", std::nullopt}});
  EXPECT_EQ(text.rfind("{\"format\": \"stratasim-links\", \"version\": 1, ", 0), 0u) << text;
  EXPECT_NE(text.find("\"usage\": null"), std::string::npos);
  const std::vector<StrategyLinks> back = LinksFromJson(text);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "ddp");
  ASSERT_TRUE(back[0].usage.has_value());
  const LinkUsage& u = *back[0].usage;
  EXPECT_EQ(u.edges_s, Sample().edges_s);
  ASSERT_EQ(u.links.size(), 1u);
  EXPECT_EQ(u.links[0].label, "server 0 NIC 0 → fabric");
  EXPECT_EQ(u.links[0].bytes, 1e9 + 0.1);  // shortest round-trip form: exact
  EXPECT_EQ(u.links[0].bytes_per_interval, Sample().links[0].bytes_per_interval);
  EXPECT_EQ(u.links_used, 3);
  EXPECT_EQ(u.bytes_total, 2.5e9);
  EXPECT_EQ(back[1].name, "broken \"one\"");
  EXPECT_FALSE(back[1].usage.has_value());
  EXPECT_EQ(LinksToJson({{"ddp", Sample()}, {"broken \"one\"", std::nullopt}}), text);
}

TEST(LinksJson, NoStrategiesIsAnEmptyList) { EXPECT_TRUE(LinksFromJson(LinksToJson({})).empty()); }

TEST(LinksJson, RefusesOtherFilesWithTheirReason) {
  auto error = [](const std::string& text) {
    try {
      LinksFromJson(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("{").find("links.json: not JSON"), std::string::npos);
  EXPECT_EQ(error("{\"format\": \"stratasim-results\"}"),
            "links.json: \"format\" is not \"stratasim-links\"");
  EXPECT_EQ(error("{\"format\": \"stratasim-links\", \"version\": 2}"),
            "links.json: \"version\" is not 1");
  EXPECT_EQ(error("{\"format\": \"stratasim-links\", \"version\": 1}"),
            "links.json: \"strategies\" is not an array");
  EXPECT_EQ(error("{\"format\": \"stratasim-links\", \"version\": 1, \"strategies\": [{}]}"),
            "links.json: strategies[0]: no \"name\" string");
  EXPECT_EQ(error("{\"format\": \"stratasim-links\", \"version\": 1, "
                  "\"strategies\": [{\"name\": \"a\"}]}"),
            "links.json: strategies[0]: no \"usage\"");
  EXPECT_EQ(error("{\"format\": \"stratasim-links\", \"version\": 1, "
                  "\"strategies\": [{\"name\": \"a\", \"usage\": {\"edges_s\": []}}]}"),
            "links.json: strategies[0] (a): link usage: usage: missing key \"links\"");
  // Bounded as the recorder writes them (core/link_usage.h).
  std::string edges = "0";
  for (int i = 1; i <= kMaxLinkIntervals + 1; ++i) edges += "," + std::to_string(i);
  EXPECT_EQ(error("{\"format\": \"stratasim-links\", \"version\": 1, \"strategies\": "
                  "[{\"name\": \"a\", \"usage\": {\"edges_s\": [" +
                  edges + "]}}]}"),
            "links.json: strategies[0] (a): link usage: usage.edges_s: 514 bounds, at most 513");
  std::string links;
  for (int i = 0; i <= kMaxLinkSeries; ++i) links += std::string(i ? "," : "") + "{}";
  EXPECT_EQ(error("{\"format\": \"stratasim-links\", \"version\": 1, \"strategies\": "
                  "[{\"name\": \"a\", \"usage\": {\"edges_s\": [], \"links\": [" +
                  links + "]}}]}"),
            "links.json: strategies[0] (a): link usage: usage.links: 33 links, at most 32");
}

}  // namespace
}  // namespace stratasim
