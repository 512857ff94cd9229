#include "sim/collectives/protocol.h"

#include <algorithm>
#include <map>
#include <string>

#include "core/error.h"

namespace stratasim::sim {
namespace {

constexpr double kUs = 1e-6;

// Indexed [protocol: LL, LL128, Simple]; see protocol.h for the source of each figure.
constexpr double kTreeBase[3] = {4.4, 4.4, 0};
constexpr double kRingBase[3] = {3.6, 10.0, 8.4};
// Indexed [hop: NVLink, PCI, network][protocol].
constexpr double kTreeStep[3][3] = {{.52, 1.2, 6.2}, {1.0, 1.9, 6.2}, {5.0, 8.5, 6.3}};
constexpr double kRingStep[3][3] = {{.47, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 9.6}};

bool IsTree(NcclAlgorithm algorithm) { return algorithm == NcclAlgorithm::kTree; }

// NCCL's ll128MaxBwPerCh (GB/s of data per channel); see protocol.h.
double Ll128DataBpsPerChannel(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kBroadcast:
      return 18.8e9;
    case CollectiveKind::kReduce:
      return 12.0e9;
    case CollectiveKind::kReduceScatter:
      return 15.2e9;
    case CollectiveKind::kAllReduce:
      return 16.7e9;
    default:  // all-gather, and the copies NCCL's table lacks
      return 18.3e9;
  }
}

}  // namespace

Protocol ParseProtocol(const std::string& name) {
  if (name == "ll") return Protocol::kLL;
  if (name == "ll128") return Protocol::kLL128;
  if (name == "simple") return Protocol::kSimple;
  throw Error("unknown collective protocol '" + name + "' (known: ll, ll128, simple)");
}

std::string_view ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "ll";
    case Protocol::kLL128:
      return "ll128";
    case Protocol::kSimple:
      return "simple";
  }
  return "simple";
}

double WireBytesFactor(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return 2.0;
    case Protocol::kLL128:
      return 128.0 / 120.0;
    case Protocol::kSimple:
      return 1.0;
  }
  return 1.0;
}

double BaseLatencySeconds(NcclAlgorithm algorithm, Protocol p) {
  const int i = static_cast<int>(p);
  return (IsTree(algorithm) ? kTreeBase[i] : kRingBase[i]) * kUs;
}

double StepLatencySeconds(NcclAlgorithm algorithm, Protocol p, HopKind hop) {
  const int i = static_cast<int>(p), h = static_cast<int>(hop);
  return (IsTree(algorithm) ? kTreeStep[h][i] : kRingStep[h][i]) * kUs;
}

HopKind IntraHop(const GroupView& view) {
  return view.intra_fabric == IntraFabric::kPcie ? HopKind::kPcie : HopKind::kNvLink;
}

HopKind HopBetween(const GroupView& view, int a, int b) {
  const GroupMember &x = view.members[a], &y = view.members[b];
  if (x.server != y.server) return HopKind::kNet;
  // GPUs joined by a direct NVLink (neighbours on an NVLink cycle among them) talk over it,
  // whatever the slowest pair does.
  if (std::count(x.nvlink_locals.begin(), x.nvlink_locals.end(), y.local)) return HopKind::kNvLink;
  return IntraHop(view);
}

double ProtocolMaxRateBps(Protocol p, NcclAlgorithm algorithm, CollectiveKind kind,
                          bool multi_server, double hop_Bps) {
  const double wire = WireBytesFactor(p);
  switch (p) {
    case Protocol::kSimple:
      return 0;
    case Protocol::kLL: {
      double data_fraction = 1.0 / 3.8;
      if (!IsTree(algorithm)) {
        const bool quarter =
            multi_server || kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduce;
        data_fraction = quarter ? 1.0 / 4 : 1.0 / 3;
      }
      return hop_Bps * data_fraction * wire;
    }
    case Protocol::kLL128:
      return Ll128DataBpsPerChannel(kind) * (IsTree(algorithm) ? 7.0 / 9 : 1.0) * wire;
  }
  return 0;
}

std::optional<double> MeasuredStepSeconds(const GroupView& view, Protocol p, HopKind hop) {
  const std::map<std::string, double>& m =
      hop == HopKind::kNet ? view.measured_inter_step_s : view.measured_intra_step_s;
  auto it = m.find(std::string(ProtocolName(p)));
  if (it == m.end()) return std::nullopt;
  return it->second;
}

bool MeasuredCoversGroup(const GroupView& view, Protocol p) {
  const bool intra = view.any_shared_server || view.num_servers <= 1;
  const bool inter = view.num_servers > 1;
  return (!intra || MeasuredStepSeconds(view, p, IntraHop(view))) &&
         (!inter || MeasuredStepSeconds(view, p, HopKind::kNet));
}

double RouteLatencySeconds(const GroupView& view, HopKind hop) {
  return hop == HopKind::kNet ? view.inter_latency_s : view.intra_latency_s;
}

double StepDelaySeconds(const GroupView& view, NcclAlgorithm algorithm, Protocol p, HopKind hop) {
  if (const std::optional<double> measured = MeasuredStepSeconds(view, p, hop)) {
    return std::max(0.0, *measured - RouteLatencySeconds(view, hop));
  }
  return StepLatencySeconds(algorithm, p, hop);
}

double GroupBaseLatencySeconds(const GroupView& view, NcclAlgorithm algorithm, Protocol p) {
  return MeasuredCoversGroup(view, p) ? 0.0 : BaseLatencySeconds(algorithm, p);
}

void ApplyProtocol(const GroupView& view, NcclAlgorithm algorithm, Protocol p, FlowBuilder* b) {
  const double factor = WireBytesFactor(p);
  const double base = GroupBaseLatencySeconds(view, algorithm, p);
  for (int id = 0; id < b->size(); ++id) {
    Flow& f = b->program().flows[id];
    f.bytes *= factor;
    f.delay_s = b->latency_steps()[id] *
                    StepDelaySeconds(view, algorithm, p, HopBetween(view, f.src, f.dst)) +
                (f.deps.empty() ? base : 0.0);
  }
}

}  // namespace stratasim::sim
