// Orders of the members of a collective that topology-aware algorithms walk: members grouped by
// server, and per-channel rings that leave each server from a different GPU (so, when GPUs own
// NICs, through a different NIC), as NCCL's ring search builds them.
#ifndef STRATASIM_SIM_COLLECTIVES_MEMBER_ORDER_H_
#define STRATASIM_SIM_COLLECTIVES_MEMBER_ORDER_H_

#include <vector>

#include "sim/collectives/group_view.h"

namespace stratasim::sim {

// Member indices grouped by server: servers in order of first appearance in the member list,
// members of a server in member order, or in the order of their server's first NVLink cycle
// when they lie on some (GroupMember::nvlink_cycle_positions), so chains follow NVLink.
std::vector<std::vector<int>> ServerBlocks(const GroupView& view);

// `block` rotated left by `shift` (mod its size).
std::vector<int> Rotate(const std::vector<int>& block, int shift);

// The rotation of a block of `size` members for instance `index` of `count` (channels, or
// channels x trees): index * size / count, so instances enter and leave each server through
// evenly spaced members, hence different NICs when there are as many NICs as instances.
int InstanceShift(int index, int count, int size);

// The rings a phase inside one server walks, each carrying an equal share: the block itself;
// or, when its members lie on NVLink cycles, every cycle one way and the other (2 x cycles
// rings), as NCCL's channels on a DGX-1 do: a single ring would use one NVLink out of each GPU
// of the four.
std::vector<std::vector<int>> ServerRings(const GroupView& view, const std::vector<int>& block);

// The member of one server's `block` (ServerBlocks order) that heads tree instance `instance`
// of `instances` (channels x trees) there, the one its tree between servers reaches, hence
// whose NIC it uses. The member at InstanceShift(instance, instances, block size), which
// spreads instances over the NICs when each member has its own or all share one; when
// several NICs each serve several members (a DGX-1's 4 NICs, one per GPU pair), instance i
// takes NIC i mod NICs in turn, as NCCL's channels take its network devices, and that NIC's
// members in turn: evenly spaced positions of a block in NVLink-cycle order could all land on
// two of the four NICs.
int InstanceHead(const GroupView& view, const std::vector<int>& block, int instance, int instances);

// The chain tree instance `instance` of `instances` walks through one server's `block`:
// CycleChain from InstanceHead.
std::vector<int> InstanceChain(const GroupView& view, const std::vector<int>& block, int instance,
                               int instances);

// A chain through `block` from its member `head`: the block rotated to start there, or, on
// NVLink cycles, cycle `instance` mod cycles from there, so that instances' chains use the
// NVLinks of every cycle rather than all the first's.
std::vector<int> CycleChain(const GroupView& view, const std::vector<int>& block, int head,
                            int instance);

// The ring of channel `channel` of `channels`: the member order itself inside one server;
// across servers, the server blocks one after another, each rotated by InstanceShift, so the
// inter-server hop of each channel leaves every server from a different GPU. A server whose
// members lie on NVLink cycles is walked along cycle (channel / 2) mod cycles, odd channels
// the other way round, each pair of channels entering and leaving at the two ends of one
// NVLink chosen so that channel ends spread over the NICs.
//
// On a rail-optimized fabric each hop between servers also stays on one rail, as NCCL's rings
// do (NCCL_CROSS_NIC=0): server p is entered and left through members with the same NIC
// index as its neighbours' exit and entry. With the channel's shift c, servers are entered at
// c, c-1, c, c-1, ... and walked forward (c ... c-1) or backward (c-1 ... c); with an odd
// number of servers the last one is entered at c-2. (On NVLink cycles, c and c-1 are the
// positions of the channel's NVLink ends on its cycle, swapped for odd channels, so those
// walk each server the other way round.) Elsewhere every NIC reaches every other
// through the same switches and links, so the rail changes no route's bottleneck or latency.
//
//   servers:    0            1            2            3
//   members:  c c+1 .. c-1  c-1 c-2 .. c  c c+1 .. c-1  c-1 .. c   (back to 0 on rail c)
//               rail c-1 ->      rail c ->    rail c-1 ->     rail c
std::vector<int> ChannelRing(const GroupView& view, int channel, int channels);

}  // namespace stratasim::sim

#endif  // STRATASIM_SIM_COLLECTIVES_MEMBER_ORDER_H_
