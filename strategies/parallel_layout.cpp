#include "strategies/parallel_layout.h"

namespace stratasim {

int ParallelLayout::Rank(int replica, int stage, int tp) const {
  int rank = 0, stride = 1;
  for (char dim : order) {
    const int size = dim == 't' ? tensor : dim == 'p' ? stages : data;
    const int index = dim == 't' ? tp : dim == 'p' ? stage : replica;
    rank += index * stride;
    stride *= size;
  }
  return rank;
}

std::vector<int> ParallelLayout::TensorGroup(int replica, int stage) const {
  std::vector<int> ranks;
  for (int j = 0; j < tensor; ++j) ranks.push_back(Rank(replica, stage, j));
  return ranks;
}

std::vector<int> ParallelLayout::DataGroup(int stage, int tp) const {
  std::vector<int> ranks;
  for (int q = 0; q < data; ++q) ranks.push_back(Rank(q, stage, tp));
  return ranks;
}

std::vector<std::string> ParallelLayout::Orders() {
  return {"tpd", "tdp", "ptd", "pdt", "dtp", "dpt"};
}

}  // namespace stratasim
