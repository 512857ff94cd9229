// ChooseCollective and PredictCollectiveSeconds (declared in sim/collectives/lowering.h): each
// candidate's prediction comes from its registry entry (sim/collectives/registry.h), over the
// alpha-beta model of sim/collectives/alpha_beta.h.
#include "sim/collectives/tuner.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sim/collectives/alpha_beta.h"
#include "sim/collectives/direct.h"
#include "sim/collectives/lowering.h"
#include "sim/collectives/protocol.h"
#include "sim/collectives/registry.h"

namespace stratasim::sim {

int AutoChannels(const GroupView& view) {
  const int nvlink_lanes = 2 * view.nvlink_cycles;  // each cycle both ways (ChannelRing)
  if (view.num_servers <= 1) return std::max(1, nvlink_lanes);
  return std::clamp(std::max(view.max_nics_per_server, nvlink_lanes), 1, kMaxChannels);
}

namespace {

double Predict(const Collective& c, const GroupView& view, const CollectiveAlgorithm& algorithm,
               const CollectiveChoice& choice) {
  const AlphaBeta m = MakeAlphaBeta(view, algorithm, c.kind, ParseProtocol(choice.protocol));
  if (m.n < 2) return 0;
  return algorithm.predict(PredictArgs{c, view, m, std::max(1, choice.channels)});
}

std::string Resolve(const Collective& c, const CollectiveSettings& settings) {
  CheckAlgorithm(c.kind, c.algorithm, true);
  if (c.algorithm != "auto") return c.algorithm;
  auto it = settings.algorithm.find(c.kind);
  if (it == settings.algorithm.end()) return "auto";
  CheckAlgorithm(c.kind, it->second, true);
  return it->second;
}

}  // namespace

double PredictCollectiveSeconds(const Collective& c, const GroupView& view,
                                const CollectiveChoice& choice) {
  const CollectiveAlgorithm& algorithm = FindCollectiveAlgorithm(c.kind, choice.algorithm);
  CheckAllToAllMatrix(c);
  return Predict(c, view, algorithm, choice);
}

CollectiveChoice ChooseCollective(const Collective& c, const GroupView& view,
                                  const CollectiveSettings& settings) {
  const std::string algorithm = Resolve(c, settings);
  if (settings.channels < 0 || settings.channels > kMaxChannels) {
    throw Error("collective channels must be 0 (auto) to " + std::to_string(kMaxChannels) +
                ", got " + std::to_string(settings.channels));
  }
  if (settings.protocol != "auto") ParseProtocol(settings.protocol);  // rejects unknown names
  CheckAllToAllMatrix(c);

  const std::vector<std::string> algorithms =
      algorithm != "auto" ? std::vector<std::string>{algorithm} : AutoCandidates(c.kind, view);
  const std::vector<std::string> protocols =
      settings.protocol != "auto" ? std::vector<std::string>{settings.protocol}
                                  : std::vector<std::string>{"simple", "ll128", "ll"};
  CollectiveChoice best;
  double best_s = std::numeric_limits<double>::infinity();
  for (const std::string& a : algorithms) {
    const CollectiveAlgorithm& entry = FindCollectiveAlgorithm(c.kind, a);
    const int channels = !entry.uses_channels    ? 1
                         : settings.channels > 0 ? settings.channels
                                                 : AutoChannels(view);
    for (const std::string& p : protocols) {
      const CollectiveChoice candidate{a, p, channels};
      const double t = Predict(c, view, entry, candidate);
      if (best.algorithm.empty() || t < best_s) {
        best = candidate;
        best_s = t;
      }
    }
  }
  return best;
}

}  // namespace stratasim::sim
