// GraphSAGE (Hamilton et al. 2017): neighbour sampling over a synthetic uniform or power-law
// graph, or a graph read from an edge-list file (docs/gnn.md).
#include <climits>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/model_fields.h"
#include "core/model_kinds.h"

namespace stratasim {
namespace {

ModelSpec Sage(const char* name, std::vector<int> fanouts, int feature_dim, int classes,
               double vertices, double degree) {
  ModelSpec m;
  m.kind = "graphsage";
  m.preset = name;
  m.fanouts = std::move(fanouts);
  m.layers = static_cast<int>(m.fanouts.size());
  m.hidden = 256;
  m.feature_dim = feature_dim;
  m.classes = classes;
  m.graph_vertices = vertices;
  m.graph_degree = degree;
  return m;
}

// graph, graph_exponent, graph_file: which graph the sampler walks (core/scenario.h).
void ReadGraphChoice(const ModelFields& m, ModelSpec* spec) {
  const yaml::Reader& r = m.reader();
  if (auto graph = m.Get("graph")) {
    spec->graph = r.String(*graph);
    if (spec->graph != "uniform" && spec->graph != "power-law" && spec->graph != "edge-list") {
      r.Fail(*graph, "must be one of: uniform, power-law, edge-list");
    }
  }
  if (auto exponent = m.Get("graph_exponent")) {
    if (spec->graph != "power-law") r.Fail(*exponent, "only applies with graph: power-law");
    spec->graph_exponent = r.PositiveNumber(*exponent);
    // Chung-Lu weights w_i ~ i^(-1/(exponent-1)) have a finite mean degree only above 2;
    // measured web and product graphs lie between 2 and 3 (Barabasi and Albert 1999), and far
    // above, every vertex has nearly the same degree.
    if (!(spec->graph_exponent > 2) || spec->graph_exponent > 10) {
      r.Fail(*exponent, "must be > 2 and <= 10");
    }
  }
  const auto file = m.Get("graph_file");
  if (spec->graph != "edge-list") {
    if (file) r.Fail(*file, "only applies with graph: edge-list");
    return;
  }
  const yaml::Field f = m.Require("graph_file", "graph: edge-list reads the graph from it");
  std::filesystem::path path(r.Name(f));
  if (path.is_relative() && !r.file().empty()) {
    path = std::filesystem::path(r.file()).parent_path() / path;
  }
  spec->graph_file = path.string();
  spec->graph_file_where = r.WhereOf(f);
  for (const char* key : {"graph_vertices", "graph_degree"}) {
    if (auto given = m.Get(key)) r.Fail(*given, "not with graph: edge-list (the file gives it)");
  }
  spec->graph_vertices = 0;
  spec->graph_degree = 0;
}

void ReadGraphSage(const ModelFields& m, ModelSpec* spec) {
  const yaml::Reader& r = m.reader();
  const char* why = "kind graphsage needs it, or name a preset";
  if (auto fanouts = m.Get("fanouts")) {
    spec->fanouts.clear();
    for (const yaml::Field& item : r.List(*fanouts, true)) spec->fanouts.push_back(r.Int(item, 1));
  } else if (m.custom()) {
    m.Require("fanouts", why);
  }
  spec->layers = static_cast<int>(spec->fanouts.size());
  m.Positive("feature_dim", &spec->feature_dim, why);
  m.Positive("hidden", &spec->hidden, why);
  m.Positive("classes", &spec->classes, why);
  ReadGraphChoice(m, spec);
  if (spec->graph == "edge-list") return;  // the file gives the vertices and degrees
  if (auto vertices = m.Get("graph_vertices")) {
    spec->graph_vertices = static_cast<double>(r.Integer(*vertices, 1, LLONG_MAX));
  } else if (m.custom()) {
    m.Require("graph_vertices", why);
  }
  if (auto degree = m.Get("graph_degree")) {
    spec->graph_degree = r.PositiveNumber(*degree);
  } else if (m.custom()) {
    m.Require("graph_degree", why);
  }
}

}  // namespace

ModelKind GraphSageModelKind() {
  ModelKind k;
  k.name = "graphsage";
  k.keys = {{"fanouts", "from the preset"},
            {"feature_dim", "from the preset"},
            {"hidden", "from the preset"},
            {"classes", "from the preset"},
            {"graph_vertices", "from the preset"},
            {"graph_degree", "from the preset"},
            {"graph", "uniform"},
            {"graph_exponent", "2.5"},
            {"graph_file", "(graph: edge-list)"}};
  k.presets = {
      // Reddit: Hamilton et al. 2017, "Inductive Representation Learning on Large Graphs"
      // (232,965 posts, average degree 492, K = 2 hops sampling S1 = 25 and S2 = 10); 602
      // features and 41 classes as the released dataset has them (DGL RedditDataset).
      Sage("graphsage-reddit", {25, 10}, 602, 41, 232965, 492),
      // ogbn-products: Hu et al. 2020, "Open Graph Benchmark", 2,449,029 vertices, 61,859,140
      // undirected edges (mean degree 50.5), 100 features, 47 classes; fan-outs 15/10/5 as in
      // OGB's GraphSAGE mini-batch example.
      Sage("graphsage-products", {15, 10, 5}, 100, 47, 2449029, 50.5),
  };
  k.example =
      "{kind: graphsage, fanouts: [4, 2], feature_dim: 16, hidden: 32, classes: 4, "
      "graph_vertices: 1000, graph_degree: 8}";
  k.read = ReadGraphSage;
  return k;
}

}  // namespace stratasim
