#include "models/graph_source.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "core/model_presets.h"
#include "core/units.h"
#include "models/graph_edge_list.h"
#include "models/graphsage.h"

namespace stratasim {
namespace {

ModelSpec PowerLaw(double vertices, double degree, double exponent = 2.5) {
  ModelSpec m = *FindModelPreset("graphsage-products");
  m.graph = "power-law";
  m.graph_vertices = vertices;
  m.graph_degree = degree;
  m.graph_exponent = exponent;
  return m;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// The message of the ConfigError that `f` throws.
template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(PowerLawGraph, DegreesFallWithTheIdAndKeepTheMean) {
  const PowerLawGraph g(PowerLaw(100000, 20), 7);
  EXPECT_EQ(g.vertices(), 100000);
  for (std::int64_t v = 1; v < 100000; v += 997) EXPECT_LE(g.Degree(v), g.Degree(v - 1));
  EXPECT_GT(g.Degree(0), 100 * 20);  // a heavy head
  EXPECT_EQ(g.Degree(99999), 7);     // 20 x (1 - 2/3) x ~1, rounded
  EXPECT_NEAR(g.edges() / 100000, 20, 1.0);
  EXPECT_EQ(g.HighestDegree(3), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(PowerLawGraph, NeighboursAreSeededAndFavourHeavyVertices) {
  const PowerLawGraph g(PowerLaw(100000, 20), 7), same(PowerLaw(100000, 20), 7),
      other(PowerLaw(100000, 20), 8);
  int differ = 0, head = 0;
  for (std::int64_t j = 0; j < 1000; ++j) {
    const std::int64_t u = g.Neighbor(500, j);
    EXPECT_EQ(u, same.Neighbor(500, j));
    differ += u != other.Neighbor(500, j);
    EXPECT_GE(u, 0);
    EXPECT_LT(u, 100000);
    head += u < 1000;  // 1% of the ids hold (1/100)^(1/3) = 21.5% of the weight
  }
  EXPECT_GT(differ, 900);
  EXPECT_NEAR(head / 1000.0, 0.215, 0.05);
}

TEST(PowerLawGraph, SamplingYieldsDistinctRealIds) {
  const ModelSpec m = PowerLaw(50000, 10);
  const GraphBatch b = SampleGraphBatch(m, 64, 3, 0);
  EXPECT_EQ(static_cast<double>(b.ids.size()), b.vertices.back());
  EXPECT_EQ(std::set<std::int64_t>(b.ids.begin(), b.ids.end()).size(), b.ids.size());
  EXPECT_DOUBLE_EQ(b.feature_bytes, b.vertices.back() * 100 * 4);
  // Seeds sample min(fanout, degree) neighbours each: never more than 15 at hop 1.
  EXPECT_LE(b.edges[0], 64 * 15);
  EXPECT_EQ(SampleGraphBatch(m, 64, 3, 0).ids, b.ids);
  EXPECT_NE(SampleGraphBatch(m, 64, 3, 1).ids, b.ids);
}

TEST(PowerLawGraph, UniformCountsAreUnchangedAndCarryIds) {
  const ModelSpec m = *FindModelPreset("graphsage-reddit");
  const GraphBatch b = SampleGraphBatch(m, 128, 42, 0);
  EXPECT_EQ(static_cast<double>(b.ids.size()), b.vertices.back());
}

TEST(PowerLawGraph, BadParametersAreErrors) {
  EXPECT_EQ(ErrorOf([] { PowerLawGraph(PowerLaw(1, 1), 0); }),
            "<input>: model.graph_vertices = \"1\": must be >= 2");
  EXPECT_NE(ErrorOf([] {
              PowerLawGraph(PowerLaw(100, 100), 0);
            }).find("model.graph_degree = \"100.000000\": must be > 0 and below graph_vertices"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              PowerLawGraph(PowerLaw(100, 4, 2), 0);
            }).find("model.graph_exponent = \"2.000000\": must be > 2"),
            std::string::npos);
}

TEST(EdgeListGraph, ReadsUndirectedCsr) {
  const std::string path =
      WriteFile("edges.txt", "# a triangle and a tail\n0 1\n1 2\n\n2 0  # closing\n3\t1\n4 4\n");
  const EdgeListGraph g(path, SourceLocation{"s.yaml", 3, 5});
  EXPECT_EQ(g.vertices(), 5);
  EXPECT_EQ(g.edges(), 9);  // 4 edges both ways + one self-loop once
  EXPECT_EQ(g.Degree(1), 3);
  std::set<std::int64_t> n1;
  for (int j = 0; j < 3; ++j) n1.insert(g.Neighbor(1, j));
  EXPECT_EQ(n1, (std::set<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(g.Degree(4), 1);
  EXPECT_EQ(g.HighestDegree(1), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(g.HighestDegree(3), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(EdgeListGraph, SamplesThroughTheModel) {
  ModelSpec m = *FindModelPreset("graphsage-products");
  m.graph = "edge-list";
  m.graph_file = WriteFile("ring.txt", [] {
    std::string t;
    for (int v = 0; v < 100; ++v)
      t += std::to_string(v) + " " + std::to_string((v + 1) % 100) + "\n";
    return t;
  }());
  m.graph_vertices = 0;
  const GraphBatch b = SampleGraphBatch(m, 10, 1, 0);
  EXPECT_EQ(b.edges[0], 10 * 2);  // every vertex of a ring has degree 2 < fanout 15
  EXPECT_LE(b.vertices.back(), 100);
  m.fanouts = {1};
  EXPECT_NE(ErrorOf([&] {
              SampleGraphBatch(m, 101, 1, 0);
            }).find("training.micro_batch = \"101\": must be <= the graph's 100 vertices"),
            std::string::npos);
}

TEST(EdgeListGraph, BadLinesAreLocated) {
  const SourceLocation at{"s.yaml", 9, 3};
  const std::string one = WriteFile("one.txt", "0 1\n  7\n");
  EXPECT_EQ(ErrorOf([&] { EdgeListGraph(one, at); }),
            one + ":2:1: edge = \"  7\": expected two vertex ids 'src dst'");
  const std::string three = WriteFile("three.txt", "0 1 2\n");
  EXPECT_EQ(ErrorOf([&] { EdgeListGraph(three, at); }),
            three + ":1:5: edge = \"2\": expected two vertex ids 'src dst', found a third field");
  const std::string word = WriteFile("word.txt", "# x\n0 x1\n");
  EXPECT_EQ(ErrorOf([&] { EdgeListGraph(word, at); }),
            word + ":2:3: edge = \"x1\": a vertex id must be an integer in [0, 2147483646]");
  const std::string negative = WriteFile("negative.txt", "-1 0\n");
  EXPECT_EQ(ErrorOf([&] { EdgeListGraph(negative, at); }),
            negative + ":1:1: edge = \"-1\": a vertex id must be an integer in [0, 2147483646]");
  const std::string empty = WriteFile("empty.txt", "# nothing\n\n");
  EXPECT_EQ(ErrorOf([&] { EdgeListGraph(empty, at); }),
            "s.yaml:9:3: model.graph_file = \"" + empty + "\": the file has no edges");
  EXPECT_EQ(ErrorOf([&] { EdgeListGraph(::testing::TempDir() + "absent.txt", at); }),
            "s.yaml:9:3: model.graph_file = \"" + ::testing::TempDir() +
                "absent.txt\": cannot open the edge-list file");
}

TEST(EdgeListGraph, AGraphOverTheBoundIsRefusedWithItsSize) {
  // One edge to vertex 200,000 makes offsets of 1.6 MB: over a 1 MB bound, refused after the
  // counting pass, before any array is allocated.
  const std::string far = WriteFile("far.txt", "0 200000\n");
  EXPECT_EQ(ErrorOf([&] {
              EdgeListGraph(far, SourceLocation{"s.yaml", 1, 1}, 1e6);
            }),
            "s.yaml:1:1: model.graph_file = \"" + far +
                "\": its graph (200001 vertices, 1 edges) "
                "needs " +
                FormatBytes(EdgeListGraph::CsrBytes(200001, 1)) +
                " as CSR, more than the bound of " + FormatBytes(1e6));
  EXPECT_DOUBLE_EQ(EdgeListGraph::CsrBytes(200001, 1), 200002 * 8 + 2 * 4);
}

}  // namespace
}  // namespace stratasim

namespace stratasim {
namespace {

std::string LoadErrorOf(const std::string& model) {
  const std::string text =
      "name: g\ncluster:\n  servers:\n    - {name: b, gpu: A100-SXM4-80GB, gpus_per_server: 1}\n"
      "  network: {kind: single_switch}\nmodel: " +
      model +
      "\ntraining: {global_batch: 8, micro_batch: 8}\nstrategies:\n  - {name: d, kind: ddp}\n";
  return ErrorOf([&] { LoadScenarioText(text, "g.yaml"); });
}

TEST(GraphKeys, TheLoaderReadsAndChecksThem) {
  const std::string text =
      "name: g\ncluster:\n  servers:\n    - {name: b, gpu: A100-SXM4-80GB, gpus_per_server: 1}\n"
      "  network: {kind: single_switch}\nmodel: {preset: graphsage-products, graph: power-law, "
      "graph_exponent: 2.2}\ntraining: {global_batch: 8, micro_batch: 8}\nstrategies:\n"
      "  - {name: d, kind: ddp}\n";
  const Scenario s = LoadScenarioText(text, "g.yaml");
  EXPECT_EQ(s.model.graph, "power-law");
  EXPECT_DOUBLE_EQ(s.model.graph_exponent, 2.2);
  EXPECT_EQ(LoadErrorOf("{preset: graphsage-products, graph: random}"),
            "g.yaml:6:44: model.graph = \"random\": must be one of: uniform, power-law, edge-list");
  EXPECT_EQ(LoadErrorOf("{preset: graphsage-products, graph_exponent: 3}"),
            "g.yaml:6:53: model.graph_exponent = \"3\": only applies with graph: power-law");
  EXPECT_EQ(LoadErrorOf("{preset: graphsage-products, graph: power-law, graph_exponent: 2}"),
            "g.yaml:6:71: model.graph_exponent = \"2\": must be > 2 and <= 10");
  EXPECT_EQ(LoadErrorOf("{preset: graphsage-products, graph_file: g.txt}"),
            "g.yaml:6:49: model.graph_file = \"g.txt\": only applies with graph: edge-list");
  EXPECT_NE(LoadErrorOf("{preset: graphsage-products, graph: edge-list}")
                .find("model.graph_file: required field missing (graph: edge-list reads the "
                      "graph from it)"),
            std::string::npos);
  EXPECT_EQ(LoadErrorOf("{preset: graphsage-products, graph: edge-list, graph_file: g.txt, "
                        "graph_vertices: 10}"),
            "g.yaml:6:90: model.graph_vertices = \"10\": not with graph: edge-list (the file "
            "gives it)");
}

}  // namespace
}  // namespace stratasim
