#include "validate/graph_hash.h"

#include <cstdio>
#include <cstring>
#include <string_view>

namespace stratasim::validate {
namespace {

// FNV-1a's 64-bit parameters (the offset basis and the prime, from the FNV reference above).
constexpr std::uint64_t kFnvOffsetBasis = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

class Fnv1a {
 public:
  void Byte(unsigned char b) {
    h_ ^= b;
    h_ *= kFnvPrime;
  }
  // Every integer as 8 little-endian bytes, whatever its type and the machine's byte order.
  void Int(std::int64_t v) {
    const auto u = static_cast<std::uint64_t>(v);
    for (int i = 0; i < 8; ++i) Byte(static_cast<unsigned char>(u >> (8 * i)));
  }
  void Double(double v) {
    if (v == 0) v = 0;  // -0.0 and 0.0 are the same size
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    Int(static_cast<std::int64_t>(bits));
  }
  void Text(std::string_view s) {
    Int(static_cast<std::int64_t>(s.size()));
    for (char c : s) Byte(static_cast<unsigned char>(c));
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = kFnvOffsetBasis;
};

}  // namespace

std::uint64_t GraphHash(const TaskGraph& g) {
  Fnv1a h;
  h.Int(g.num_ranks());
  h.Int(static_cast<std::int64_t>(g.streams().size()));
  for (std::size_t s = 0; s < g.streams().size(); ++s) {
    h.Text(g.streams()[s]);
    h.Int(g.stream_priority(static_cast<int>(s)));
  }
  h.Int(static_cast<std::int64_t>(g.tasks().size()));
  for (const Task& t : g.tasks()) {
    h.Int(t.id);
    h.Int(t.rank);
    h.Int(t.stream);
    h.Int(t.iteration);
    h.Int(t.mirror);
    h.Int(t.collective);
    h.Int(t.peer);
    h.Int(t.tag);
    h.Int(static_cast<int>(t.kind));
    h.Int(static_cast<int>(t.phase));
    h.Int(static_cast<int>(t.op));
    h.Int(static_cast<int>(t.copy));
    h.Int(t.causal);
    h.Int(t.on_host);
    h.Int(static_cast<int>(t.dtype));
    h.Text(t.name.str());
    h.Text(t.category.str());
    h.Int(static_cast<std::int64_t>(t.deps.size()));
    for (TaskId d : t.deps) h.Int(d);
    h.Double(t.flops);
    h.Double(t.bytes);
    h.Double(t.memory_delta_bytes);
    h.Double(t.gemm.m);
    h.Double(t.gemm.n);
    h.Double(t.gemm.k);
    h.Double(t.gemm.batch);
  }
  h.Int(static_cast<std::int64_t>(g.collectives().size()));
  for (const Collective& c : g.collectives()) {
    h.Int(static_cast<int>(c.kind));
    h.Int(static_cast<std::int64_t>(c.ranks.size()));
    for (int r : c.ranks) h.Int(r);
    h.Double(c.bytes);
    h.Int(static_cast<std::int64_t>(c.matrix.size()));
    for (double m : c.matrix) h.Double(m);
    h.Int(static_cast<int>(c.dtype));
    h.Int(c.root);
    h.Text(c.algorithm);
    h.Int(static_cast<std::int64_t>(c.members.size()));
    for (TaskId m : c.members) h.Int(m);
  }
  h.Int(static_cast<std::int64_t>(g.fold().size()));
  for (int r : g.fold()) h.Int(r);
  h.Int(static_cast<std::int64_t>(g.rank_starts().size()));
  for (double s : g.rank_starts()) h.Double(s);
  return h.value();
}

std::string GraphHashHex(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace stratasim::validate
