// GraphSAGE with neighbour sampling (Hamilton et al. 2017, "Inductive Representation Learning
// on Large Graphs"), mean aggregator with concatenation: layer k computes
//   h_v = ReLU(W_k [h_v ; mean_{u in N(v)} h_u] + b_k)
// over a mini-batch of seed vertices, sampling spec.fanouts[k] neighbours per vertex per hop.
//
// The graph (model.graph, docs/gnn.md) is by default synthetic and uniform: graph_vertices
// vertices each with graph_degree neighbours drawn uniformly at random, so a hop samples
// min(fanout, degree) neighbours per vertex, uniform over all vertices. That keeps no graph in
// memory yet reproduces what drives the cost: how fast the sampled sets grow and how many of
// them repeat. On a power-law or edge-list graph (models/graph_source.h) a hop takes all of a
// vertex's neighbours when it has at most `fanout`, else `fanout` distinct ones of them, drawn
// uniformly (DGL's sample_neighbors without replacement). Sampling is seeded (training.seed and
// the mini-batch index) with a fixed generator, so the same inputs give the same vertices
// everywhere.
#ifndef STRATASIM_MODELS_GRAPHSAGE_H_
#define STRATASIM_MODELS_GRAPHSAGE_H_

#include <cstdint>
#include <vector>

#include "core/scenario.h"
#include "models/workload.h"

namespace stratasim {

// One sampled mini-batch.
struct GraphBatch {
  // Distinct vertices per hop: vertices[0] the seeds, vertices[k] those needed k hops out
  // (including the nearer ones, whose own features also enter the concatenation).
  std::vector<double> vertices;
  // edges[k - 1]: sampled edges of hop k, from each of vertices[k - 1] to its neighbours.
  std::vector<double> edges;
  // Input features to move to the GPU: vertices.back() x feature_dim x 4 bytes (FP32).
  double feature_bytes = 0;
  // The distinct vertices whose features the batch needs (vertices.back() of them): the seeds
  // first, then each hop's new ones in the order they were sampled.
  std::vector<std::int64_t> ids;
};

// Samples mini-batch `index` of `batch` seed vertices. Throws ConfigError when the spec's
// fields are missing or batch > graph_vertices.
GraphBatch SampleGraphBatch(const ModelSpec& spec, int batch, std::uint64_t seed, int index);

// The workload of that mini-batch: per layer an aggregation (a gather-mean, memory bound; one
// add per gathered value) and a combination (a GEMM of [dst, 2 d_in] by [2 d_in, d_out]).
Workload BuildGraphSage(const ModelSpec& spec, int micro_batch, DType dtype, std::uint64_t seed,
                        int index);
// The same for a batch already sampled.
Workload GraphSageWorkload(const ModelSpec& spec, const GraphBatch& sample, DType dtype);

// FLOPs of one training step on `b` (forward and backward): per layer k (outermost first),
// 2 E d_in for the aggregation and its backward, 12 n_dst d_in d_out for the combination.
double GraphSageTrainingFlops(const ModelSpec& spec, const GraphBatch& b);

// sum over layers of 2 d_in d_out + d_out.
double GraphSageParameterCount(const ModelSpec& spec);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_GRAPHSAGE_H_
