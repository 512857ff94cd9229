#include "core/collective_names.h"

#include <algorithm>
#include <array>
#include <initializer_list>

namespace stratasim {
namespace {

unsigned KindBits(std::initializer_list<CollectiveKind> kinds) {
  unsigned bits = 0;
  for (CollectiveKind k : kinds) bits |= 1u << static_cast<unsigned>(k);
  return bits;
}

}  // namespace

const std::vector<CollectiveAlgorithmName>& AllCollectiveAlgorithms() {
  static const std::vector<CollectiveAlgorithmName> all = {
#define STRATASIM_COLLECTIVE_ALGORITHM(name, ...) {#name, KindBits({__VA_ARGS__})},
#include "core/collective_algorithms.def"
#undef STRATASIM_COLLECTIVE_ALGORITHM
  };
  return all;
}

const std::vector<std::string>& CollectiveAlgorithms(CollectiveKind kind) {
  static const auto by_kind = [] {
    std::array<std::vector<std::string>, std::size(kAllCollectiveKinds)> names;
    for (CollectiveKind k : kAllCollectiveKinds) {
      auto& list = names[static_cast<size_t>(k)];
      list.emplace_back("auto");
      for (const CollectiveAlgorithmName& a : AllCollectiveAlgorithms()) {
        if (a.Serves(k)) list.emplace_back(a.name);
      }
    }
    return names;
  }();
  return by_kind[static_cast<size_t>(kind)];
}

bool IsCollectiveAlgorithm(CollectiveKind kind, const std::string& name) {
  const auto& names = CollectiveAlgorithms(kind);
  return std::find(names.begin(), names.end(), name) != names.end();
}

const std::vector<std::string>& CollectiveProtocols() {
  static const std::vector<std::string> p = {"auto", "ll", "ll128", "simple"};
  return p;
}

}  // namespace stratasim
