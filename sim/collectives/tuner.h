// The tuner's pieces beyond sim/collectives/lowering.h: the automatic channel count.
#ifndef STRATASIM_SIM_COLLECTIVES_TUNER_H_
#define STRATASIM_SIM_COLLECTIVES_TUNER_H_

#include "sim/collectives/group_view.h"

namespace stratasim::sim {

// Most channels the tuner or a setting may use (NCCL's MAXCHANNELS is 32; 16 rings already
// saturate 8 NICs twice over).
inline constexpr int kMaxChannels = 16;

// Channels when the scenario says "auto" (0): across servers, one per NIC the group uses in a
// server (so a group spanning a server's NICs uses them all, as NCCL does), at most
// kMaxChannels; inside one server, 1 (every ring crosses the same links there). Servers whose
// rings follow NVLink cycles (GroupView::nvlink_cycles) get at least two per cycle, one each
// way, so every NVLink of the cycles carries data both ways (NCCL: 4 rings on a DGX-1 P100).
int AutoChannels(const GroupView& view);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_TUNER_H_
