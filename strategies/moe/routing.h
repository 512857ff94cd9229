// Token-to-expert routing of an MoE model: per iteration, per MoE layer, per source rank, the
// number of tokens routed to each expert. It is the input every MoE strategy plans from.
//
// The generator reproduces the shapes the load-balancing papers report of real routings
// (shared notes; Prophet, CLUSTER'23, §II; Pro-Prophet, arXiv 2411.10003, §3): a few experts
// take most tokens (Zipf popularity), popularity differs between layers, and it drifts slowly
// from one iteration to the next (so that the previous iteration predicts the next one, which
// Prophet's and Pro-Prophet's planners exploit). Sampling uses only the raw output of
// std::mt19937_64, whose sequence the C++ standard fixes, and our own transformations of it:
// std::*_distribution outputs are implementation-defined, and the same seed must give the same
// routing on every platform.
#ifndef STRATASIM_STRATEGIES_MOE_ROUTING_H_
#define STRATASIM_STRATEGIES_MOE_ROUTING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stratasim {

// counts(t, l, r, x): tokens of rank r's micro-batch routed to expert x in MoE layer l of
// iteration t. A token routed to k experts counts once in each of them.
class Routing {
 public:
  Routing() = default;
  Routing(int iterations, int layers, int ranks, int experts);

  int iterations() const { return iterations_; }
  int layers() const { return layers_; }
  int ranks() const { return ranks_; }
  int experts() const { return experts_; }

  double& at(int t, int l, int r, int x) { return counts_[Index(t, l, r, x)]; }
  double at(int t, int l, int r, int x) const { return counts_[Index(t, l, r, x)]; }
  // The ranks x experts matrix of (t, l) as rows, the shape MoeAllToAllVolumes takes.
  std::vector<std::vector<double>> Matrix(int t, int l) const;
  // Tokens routed to each expert in (t, l), summed over source ranks.
  std::vector<double> ExpertLoads(int t, int l) const;

  bool operator==(const Routing& o) const;

 private:
  size_t Index(int t, int l, int r, int x) const;

  int iterations_ = 0, layers_ = 0, ranks_ = 0, experts_ = 0;
  std::vector<double> counts_;
};

struct RoutingGeneratorConfig {
  int iterations = 100;
  int layers = 12;
  int ranks = 16;
  int experts = 16;
  int tokens_per_rank = 1024;  // tokens of one rank's micro-batch entering each MoE layer
  int top_k = 1;               // experts per token (distinct), 1 or 2 in the papers
  // Zipf exponent s of expert popularity: the i-th most popular expert of a layer has weight
  // i^-s. 0 is uniform routing; 1 puts ~44% of the tokens of 16 experts on the three heaviest,
  // 1.5 ~72% (the papers report over 50%).
  double skew = 1.0;
  // Standard deviation of the per-iteration random-walk step of every expert's log-weight:
  // how fast popularity drifts. 0 keeps each layer's popularity fixed.
  double drift = 0.05;
  std::uint64_t seed = 0;
};

// Throws stratasim::Error for a config outside its ranges (sizes < 1, top_k outside
// [1, experts], negative skew or drift).
Routing GenerateRouting(const RoutingGeneratorConfig& c);

// The popularity (probabilities summing to 1) of every expert of every layer in iteration t, as
// the generator draws tokens from: [layer][expert]. Exposed for tests and documentation.
std::vector<std::vector<double>> RoutingPopularity(const RoutingGeneratorConfig& c, int t);

// A uniform double in [0, 1) from the top 53 bits of one engine output (portable).
double UniformUnit(std::uint64_t raw);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_ROUTING_H_
