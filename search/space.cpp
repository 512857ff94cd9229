// The plan space of a search (search/space.h): enumeration and pruning. The memory estimate
// that the last rule reads is in search/space_memory.cpp.
#include "search/space.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "strategies/parallel_layout.h"

namespace stratasim::search {
namespace {

// The data degree of (t, p) on `gpus` GPUs, 0 when t x p does not divide them.
int DataDegree(int gpus, int t, int p) {
  const long long tp = static_cast<long long>(t) * p;
  return gpus % tp == 0 ? static_cast<int>(gpus / tp) : 0;
}

// The micro-batches per replica, 0 when global_batch / (micro_batch x data) is not an integer.
int MicroBatches(int global_batch, int micro_batch, int data) {
  if (data <= 0) return 0;
  const long long per = static_cast<long long>(micro_batch) * data;
  return global_batch % per == 0 ? static_cast<int>(global_batch / per) : 0;
}

bool ZeroExists(Zero z, int t, int p) {
  const bool sharded_dp = t * p == 1;
  switch (z) {
    case Zero::kNone:
      return true;
    case Zero::kDistributedOptimizer:
      return !sharded_dp;
    case Zero::kZero1:
    case Zero::kZero2:
    case Zero::kZero3:
      return sharded_dp;
  }
  return false;
}

// The rank order with the dimensions of size 1 removed: two orders equal here place every
// rank alike.
std::string EffectiveOrder(const std::string& order, int t, int p, int d) {
  std::string out;
  for (char c : order) {
    const int size = c == 't' ? t : c == 'p' ? p : d;
    if (size > 1) out += c;
  }
  return out;
}

bool TensorKind(const std::string& kind) {
  return kind == "gpt" || kind == "bert" || kind == "llama";
}

double SmallestGpuMemory(const Scenario& s) {
  double smallest = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
    smallest = std::min(smallest, s.cluster.GpuOfGroup(static_cast<int>(g)).memory_bytes);
  }
  return smallest;
}

// Whether every tensor group of `c` lies inside one server.
bool TensorGroupsInServers(const Scenario& s, const Candidate& c) {
  // Fast path: with t fastest, the groups are runs of t consecutive ranks starting at multiples
  // of t; every server starts at a multiple of its group's GPUs per server, so when t divides
  // each of those, no run crosses a server boundary.
  bool divides_all = true, fits_one = false;
  for (const ServerGroup& g : s.cluster.groups) {
    divides_all = divides_all && g.gpus_per_server % c.tensor == 0;
    fits_one = fits_one || g.gpus_per_server >= c.tensor;
  }
  if (!fits_one) return false;
  if (c.rank_order.front() == 't' && divides_all) return true;
  const ParallelLayout layout{c.tensor, c.pipeline, c.data, c.rank_order};
  for (int r = 0; r < c.data; ++r) {
    for (int st = 0; st < c.pipeline; ++st) {
      const std::vector<int> group = layout.TensorGroup(r, st);
      const int server = s.cluster.Locate(group.front()).server;
      for (int rank : group) {
        if (s.cluster.Locate(rank).server != server) return false;
      }
    }
  }
  return true;
}

}  // namespace

std::vector<Candidate> Enumerate(const Scenario& s, const SearchSpec& spec) {
  const int gpus = s.cluster.NumGpus();
  std::vector<Candidate> out;
  for (int t : spec.tensor) {
    for (int p : spec.pipeline) {
      const int d = DataDegree(gpus, t, p);
      std::vector<Zero> zeros;
      for (Zero z : spec.zero) {
        if (ZeroExists(z, t, p)) zeros.push_back(z);
      }
      const int above_one = (t > 1) + (p > 1) + (d > 1);
      const std::vector<std::string> orders =
          above_one >= 2 ? spec.rank_order : std::vector<std::string>{"tpd"};
      const std::vector<std::string> schedules =
          p > 1 ? spec.schedule : std::vector<std::string>{""};
      const std::vector<bool> sps = t > 1 ? spec.sequence_parallel : std::vector<bool>{false};
      for (int mb : spec.micro_batch) {
        for (const std::string& schedule : schedules) {
          const std::vector<int> vs =
              schedule == "interleaved" ? spec.virtual_stages : std::vector<int>{1};
          for (int v : vs) {
            for (Recompute r : spec.recompute) {
              for (bool sp : sps) {
                for (Zero z : zeros) {
                  for (const std::string& order : orders) {
                    Candidate c;
                    c.data = d;
                    c.tensor = t;
                    c.pipeline = p;
                    c.micro_batch = mb;
                    c.micro_batches = MicroBatches(s.training.global_batch, mb, d);
                    c.schedule = schedule;
                    c.virtual_stages = v;
                    c.recompute = r;
                    c.sequence_parallel = sp;
                    c.zero = z;
                    c.rank_order = order;
                    out.push_back(std::move(c));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

std::string_view Label(PruneReason r) {
  switch (r) {
    case PruneReason::kGpus:
      return "indivisible GPUs";
    case PruneReason::kBatch:
      return "indivisible batch";
    case PruneReason::kHeads:
      return "indivisible heads";
    case PruneReason::kLayers:
      return "too few layers";
    case PruneReason::kInterleave:
      return "interleave";
    case PruneReason::kTensorSpan:
      return "tensor group spans servers";
    case PruneReason::kDuplicate:
      return "duplicate";
    case PruneReason::kMemory:
      return "out of memory";
  }
  return "";
}

std::optional<PruneReason> Prune(const Scenario& s, const SearchSpec& spec, const Candidate& c) {
  const int gpus = s.cluster.NumGpus();
  if (c.data <= 0 || DataDegree(gpus, c.tensor, c.pipeline) != c.data) return PruneReason::kGpus;
  if (c.micro_batches <= 0 ||
      MicroBatches(s.training.global_batch, c.micro_batch, c.data) != c.micro_batches) {
    return PruneReason::kBatch;
  }
  const ModelSpec& model = s.model;
  if (c.tensor > 1 && (!TensorKind(model.kind) || model.heads % c.tensor != 0 ||
                       (model.kv_heads > 0 && model.kv_heads % c.tensor != 0))) {
    return PruneReason::kHeads;
  }
  const long long chunks = static_cast<long long>(c.pipeline) * std::max(1, c.virtual_stages);
  if (c.pipeline > 1 && model.layers < chunks) return PruneReason::kLayers;
  if (c.schedule == "interleaved" && c.micro_batches % c.pipeline != 0) {
    return PruneReason::kInterleave;
  }
  if (c.tensor > 1 && !TensorGroupsInServers(s, c)) return PruneReason::kTensorSpan;
  // The same plan as another of the space: the distributed optimizer over one replica shards
  // nothing; a rank order equal to an earlier one of the list once the dimensions of size 1 are
  // dropped numbers every rank alike.
  if (c.zero == Zero::kDistributedOptimizer && c.data == 1 &&
      std::find(spec.zero.begin(), spec.zero.end(), Zero::kNone) != spec.zero.end()) {
    return PruneReason::kDuplicate;
  }
  const auto listed = std::find(spec.rank_order.begin(), spec.rank_order.end(), c.rank_order);
  const std::string mine = EffectiveOrder(c.rank_order, c.tensor, c.pipeline, c.data);
  for (auto order = spec.rank_order.begin(); order < listed; ++order) {
    if (EffectiveOrder(*order, c.tensor, c.pipeline, c.data) == mine) {
      return PruneReason::kDuplicate;
    }
  }
  if (EstimateMemory(s, c).peak_bytes > spec.memory_fraction * SmallestGpuMemory(s)) {
    return PruneReason::kMemory;
  }
  return std::nullopt;
}

}  // namespace stratasim::search
