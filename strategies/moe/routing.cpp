#include "strategies/moe/routing.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "core/error.h"

namespace stratasim {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): decorrelates the seeds of the per-stream engines, so
// that (seed, iteration, layer, rank) streams do not overlap in any visible way.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t StreamSeed(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return Mix(Mix(Mix(Mix(seed) ^ a) ^ (b << 20)) ^ (c << 40));
}

void Check(const RoutingGeneratorConfig& c) {
  auto fail = [](const std::string& what) { throw Error("MoE routing generator: " + what); };
  if (c.iterations < 1) fail("iterations must be >= 1");
  if (c.layers < 1) fail("layers must be >= 1");
  if (c.ranks < 1) fail("ranks must be >= 1");
  if (c.experts < 1) fail("experts must be >= 1");
  if (c.tokens_per_rank < 1) fail("tokens_per_rank must be >= 1");
  if (c.top_k < 1 || c.top_k > c.experts) fail("top_k must be in [1, experts]");
  if (!(c.skew >= 0) || !std::isfinite(c.skew)) fail("skew must be a finite number >= 0");
  if (!(c.drift >= 0) || !std::isfinite(c.drift)) fail("drift must be a finite number >= 0");
}

// Expert log-weights of every layer, walked forward one iteration at a time.
class Popularity {
 public:
  explicit Popularity(const RoutingGeneratorConfig& c) : c_(c), logw_(c.layers) {
    for (int l = 0; l < c.layers; ++l) {
      engines_.emplace_back(StreamSeed(c.seed, 0x706f70 /*"pop"*/, l, 0));
      std::mt19937_64& e = engines_.back();
      // Which expert is the i-th most popular differs per layer: a Fisher-Yates shuffle.
      std::vector<int> order(c.experts);
      for (int x = 0; x < c.experts; ++x) order[x] = x;
      for (int i = c.experts - 1; i > 0; --i) {
        const int j = static_cast<int>(UniformUnit(e()) * (i + 1));
        std::swap(order[i], order[j]);
      }
      logw_[l].assign(c.experts, 0);
      for (int i = 0; i < c.experts; ++i) logw_[l][order[i]] = -c.skew * std::log(i + 1.0);
    }
  }

  // Moves to the next iteration: every log-weight takes a uniform step of standard deviation
  // `drift` (uniform on [-sqrt(3) d, sqrt(3) d]).
  void Step() {
    if (c_.drift <= 0) return;
    const double half_width = std::sqrt(3.0) * c_.drift;
    for (int l = 0; l < c_.layers; ++l) {
      for (double& w : logw_[l]) w += half_width * (2 * UniformUnit(engines_[l]()) - 1);
    }
  }

  std::vector<double> Probabilities(int l) const {
    double max = logw_[l][0];
    for (double w : logw_[l]) max = std::max(max, w);
    std::vector<double> p(c_.experts);
    double sum = 0;
    for (int x = 0; x < c_.experts; ++x) sum += p[x] = std::exp(logw_[l][x] - max);
    for (double& v : p) v /= sum;
    return p;
  }

 private:
  const RoutingGeneratorConfig& c_;
  std::vector<std::vector<double>> logw_;
  std::vector<std::mt19937_64> engines_;
};

// Draws `top_k` distinct experts per token from `p` (without replacement, as a top-k gate picks
// distinct experts) and adds them to `counts`.
void DrawTokens(const std::vector<double>& p, int tokens, int top_k, std::mt19937_64& e,
                double* counts) {
  const int n = static_cast<int>(p.size());
  std::vector<char> taken(n, 0);
  std::vector<int> chosen;
  chosen.reserve(top_k);
  for (int t = 0; t < tokens; ++t) {
    double mass = 1;
    chosen.clear();
    for (int k = 0; k < top_k; ++k) {
      const double u = UniformUnit(e()) * mass;
      double acc = 0;
      int pick = -1;
      for (int x = 0; x < n; ++x) {
        if (taken[x]) continue;
        pick = x;  // the last untaken expert absorbs rounding at the top of the range
        acc += p[x];
        if (u < acc) break;
      }
      taken[pick] = 1;
      mass -= p[pick];
      counts[pick] += 1;
      chosen.push_back(pick);
    }
    for (int c : chosen) taken[c] = 0;
  }
}

}  // namespace

double UniformUnit(std::uint64_t raw) { return static_cast<double>(raw >> 11) * 0x1.0p-53; }

Routing::Routing(int iterations, int layers, int ranks, int experts)
    : iterations_(iterations),
      layers_(layers),
      ranks_(ranks),
      experts_(experts),
      counts_(static_cast<size_t>(iterations) * layers * ranks * experts, 0.0) {}

size_t Routing::Index(int t, int l, int r, int x) const {
  return ((static_cast<size_t>(t) * layers_ + l) * ranks_ + r) * experts_ + x;
}

std::vector<std::vector<double>> Routing::Matrix(int t, int l) const {
  std::vector<std::vector<double>> m(ranks_, std::vector<double>(experts_));
  for (int r = 0; r < ranks_; ++r) {
    for (int x = 0; x < experts_; ++x) m[r][x] = at(t, l, r, x);
  }
  return m;
}

std::vector<double> Routing::ExpertLoads(int t, int l) const {
  std::vector<double> loads(experts_, 0.0);
  for (int r = 0; r < ranks_; ++r) {
    for (int x = 0; x < experts_; ++x) loads[x] += at(t, l, r, x);
  }
  return loads;
}

bool Routing::operator==(const Routing& o) const {
  return iterations_ == o.iterations_ && layers_ == o.layers_ && ranks_ == o.ranks_ &&
         experts_ == o.experts_ && counts_ == o.counts_;
}

std::vector<std::vector<double>> RoutingPopularity(const RoutingGeneratorConfig& c, int t) {
  Check(c);
  Popularity pop(c);
  for (int i = 0; i < t; ++i) pop.Step();
  std::vector<std::vector<double>> out;
  for (int l = 0; l < c.layers; ++l) out.push_back(pop.Probabilities(l));
  return out;
}

Routing GenerateRouting(const RoutingGeneratorConfig& c) {
  Check(c);
  Routing routing(c.iterations, c.layers, c.ranks, c.experts);
  Popularity pop(c);
  for (int t = 0; t < c.iterations; ++t) {
    if (t > 0) pop.Step();
    for (int l = 0; l < c.layers; ++l) {
      const std::vector<double> p = pop.Probabilities(l);
      for (int r = 0; r < c.ranks; ++r) {
        std::mt19937_64 e(StreamSeed(c.seed, 1 + t, l, r));
        DrawTokens(p, c.tokens_per_rank, c.top_k, e, &routing.at(t, l, r, 0));
      }
    }
  }
  return routing;
}

}  // namespace stratasim
