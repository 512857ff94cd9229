#include "strategies/gnn/batch_cache.h"

#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace stratasim {
namespace {

// What the sampled batch depends on: the graph, the fan-outs, the seed, the size and the index.
std::string KeyOf(const ModelSpec& m, int batch, std::uint64_t seed, int index) {
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "|%.17g|%.17g|%.17g|%llu|%d|%d|%d|", m.graph_vertices,
                m.graph_degree, m.graph_exponent, static_cast<unsigned long long>(seed), batch,
                index, m.feature_dim);
  std::string key = m.graph + "|" + m.graph_file + numbers;
  for (int f : m.fanouts) key += std::to_string(f) + ",";
  return key;
}

}  // namespace

std::shared_ptr<const GraphBatch> CachedGraphBatch(const ModelSpec& spec, int batch,
                                                   std::uint64_t seed, int index) {
  // Planners may run on several threads (strategies/iteration_feed.h).
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const GraphBatch>> cache;
  static std::deque<std::string> order;  // oldest first
  static double bytes = 0;
  const std::string key = KeyOf(spec, batch, seed, index);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto sampled = std::make_shared<const GraphBatch>(SampleGraphBatch(spec, batch, seed, index));
  const double size = static_cast<double>(sampled->ids.size() * sizeof(std::int64_t));
  std::lock_guard<std::mutex> lock(mu);
  if (cache.emplace(key, sampled).second) {
    order.push_back(key);
    bytes += size;
    while (bytes > kMaxCachedBatchBytes && order.size() > 1) {
      auto old = cache.find(order.front());
      bytes -= static_cast<double>(old->second->ids.size() * sizeof(std::int64_t));
      cache.erase(old);
      order.pop_front();
    }
  }
  return sampled;
}

}  // namespace stratasim
