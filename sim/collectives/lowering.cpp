#include "sim/collectives/lowering.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "sim/collectives/coalesce.h"
#include "sim/collectives/direct.h"
#include "sim/collectives/flow_builder.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/registry.h"
#include "sim/collectives/tuner.h"

namespace stratasim::sim {
namespace {

bool IsRooted(CollectiveKind k) {
  return k == CollectiveKind::kBroadcast || k == CollectiveKind::kReduce ||
         k == CollectiveKind::kGather || k == CollectiveKind::kScatter;
}

}  // namespace

FlowProgram LowerCollective(const Collective& c, const GroupView& view,
                            const CollectiveChoice& choice, Fidelity fidelity) {
  const CollectiveAlgorithm& entry = FindCollectiveAlgorithm(c.kind, choice.algorithm);
  const Protocol protocol = ParseProtocol(choice.protocol);
  if (choice.channels < 1 || choice.channels > kMaxChannels) {
    throw Error("collective channels must be 1 to " + std::to_string(kMaxChannels) + ", got " +
                std::to_string(choice.channels));
  }
  if (fidelity == Fidelity::kAnalytic) {
    throw Error("analytic fidelity has no flows: use PredictCollectiveSeconds");
  }
  if (view.members.size() != c.ranks.size()) {
    throw Error("group view of " + std::to_string(view.members.size()) +
                " members for a collective of " + std::to_string(c.ranks.size()));
  }
  CheckAllToAllMatrix(c);
  const int n = static_cast<int>(c.ranks.size());
  int root = 0;
  if (IsRooted(c.kind)) {
    root = static_cast<int>(std::find(c.ranks.begin(), c.ranks.end(), c.root) - c.ranks.begin());
    if (root == n) {
      throw Error(std::string(ToString(c.kind)) + " root rank " + std::to_string(c.root) +
                  " is not a member of the collective");
    }
  }
  const LowerArgs args{c, view, root, entry.uses_channels ? choice.channels : 1, fidelity};
  FlowBuilder b;
  // An empty NCCL call returns at once: nothing moves for a lone member or zero bytes.
  const bool empty = n < 2 || (c.kind != CollectiveKind::kAllToAllV && c.bytes <= 0);
  if (!empty) entry.lower(args, &b);
  ApplyProtocol(view, entry.nccl, protocol, &b);
  FlowProgram program = std::move(b.program());
  if (fidelity == Fidelity::kStream) CoalesceIndependentFlows(&program);
  program.algorithm = choice.algorithm;
  program.protocol = std::string(ProtocolName(protocol));
  program.channels = args.channels;
  return program;
}

}  // namespace stratasim::sim
