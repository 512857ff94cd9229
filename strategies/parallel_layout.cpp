#include "strategies/parallel_layout.h"

#include <algorithm>

namespace stratasim {

int ParallelLayout::Rank(int replica, int stage, int tp, int cp) const {
  int rank = 0, stride = 1;
  for (char dim : order) {
    // The tensor and context indices form one dimension of t x c, the tensor index fastest.
    const int size = dim == 't' ? tensor * context : dim == 'p' ? stages : data;
    const int index = dim == 't' ? tp + cp * tensor : dim == 'p' ? stage : replica;
    rank += index * stride;
    stride *= size;
  }
  return rank;
}

std::vector<int> ParallelLayout::TensorGroup(int replica, int stage, int cp) const {
  std::vector<int> ranks;
  for (int j = 0; j < tensor; ++j) ranks.push_back(Rank(replica, stage, j, cp));
  return ranks;
}

std::vector<int> ParallelLayout::DataGroup(int stage, int tp) const {
  std::vector<int> ranks;
  for (int q = 0; q < data; ++q) ranks.push_back(Rank(q, stage, tp));
  return ranks;
}

std::vector<int> ParallelLayout::GradientGroup(int stage, int tp) const {
  std::vector<int> ranks;
  for (int q = 0; q < data; ++q) {
    for (int k = 0; k < context; ++k) ranks.push_back(Rank(q, stage, tp, k));
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

std::vector<std::string> ParallelLayout::Orders() {
  return {"tpd", "tdp", "ptd", "pdt", "dtp", "dpt"};
}

}  // namespace stratasim
