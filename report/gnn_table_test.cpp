#include "report/gnn_table.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "report/results_json.h"

namespace stratasim {
namespace {

StrategyResult Gnn(const std::string& name, double hits, double h2d, double cache) {
  StrategyResult r;
  r.name = name;
  r.kind = "brgraph";
  r.metrics.iteration_time_s = 0.0125;
  r.metrics.peak_memory_bytes = {3e9, 4e9};
  GnnFigures f;
  f.vertices_per_iteration = 1000;
  f.hits_per_iteration = hits;
  f.h2d_bytes_per_iteration = h2d;
  f.cache_bytes = cache;
  r.gnn = f;
  return r;
}

TEST(GnnTableTest, OneRowPerGnnStrategy) {
  RunResults results;
  results.strategies.push_back(Gnn("no-cache", 0, 400e3, 0));
  results.strategies.push_back(Gnn("brgraph", 250, 300e3, 200e3));
  StrategyResult other;
  other.name = "ddp";
  results.strategies.push_back(other);
  const std::string table = FormatGnnTable(results);
  EXPECT_NE(table.find("no-cache"), std::string::npos) << table;
  EXPECT_NE(table.find("25.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("12.50"), std::string::npos) << table;
  EXPECT_NE(table.find(FormatBytes(300e3)), std::string::npos) << table;
  EXPECT_NE(table.find(FormatBytes(4e9)), std::string::npos) << table;
  EXPECT_EQ(table.find("ddp"), std::string::npos) << table;
  RunResults none;
  none.strategies.push_back(other);
  EXPECT_EQ(FormatGnnTable(none), "");
}

TEST(GnnTableTest, ResultsJsonCarriesTheFigures) {
  RunResults results;
  results.strategies.push_back(Gnn("brgraph", 250, 300e3, 200e3));
  const auto j = nlohmann::json::parse(ResultsToJson(results));
  const auto& g = j["strategies"][0]["gnn"];
  EXPECT_DOUBLE_EQ(g["hit_rate"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(g["h2d_bytes_per_iteration"].get<double>(), 300e3);
  EXPECT_DOUBLE_EQ(g["cache_bytes"].get<double>(), 200e3);
  EXPECT_DOUBLE_EQ(g["vertices_per_iteration"].get<double>(), 1000);
}

}  // namespace
}  // namespace stratasim
