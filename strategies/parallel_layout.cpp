#include "strategies/parallel_layout.h"

#include <algorithm>

#include "core/error.h"

namespace stratasim {

int ParallelLayout::Rank(int replica, int stage, int tp, int cp) const {
  if (!ranks.empty()) return ranks[(static_cast<size_t>(replica) * stages + stage) * tensor + tp];
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

void ParallelLayout::CheckRanks(int gpus) const {
  if (ranks.empty()) return;
  const std::string what = "explicit rank mapping: ";
  if (context != 1) {
    throw Error(what + "needs context 1, not " + std::to_string(context));
  }
  const long positions = static_cast<long>(tensor) * stages * data;
  if (static_cast<long>(ranks.size()) != positions || positions != gpus) {
    throw Error(what + std::to_string(ranks.size()) + " ranks for tensor (" +
                std::to_string(tensor) + ") x stages (" + std::to_string(stages) + ") x data (" +
                std::to_string(data) + ") = " + std::to_string(positions) + " positions on " +
                std::to_string(gpus) + " GPUs");
  }
  std::vector<bool> seen(gpus, false);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= gpus) {
      throw Error(what + "rank " + std::to_string(r) + " at position " + std::to_string(i) +
                  " is not a GPU (0.." + std::to_string(gpus - 1) + ")");
    }
    if (seen[r]) {
      throw Error(what + "rank " + std::to_string(r) + " appears twice (again at position " +
                  std::to_string(i) + "): not a permutation of the GPUs");
    }
    seen[r] = true;
  }
}

std::vector<std::string> ParallelLayout::Orders() {
  return {"tpd", "tdp", "ptd", "pdt", "dtp", "dpt"};
}

}  // namespace stratasim
